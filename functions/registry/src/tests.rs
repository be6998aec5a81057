//! What the document tells clients (docs/conventions.md, "The OpenAPI document"): checks the
//! linters (Redocly, Spectral) do not make.

use super::*;
use serde_json::Value;
use std::collections::BTreeSet;

fn as_json() -> Value {
    serde_json::to_value(document()).unwrap()
}

/// The schema a `$ref` names, followed until it is no reference.
fn resolve<'d>(doc: &'d Value, mut schema: &'d Value) -> &'d Value {
    while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.trim_start_matches("#/components/schemas/");
        schema = &doc["components"]["schemas"][name];
    }
    schema
}

/// An example on the media type, on its schema, or (for an array) on its items' schema.
fn has_example(doc: &Value, media: &Value) -> bool {
    let carries = |v: &Value| v.get("example").is_some() || v.get("examples").is_some();
    let schema = &media["schema"];
    let items = if resolve(doc, schema)["type"] == "array" { &resolve(doc, schema)["items"] } else { &Value::Null };
    carries(media) || carries(schema) || carries(resolve(doc, schema)) || carries(resolve(doc, items))
}

fn gaps(doc: &Value) -> BTreeSet<String> {
    let mut gaps = BTreeSet::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values().filter(|o| o.get("responses").is_some()) {
            let id = operation["operationId"].as_str().unwrap();
            let mut gap = |what: String| gaps.insert(format!("{id}: {what}"));
            if operation["summary"].as_str().is_none_or(str::is_empty) {
                gap("no summary".into());
            }
            for (media_type, media) in operation["requestBody"]["content"].as_object().into_iter().flatten() {
                if !has_example(doc, media) {
                    gap(format!("request {media_type} without example"));
                }
            }
            let successes = operation["responses"].as_object().unwrap().iter().filter(|(s, _)| s.starts_with('2'));
            for (status, response) in successes {
                for (media_type, media) in response["content"].as_object().into_iter().flatten() {
                    if !has_example(doc, media) {
                        gap(format!("{status} {media_type} without example"));
                    }
                }
            }
        }
    }
    gaps
}

#[test]
fn operations_have_summaries_and_examples() {
    let found = gaps(&as_json());
    assert!(found.is_empty(), "operations lack what clients need (docs/functions.md, \"A handler\"): {found:#?}");
}

/// Summary and description are the handler's doc comment: the first line, then the rest.
#[test]
fn descriptions_accompany_summaries() {
    let doc = as_json();
    for item in doc["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values().filter(|o| o.get("summary").is_some()) {
            let description = operation["description"].as_str().unwrap_or("");
            assert!(!description.is_empty(), "{}: a summary without a description", operation["operationId"]);
        }
    }
}

/// Every string property named like a timestamp (`…At`) or a date (`…Date`) says so by its
/// format. Integer timestamps (RFC 7591 `client_id_issued_at`: Unix seconds) are left as they are.
#[test]
fn timestamps_and_dates_have_their_format() {
    let doc = as_json();
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        for (property, value) in schema["properties"].as_object().into_iter().flatten() {
            let is_string =
                value["type"] == "string" || value["type"].as_array().is_some_and(|t| t.contains(&"string".into()));
            let expected = if property.ends_with("At") || property.ends_with("_at") {
                "date-time"
            } else if property.ends_with("Date") || property.ends_with("_date") {
                "date"
            } else {
                continue;
            };
            if is_string {
                assert_eq!(value["format"], expected, "{name}.{property}");
            }
        }
    }
}

#[test]
fn the_document_names_its_servers_contact_and_licence() {
    let doc = as_json();
    assert!(!doc["servers"].as_array().unwrap().is_empty());
    assert!(doc["info"]["contact"]["name"].is_string());
    assert_eq!(doc["info"]["license"]["identifier"], workapi_kit::openapi::LICENSE_IDENTIFIER);
    let defined: BTreeSet<_> = doc["tags"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    for item in doc["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values().filter(|o| o.get("responses").is_some()) {
            let tags = operation["tags"].as_array().unwrap();
            assert!(!tags.is_empty() && tags.iter().all(|t| defined.contains(t.as_str().unwrap())), "{operation}");
        }
    }
}

