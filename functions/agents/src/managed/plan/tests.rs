use super::*;
use serde_json::{Value, json};

const KEY: &str = "sk-ant-api03-AAAABBBBCCCCDDDD-9xQz";

fn ctx(skills: &HashMap<Uuid, i64>) -> Context<'_> {
    Context {
        keys: WsKeys::new(Uuid::from_u128(1)),
        agent_id: Uuid::from_u128(2),
        by: Uuid::from_u128(3),
        now: "2026-11-23T10:00:00Z".into(),
        provider_key_exists: true,
        skills,
    }
}

fn body(value: Value) -> SaveManagedProviderBody {
    workapi_kit::input::parse(&value).unwrap_or_else(|e| panic!("{value}: {e:?}"))
}

fn managed(extra: Value) -> Value {
    let mut agent = json!({"modelId": "claude-sonnet-4-5", "instructions": "Be **brief**"});
    agent.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    json!({"agentSource": "serviceManaged", "managedAgent": agent})
}

fn errors_of(existing: Option<&ManagedProviderRecord>, value: Value, skills: &HashMap<Uuid, i64>) -> FieldErrors {
    match plan(existing, &body(value), &ctx(skills)) {
        Ok(_) => panic!("expected errors"),
        Err(e) => e.errors.expect("field errors"),
    }
}

#[test]
fn a_raw_key_becomes_a_secret_and_the_record_holds_its_name() {
    let none = HashMap::new();
    let plan =
        plan(None, &body(json!({"enabled": true, "vendorApiKey": KEY, "config": managed(json!({}))})), &ctx(&none))
            .unwrap();
    assert_eq!(plan.create.len(), 1);
    assert_eq!(plan.create[0].1.expose(), KEY);
    let stored = plan.record.vendor_api_key.as_ref().unwrap();
    assert_eq!(stored.secret, plan.create[0].0);
    assert_eq!(stored.last_four.as_deref(), Some("9xQz"));
    let text = serde_json::to_string(&plan.record).unwrap();
    assert!(!text.contains(KEY), "{text}");
    assert!(plan.delete.is_empty());
    assert_eq!(plan.record.version, 1);
}

#[test]
fn an_omitted_secret_keeps_the_stored_one_and_null_clears_it() {
    let none = HashMap::new();
    let first =
        plan(None, &body(json!({"enabled": true, "vendorApiKey": KEY, "config": managed(json!({}))})), &ctx(&none))
            .unwrap()
            .record;
    let kept = plan(Some(&first), &body(json!({"enabled": true, "config": managed(json!({}))})), &ctx(&none)).unwrap();
    assert!(kept.create.is_empty() && kept.delete.is_empty());
    assert_eq!(kept.record.vendor_api_key, first.vendor_api_key);
    assert_eq!(kept.record.version, 2);
    let cleared = plan(
        Some(&first),
        &body(json!({"enabled": false, "vendorApiKey": null, "config": managed(json!({}))})),
        &ctx(&none),
    )
    .unwrap();
    assert!(cleared.record.vendor_api_key.is_none());
    assert_eq!(cleared.delete, vec![first.vendor_api_key.clone().unwrap().secret]);
    let replaced = plan(
        Some(&first),
        &body(json!({"enabled": true, "vendorApiKey": "another-key-1", "config": managed(json!({}))})),
        &ctx(&none),
    )
    .unwrap();
    assert_eq!(replaced.delete, vec![first.vendor_api_key.unwrap().secret]);
    assert_eq!(replaced.record.vendor_api_key.unwrap().last_four, None, "short keys show nothing");
}

#[test]
fn a_saved_key_replaces_a_raw_key_and_both_at_once_are_refused() {
    let none = HashMap::new();
    let first =
        plan(None, &body(json!({"enabled": true, "vendorApiKey": KEY, "config": managed(json!({}))})), &ctx(&none))
            .unwrap()
            .record;
    let id = Uuid::from_u128(9);
    let saved = plan(
        Some(&first),
        &body(json!({"enabled": true, "providerApiKeyId": id, "config": managed(json!({}))})),
        &ctx(&none),
    )
    .unwrap();
    assert_eq!(saved.record.provider_api_key_id, Some(id));
    assert!(saved.record.vendor_api_key.is_none());
    assert_eq!(saved.delete.len(), 1);
    let both = errors_of(
        None,
        json!({"enabled": true, "providerApiKeyId": id, "vendorApiKey": KEY, "config": managed(json!({}))}),
        &none,
    );
    assert!(both.contains_key("vendorApiKey"), "{both:?}");
    let mut unknown = ctx(&none);
    unknown.provider_key_exists = false;
    let e = plan(None, &body(json!({"enabled": true, "providerApiKeyId": id, "config": managed(json!({}))})), &unknown)
        .err()
        .unwrap();
    assert!(e.errors.unwrap().contains_key("providerApiKeyId"));
    let no_credential = errors_of(None, json!({"enabled": true, "config": managed(json!({}))}), &none);
    assert!(no_credential.contains_key("enabled"), "{no_credential:?}");
}

