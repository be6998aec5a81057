//! Webhook endpoints (docs/events.md#webhook-endpoints) over HTTP on every store backend: the
//! secret is shown once and kept only in the secret store, rotation keeps the previous secret
//! for 24 hours (at most two), URLs must be https to public addresses (the metadata address
//! refused even where private ones are allowed), and only settings managers manage endpoints.

use api_tests::{TestApi, assert_error_body, backends, each_backend};
use base64::Engine;
use reqwest::Method;
use serde_json::{Value, json};
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::{ROOT, STAFF};
use workapi_kit::net::WebhookTargets;
use workapi_kit::secrets::SecretName;
use workapi_store::Key;

const PUBLIC_URL: &str = "https://93.184.215.14/workapi/hooks";

/// The stored endpoint item, as JSON text, and the names of the secrets it refers to.
async fn stored(api: &TestApi, id: &str) -> (String, Vec<String>) {
    let key = Key::new(format!("WS#{}#WEBHOOKS", api.workspace_id), format!("WEBHOOK#{id}"));
    let item = api.store.get(&key).await.unwrap().expect("the endpoint item");
    let names = item["secrets"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_owned()).collect();
    (Value::Object(item).to_string(), names)
}

async fn secret_value(api: &TestApi, name: &str) -> Option<String> {
    let name = SecretName::new(name).unwrap();
    api.secrets.get(&name).await.unwrap().map(|v| v.expose().to_owned())
}

#[tokio::test]
async fn an_endpoint_shows_its_secret_once_and_rotates_with_an_overlap() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let body = json!({"url": PUBLIC_URL, "eventTypes": ["tag.deleted", "tag.created"], "description": "CRM"});
        let (status, created) = api.post("/webhooks", &root, body).await;
        assert_eq!(status, 201, "[{}] {created}", api.backend);
        let secret = created["secret"].as_str().unwrap().to_owned();
        let raw = base64::engine::general_purpose::STANDARD.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
        assert_eq!(raw.len(), 32);
        assert_eq!(created["eventTypes"], json!(["tag.created", "tag.deleted"]), "catalogue order, deduplicated");
        assert_eq!((created["enabled"].as_bool(), created["url"].as_str()), (Some(true), Some(PUBLIC_URL)));
        let id = created["id"].as_str().unwrap().to_owned();
        let path = format!("/webhooks/{id}");

        // Never again in an answer, the table or an event: only in the secret store.
        let (status, read) = api.get(&path, &root).await;
        assert_eq!(status, 200);
        assert!(read.get("secret").is_none(), "{read}");
        let listed = api.list_all("/webhooks", &root).await;
        assert!(listed.iter().any(|e| e["id"] == id.as_str()) && listed.iter().all(|e| e.get("secret").is_none()));
        let (item, names) = stored(api, &id).await;
        assert!(!item.contains(&secret), "the table holds the secret's name, not its value");
        assert_eq!(names.len(), 1);
        assert_eq!(secret_value(api, &names[0]).await.as_deref(), Some(secret.as_str()));
        let events = api.list_all(&format!("/events?resourceKind=webhook_endpoint&resourceId={id}"), &root).await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["type"], "webhook_endpoint.created");
        assert!(!events[0].to_string().contains(&secret));

        // Rotation: a new secret, the previous one signing 24 h more.
        let rotate = format!("{path}/secret/rotate");
        let (status, rotated) = api.post(&rotate, &root, json!({})).await;
        assert_eq!(status, 201, "{rotated}");
        let second = rotated["secret"].as_str().unwrap().to_owned();
        assert_ne!(second, secret);
        let overlap_end = rotated["previousSecretExpiresAt"].as_str().unwrap();
        let end = time::OffsetDateTime::parse(overlap_end, &time::format_description::well_known::Rfc3339).unwrap();
        let left = end - time::OffsetDateTime::now_utc();
        assert!(left > time::Duration::hours(23) && left <= time::Duration::hours(24), "{overlap_end}");
        let (item, names) = stored(api, &id).await;
        assert_eq!(names.len(), 2);
        assert!(!item.contains(&second));
        assert_eq!(secret_value(api, &names[0]).await.as_deref(), Some(second.as_str()));
        assert_eq!(secret_value(api, &names[1]).await.as_deref(), Some(secret.as_str()));
        // Again: the first secret stops at once (at most two sign), and is deleted.
        let (status, again) = api.post(&rotate, &root, json!({})).await;
        assert_eq!(status, 201, "{again}");
        let (_, now) = stored(api, &id).await;
        assert_eq!(now.len(), 2);
        assert_eq!(now[1], names[0], "the previous secret is the one the last rotation made");
        assert_eq!(secret_value(api, &names[1]).await, None, "the superseded secret is deleted");

        // A change keeps the secret; a stale If-Match changes nothing.
        let (status, headers, changed) =
            api.send_with(Method::PATCH, &path, &root, &[], Some(json!({"enabled": false, "description": null}))).await;
        assert_eq!(status, 200, "{changed}");
        assert_eq!((changed["enabled"].as_bool(), &changed["description"]), (Some(false), &Value::Null));
        let etag = headers["etag"].to_str().unwrap().to_owned();
        let (status, _, _) = api
            .send_with(Method::PATCH, &path, &root, &[("If-Match", "\"0-stale\"")], Some(json!({"enabled": true})))
            .await;
        assert_eq!(status, 412);
        let (status, _, _) = api.send_with(Method::DELETE, &path, &root, &[("If-Match", etag.as_str())], None).await;
        assert_eq!(status, 200);
        assert_eq!(api.get(&path, &root).await.0, 404);
        assert_eq!(secret_value(api, &now[0]).await, None, "a deleted endpoint's secrets are deleted");
        assert_eq!(secret_value(api, &now[1]).await, None);
        let types: Vec<Value> = api
            .list_all(&format!("/events?resourceKind=webhook_endpoint&resourceId={id}"), &root)
            .await
            .iter()
            .map(|e| e["type"].clone())
            .collect();
        assert_eq!(
            types,
            [
                "webhook_endpoint.created",
                "webhook_endpoint.secret_rotated",
                "webhook_endpoint.secret_rotated",
                "webhook_endpoint.updated",
                "webhook_endpoint.deleted"
            ]
        );
    })
    .await;
}

