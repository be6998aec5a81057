//! The OpenAPI document against the routers: every documented operation is routed, every route
//! is documented, events match documented operations, and [P] declarations reach the document.

use api_tests::{TestApi, backends};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// (METHOD, path template) of every documented operation.
fn documented() -> BTreeSet<(String, String)> {
    let doc = serde_json::to_value(registry::document()).unwrap();
    let mut ops = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, _) in item.as_object().unwrap() {
            if ["get", "put", "post", "delete", "patch", "head", "options"].contains(&method.as_str()) {
                ops.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    ops
}

/// A concrete path for a template: valid-looking values for each parameter.
fn concrete(template: &str) -> String {
    template.replace("{type}", "task").replace("{id}", "00000000-0000-4000-8000-000000000000")
}

#[tokio::test]
async fn every_documented_operation_is_routed() {
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let (_, token) = api.user(ROOT, UserKind::Employee).await;
    let ops = documented();
    assert!(ops.len() >= 6, "{ops:?}");
    for (method, template) in ops {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let (status, _, body) =
            api.call(method.clone(), &concrete(&template), Some(&token), Some(serde_json::json!({}))).await;
        let unrouted = status == 405 || (status == 404 && body["message"] == "No such route");
        assert!(!unrouted, "{method} {template} is documented but not routed ({status} {body})");
    }
}

/// Every `.rs` file under `dir`, nested modules included, in a stable order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir).into_iter().flatten().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// Routes exist only through `utoipa_axum::routes!`, which documents them in the same breath:
/// a bare `.route(` in a function crate would be a route the document lacks. Every source file
/// of every function is read, nested modules (`roles/mod.rs`, …) included.
#[test]
fn functions_register_routes_only_with_their_documentation() {
    let mut offenders = Vec::new();
    let mut nested_handler_files = Vec::new();
    // The exceptions: the MCP endpoint, JSON-RPC rather than a REST operation, is deliberately
    // not in the document (docs/mcp.md); its crate holds its routes, `/mcp` and its surfaces
    // `/mcp/{*surface}`. And the MCP resource's metadata for those surfaces, whose paths have
    // any number of segments (functions/oauth/src/discovery.rs, `mcp_surfaces`).
    let mcp = repo().join("functions/mcp/src/lib.rs");
    let mcp_text = std::fs::read_to_string(&mcp).unwrap();
    assert_eq!(mcp_text.matches(".route(").count(), 2, "the MCP function routes /mcp and its surfaces alone");
    assert!(mcp_text.contains(".route(PATH, axum::routing::any(endpoint))"), "the MCP route is /mcp");
    assert!(mcp_text.contains(".route(&format!(\"{PATH}/{{*surface}}\"), axum::routing::any(endpoint))"));
    let discovery = repo().join("functions/oauth/src/discovery.rs");
    let discovery_text = std::fs::read_to_string(&discovery).unwrap();
    assert_eq!(discovery_text.matches(".route(").count(), 1, "the surfaces' metadata alone");
    assert!(discovery_text.contains(".route(MCP_SURFACES_METADATA, axum::routing::get(protected_resource_mcp))"));
    for function in std::fs::read_dir(repo().join("functions")).unwrap() {
        let src = function.unwrap().path().join("src");
        for path in rust_files(&src) {
            let text = std::fs::read_to_string(&path).unwrap();
            if path != mcp && path != discovery && (text.contains(".route(") || text.contains("axum::routing::")) {
                offenders.push(path.display().to_string());
            }
            if path.parent() != Some(src.as_path()) && text.contains("#[utoipa::path(") {
                nested_handler_files.push(path.display().to_string());
            }
        }
    }
    assert!(offenders.is_empty(), "undocumented routes in {offenders:?}");
    // Not vacuous: the walk reached the handlers that live in nested modules.
    assert!(
        !nested_handler_files.is_empty(),
        "no handler (#[utoipa::path]) found in a nested module of functions/*/src: the walk does not recurse"
    );
}

/// Whether a concrete path (placeholders like `${ROLE_ID}` included) fits a path template:
/// literal segments equal, `{param}` segments take any value.
fn template_matches(template: &str, path: &str) -> bool {
    let (t, p): (Vec<_>, Vec<_>) = (template.split('/').collect(), path.split('/').collect());
    t.len() == p.len() && t.iter().zip(&p).all(|(t, p)| t == p || (t.starts_with('{') && t.ends_with('}')))
}

#[test]
fn every_event_names_a_documented_operation() {
    let ops = documented();
    let mut seen = 0;
    for function in std::fs::read_dir(repo().join("events")).unwrap() {
        let function = function.unwrap().path();
        // The MCP endpoint is not a documented operation (docs/mcp.md); its events run in
        // lambda_events::mcp_events_run_through_the_lambda_adapter.
        if function.ends_with("mcp") {
            continue;
        }
        // The dispatcher's are DynamoDB Streams and SQS events, not API Gateway requests; they
        // run in webhook_delivery::the_lambda_dispatcher_reads_stream_and_queue_records.
        if function.ends_with("dispatch") {
            continue;
        }
        for event in std::fs::read_dir(function).unwrap() {
            let path = event.unwrap().path();
            let event: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let method = event["httpMethod"].as_str().unwrap().to_owned();
            let event_path = event["path"].as_str().unwrap();
            let matched = ops.iter().any(|(m, t)| *m == method && template_matches(t, event_path));
            assert!(matched, "{} ({method} {event_path}) matches no documented operation", path.display());
            seen += 1;
        }
    }
    assert!(seen >= 6);
}

#[test]
fn projected_endpoints_carry_their_declaration() {
    let doc = serde_json::to_value(registry::document()).unwrap();
    let create = &doc["paths"]["/tags/{type}/create"]["post"];
    assert_eq!(
        create["x-lt-response-projection"]["compact"],
        serde_json::json!(<tags::Tag as workapi_kit::projection::Compact>::COMPACT)
    );
    let names: Vec<_> = create["parameters"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    for name in ["fieldsToReturn", "responseShape", "LT-Response-Shape"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let list = &doc["paths"]["/tags/{type}"]["get"];
    assert!(list.get("x-lt-response-projection").is_none(), "GET lists are not [P]");
    assert_eq!(list["security"][0]["bearer"][0], "api:read");
    assert_eq!(create["security"][1]["oauth2"][0], "api:write");
    assert_eq!(doc["paths"]["/docs/json"]["get"]["security"], serde_json::json!([]));
    assert_eq!(create["responses"]["429"]["$ref"], "#/components/responses/TooManyRequests");
    let max = doc["components"]["schemas"]["CreateTagBody"]["properties"]["name"]["maxLength"].as_u64();
    assert_eq!(max, Some(tags::domain::MAX_NAME_CHARS as u64), "documented bound = enforced bound");
    let colors = &doc["components"]["schemas"]["Color"]["enum"];
    assert_eq!(colors.as_array().map(Vec::len), Some(9), "the palette: {colors}");
    for color in colors.as_array().unwrap() {
        let parsed: Result<tags::domain::Color, _> = serde_json::from_value(color.clone());
        assert!(parsed.is_ok(), "documented palette = enforced palette: {color}");
    }
    assert!(serde_json::from_value::<tags::domain::Color>(serde_json::json!("plaid")).is_err());
}

#[tokio::test]
async fn the_document_is_served_as_json_and_yaml() {
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let json: Value = api.http.get(api.url("/docs/json")).send().await.unwrap().json().await.unwrap();
    assert_eq!(json, serde_json::to_value(registry::document()).unwrap());
    let response = api.http.get(api.url("/docs/yaml")).send().await.unwrap();
    assert_eq!(response.headers()["content-type"], "application/yaml");
    let yaml_text = response.text().await.unwrap();
    let yaml: Value = serde_norway::from_str(&yaml_text).unwrap();
    assert_eq!(yaml, serde_json::to_value(registry::document()).unwrap());
    // Both forms in the document's own order, as a reader opens them: `openapi` first.
    let top_level: Vec<&str> =
        yaml_text.lines().filter(|l| !l.starts_with([' ', '-'])).filter_map(|l| l.split(':').next()).collect();
    assert_eq!(top_level[..4], ["openapi", "info", "servers", "paths"], "{top_level:?}");
    let json_text = api.http.get(api.url("/docs/json")).send().await.unwrap().text().await.unwrap();
    let first_keys: Vec<&str> =
        json_text.lines().filter(|l| l.starts_with("  \"")).filter_map(|l| l.split('"').nth(1)).collect();
    assert_eq!(first_keys[..4], ["openapi", "info", "servers", "paths"], "{first_keys:?}");
}

/// The document as written (`openapi`, `info`, `servers`, `paths`… in the order of OpenAPI's
/// own objects), with one fix for determinism: utoipa keeps `x-` extensions in a hash map, so
/// they are moved to the end of their object in sorted order. Every other map is ordered already.
fn canonical(value: serde_norway::Value) -> serde_norway::Value {
    use serde_norway::Value as Yaml;
    match value {
        Yaml::Mapping(map) => {
            let mut entries: Vec<_> = map.into_iter().collect();
            let extension = |key: &Yaml| key.as_str().filter(|k| k.starts_with("x-")).map(str::to_owned);
            entries.sort_by_key(|(key, _)| extension(key));
            Yaml::Mapping(entries.into_iter().map(|(k, v)| (k, canonical(v))).collect())
        }
        Yaml::Sequence(items) => Yaml::Sequence(items.into_iter().map(canonical).collect()),
        other => other,
    }
}

/// The MCP tools derived from the document (`mcp::tools::catalog_json`), as the MCP function
/// embeds them (`functions/mcp/tools.json`): a cold start parses them instead of deriving them
/// (docs/mcp.md, "Tools"). Written by the same command as the document's snapshot.
#[test]
fn the_documents_mcp_tools_match_their_snapshot() {
    let path = repo().join("functions/mcp/tools.json");
    let current = mcp::tools::catalog_json(&serde_json::to_value(registry::document()).unwrap());
    if std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &current).unwrap();
        return;
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        stored == current,
        "functions/mcp/tools.json is not what the document's operations make now. If the change is intended, run \
         UPDATE_SNAPSHOTS=1 cargo test -p api-tests -- openapi::the_document and commit both files."
    );
}

/// The public contract as a file in the repository, so every change to it shows in review.
/// After an intended change: `UPDATE_SNAPSHOTS=1 cargo test -p api-tests -- openapi::the_document`.
#[test]
fn the_document_matches_its_snapshot() {
    let path = repo().join("functions/docs/openapi.json");
    let written: serde_norway::Value =
        serde_json::from_str(&serde_json::to_string(registry::document()).unwrap()).unwrap();
    let current = serde_json::to_string_pretty(&canonical(written)).unwrap() + "\n";
    if std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &current).unwrap();
        return;
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_default();
    if stored != current {
        let line = stored
            .lines()
            .zip(current.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(stored.lines().count().min(current.lines().count()));
        panic!(
            "the OpenAPI document differs from functions/docs/openapi.json from line {}:\n  snapshot: {}\n  now:      {}\n\
             If the change is intended, run UPDATE_SNAPSHOTS=1 cargo test -p api-tests -- openapi::the_document and commit the files it writes \
             (the document, and the MCP tools derived from it: functions/mcp/tools.json).",
            line + 1,
            stored.lines().nth(line).unwrap_or("<end>"),
            current.lines().nth(line).unwrap_or("<end>")
        );
    }
}
