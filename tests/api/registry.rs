//! The registry (`registry::FUNCTIONS`, with the MCP function: `local::functions()`) against
//! everything else that names functions: for every function, its events, its SAM block (paths, shared managed policy, log group), its
//! `cargo lambda watch` prefixes, and entity prefixes that never collide. Adding a function
//! to the registry makes this test name whatever else is missing (docs/functions.md), and
//! `the_generated_files_match_the_registry` fails until `workapi template` has written the
//! function's template block, watch routes and events.

use lambda_http::lambda_runtime::{Context, LambdaEvent};
use lambda_http::request::LambdaRequest;
use lambda_http::tower::{Service, ServiceExt};
use local::template::{gateway_match, template_matches};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use workapi_domain::token::TokenKey;
use workapi_kit::AppState;
use workapi_kit::app::TokenKeySource;
use workapi_kit::function::Function;
use workapi_store::sqlite::SqliteStore;

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
            resource == DISPATCHER.0 || local::functions().any(|f| format!("{}Function", resource_name(f)) == resource),
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
    local::template::events(&repo(), function)
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

/// Every API resource the template declares, with the function it invokes.
fn template_resources() -> Vec<(&'static str, String)> {
    let template = read("template.yaml");
    local::functions()
        .flat_map(|function| {
            let block = template_block(&template, &format!("{}Function", resource_name(function))).unwrap_or_default();
            block
                .lines()
                .filter_map(|line| line.trim().strip_prefix("Path: ").map(str::to_owned))
                .map(|path| (function.name, path))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Each event names the resource API Gateway would match for its path among every resource
/// the template declares (`resource`, `requestContext.resourcePath`), with the path
/// parameters that resource binds, and that resource invokes the event's own function: the
/// events are what the deployed API sends, not a catch-all stand-in.
#[test]
fn every_event_names_the_resource_the_gateway_matches() {
    let resources = template_resources();
    assert!(resources.len() >= 20, "{resources:?}");
    let mut wrong = Vec::new();
    for function in local::functions() {
        for (file, text) in events(function) {
            let event: Value = serde_json::from_str(&text).unwrap();
            let path = event["path"].as_str().unwrap();
            let best = resources
                .iter()
                .filter_map(|(owner, resource)| {
                    gateway_match(resource, path).map(|(rank, params)| (rank, owner, resource, params))
                })
                .max_by(|a, b| a.0.cmp(&b.0));
            let Some((_, owner, resource, params)) = best else {
                wrong.push(format!("{}: no resource of template.yaml matches {path}", file.display()));
                continue;
            };
            let params = if params.is_empty() { Value::Null } else { Value::Object(params) };
            let named = (&event["resource"], &event["requestContext"]["resourcePath"], &event["pathParameters"]);
            if *owner != function.name
                || named != (&Value::from(resource.as_str()), &Value::from(resource.as_str()), &params)
            {
                wrong.push(format!(
                    "{}: {path} matches {resource} of {owner} with {params}, the event says {} / {} / {}",
                    file.display(),
                    named.0,
                    named.1,
                    named.2
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "events that are not what API Gateway sends:\n{}", wrong.join("\n"));
}

#[test]
fn the_gateway_match_prefers_literal_then_parameter_then_proxy() {
    let m = |resource, path| gateway_match(resource, path).map(|(rank, params)| (rank, Value::Object(params)));
    assert_eq!(m("/tags/{proxy+}", "/tags/task/1"), Some((vec![2, 0], serde_json::json!({"proxy": "task/1"}))));
    assert_eq!(m("/tags/{proxy+}", "/tags"), None, "a greedy parameter takes one segment at least");
    assert_eq!(m("/projects/{projectId}", "/projects/p1/tasks"), None);
    assert_eq!(m("/", "/"), Some((vec![2], serde_json::json!({}))));
    let literal = m("/projects/{projectId}/support-contingents", "/projects/p1/support-contingents").unwrap();
    let proxy = m("/projects/{projectId}/{proxy+}", "/projects/p1/support-contingents").unwrap();
    assert!(literal.0 > proxy.0);
}

/// Every documented operation of every function has an event under `events/<function>/`
/// (for `cargo lambda invoke` and the tests above).
#[test]
fn every_operation_has_an_event() {
    let mut missing = Vec::new();
    for function in registry::FUNCTIONS {
        let document = serde_json::to_value(function.document()).unwrap();
        let events: Vec<(String, String)> = events(function)
            .into_iter()
            .map(|(_, text)| {
                let event: Value = serde_json::from_str(&text).unwrap();
                (event["httpMethod"].as_str().unwrap().to_owned(), event["path"].as_str().unwrap().to_owned())
            })
            .collect();
        for (template, item) in document["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                let method = method.to_uppercase();
                if !events.iter().any(|(m, path)| *m == method && template_matches(template, path)) {
                    missing.push(format!("{}: {method} {template} ({})", function.name, operation["operationId"]));
                }
            }
        }
    }
    assert!(missing.is_empty(), "operations without an event:\n{}", missing.join("\n"));
}

/// The README names every function (its row in the Layout table and its place in the SAM
/// stack's list) and links every page of `docs/`, so a new function or page cannot leave it
/// stale without this failing.
#[test]
fn the_readme_names_every_function_and_docs_page() {
    let readme = read("README.md");
    let stack = readme
        .split_once("The stack ([template.yaml](template.yaml))")
        .and_then(|(_, rest)| rest.split_once("\n\n"))
        .map(|(paragraph, _)| paragraph)
        .expect("README.md describes the SAM stack");
    let mut missing = Vec::new();
    for function in local::functions() {
        let name = function.name;
        if !readme.contains(&format!("| `functions/{name}/` |")) {
            missing.push(format!("the Layout table has no row `functions/{name}/`"));
        }
        if !stack.contains(&format!("`{name}`")) {
            missing.push(format!("the SAM section's list of functions lacks `{name}`"));
        }
    }
    let mut pages: Vec<_> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .collect();
    pages.sort();
    assert!(pages.len() >= 10, "{pages:?}");
    for page in pages {
        if !readme.contains(&format!("(docs/{page})")) {
            missing.push(format!("no link to docs/{page}"));
        }
    }
    assert!(missing.is_empty(), "README.md is stale:\n{}", missing.join("\n"));
}

/// template.yaml's function blocks, Cargo.toml's watch router and the events are what the
/// descriptors imply (`cargo run -p local -- template` writes them): a function's needs and
/// the deployed stack cannot drift apart, and the MCP function holds what the functions it
/// runs need.
#[test]
fn the_generated_files_match_the_registry() {
    let functions: Vec<_> = local::functions().collect();
    let document = serde_json::to_value(registry::document()).unwrap();
    let stale = local::template::stale(&repo(), &functions, &document).unwrap();
    assert!(stale.is_empty(), "{}", local::template::report(&repo(), &stale));
}

/// Issue 37: every deployed function is traced, logs JSON at the template's levels, deploys
/// through its alias with a deployment preference rolled back by its own error-rate alarm and
/// the API's 5XX alarm, and has its three alarms and its dashboard row; no alarm and no row
/// names anything else: the alarms are the functions' and the four of the API and the table.
/// The one function the registry does not list: the events' dispatcher, invoked by the table's
/// stream and the delivery queue, not by API Gateway (docs/events.md#delivery), with its alarms
/// (docs/operations.md#events).
const DISPATCHER: (&str, &[&str]) = (
    "DispatchFunction",
    &["DispatchErrorsAlarm", "DispatchIteratorAgeAlarm", "DeliveryDeadLetterAlarm", "StreamFailureAlarm"],
);

#[test]
fn alarms_and_dashboard_match_the_registry_one_to_one() {
    use std::collections::BTreeSet;
    let text = read("template.yaml");
    let template: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let resources = template["Resources"].as_mapping().unwrap();
    let functions: Vec<&Function> = local::functions().collect();
    let mut expected: BTreeSet<String> =
        ["ApiServerErrorRateAlarm", "ApiLatencyAlarm", "TableThrottlesAlarm", "TableSystemErrorsAlarm"]
            .map(String::from)
            .into();
    for function in &functions {
        let resource = format!("{}Function", resource_name(function));
        let block = template_block(&text, &resource).unwrap();
        for property in [
            "      Tracing: Active\n",
            "        LogFormat: JSON\n",
            "        ApplicationLogLevel: !Ref ApplicationLogLevel\n",
            "        SystemLogLevel: !Ref SystemLogLevel\n",
            "      AutoPublishAlias: live\n",
            "        Type: !Ref DeploymentType\n",
            &format!("          - !Ref {resource}ErrorRateAlarm\n"),
            "          - !Ref ApiServerErrorRateAlarm\n",
        ] {
            assert!(block.contains(property), "{resource} lacks {property:?}");
        }
        for alarm in local::monitoring::alarm_names(&resource) {
            let alarm_block = template_block(&text, &alarm).unwrap_or_else(|| panic!("no {alarm}"));
            assert!(alarm_block.contains(&format!("Value: !Ref {resource}\n")), "{alarm} watches {resource}");
            expected.insert(alarm);
        }
    }
    let dispatcher = template_block(&text, DISPATCHER.0).unwrap();
    for property in [
        "      Tracing: Active\n",
        "        LogFormat: JSON\n",
        "      AutoPublishAlias: live\n",
        "          - !Ref DispatchErrorsAlarm\n",
    ] {
        assert!(dispatcher.contains(property), "{} lacks {property:?}", DISPATCHER.0);
    }
    expected.extend(DISPATCHER.1.iter().map(|alarm| alarm.to_string()));
    let alarms: BTreeSet<String> = resources
        .iter()
        .filter(|(_, r)| r["Type"].as_str() == Some("AWS::CloudWatch::Alarm"))
        .map(|(name, _)| name.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(alarms, expected, "the alarms are the registry's functions' and the API's and table's");

    let dashboards: Vec<_> =
        resources.iter().filter(|(_, r)| r["Type"].as_str() == Some("AWS::CloudWatch::Dashboard")).collect();
    assert_eq!(dashboards.len(), 1, "one dashboard");
    let serde_norway::Value::Tagged(body) = &dashboards[0].1["Properties"]["DashboardBody"] else {
        panic!("the dashboard body is a !Sub")
    };
    let body: Value = serde_json::from_str(body.value.as_str().unwrap()).unwrap();
    let (mut rows, mut lambdas) = (BTreeSet::new(), BTreeSet::new());
    for metric in
        body["widgets"].as_array().unwrap().iter().flat_map(|w| w["properties"]["metrics"].as_array().unwrap())
    {
        let metric = metric.as_array().unwrap();
        match metric.get(2).and_then(Value::as_str) {
            Some("function") => rows.insert(metric[3].as_str().unwrap().to_owned()),
            Some("FunctionName") => lambdas.insert(metric[3].as_str().unwrap().to_owned()),
            _ => false,
        };
    }
    let names: BTreeSet<String> = functions.iter().map(|f| f.name.to_owned()).collect();
    assert_eq!(rows, names, "a dashboard row per function, from the metrics its requests write");
    let resources: BTreeSet<String> = functions.iter().map(|f| format!("${{{}Function}}", resource_name(f))).collect();
    assert_eq!(lambdas, resources, "and from Lambda's metrics of that function");
}