#[tokio::test]
async fn urls_must_be_https_to_public_addresses() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        for url in [
            "http://93.184.215.14/hooks",
            "https://127.0.0.1/hooks",
            "https://10.0.0.1/hooks",
            "https://192.168.1.20/hooks",
            "https://169.254.169.254/latest/meta-data",
            "https://[::1]/hooks",
            "https://[fd00:ec2::254]/hooks",
            "https://user:pw@93.184.215.14/hooks",
            "https://93.184.215.14/hooks#x",
            "not a url",
        ] {
            let (status, body) = api.post("/webhooks", &root, json!({"url": url, "eventTypes": ["tag.created"]})).await;
            assert_error_body(api.backend, status, &body, 400);
            assert!(body["errors"]["url"].is_array(), "{url}: {body}");
        }
        for types in [json!([]), json!(["tag.exploded"]), json!("tag.created")] {
            let (status, body) = api.post("/webhooks", &root, json!({"url": PUBLIC_URL, "eventTypes": types})).await;
            assert_error_body(api.backend, status, &body, 400);
            let named = body["errors"].as_object().unwrap().keys().any(|k| k.starts_with("eventTypes"));
            assert!(named, "{types}: {body}");
        }
        // Only settings managers manage endpoints.
        let (_, staff) = api.user(STAFF, UserKind::Employee).await;
        let (status, body) =
            api.post("/webhooks", &staff, json!({"url": PUBLIC_URL, "eventTypes": ["tag.created"]})).await;
        assert_error_body(api.backend, status, &body, 403);
        assert_eq!(api.get("/webhooks", &staff).await.0, 403);
    })
    .await;
}

/// `LT_WEBHOOKS_ALLOW_PRIVATE=true` (local work and tests) admits plain http and loopback or
/// private receivers, never the metadata service.
#[tokio::test]
async fn private_receivers_are_admitted_only_when_allowed_and_never_the_metadata_address() {
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::builder(&backend).webhook_targets(WebhookTargets { allow_private: true }).start().await;
    let (_, root) = api.user(ROOT, UserKind::Employee).await;
    for url in ["http://127.0.0.1:9/hooks", "https://10.0.0.1/hooks", "http://[::1]:8080/in"] {
        let (status, body) = api.post("/webhooks", &root, json!({"url": url, "eventTypes": ["tag.created"]})).await;
        assert_eq!(status, 201, "{url}: {body}");
    }
    for url in ["http://169.254.169.254/latest/meta-data", "https://[fd00:ec2::254]/", "http://0.0.0.0/"] {
        let (status, body) = api.post("/webhooks", &root, json!({"url": url, "eventTypes": ["tag.created"]})).await;
        assert_error_body(api.backend, status, &body, 400);
    }
}

/// At most 20 endpoints a workspace, counted in each create's and delete's transaction.
#[tokio::test]
async fn a_workspace_has_at_most_twenty_endpoints() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let body = json!({"url": PUBLIC_URL, "eventTypes": ["tag.created"]});
        let mut first = None;
        for _ in 0..20 {
            let (status, created) = api.post("/webhooks", &root, body.clone()).await;
            assert_eq!(status, 201, "{created}");
            first.get_or_insert(created["id"].as_str().unwrap().to_owned());
        }
        let (status, refused) = api.post("/webhooks", &root, body.clone()).await;
        assert_error_body(api.backend, status, &refused, 400);
        let (status, _, _) =
            api.call(Method::DELETE, &format!("/webhooks/{}", first.unwrap()), Some(&root), None).await;
        assert_eq!(status, 200);
        assert_eq!(api.post("/webhooks", &root, body).await.0, 201);
    })
    .await;
}
