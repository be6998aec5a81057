//! The registry (`registry::FUNCTIONS`, with the MCP function: `local::functions()`) against
//! everything else that names functions: for every function, its events, its SAM block (paths, shared managed policy, log group), its
//! `cargo lambda watch` prefixes, and entity prefixes that never collide. Adding a function
//! to the registry makes this test name whatever else is missing (docs/functions.md).

use lambda_http::lambda_runtime::{Context, LambdaEvent};
use lambda_http::request::LambdaRequest;
use lambda_http::tower::{Service, ServiceExt};
use serde_json::Value;
use shared::AppState;
use shared::app::TokenKeySource;
use shared::function::Function;
use shared::store::sqlite::SqliteStore;
use shared::token::TokenKey;
use std::path::PathBuf;
use std::sync::Arc;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `tags` → `Tags`, the SAM resource prefix.
fn resource_name(function: &Function) -> String {
    let mut chars = function.name.chars();
    chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
}

/// The lines of one resource block of template.yaml (its properties are indented by four).
fn template_block(template: &str, resource: &str) -> Option<String> {
    let header = format!("  {resource}:");
    let mut lines = template.lines().skip_while(|line| *line != header);
    lines.next()?;
    Some(lines.take_while(|line| line.starts_with("    ")).collect::<Vec<_>>().join("\n") + "\n")
}

#[test]
fn every_function_has_its_template_block_watch_route_and_events() {
    let template = read("template.yaml");
    let cargo = read("Cargo.toml");
    let mut missing = Vec::new();
    for function in local::functions() {
        let name = function.name;
        let resource = format!("{}Function", resource_name(function));
        match template_block(&template, &resource) {
            None => missing.push(format!("{name}: template.yaml has no {resource}")),
            Some(block) => {
                if !block.contains(&format!("Binary: {name}\n")) {
                    missing.push(format!("{name}: {resource} does not build binary {name}"));
                }
                for prefix in function.prefixes {
                    if !block.contains(&format!("Path: {prefix}/{{proxy+}}")) {
                        missing.push(format!("{name}: {resource} lacks the event Path: {prefix}/{{proxy+}}"));
                    }
                }
                if !block.contains("- !Ref FunctionBasePolicy") {
                    missing.push(format!("{name}: {resource} lacks the shared managed policy FunctionBasePolicy"));
                }
            }
        }
        let logs = format!("{resource}Logs");
        match template_block(&template, &logs) {
            Some(block) if block.contains(&format!("/aws/lambda/${{{resource}}}")) => {}
            _ => missing.push(format!("{name}: template.yaml has no log group {logs} for {resource}")),
        }
        for prefix in function.prefixes {
            if !cargo.contains(&format!("\"{prefix}/{{*rest}}\" = \"{name}\"")) {
                missing.push(format!("{name}: Cargo.toml's watch router lacks \"{prefix}/{{*rest}}\" = \"{name}\""));
            }
        }
        if events(function).is_empty() {
            missing.push(format!("{name}: events/{name}/ holds no event"));
        }
    }
    assert!(missing.is_empty(), "the registry and the rest disagree:\n{}", missing.join("\n"));
}

#[test]
fn every_template_function_is_in_the_registry() {
    let template = read("template.yaml");
    let resources = template.split_once("\nResources:\n").expect("a Resources section").1;
    for line in resources.lines().filter(|l| l.starts_with("  ") && !l.starts_with("   ") && l.ends_with("Function:")) {
        let resource = line.trim().trim_end_matches(':');
        assert!(
            local::functions().any(|f| format!("{}Function", resource_name(f)) == resource),
            "template.yaml deploys {resource}, which the registry does not list"
        );
    }
}

#[test]
fn entity_prefixes_never_collide() {
    let mut kinds: Vec<_> = registry::FUNCTIONS.iter().flat_map(|f| f.entities.iter().copied()).collect();
    kinds.sort_by_key(|k| k.name);
    kinds.dedup();
    assert!(kinds.len() >= 4, "{kinds:?}");
    for (i, a) in kinds.iter().enumerate() {
        for b in &kinds[i + 1..] {
            assert_ne!(a.name, b.name, "two entities named {}", a.name);
            assert!(
                !a.prefix.starts_with(b.prefix) && !b.prefix.starts_with(a.prefix),
                "key prefixes overlap: {} ({}) and {} ({})",
                a.name,
                a.prefix,
                b.name,
                b.prefix
            );
        }
    }
}

fn events(function: &Function) -> Vec<(PathBuf, String)> {
    let dir = repo().join("events").join(function.name);
    let mut found: Vec<_> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    found.sort();
    found
}

/// Whether a concrete path (placeholders included) fits a path template.
fn template_matches(template: &str, path: &str) -> bool {
    let (t, p): (Vec<_>, Vec<_>) = (template.split('/').collect(), path.split('/').collect());
    t.len() == p.len() && t.iter().zip(&p).all(|(t, p)| t == p || (t.starts_with('{') && t.ends_with('}')))
}

/// Every event of every function goes through lambda_http's adapter, as on Lambda, to one of
/// that function's documented operations: routed (not 404 "No such route", not 405).
#[tokio::test]
async fn every_event_reaches_a_documented_operation_of_its_function() {
    let store = Arc::new(SqliteStore::in_memory().unwrap());
    let key = TokenKey::generate();
    let demo = local::demo::ensure_demo(store.as_ref(), &key).await.unwrap().expect("an empty store");
    let state = AppState::new(store, TokenKeySource::Static(key));
    for function in registry::FUNCTIONS {
        let document = serde_json::to_value(function.document()).unwrap();
        let operations: Vec<(String, String)> = document["paths"]
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(path, item)| item.as_object().unwrap().keys().map(move |m| (m.to_uppercase(), path.clone())))
            .collect();
        for (file, text) in events(function) {
            let event: Value = serde_json::from_str(&text).unwrap();
            let (method, path) = (event["httpMethod"].as_str().unwrap(), event["path"].as_str().unwrap());
            assert!(
                operations.iter().any(|(m, t)| m == method && template_matches(t, path)),
                "{}: {method} {path} is not an operation of {}",
                file.display(),
                function.name
            );
            // Placeholders: the demo admin's token; any other `${…}` keeps its shape invalid,
            // which still proves the route (a 400 from the path, not a 404 from the router).
            let filled = text.replace("${TOKEN}", &demo.token);
            let request: LambdaRequest = serde_json::from_str(&filled).expect("an API Gateway proxy event");
            let mut adapter = lambda_http::Adapter::from(function.router(state.clone()));
            let response = adapter.ready().await.unwrap().call(LambdaEvent::new(request, Context::default())).await;
            let response = serde_json::to_value(response.unwrap()).unwrap();
            let status = response["statusCode"].as_u64().unwrap();
            let body = response["body"].as_str().unwrap_or_default();
            let unrouted = status == 405 || (status == 404 && body.contains("No such route"));
            assert!(
                !unrouted,
                "{}: {method} {path} is not routed by {} ({status} {body})",
                file.display(),
                function.name
            );
        }
    }
}
