//! OAuth dynamic client registration (RFC 7591), its management (RFC 7592), discovery
//! (RFC 8414, RFC 9728) and the `WWW-Authenticate` challenge of every 401, on both store
//! backends (docs/oauth.md).

use api_tests::{TestApi, assert_error_body, backends, client_from_own_address, each_backend};
use oauth::client;
use reqwest::Method;
use serde_json::{Value, json};
use workapi_kit::ratelimit::LoginLimits;

const REGISTER: &str = "/api/oauth/register";

fn unique_name() -> String {
    format!("Client {}", uuid::Uuid::new_v4().simple())
}

async fn register(api: &TestApi, body: Value) -> (u16, reqwest::header::HeaderMap, Value) {
    api.call(Method::POST, REGISTER, None, Some(body)).await
}

fn oauth_error(body: &Value, expected: &str) {
    assert_eq!(body["error"], expected, "{body}");
    assert!(body["error_description"].as_str().is_some_and(|d| !d.is_empty()), "{body}");
    assert!(body.get("statusCode").is_none(), "RFC body, not the API's: {body}");
}

#[tokio::test]
async fn registers_public_and_confidential_clients() {
    each_backend(async |backend, api| {
        let (status, headers, public) = register(
            api,
            json!({"redirect_uris": ["https://app.example/callback", "http://127.0.0.1/cb"], "client_name": unique_name()}),
        )
        .await;
        assert_eq!(status, 201, "{}: {public}", backend.name);
        assert_eq!(headers["cache-control"], "no-store");
        let id = public["client_id"].as_str().unwrap();
        assert!(client::is_client_id(id), "{id}");
        assert!(public.get("client_secret").is_none(), "no secret for a public client: {public}");
        assert_eq!(public["client_secret_expires_at"], 0, "listed by the spec for every client: {public}");
        assert_eq!(public["token_endpoint_auth_method"], "none");
        assert_eq!(public["grant_types"], json!(["authorization_code", "refresh_token"]));
        assert_eq!(public["response_types"], json!(["code"]));
        assert_eq!(public["redirect_uris"], json!(["https://app.example/callback", "http://127.0.0.1/cb"]));
        assert!(public["client_id_issued_at"].as_i64().unwrap() > 1_700_000_000);
        assert_eq!(public["registration_client_uri"], format!("{}/api/oauth/register/{id}", api.base));
        assert!(public["registration_access_token"].as_str().unwrap().starts_with("lt_rat_"));

        let (status, _, default_name) = register(api, json!({"redirect_uris": ["https://d.example/cb"]})).await;
        assert!(status == 201, "{default_name}");
        assert_eq!(default_name["client_name"], "Dynamically registered client");

        for method in ["client_secret_post", "client_secret_basic"] {
            let (status, _, confidential) = register(
                api,
                json!({
                    "redirect_uris": ["https://app.example/callback"],
                    "client_name": unique_name(),
                    "token_endpoint_auth_method": method,
                    "client_uri": "https://app.example",
                    "logo_uri": "https://app.example/logo.png",
                    "grant_types": ["authorization_code", "refresh_token"],
                    "response_types": ["code"],
                    "scope": "api:read api:write",
                }),
            )
            .await;
            assert_eq!(status, 201, "{confidential}");
            assert_eq!(confidential["token_endpoint_auth_method"], method);
            assert_eq!(confidential["client_secret_expires_at"], 0);
            assert_eq!(confidential["client_uri"], "https://app.example");
            let secret = confidential["client_secret"].as_str().unwrap();
            assert!(secret.len() >= 40, "{secret}");
            // Stored hashed only: the item holds neither the secret nor the registration token.
            let id = confidential["client_id"].as_str().unwrap();
            let item = api.store.get(&client::client_key(id).unwrap()).await.unwrap().unwrap();
            let raw = serde_json::to_string(&item).unwrap();
            assert!(!raw.contains(secret));
            assert!(!raw.contains(confidential["registration_access_token"].as_str().unwrap()));
            let stored = client::get(api.store.as_ref(), id).await.unwrap().unwrap();
            assert!(stored.is_confidential());
            assert!(stored.secret_matches(secret));
            assert!(!stored.secret_matches(&format!("{secret}x")));
            assert!(stored.redirect_uri_allowed("https://app.example/callback"));
        }
    })
    .await;
}