/// Every create links to what takes its id (docs/conventions.md, "Links"): each link names an
/// operation of the document and fills only path parameters that operation has, from the
/// create's answer or its own path; and the creates a client follows most are linked.
#[test]
fn creates_link_to_the_operations_that_take_their_id() {
    let doc = as_json();
    let mut operations = std::collections::BTreeMap::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for operation in item.as_object().unwrap().values().filter(|o| o.get("operationId").is_some()) {
            operations.insert(operation["operationId"].as_str().unwrap().to_owned(), (path.clone(), operation));
        }
    }
    let mut links = BTreeSet::new();
    for (create, (path, operation)) in &operations {
        for response in operation["responses"].as_object().unwrap().values() {
            for (name, link) in response["links"].as_object().into_iter().flatten() {
                let target = link["operationId"].as_str().unwrap();
                assert_eq!(name, target, "{create}: a link is named for its operation");
                let (target_path, _) = operations.get(target).unwrap_or_else(|| panic!("{create} links to {target}"));
                for (parameter, value) in link["parameters"].as_object().unwrap() {
                    assert!(target_path.contains(&format!("{{{parameter}}}")), "{create} → {target}: {parameter}");
                    let value = value.as_str().unwrap();
                    let from_path =
                        value.strip_prefix("$request.path.").is_some_and(|p| path.contains(&format!("{{{p}}}")));
                    assert!(from_path || value.starts_with("$response.body#/"), "{create} → {target}: {value}");
                }
                links.insert(format!("{create} → {target}: {}", link["parameters"]));
            }
        }
    }
    for expected in [
        r#"createRole → getRole: {"id":"$response.body#/id"}"#,
        r#"createRole → setRolePermission: {"id":"$response.body#/id"}"#,
        r#"createTag → deleteTag: {"id":"$response.body#/id","type":"$request.path.type"}"#,
        r#"createTag → listTags: {"type":"$request.path.type"}"#,
        r#"createExpressQuotation → acceptExpressQuotation: {"expressQuotationId":"$response.body#/id","identifier":"$request.path.identifier"}"#,
        r#"createCatalogProduct → getCatalogProduct: {"productId":"$response.body#/id"}"#,
        r#"createAgentSkill → updateAgentSkill: {"skillId":"$response.body#/id"}"#,
        r#"saveAgentManagedProvider → getAgentManagedProvider: {"id":"$request.path.id"}"#,
        r#"uploadFile → deleteFile: {"id":"$response.body#/id"}"#,
        r#"registerOAuthClient → readOAuthClient: {"client_id":"$response.body#/client_id"}"#,
    ] {
        assert!(links.contains(expected), "missing {expected}; the links are {links:#?}");
    }
}

/// The operations of a function's finished document that take a bearer token
/// (`security: [{bearer: …}]`).
fn bearer_operations(function: &Function) -> Vec<String> {
    let finished = workapi_kit::openapi::finish(function.document(), function.tags);
    let document = serde_json::to_value(finished).unwrap();
    let mut found = Vec::new();
    for (path, item) in document["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            let bearer = operation["security"].as_array().into_iter().flatten().any(|r| r.get("bearer").is_some());
            if bearer {
                found.push(format!("{} {method} {path}", function.name));
            }
        }
    }
    found
}

/// The MCP function reaches every bearer operation through `BEARER_FUNCTIONS` alone.
#[test]
fn bearer_operations_are_served_by_bearer_functions() {
    let outside: Vec<String> = FUNCTIONS
        .iter()
        .filter(|f| !BEARER_FUNCTIONS.iter().any(|b| b.name == f.name))
        .flat_map(|f| bearer_operations(f))
        .collect();
    assert_eq!(outside, Vec::<String>::new(), "bearer operations outside BEARER_FUNCTIONS");
    for function in BEARER_FUNCTIONS {
        assert!(FUNCTIONS.iter().any(|f| f.name == function.name), "{} is not in FUNCTIONS", function.name);
        assert!(!bearer_operations(function).is_empty(), "{} has no bearer operation", function.name);
    }
}

/// Every operation that changes workspace state (each non-GET bearer operation) declares the
/// event types it records, next to its function's routes, and nothing else declares any
/// (docs/events.md). The OAuth server's and the login's operations change no workspace resource
/// and record none; the black-box test `events_api::every_change_of_the_catalogue_records_a_declared_event`
/// checks that each declared operation does record one.
#[test]
fn every_state_changing_operation_declares_its_events() {
    for function in FUNCTIONS {
        let bearer = BEARER_FUNCTIONS.iter().any(|b| b.name == function.name);
        let document = serde_json::to_value(function.document()).unwrap();
        let mut changing = BTreeSet::new();
        for item in document["paths"].as_object().into_iter().flatten().map(|(_, item)| item) {
            for (method, operation) in item.as_object().into_iter().flatten() {
                if bearer && ["post", "put", "patch", "delete"].contains(&method.as_str()) {
                    changing.insert(operation["operationId"].as_str().unwrap().to_owned());
                }
            }
        }
        let declared: BTreeSet<String> = function.emits.iter().map(|e| e.operation.to_owned()).collect();
        assert_eq!(declared, changing, "{}: declared events vs. state-changing operations", function.name);
        for emits in function.emits {
            assert!(!emits.events.is_empty(), "{} declares no event type", emits.operation);
        }
    }
}

/// The document's `webhooks` are the event catalogue, each with the schema of its data, and
/// every event type of the catalogue is recorded by some operation.
#[test]
fn the_webhooks_are_the_event_catalogue() {
    use workapi_domain::event::types;
    let doc = as_json();
    let webhooks: BTreeSet<&str> = doc["webhooks"].as_object().unwrap().keys().map(String::as_str).collect();
    let catalogue: BTreeSet<&str> = types::ALL.iter().map(|t| t.name).collect();
    assert_eq!(webhooks, catalogue);
    let recorded: BTreeSet<&str> =
        FUNCTIONS.iter().flat_map(|f| f.emits).flat_map(|e| e.events).map(|t| t.name).collect();
    assert_eq!(recorded, catalogue, "event types no operation records, or recorded but not catalogued");
    for event_type in types::ALL {
        for schema in [event_type.schema, "TruncatedData"] {
            assert!(doc["components"]["schemas"][schema].is_object(), "{}: no schema {schema}", event_type.name);
        }
        let payload = &doc["webhooks"][event_type.name]["post"]["requestBody"]["content"]["application/json"]["schema"];
        assert_eq!(payload["properties"]["type"]["const"], event_type.name);
    }
}
