//! The largest body of every creating and updating operation (docs/data-model.md#limits): each
//! catalogue write, with every bounded text filled to its `maxLength` and every bounded list to
//! its `maxItems` (the whole body kept within the 1 MiB a request takes), is stored on every
//! backend, or refused with the same 400 naming the field to shorten. Never a 500, never a
//! success on one store and a refusal on the other.

use api_tests::operations::{Body, Catalogue, Request, UNIQUE, catalogue, documented, success};
use api_tests::{TestApi, backends};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use workapi_kit::http::MAX_BODY_BYTES;

/// How a fresh value replaces [`UNIQUE`] when sent (12 characters for its 8).
const UNIQUE_GROWTH: usize = 4;
/// Room left under [`MAX_BODY_BYTES`] for the JSON the filler cannot foresee.
const BODY_MARGIN: usize = 4 * 1024;
/// Texts at least this long are "long" (descriptions, rich text): the ones shortened together
/// when the filled body would exceed a request's size.
const LONG_TEXT: usize = 1024;

/// What became of an operation's largest body: its refusals and the size stored, or what went
/// wrong.
type Outcome = Result<String, String>;

#[tokio::test]
async fn the_largest_body_of_every_write_is_stored_or_refused_alike_on_every_backend() {
    let documents = documents();
    let operations = documented();
    let mut outcomes: BTreeMap<String, Vec<(&'static str, Outcome)>> = BTreeMap::new();
    for backend in backends().await {
        let api = TestApi::start(&backend).await;
        let catalogue = catalogue(&api).await;
        for request in &catalogue.requests {
            let (function, _, path) = &operations[&request.operation_id];
            if !is_json_write(request, function) {
                continue;
            }
            let Some(schema) = request_schema(&documents[function], path, &request.method) else { continue };
            let outcome = largest_stored(&api, &catalogue, &documents[function], &schema, request).await;
            println!("[{}] {} {}: {outcome:?}", backend.name, request.operation_id, request.path);
            outcomes.entry(request.operation_id.clone()).or_default().push((backend.name, outcome));
        }
    }
    let mut failures = Vec::new();
    for (operation, results) in &outcomes {
        for (backend, outcome) in results {
            if let Err(why) = outcome {
                failures.push(format!("[{backend}] {operation}: {why}"));
            }
        }
        if results.windows(2).any(|w| w[0].1 != w[1].1) {
            failures.push(format!("{operation}: the backends differ: {results:?}"));
        }
    }
    assert!(!outcomes.is_empty(), "the catalogue has JSON writes");
    assert!(failures.is_empty(), "largest bodies:\n{}", failures.join("\n"));
}

/// Sends `request` filled to its bounds; while the store refuses it as too large (a 400 naming
/// the field), again with everything shrunk, until it is stored. The outcome lists the refusals
/// and the size stored, or says what went wrong.
async fn largest_stored(
    api: &TestApi,
    catalogue: &Catalogue,
    document: &Value,
    schema: &Value,
    request: &Request,
) -> Outcome {
    let mut scale = 1.0;
    let mut refusals = Vec::new();
    for _ in 0..12 {
        let mut filled = largest(document, schema, request, scale);
        if filled.method == Method::POST {
            // As a careful client sends a create: its answer is recorded with it.
            filled.headers.push(("Idempotency-Key".into(), uuid::Uuid::new_v4().to_string()));
        }
        let (status, body) = catalogue.send(api, &filled).await;
        let size = body_size(&filled) / 1024;
        if success(request, status) {
            refusals.push(format!("{status} stored at {size} KB"));
            return Ok(refusals.join("; "));
        }
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let field = too_large_field(&body).filter(|_| status == 400).ok_or_else(|| format!("{status} {body}"))?;
        refusals.push(format!("400 naming {field} at {size} KB"));
        scale *= 0.7;
    }
    Err(format!("never stored: {}", refusals.join("; ")))
}

/// Whether an example's field names existing state (an id, a version), here or inside it.
fn names_state(name: &str, value: &Value) -> bool {
    name == "id"
        || name.ends_with("Id")
        || name.ends_with("Ids")
        || name == "version"
        || match value {
            Value::Object(fields) => fields.iter().any(|(n, v)| names_state(n, v)),
            Value::Array(items) => items.iter().any(|v| names_state("", v)),
            _ => false,
        }
}

/// The JSON writes, but OAuth's: its bodies are credentials and client metadata that RFC rules
/// bound to a few KB (docs/oauth.md), and a filled password is another request, not a larger one.
fn is_json_write(request: &Request, function: &str) -> bool {
    matches!(request.method, Method::POST | Method::PUT | Method::PATCH)
        && matches!(request.body, Body::Json(_))
        && function != "oauth"
}

fn body_size(request: &Request) -> usize {
    match &request.body {
        Body::Json(value) => value.to_string().len() + UNIQUE_GROWTH * value.to_string().matches(UNIQUE).count(),
        _ => 0,
    }
}

/// The field a "too large to store" 400 names.
fn too_large_field(body: &Value) -> Option<String> {
    let errors = body["errors"].as_object()?;
    errors.iter().find_map(|(field, messages)| {
        let message = messages[0].as_str()?;
        message.contains("too large to store").then(|| field.clone())
    })
}

/// Each function's document as JSON, by function name.
fn documents() -> BTreeMap<&'static str, Value> {
    registry::FUNCTIONS
        .iter()
        .map(|f| (f.name, serde_json::to_value(f.document()).expect("the document as JSON")))
        .collect()
}