#[tokio::test]
async fn invalid_redirect_uris_are_refused() {
    each_backend(async |_, api| {
        let long = format!("https://app.example/{}", "a".repeat(2000));
        let too_many: Vec<String> = (0..11).map(|i| format!("https://app.example/cb{i}")).collect();
        for uris in [
            json!(["http://app.example/callback"]),
            json!(["https://app.example/callback#fragment"]),
            json!(["javascript:alert(1)"]),
            json!(["data:text/html,<script>alert(1)</script>"]),
            json!(["file:///etc/passwd"]),
            json!(["/relative/callback"]),
            json!(["app.example/callback"]),
            json!(["https://user:pass@app.example/callback"]),
            json!(["https://user@app.example/callback"]),
            json!(["https://app.example/ok", "http://evil.example/cb"]),
            json!([]),
            json!([""]),
            json!([42]),
            json!("https://app.example/callback"),
            json!(null),
            json!([long]),
            json!(too_many),
        ] {
            let (status, _, body) = register(api, json!({"redirect_uris": uris, "client_name": unique_name()})).await;
            assert_eq!(status, 400, "{uris}: {body}");
            oauth_error(&body, "invalid_redirect_uri");
        }
        let (status, _, body) = register(api, json!({"client_name": "no uris"})).await;
        assert_eq!(status, 400);
        oauth_error(&body, "invalid_redirect_uri");
        // One bad URI among good native ones: refused, and the error names it.
        let uris = json!(["cursor://anysphere.cursor-mcp/oauth/callback", "javascript:alert(1)//com.example.app"]);
        let (status, _, body) = register(api, json!({"redirect_uris": uris, "client_name": unique_name()})).await;
        assert_eq!(status, 400);
        oauth_error(&body, "invalid_redirect_uri");
        assert!(body["error_description"].as_str().unwrap().contains("javascript:alert(1)"), "{body}");
        let (status, _, body) =
            register(api, json!({"redirect_uris": ["myapp:/callback"], "client_name": unique_name()})).await;
        assert_eq!(status, 400, "not reverse-domain, not a known client scheme: {body}");
    })
    .await;
}

/// Native apps (RFC 8252 §7.1): Cursor registers a private-use, an https and a loopback URI
/// together; VS Code its own scheme; an app its reverse-domain scheme. All register, and the
/// authorization endpoint accepts exactly the registered URI.
#[tokio::test]
async fn native_clients_register_their_private_use_redirect_uris() {
    each_backend(async |_, api| {
        for uris in [
            json!(["cursor://anysphere.cursor-mcp/oauth/callback", "https://cursor.example/cb", "http://127.0.0.1:33418/cb"]),
            json!(["vscode://vscode.github-authentication/did-authenticate", "http://127.0.0.1:33418/"]),
            json!(["com.example.app:/oauth2redirect/example-provider"]),
        ] {
            let (status, _, body) = register(api, json!({"redirect_uris": uris, "client_name": unique_name()})).await;
            assert_eq!(status, 201, "{uris}: {body}");
            assert_eq!(body["redirect_uris"], uris);
            let client_id = body["client_id"].as_str().unwrap();
            let native = uris[0].as_str().unwrap();
            let query = |uri: &str| {
                format!(
                    "/api/oauth/authorize?response_type=code&client_id={client_id}&redirect_uri={}&code_challenge={}&code_challenge_method=S256",
                    url::form_urlencoded::byte_serialize(uri.as_bytes()).collect::<String>(),
                    "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
                )
            };
            let (status, _, _) = api.call(Method::GET, &query(native), None, None).await;
            assert_eq!(status, 200, "{native}: the consent page");
            let (status, _, _) = api.call(Method::GET, &query(&format!("{native}x")), None, None).await;
            assert_eq!(status, 400, "{native}: anything but the registered URI is an error page");
        }
    })
    .await;
}