#[test]
fn agent_source_rules() {
    let none = HashMap::new();
    let existing = errors_of(None, json!({"enabled": false, "config": {"agentSource": "existing"}}), &none);
    assert!(existing.contains_key("config.agentId") && existing.contains_key("config.environmentId"), "{existing:?}");
    let ok = plan(
        None,
        &body(
            json!({"enabled": false, "config": {"agentSource": "existing", "agentId": "agent_01", "environmentId": "env_01"}}),
        ),
        &ctx(&none),
    );
    assert!(ok.is_ok());
    let skills = errors_of(
        None,
        json!({"enabled": false, "config": {"agentSource": "existing", "agentId": "a", "environmentId": "e",
            "managedAgent": {"modelId": "m", "skills": [{"skillId": "pdf", "type": "vendor"}]}}}),
        &none,
    );
    assert!(skills.contains_key("config.managedAgent.skills"), "{skills:?}");
    let managed_ids = errors_of(
        None,
        json!({"enabled": false, "config": {"agentSource": "serviceManaged", "agentId": "a",
            "managedAgent": {"modelId": "m"}}}),
        &none,
    );
    assert!(managed_ids.contains_key("config.agentId"));
    let missing = errors_of(None, json!({"enabled": false, "config": {"agentSource": "serviceManaged"}}), &none);
    assert!(missing.contains_key("config.managedAgent"));
}

#[test]
fn custom_skills_must_exist_and_versions_are_bounded() {
    let skill = Uuid::from_u128(77);
    let skills = HashMap::from([(skill, 3)]);
    let value = |id: Value, version: Value| json!({"enabled": false, "config": managed(json!({"skills": [{"skillId": id, "type": "custom", "version": version}]}))});
    assert!(plan(None, &body(value(json!(skill), json!("3"))), &ctx(&skills)).is_ok());
    assert!(plan(None, &body(value(json!(skill), Value::Null)), &ctx(&skills)).is_ok());
    let unknown = errors_of(None, value(json!(Uuid::from_u128(78)), Value::Null), &skills);
    assert!(unknown.contains_key("config.managedAgent.skills[0].skillId"), "{unknown:?}");
    let future = errors_of(None, value(json!(skill), json!("4")), &skills);
    assert!(future.contains_key("config.managedAgent.skills[0].version"), "{future:?}");
    let not_uuid = errors_of(None, value(json!("pdf"), Value::Null), &skills);
    assert!(not_uuid.contains_key("config.managedAgent.skills[0].skillId"));
    let twice = errors_of(
        None,
        json!({"enabled": false, "config": managed(json!({"skills": [{"skillId": "pdf", "type": "vendor"}, {"skillId": "pdf", "type": "vendor"}]}))}),
        &skills,
    );
    assert!(twice.contains_key("config.managedAgent.skills[1].skillId"));
}

#[test]
fn twenty_one_skills_are_refused_by_the_body() {
    let skills: Vec<Value> = (0..21).map(|i| json!({"skillId": format!("s{i}"), "type": "vendor"})).collect();
    let value = json!({"enabled": false, "config": managed(json!({"skills": skills}))});
    let e = workapi_kit::input::parse::<SaveManagedProviderBody>(&value).err().unwrap();
    assert!(e.errors.unwrap().contains_key("config.managedAgent.skills"));
}

#[test]
fn mcp_servers_keep_their_credentials_by_id_or_url() {
    let none = HashMap::new();
    let servers = json!([
        {"url": "https://mcp.example.com/mcp", "authMode": "bearer", "bearerToken": "bearer-secret-1"},
        {"url": "https://oauth.example.com/mcp", "id": "gh", "name": "GitHub", "authMode": "oauth",
         "oauthCredential": {"accessToken": "access-1", "refreshToken": "refresh-1", "clientId": "client",
            "clientSecret": "client-secret-1", "tokenEndpoint": "https://oauth.example.com/token",
            "tokenEndpointAuthType": "client_secret_basic", "expiresAt": "2026-12-01T00:00:00Z", "scope": "repo"}},
        {"url": "http://localhost:8080/mcp"}
    ]);
    let first =
        plan(None, &body(json!({"enabled": false, "config": managed(json!({"mcpServers": servers}))})), &ctx(&none))
            .unwrap();
    assert_eq!(first.create.len(), 4);
    let stored = &first.record.config.managed_agent.as_ref().unwrap().mcp_servers;
    assert_eq!(stored[0].name, "mcp.example.com", "derived from the URL");
    assert_eq!(stored[1].name, "GitHub");
    assert_eq!(stored[2].auth_mode, AuthMode::None);
    let first_id = stored[0].id.clone();
    let record = first.record;

    // Re-sent without credentials (and the first without its id): everything kept.
    let again = json!([
        {"url": "https://mcp.example.com/mcp", "authMode": "bearer"},
        {"url": "https://oauth.example.com/mcp", "id": "gh", "authMode": "oauth",
         "oauthCredential": {"clientId": "client", "tokenEndpoint": "https://oauth.example.com/token",
            "tokenEndpointAuthType": "client_secret_basic"}}
    ]);
    let kept = plan(
        Some(&record),
        &body(json!({"enabled": false, "config": managed(json!({"mcpServers": again}))})),
        &ctx(&none),
    )
    .unwrap();
    assert!(kept.create.is_empty() && kept.delete.is_empty(), "{:?}", kept.delete);
    let servers = &kept.record.config.managed_agent.as_ref().unwrap().mcp_servers;
    assert_eq!(servers[0].id, first_id);
    assert_eq!(servers[0].bearer_token, record.config.managed_agent.as_ref().unwrap().mcp_servers[0].bearer_token);
    let oauth = servers[1].oauth_credential.as_ref().unwrap();
    assert!(oauth.access_token.is_some() && oauth.refresh_token.is_some() && oauth.client_secret.is_some());
    assert_eq!(oauth.scope, None, "non-secret fields are saved as sent");

    // A server dropped, and a token cleared: their secrets are deleted.
    let fewer = json!([{"url": "https://oauth.example.com/mcp", "id": "gh", "authMode": "oauth",
        "oauthCredential": {"refreshToken": null, "tokenEndpoint": "https://oauth.example.com/token"}}]);
    let dropped = plan(
        Some(&record),
        &body(json!({"enabled": false, "config": managed(json!({"mcpServers": fewer}))})),
        &ctx(&none),
    )
    .unwrap();
    assert_eq!(dropped.delete.len(), 2, "the bearer token and the refresh token");
}