fn request_schema(document: &Value, path: &str, method: &Method) -> Option<Value> {
    let operation = &document["paths"][path][method.as_str().to_ascii_lowercase()];
    operation["requestBody"]["content"]["application/json"]["schema"].as_object().map(|s| Value::Object(s.clone()))
}

/// `request` with its body filled to `scale` of its bounds, long texts shortened together until
/// the body fits a request.
fn largest(document: &Value, schema: &Value, request: &Request, scale: f64) -> Request {
    let Body::Json(original) = &request.body else { unreachable!("a JSON write") };
    let mut share = 1.0;
    let mut filled = request.clone();
    for _ in 0..8 {
        let mut filler = Filler { document, share, scale, counter: 0 };
        filled.body = Body::Json(filler.fill(original, schema));
        let size = body_size(&filled);
        if size <= MAX_BODY_BYTES - BODY_MARGIN {
            break;
        }
        share *= (MAX_BODY_BYTES - BODY_MARGIN) as f64 / size as f64 * 0.97;
    }
    filled
}

struct Filler<'a> {
    document: &'a Value,
    /// The share of its `maxLength` a long text is filled to (so that the body fits a request).
    share: f64,
    /// The share of its bound every text and list is filled to (so that the item fits).
    scale: f64,
    /// Makes every filled text distinct (names that must be unique stay unique).
    counter: usize,
}