#[tokio::test]
async fn invalid_metadata_is_refused() {
    each_backend(async |_, api| {
        let uris = json!(["https://app.example/callback"]);
        for extra in [
            json!({"token_endpoint_auth_method": "private_key_jwt"}),
            json!({"token_endpoint_auth_method": 1}),
            json!({"grant_types": ["client_credentials"]}),
            json!({"grant_types": ["refresh_token"]}),
            json!({"grant_types": []}),
            json!({"response_types": ["token"]}),
            json!({"scope": "admin"}),
            json!({"scope": "api:read  api:write"}),
            json!({"client_uri": "javascript:alert(1)"}),
            json!({"client_uri": "http://app.example"}),
            json!({"logo_uri": "not a url"}),
            json!({"client_name": ""}),
            json!({"client_name": 7}),
            json!({"client_name": "x".repeat(201)}),
            // Display spoofing on the consent page: reversed text, invisible characters.
            json!({"client_name": "\u{202e}moc.elgoog"}),
            json!({"client_name": "goo\u{200b}gle"}),
            json!({"client_name": "Acme\u{2066}Corp"}),
            // RFC 7592's own fields keep their documented types on a registration too.
            json!({"client_secret": 1}),
            json!({"client_id": ["dcr_x"]}),
            json!({"rotate_client_secret": "yes"}),
        ] {
            let mut body = extra.as_object().unwrap().clone();
            body.insert("redirect_uris".into(), uris.clone());
            let (status, _, answer) = register(api, Value::Object(body)).await;
            assert_eq!(status, 400, "{extra}: {answer}");
            oauth_error(&answer, "invalid_client_metadata");
        }
        // Not JSON at all.
        let response = api
            .http
            .post(api.url(REGISTER))
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400);
        oauth_error(&response.json().await.unwrap(), "invalid_client_metadata");
        // Unknown fields are ignored (RFC 7591 §2).
        let (status, _, body) =
            register(api, json!({"redirect_uris": uris, "client_name": unique_name(), "software_id": "x"})).await;
        assert_eq!(status, 201, "{body}");
    })
    .await;
}