#[test]
fn auth_modes_need_their_credentials() {
    let none = HashMap::new();
    let case = |server: Value| {
        errors_of(None, json!({"enabled": false, "config": managed(json!({"mcpServers": [server]}))}), &none)
    };
    let at = "config.managedAgent.mcpServers[0]";
    assert!(case(json!({"url": "https://a.example", "authMode": "bearer"})).contains_key(&format!("{at}.bearerToken")));
    assert!(
        case(json!({"url": "https://a.example", "authMode": "oauth"})).contains_key(&format!("{at}.oauthCredential"))
    );
    assert!(case(json!({"url": "https://a.example", "bearerToken": "x"})).contains_key(&format!("{at}.bearerToken")));
    assert!(
        case(json!({"url": "https://a.example", "authMode": "oauth", "oauthCredential": {"refreshToken": "r"}}))
            .contains_key(&format!("{at}.oauthCredential.tokenEndpoint"))
    );
    assert!(
        case(json!({"url": "https://a.example", "authMode": "oauth",
            "oauthCredential": {"accessToken": "a", "tokenEndpointAuthType": "client_secret_post"}}))
        .contains_key(&format!("{at}.oauthCredential.clientSecret"))
    );
    let http = json!({"enabled": false, "config": managed(json!({"mcpServers": [{"url": "http://a.example"}]}))});
    let e = workapi_kit::input::parse::<SaveManagedProviderBody>(&http).err().unwrap();
    assert!(e.errors.unwrap().contains_key(&format!("{at}.url")));
    let twice = errors_of(
        None,
        json!({"enabled": false, "config": managed(json!({"mcpServers": [
            {"url": "https://a.example", "id": "x"}, {"url": "https://b.example", "id": "x"}]}))}),
        &none,
    );
    assert!(twice.contains_key("config.managedAgent.mcpServers[1].id"), "{twice:?}");
}

#[test]
fn repositories_and_vaults() {
    let none = HashMap::new();
    let repo = |id: i64, name: &str| {
        json!({"id": id, "name": name, "fullName": format!("octo/{name}"), "private": true,
            "url": format!("https://github.com/octo/{name}"), "cloneUrl": null})
    };
    let ok = json!({"enabled": false, "config": {"agentSource": "serviceManaged", "managedAgent": {"modelId": "m"},
        "githubRepositoryDefaults": [repo(1, "a"), repo(2, "b")], "userVaultIds": ["v1", "v2"]}});
    assert!(plan(None, &body(ok), &ctx(&none)).is_ok());
    let mut wrong_name = repo(1, "a");
    wrong_name["name"] = json!("b");
    let bad = errors_of(
        None,
        json!({"enabled": false, "config": {"agentSource": "serviceManaged", "managedAgent": {"modelId": "m"},
            "githubRepositoryDefaults": [wrong_name, repo(1, "c")], "userVaultIds": ["v1", "v1"]}}),
        &none,
    );
    for key in
        ["config.githubRepositoryDefaults[0].name", "config.githubRepositoryDefaults[1].id", "config.userVaultIds[1]"]
    {
        assert!(bad.contains_key(key), "{key}: {bad:?}");
    }
    let missing = workapi_kit::input::parse::<SaveManagedProviderBody>(&json!({"enabled": false, "config": {
        "agentSource": "serviceManaged", "managedAgent": {"modelId": "m"},
        "githubRepositoryDefaults": [{"id": 1, "name": "a", "fullName": "nope", "url": "http://x.example"}]}}))
    .err()
    .unwrap()
    .errors
    .unwrap();
    for key in ["fullName", "private", "url", "cloneUrl"] {
        assert!(missing.contains_key(&format!("config.githubRepositoryDefaults[0].{key}")), "{key}: {missing:?}");
    }
}