impl Filler<'_> {
    fn resolve<'s>(&'s self, schema: &'s Value) -> &'s Value {
        match schema["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/schemas/")) {
            Some(name) => self.resolve(&self.document["components"]["schemas"][name]),
            None => schema,
        }
    }

    /// The branch of a `oneOf`/`anyOf`/`allOf` that describes `value`'s JSON type.
    fn branch<'s>(&'s self, schema: &'s Value, value: &Value) -> &'s Value {
        let schema = self.resolve(schema);
        for key in ["oneOf", "anyOf", "allOf"] {
            if let Some(branches) = schema[key].as_array() {
                let fits = |b: &&Value| {
                    let b = self.resolve(b);
                    match value {
                        Value::Object(_) => b["properties"].is_object(),
                        Value::String(_) => b["type"] == "string",
                        Value::Array(_) => b["type"] == "array",
                        _ => false,
                    }
                };
                if let Some(branch) = branches.iter().find(fits) {
                    return self.branch(branch, value);
                }
            }
        }
        schema
    }

    /// Whether `schema` holds a choice among few values or existing things: an enum or an id.
    fn has_choice(&self, schema: &Value) -> bool {
        let schema = self.resolve(schema);
        schema.get("enum").is_some()
            || schema["format"] == "uuid"
            || schema["properties"].as_object().is_some_and(|p| p.values().any(|f| self.has_choice(f)))
            || ["oneOf", "anyOf", "allOf"]
                .iter()
                .any(|k| schema[*k].as_array().is_some_and(|b| b.iter().any(|b| self.has_choice(b))))
    }

    /// `value` with the optional fields it lacks taken from its schema's example (variants,
    /// options, lists the catalogue's minimal request leaves out), then filled.
    fn fill(&mut self, value: &Value, schema: &Value) -> Value {
        let schema = self.branch(schema, value).clone();
        match value {
            Value::Object(given) => {
                let mut fields = given.clone();
                if let Some(example) = schema["examples"][0].as_object().or(schema["example"].as_object()) {
                    // Ids and versions name existing state, which the example's do not.
                    for (name, v) in example.iter().filter(|(name, v)| !names_state(name, v)) {
                        let field = fields.entry(name.clone()).or_insert_with(|| v.clone());
                        if field.as_array().is_some_and(Vec::is_empty) {
                            *field = v.clone();
                        }
                    }
                }
                Value::Object(
                    fields
                        .iter()
                        .map(|(name, v)| {
                            let field = &schema["properties"][name];
                            let filled = if field.is_null() { v.clone() } else { self.fill(v, field) };
                            (name.clone(), filled)
                        })
                        .collect(),
                )
            }
            Value::Array(items) if !items.is_empty() => {
                let item_schema = &schema["items"];
                // Copies of an element with a choice (a language, an id) would repeat it.
                let distinct = !self.has_choice(item_schema);
                let max = schema["maxItems"].as_u64().map(|m| (m as f64 * self.scale) as usize).filter(|_| distinct);
                let count = max.unwrap_or(items.len()).max(items.len());
                (0..count).map(|i| self.fill(&items[i.min(items.len() - 1)], item_schema)).collect()
            }
            Value::String(text) => Value::String(self.fill_text(text, &schema)),
            other => other.clone(),
        }
    }

    /// `text` lengthened to its `maxLength` when the schema allows any text of that length (not
    /// an enum, a format or an id), still valid against the schema; else unchanged.
    fn fill_text(&mut self, text: &str, schema: &Value) -> String {
        let Some(max) = schema["maxLength"].as_u64().map(|m| m as usize) else { return text.to_owned() };
        if schema.get("enum").is_some() || schema.get("format").is_some() || text.len() >= max {
            return text.to_owned();
        }
        let growth = UNIQUE_GROWTH * text.matches(UNIQUE).count();
        let share = if max >= LONG_TEXT { self.share * self.scale } else { self.scale };
        let target = ((max as f64) * share) as usize;
        let target = target.saturating_sub(growth).max(text.chars().count());
        self.counter += 1;
        let tag = format!(" {}", self.counter);
        let pad = target.saturating_sub(text.chars().count() + tag.len());
        let filled: String = format!("{text}{}{tag}", "lorem ipsum ".chars().cycle().take(pad).collect::<String>());
        // The text guard (no control or invisible characters) holds for the filler's letters;
        // any other pattern (an icon's, a colour's) must accept the filled text.
        let mut schema = schema.clone();
        if schema["pattern"].as_str().is_some_and(workapi_kit::input::is_text_guard) {
            schema.as_object_mut().map(|s| s.remove("pattern"));
        }
        match jsonschema::draft202012::new(&schema) {
            Ok(validator) if validator.is_valid(&json!(filled)) => filled,
            _ => text.to_owned(),
        }
    }
}