#[tokio::test]
async fn registration_is_idempotent() {
    each_backend(async |backend, api| {
        let name = unique_name();
        let first_body = json!({
            "client_name": name,
            "redirect_uris": ["https://a.example/cb", "https://b.example/cb"],
            "token_endpoint_auth_method": "client_secret_basic",
        });
        let (status, _, first) = register(api, first_body.clone()).await;
        assert_eq!(status, 201, "{first}");
        assert!(first["client_secret"].is_string());
        let id = first["client_id"].as_str().unwrap();
        assert!(!client::get(api.store.as_ref(), id).await.unwrap().unwrap().is_shared(), "not shared yet");

        // Same name, same set of URIs in another order: the same client, no secret, no new token.
        let (status, _, again) = register(
            api,
            json!({
                "client_name": name,
                "redirect_uris": ["https://b.example/cb", "https://a.example/cb"],
                "token_endpoint_auth_method": "client_secret_basic",
            }),
        )
        .await;
        assert_eq!(status, 201, "{}: {again}", backend.name);
        assert_eq!(again["client_id"], first["client_id"]);
        assert!(again.get("client_secret").is_none(), "an anonymous caller never gets a secret: {again}");
        assert!(again.get("registration_access_token").is_none(), "{again}");
        assert_eq!(again["registration_client_uri"], first["registration_client_uri"]);
        // The first secret and token still work: nothing was rewritten, but the client is now
        // shared.
        let stored = client::get(api.store.as_ref(), id).await.unwrap().unwrap();
        assert!(stored.secret_matches(first["client_secret"].as_str().unwrap()));
        assert!(stored.registration_token_matches(first["registration_access_token"].as_str().unwrap()));
        assert!(stored.is_shared(), "{}: an identical re-registration shares the client", backend.name);

        // Anything different is another client (no conflict, no squatting of near-identical
        // metadata): another auth method, a logo_uri, a client_uri, another name or URI set.
        let mut ids = std::collections::BTreeSet::from([id.to_owned()]);
        for variant in [
            json!({"client_name": name, "redirect_uris": ["https://a.example/cb", "https://b.example/cb"]}),
            json!({"client_name": name, "redirect_uris": ["https://a.example/cb", "https://b.example/cb"], "token_endpoint_auth_method": "client_secret_post"}),
            json!({"client_name": name, "redirect_uris": ["https://a.example/cb", "https://b.example/cb"], "token_endpoint_auth_method": "client_secret_basic", "logo_uri": "https://a.example/logo.png"}),
            json!({"client_name": name, "redirect_uris": ["https://a.example/cb", "https://b.example/cb"], "token_endpoint_auth_method": "client_secret_basic", "client_uri": "https://a.example"}),
            json!({"client_name": name, "redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "client_secret_basic"}),
            json!({"client_name": unique_name(), "redirect_uris": ["https://a.example/cb", "https://b.example/cb"], "token_endpoint_auth_method": "client_secret_basic"}),
        ] {
            let (status, _, other) = register(api, variant.clone()).await;
            assert_eq!(status, 201, "{}: {variant}: {other}", backend.name);
            assert!(other["registration_access_token"].is_string(), "a new client: {other}");
            assert!(ids.insert(other["client_id"].as_str().unwrap().to_owned()), "{variant}: {other}");
        }
    })
    .await;
}

/// The squatting attack: whoever registers first cannot, once others were given the same client,
/// repoint it (RFC 7592 refuses a metadata change with 403), and the client keeps working for
/// everyone, also after the first registrant deletes its registration.
#[tokio::test]
async fn shared_clients_keep_their_metadata() {
    each_backend(async |backend, api| {
        let body = json!({"client_name": unique_name(), "redirect_uris": ["https://claude.example/api/mcp/auth_callback"]});
        let (status, _, squatter) = register(api, body.clone()).await;
        assert_eq!(status, 201, "{squatter}");
        let id = squatter["client_id"].as_str().unwrap().to_owned();
        let token = squatter["registration_access_token"].as_str().unwrap().to_owned();
        let path = format!("{REGISTER}/{id}");

        // The real client registers the same metadata: it gets the same client, which is now shared.
        let (status, _, real) = register(api, body.clone()).await;
        assert_eq!(status, 201, "{}: {real}", backend.name);
        assert_eq!(real["client_id"], id);
        assert!(real.get("registration_access_token").is_none() && real.get("client_secret").is_none(), "{real}");
        let before = client::get(api.store.as_ref(), &id).await.unwrap().unwrap();
        assert!(before.is_shared());

        // The first registrant can no longer rewrite it.
        for changed in [
            json!({"client_name": body["client_name"], "redirect_uris": body["redirect_uris"], "token_endpoint_auth_method": "client_secret_basic"}),
            json!({"client_name": body["client_name"], "redirect_uris": ["https://evil.example/cb"]}),
        ] {
            let (status, headers, denied) = api.call(Method::PUT, &path, Some(&token), Some(changed)).await;
            assert_eq!(status, 403, "{}: {denied}", backend.name);
            oauth_error(&denied, "access_denied");
            assert!(denied["error_description"].as_str().unwrap().contains("several parties"), "{denied}");
            assert_eq!(headers["cache-control"], "no-store");
        }
        // A wrong token is still 401, not 403: nothing is revealed without the token.
        let (status, _, _) = api.call(Method::DELETE, &path, Some("lt_rat_wrong"), None).await;
        assert_eq!(status, 401);
        let after = client::get(api.store.as_ref(), &id).await.unwrap().unwrap();
        assert_eq!(after.metadata(), before.metadata());
        assert!(!after.is_confidential());

        // Deleting ends the first registration, not the client the others use.
        let (status, _, _) = api.call(Method::DELETE, &path, Some(&token), None).await;
        assert_eq!(status, 204, "{}", backend.name);
        let (status, _, _) = api.call(Method::GET, &path, Some(&token), None).await;
        assert_eq!(status, 401, "{}: the registration access token ended", backend.name);
        let kept = client::get(api.store.as_ref(), &id).await.unwrap().expect("the shared client stays");
        assert_eq!(kept.metadata(), before.metadata());
        let (status, _, third) = register(api, body).await;
        assert_eq!(status, 201, "{third}");
        assert_eq!(third["client_id"], id);
    })
    .await;
}

/// A leaked secret: after someone re-registers a confidential client's metadata (name and
/// redirect URI are public on the consent page), its owner can still rotate the secret and
/// delete the client; the metadata stays frozen.
#[tokio::test]
async fn the_owner_of_a_shared_confidential_client_rotates_its_secret_and_deletes_it() {
    each_backend(async |backend, api| {
        let body = json!({"client_name": unique_name(), "redirect_uris": ["https://app.example/cb"], "token_endpoint_auth_method": "client_secret_basic"});
        let (status, _, owner) = register(api, body.clone()).await;
        assert_eq!(status, 201, "{owner}");
        let id = owner["client_id"].as_str().unwrap().to_owned();
        let token = owner["registration_access_token"].as_str().unwrap().to_owned();
        let leaked = owner["client_secret"].as_str().unwrap().to_owned();
        let path = format!("{REGISTER}/{id}");
        let (status, _, other) = register(api, body.clone()).await;
        assert_eq!((status, &other["client_id"]), (201, &json!(id)), "{other}");
        assert!(other.get("client_secret").is_none(), "{other}");

        let mut rotate = body.clone();
        rotate["rotate_client_secret"] = json!(true);
        let (status, _, rotated) = api.call(Method::PUT, &path, Some(&token), Some(rotate)).await;
        assert_eq!(status, 200, "{}: {rotated}", backend.name);
        let fresh = rotated["client_secret"].as_str().expect("a new secret").to_owned();
        assert_ne!(fresh, leaked);
        let stored = client::get(api.store.as_ref(), &id).await.unwrap().unwrap();
        assert!(stored.secret_matches(&fresh) && !stored.secret_matches(&leaked), "{}", backend.name);

        let mut repoint = body.clone();
        repoint["redirect_uris"] = json!(["https://evil.example/cb"]);
        let (status, _, denied) = api.call(Method::PUT, &path, Some(&token), Some(repoint)).await;
        assert_eq!(status, 403, "{}: {denied}", backend.name);
        oauth_error(&denied, "access_denied");

        let (status, _, _) = api.call(Method::DELETE, &path, Some(&token), None).await;
        assert_eq!(status, 204, "{}", backend.name);
        assert!(client::get(api.store.as_ref(), &id).await.unwrap().is_none(), "{}: nobody else could use it", backend.name);
    })
    .await;
}

/// Anonymous registration stores what it is sent: a limit of its own per IP, and a cap on the
/// stored metadata.
#[tokio::test]
async fn registrations_are_limited_per_ip_and_in_size() {
    for backend in backends().await {
        let limits = LoginLimits { registrations_per_ip: 3, window_secs: 3600, ..TestApi::GENEROUS_LOGIN };
        let mut api = TestApi::builder(&backend).login_limits(limits).start().await;
        api.http = client_from_own_address();
        let body = || json!({"client_name": unique_name(), "redirect_uris": ["https://app.example/cb"]});
        for _ in 0..3 {
            let (status, headers, answer) = register(&api, body()).await;
            assert_eq!(status, 201, "[{}] {answer}", api.backend);
            assert_eq!(headers["x-ratelimit-limit"], "3", "[{}] the tightest limit is reported", api.backend);
        }
        let (status, headers, answer) = register(&api, body()).await;
        assert_error_body(api.backend, status, &answer, 429);
        assert!(headers.contains_key("retry-after"));
        // Another address is not affected.
        api.http = client_from_own_address();
        let (status, _, answer) = register(&api, body()).await;
        assert_eq!(status, 201, "[{}] {answer}", api.backend);

        // Each URI within its own bound, together too much to store.
        let long = |n: usize| format!("https://app.example/{n}/{}", "a".repeat(1500));
        let (status, _, answer) =
            register(&api, json!({"client_name": unique_name(), "redirect_uris": [long(1), long(2), long(3)]})).await;
        assert_eq!(status, 400, "[{}] {answer}", api.backend);
        oauth_error(&answer, "invalid_client_metadata");
        assert!(answer["error_description"].as_str().unwrap().contains("4096"), "{answer}");
    }
}

#[tokio::test]
async fn concurrent_identical_registrations_create_one_client() {
    each_backend(async |backend, api| {
        let body = json!({"client_name": unique_name(), "redirect_uris": ["https://race.example/cb"]});
        let answers = futures_join_all((0..10).map(|_| register(api, body.clone()))).await;
        let mut ids = std::collections::BTreeSet::new();
        let mut tokens = 0;
        for (status, _, answer) in &answers {
            assert_eq!(*status, 201, "{}: {answer}", backend.name);
            ids.insert(answer["client_id"].as_str().unwrap().to_owned());
            tokens += usize::from(answer.get("registration_access_token").is_some());
        }
        assert_eq!(ids.len(), 1, "{}: {ids:?}", backend.name);
        assert_eq!(tokens, 1, "exactly one registration created the client");
    })
    .await;
}

/// `join_all` without a futures dependency: spawn-free, polls every future on this task.
async fn futures_join_all<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut set: Vec<std::pin::Pin<Box<F>>> = futures.map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = set.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, future) in set.iter_mut().enumerate() {
            if outputs[i].is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(out) => outputs[i] = Some(out),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending { std::task::Poll::Pending } else { std::task::Poll::Ready(()) }
    })
    .await;
    outputs.into_iter().map(|o| o.expect("every future finished")).collect()
}

#[tokio::test]
async fn rfc7592_read_update_delete() {
    each_backend(async |backend, api| {
        let name = unique_name();
        let (_, _, created) =
            register(api, json!({"client_name": name, "redirect_uris": ["https://app.example/cb"]})).await;
        let id = created["client_id"].as_str().unwrap().to_owned();
        let token = created["registration_access_token"].as_str().unwrap().to_owned();
        let path = format!("{REGISTER}/{id}");

        // Without, with a wrong token, with another client's token, for an unknown client: 401.
        let (_, _, other) = register(api, json!({"client_name": unique_name(), "redirect_uris": ["https://o.example/cb"]})).await;
        let other_token = other["registration_access_token"].as_str().unwrap();
        let unknown = format!("{REGISTER}/{}", client::new_client_id());
        for (method, target, credential) in [
            (Method::GET, path.as_str(), None),
            (Method::GET, path.as_str(), Some("lt_rat_wrong")),
            (Method::GET, path.as_str(), Some(other_token)),
            (Method::GET, unknown.as_str(), Some(token.as_str())),
            (Method::GET, "/api/oauth/register/dcr_x%23CLIENT", Some(token.as_str())),
            (Method::PUT, path.as_str(), Some("lt_rat_wrong")),
            (Method::DELETE, path.as_str(), None),
            (Method::DELETE, path.as_str(), Some(other_token)),
        ] {
            let body = (method == Method::PUT).then(|| json!({"redirect_uris": ["https://x.example/cb"]}));
            let (status, headers, answer) = api.call(method.clone(), target, credential, body).await;
            assert_eq!(status, 401, "{method} {target}: {answer}");
            oauth_error(&answer, "invalid_token");
            let challenge = headers["www-authenticate"].to_str().unwrap();
            assert!(challenge.starts_with("Bearer error=\"invalid_token\""), "{challenge}");
        }

        // Read.
        let (status, _, read) = api.call(Method::GET, &path, Some(&token), None).await;
        assert_eq!(status, 200, "{}: {read}", backend.name);
        assert_eq!(read["client_id"], id);
        assert_eq!(read["client_name"], name);
        assert!(read.get("client_secret").is_none());

        // Update: new URIs and confidential → a secret is issued once; the guard moves.
        let new_name = unique_name();
        let (status, _, updated) = api
            .call(
                Method::PUT,
                &path,
                Some(&token),
                Some(json!({
                    "client_id": id,
                    "client_name": new_name,
                    "redirect_uris": ["https://app.example/cb2"],
                    "token_endpoint_auth_method": "client_secret_post",
                })),
            )
            .await;
        assert_eq!(status, 200, "{updated}");
        assert_eq!(updated["client_name"], new_name);
        assert_eq!(updated["redirect_uris"], json!(["https://app.example/cb2"]));
        let secret = updated["client_secret"].as_str().unwrap().to_owned();
        let stored = client::get(api.store.as_ref(), &id).await.unwrap().unwrap();
        assert!(stored.secret_matches(&secret));
        assert!(!stored.redirect_uri_allowed("https://app.example/cb"));
        // The old identity is free again; the new one names this client.
        let (status, _, fresh) =
            register(api, json!({"client_name": name, "redirect_uris": ["https://app.example/cb"]})).await;
        assert_eq!(status, 201);
        assert_ne!(fresh["client_id"], id);
        // (An identical registration would now get this client and share it: see
        // shared_clients_cannot_be_changed_or_deleted.)
        let stored = client::get(api.store.as_ref(), &id).await.unwrap().unwrap();
        assert!(!stored.is_shared());

        // An update keeping the metadata keeps the secret; a wrong client_secret or client_id is refused.
        let body = json!({"client_name": new_name, "redirect_uris": ["https://app.example/cb2"], "token_endpoint_auth_method": "client_secret_post"});
        let (status, _, kept) = api.call(Method::PUT, &path, Some(&token), Some(body.clone())).await;
        assert_eq!(status, 200, "{kept}");
        assert!(kept.get("client_secret").is_none());
        let mut wrong = body.as_object().unwrap().clone();
        wrong.insert("client_secret".into(), json!("lt_cs_wrong"));
        let (status, _, refused) = api.call(Method::PUT, &path, Some(&token), Some(Value::Object(wrong))).await;
        assert_eq!(status, 400);
        oauth_error(&refused, "invalid_client_metadata");
        let mut wrong = body.as_object().unwrap().clone();
        wrong.insert("client_id".into(), json!(client::new_client_id()));
        let (status, _, _) = api.call(Method::PUT, &path, Some(&token), Some(Value::Object(wrong))).await;
        assert_eq!(status, 400);
        // Asked rotation: a new secret, the old one stops matching.
        let mut rotate = body.as_object().unwrap().clone();
        rotate.insert("rotate_client_secret".into(), json!(true));
        let (status, _, rotated) = api.call(Method::PUT, &path, Some(&token), Some(Value::Object(rotate))).await;
        assert_eq!(status, 200, "{rotated}");
        let new_secret = rotated["client_secret"].as_str().unwrap();
        let stored = client::get(api.store.as_ref(), &id).await.unwrap().unwrap();
        assert!(stored.secret_matches(new_secret) && !stored.secret_matches(&secret));
        // Moving onto another client's identity (exactly its metadata) is refused; the guard
        // stays where it was.
        let (status, _, taken) = api
            .call(Method::PUT, &path, Some(&token), Some(json!({"client_name": name, "redirect_uris": ["https://app.example/cb"]})))
            .await;
        assert_eq!(status, 400, "{taken}");
        oauth_error(&taken, "invalid_client_metadata");
        let stored = client::get(api.store.as_ref(), &id).await.unwrap().unwrap();
        assert_eq!(stored.client_name, new_name);
        // Changing only the logo_uri moves the guard too: the old metadata is free again, the
        // new one names this client.
        let logo = json!({"client_name": new_name, "redirect_uris": ["https://app.example/cb2"], "token_endpoint_auth_method": "client_secret_post", "logo_uri": "https://app.example/logo.png"});
        let (status, _, with_logo) = api.call(Method::PUT, &path, Some(&token), Some(logo.clone())).await;
        assert_eq!(status, 200, "{with_logo}");
        assert_eq!(with_logo["logo_uri"], "https://app.example/logo.png");
        let (status, _, other) = register(api, body.clone()).await;
        assert_eq!(status, 201);
        assert_ne!(other["client_id"], id, "the old metadata is free: {other}");
        // Moving back onto it now collides with that new client.
        let (status, _, taken) = api.call(Method::PUT, &path, Some(&token), Some(body.clone())).await;
        assert_eq!(status, 400, "{taken}");
        oauth_error(&taken, "invalid_client_metadata");
        // Invalid redirect URIs in an update.
        let (status, _, invalid) = api
            .call(Method::PUT, &path, Some(&token), Some(json!({"redirect_uris": ["http://evil.example/cb"]})))
            .await;
        assert_eq!(status, 400);
        oauth_error(&invalid, "invalid_redirect_uri");
        // Becoming public drops the secret.
        let (status, _, public) = api
            .call(Method::PUT, &path, Some(&token), Some(json!({"client_name": new_name, "redirect_uris": ["https://app.example/cb2"]})))
            .await;
        assert_eq!(status, 200, "{public}");
        let stored = client::get(api.store.as_ref(), &id).await.unwrap().unwrap();
        assert!(!stored.is_confidential() && !stored.secret_matches(new_secret));

        // Delete: gone, its token no longer works, and its identity is free.
        let (status, _, _) = api.call(Method::DELETE, &path, Some(&token), None).await;
        assert_eq!(status, 204);
        assert!(client::get(api.store.as_ref(), &id).await.unwrap().is_none());
        let (status, _, _) = api.call(Method::GET, &path, Some(&token), None).await;
        assert_eq!(status, 401);
        let (status, _, again) =
            register(api, json!({"client_name": new_name, "redirect_uris": ["https://app.example/cb2"]})).await;
        assert_eq!(status, 201);
        assert_ne!(again["client_id"], id);
        assert!(again["registration_access_token"].is_string());
    })
    .await;
}

#[tokio::test]
async fn discovery_documents() {
    each_backend(async |_, api| {
        let (status, headers, spec_path) =
            api.call(Method::GET, "/api/.well-known/oauth-authorization-server", None, None).await;
        assert_eq!(status, 200);
        assert!(headers["content-type"].to_str().unwrap().starts_with("application/json"));
        let (status, _, rfc_path) =
            api.call(Method::GET, "/.well-known/oauth-authorization-server/api", None, None).await;
        assert_eq!(status, 200);
        assert_eq!(spec_path, rfc_path, "identical documents");
        // MCP 2025-03-26 clients look at the origin: the same document, with the real endpoints.
        let (status, _, origin) = api.call(Method::GET, "/.well-known/oauth-authorization-server", None, None).await;
        assert_eq!(status, 200);
        assert_eq!(origin, spec_path, "identical documents at the origin");
        let issuer = format!("{}/api", api.base);
        assert_eq!(spec_path["issuer"], issuer);
        assert_eq!(spec_path["authorization_endpoint"], format!("{issuer}/oauth/authorize"));
        assert_eq!(spec_path["token_endpoint"], format!("{issuer}/oauth/token"));
        assert_eq!(spec_path["registration_endpoint"], format!("{issuer}/oauth/register"));
        assert_eq!(spec_path["revocation_endpoint"], format!("{issuer}/oauth/revoke"));
        assert_eq!(spec_path["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(spec_path["authorization_response_iss_parameter_supported"], json!(true));
        assert_eq!(spec_path["scopes_supported"], json!(["api:read", "api:write"]));
        assert_eq!(spec_path["response_types_supported"], json!(["code"]));
        assert_eq!(spec_path["grant_types_supported"], json!(["authorization_code", "refresh_token"]));
        let methods = json!(["none", "client_secret_post", "client_secret_basic"]);
        assert_eq!(spec_path["token_endpoint_auth_methods_supported"], methods);
        assert_eq!(spec_path["revocation_endpoint_auth_methods_supported"], methods);

        // The registration endpoint it names works.
        let endpoint = spec_path["registration_endpoint"].as_str().unwrap();
        let response = api
            .http
            .post(endpoint)
            .json(&json!({"redirect_uris": ["http://localhost:8976/cb"], "client_name": unique_name()}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);

        for path in ["/.well-known/oauth-protected-resource", "/api/.well-known/oauth-protected-resource"] {
            let (status, _, resource) = api.call(Method::GET, path, None, None).await;
            assert_eq!(status, 200, "{path}");
            assert_eq!(resource["resource"], api.base);
            assert_eq!(resource["authorization_servers"], json!([issuer]));
            assert_eq!(resource["scopes_supported"], json!(["api:read", "api:write"]));
            assert_eq!(resource["bearer_methods_supported"], json!(["header"]));
        }

        // Another Host: https for a non-loopback host, and nothing of a malformed one.
        let response = api
            .http
            .get(api.url("/api/.well-known/oauth-authorization-server"))
            .header("host", "work.example.com")
            .send()
            .await
            .unwrap();
        let doc: Value = response.json().await.unwrap();
        assert_eq!(doc["issuer"], "https://work.example.com/api");
    })
    .await;
}

#[tokio::test]
async fn every_401_names_the_resource_metadata() {
    each_backend(async |_, api| {
        let metadata = format!("resource_metadata=\"{}/.well-known/oauth-protected-resource\"", api.base);
        // RFC 6750 §3.1: no error code without a credential, `invalid_token` for a bad one.
        for (token, expected) in [
            (None, format!("Bearer {metadata}")),
            (Some("lt_pat_garbage"), format!("Bearer error=\"invalid_token\", {metadata}")),
            (Some("eyJhbGciOiJIUzI1NiJ9.e30.x"), format!("Bearer error=\"invalid_token\", {metadata}")),
        ] {
            let (status, headers, _) = api.call(Method::GET, "/tags/task", token, None).await;
            assert_eq!(status, 401);
            let challenges: Vec<_> =
                headers.get_all("www-authenticate").iter().map(|v| v.to_str().unwrap().to_owned()).collect();
            assert_eq!(challenges, std::slice::from_ref(&expected), "{token:?}");
        }
        // RFC 7592 401s keep their error and gain the same parameter.
        let (_, headers, _) =
            api.call(Method::GET, &format!("{REGISTER}/{}", client::new_client_id()), Some("x"), None).await;
        assert_eq!(
            headers["www-authenticate"],
            format!(
                "Bearer error=\"invalid_token\", resource_metadata=\"{}/.well-known/oauth-protected-resource\"",
                api.base
            )
            .as_str()
        );
        // The login's 401 too.
        let (status, headers, _) = api
            .call(
                Method::POST,
                "/api/auth/login",
                None,
                Some(json!({"email": "nobody@x.example", "password": "wrong"})),
            )
            .await;
        assert_eq!(status, 401);
        assert!(headers["www-authenticate"].to_str().unwrap().contains("resource_metadata="));
    })
    .await;
}

#[test]
fn the_openapi_document_covers_registration_and_discovery() {
    let doc = serde_json::to_value(registry::document()).unwrap();
    let paths = &doc["paths"];
    for (path, method) in [
        ("/api/oauth/register", "post"),
        ("/api/oauth/register/{client_id}", "get"),
        ("/api/oauth/register/{client_id}", "put"),
        ("/api/oauth/register/{client_id}", "delete"),
        ("/api/.well-known/oauth-authorization-server", "get"),
        ("/.well-known/oauth-authorization-server/api", "get"),
        ("/.well-known/oauth-protected-resource", "get"),
        ("/api/.well-known/oauth-protected-resource", "get"),
    ] {
        assert!(paths[path][method].is_object(), "{method} {path}");
    }
    assert_eq!(paths["/api/oauth/register"]["post"]["security"], json!([]));
    assert_eq!(
        paths["/api/oauth/register"]["post"]["responses"]["400"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/OAuthErrorBody"
    );
    assert_eq!(paths["/api/oauth/register/{client_id}"]["get"]["security"], json!([{"registrationAccessToken": []}]));
    // A shared client refuses RFC 7592 metadata changes with 403, in the RFC error body.
    let client = &paths["/api/oauth/register/{client_id}"];
    assert_eq!(
        client["put"]["responses"]["403"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/OAuthErrorBody"
    );
}
