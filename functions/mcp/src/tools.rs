//! The tools: one per documented operation that takes a bearer token and a JSON body (or none),
//! derived from the finished OpenAPI document, the same declarations the document is. Derived
//! when the tests write `functions/mcp/tools.json` (`catalog_json`, held equal to the generated
//! document's by `tests/api/openapi.rs`), which a cold start parses on first use: the derivation
//! (the 489 KB document, and the schemas made small) is work no cold start should pay.
//!
//! - name: the operationId; title: the summary; description: the description.
//! - `inputSchema`: an object whose properties are the path and query parameters, the
//!   `Idempotency-Key` header as `idempotencyKey`, and the JSON body's properties flattened
//!   beside them; when flattening is impossible (the body is not a plain object, or one of its
//!   property names is also a parameter's) the body is the one property `body`.
//! - `outputSchema`: the 2xx JSON response's schema when it is an object; any other JSON
//!   response is wrapped as `{"result": …}` (MCP wants objects as structured content).
use axum::http::Method;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;
use workapi_kit::openapi::PROJECTION_PARAMETERS;

/// The tool argument that carries the `Idempotency-Key` header.
pub const IDEMPOTENCY_ARGUMENT: &str = "idempotencyKey";
/// The argument holding the body when it is not flattened.
pub const BODY_ARGUMENT: &str = "body";
const COMPONENTS: &str = "#/components/schemas/";
const DEFS: &str = "#/$defs/";
/// The most bytes one tool's listing takes (compact JSON): a client loading every tool pays for
/// each, and the largest operations' full schemas were 16 KB.
pub const MAX_TOOL_BYTES: usize = 4096;
/// The smallest subschema worth a shared definition: a `$ref` to it costs about 30 bytes.
const SHARED_MIN_BYTES: usize = 64;
/// What a property that refers to a definition `fit` left out says, so that a model asks for it.
pub const LEFT_OUT: &str = "Its full schema: searchOperations";

/// One tool: what `tools/list` shows, and how `tools/call` turns arguments into a request.
#[derive(Debug, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    #[serde(with = "method_name")]
    pub method: Method,
    /// The path template, `/tags/{type}/{id}/color`.
    pub path: String,
    pub path_params: Vec<String>,
    pub query_params: Vec<String>,
    /// Whether the operation documents the `Idempotency-Key` header.
    pub idempotency_key: bool,
    pub body: BodyMode,
    /// The scope the operation needs (its bearer security requirement).
    pub scope: String,
    /// The operation's tag group, which is its toolset (`crate::surface`).
    pub toolset: String,
    /// A GET: it reads and changes nothing, so a read-only surface allows it.
    pub reads: bool,
    /// Whether the JSON response is not an object, so structured content wraps it as `result`.
    pub wraps_output: bool,
    /// The tool as `tools/list` shows it.
    pub listing: Listing,
    /// The full input schema when `fit` left definitions out of the listing's, as its text
    /// (parsed when `searchOperations` answers it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_input_schema: Option<Box<RawValue>>,
}

impl Tool {
    /// The full input schema, which `searchOperations` answers.
    pub fn input_schema(&self) -> Value {
        match &self.full_input_schema {
            Some(schema) => serde_json::from_str(schema.get()).expect("serialised from a Value"),
            None => self.listing.value()["inputSchema"].take(),
        }
    }
}

/// A tool's listing held as the compact JSON text it is in `tools.json`: a cold start's first
/// `tools/list` parses the catalog without building a tree of any listing or schema, and
/// answers with the listings' text as it is (docs/performance.md, "The MCP function's first
/// response"). The title and description search reads are read out of it on the first search.
#[derive(Debug, Clone)]
pub struct Listing {
    json: Box<RawValue>,
    texts: OnceLock<Texts>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct Texts {
    #[serde(default)]
    title: String,
    #[serde(default)]
    description: String,
}

impl Listing {
    pub fn value(&self) -> Value {
        serde_json::from_str(self.json.get()).expect("serialised from a Value")
    }

    /// The listing as `tools/list` writes it.
    pub fn raw(&self) -> &RawValue {
        &self.json
    }

    /// Its size in bytes, as `tools/list` writes it.
    pub fn bytes(&self) -> usize {
        self.json.get().len()
    }

    /// The operation's summary.
    pub fn title(&self) -> &str {
        &self.texts().title
    }

    pub fn description(&self) -> &str {
        &self.texts().description
    }

    fn texts(&self) -> &Texts {
        self.texts.get_or_init(|| serde_json::from_str(self.json.get()).unwrap_or_default())
    }
}

impl PartialEq for Listing {
    fn eq(&self, other: &Self) -> bool {
        self.json.get() == other.json.get()
    }
}

impl From<&Value> for Listing {
    fn from(value: &Value) -> Self {
        Listing { json: serde_json::value::to_raw_value(value).expect("a Value serialises"), texts: OnceLock::new() }
    }
}

impl Serialize for Listing {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Listing {
    /// The tool's JSON text as it is: no tree is built.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Listing { json: Box::<RawValue>::deserialize(deserializer)?, texts: OnceLock::new() })
    }
}

mod method_name {
    use axum::http::Method;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(method: &Method, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(method.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Method, D::Error> {
        String::deserialize(deserializer)?.parse().map_err(serde::de::Error::custom)
    }
}

/// What `tools.json` holds: the API's title and version (the server's info) and the tools.
#[derive(Debug, Serialize, Deserialize)]
pub struct Catalog {
    pub title: String,
    pub version: String,
    pub tools: Vec<Tool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BodyMode {
    None,
    /// The body's properties are arguments beside the parameters.
    Flattened,
    /// The body is the argument `body`.
    Nested,
}

/// The catalog as the tests last wrote it (`catalog_json`).
const CATALOG_JSON: &str = include_str!("../tools.json");

/// The embedded catalog, parsed on first use.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| serde_json::from_str(CATALOG_JSON).expect("tools.json is the JSON the tests wrote"))
}

/// Every tool, in document order (paths sorted, then methods).
pub fn all() -> &'static [Tool] {
    &catalog().tools
}

/// The catalog of an OpenAPI 3.1 document (as JSON), as `tools.json` holds it: compact JSON
/// with one tool per line, so that review shows which tools changed while the function embeds
/// (and pages in, on its first listing) half the bytes of pretty JSON.
pub fn catalog_json(document: &Value) -> String {
    let text = |pointer: &str| document.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_owned();
    let tools: Vec<String> =
        from_document(document).iter().map(|tool| serde_json::to_string(tool).expect("JSON serialises")).collect();
    let (title, version) = (Value::String(text("/info/title")), Value::String(text("/info/version")));
    format!("{{\"title\":{title},\"version\":{version},\"tools\":[\n{}\n]}}\n", tools.join(",\n"))
}

pub fn find(name: &str) -> Option<&'static Tool> {
    all().iter().find(|tool| tool.name == name)
}

/// The toolsets (the operations' tag groups), sorted.
pub fn toolsets() -> &'static [String] {
    static TOOLSETS: OnceLock<Vec<String>> = OnceLock::new();
    TOOLSETS.get_or_init(|| {
        let names: BTreeSet<String> = all().iter().map(|tool| tool.toolset.clone()).collect();
        names.into_iter().collect()
    })
}

/// The tools of an OpenAPI 3.1 document (as JSON).
pub fn from_document(document: &Value) -> Vec<Tool> {
    let schemas = document.pointer("/components/schemas").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut tools = Vec::new();
    for (path, item) in document["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            let Ok(method) = method.to_ascii_uppercase().parse::<Method>() else { continue };
            if let Some(tool) = tool(path, method, operation, &schemas) {
                tools.push(tool);
            }
        }
    }
    tools
}

/// The scope of an operation's bearer requirement; None for operations without one (the
/// OAuth server's endpoints, the public document, `/` and `/docs`).
fn bearer_scope(operation: &Value) -> Option<String> {
    operation["security"]
        .as_array()?
        .iter()
        .find_map(|requirement| requirement.get("bearer")?.as_array()?.first()?.as_str().map(str::to_owned))
}

fn tool(path: &str, method: Method, operation: &Value, schemas: &Map<String, Value>) -> Option<Tool> {
    let scope = bearer_scope(operation)?;
    let name = operation["operationId"].as_str()?.to_owned();
    let toolset = operation.pointer("/tags/0").and_then(Value::as_str)?.to_owned();
    // A body the tool can carry: JSON, or none. The multipart upload is not a tool.
    let body_schema = match operation.get("requestBody") {
        None => None,
        Some(body) => Some(body.pointer("/content/application~1json/schema")?.clone()),
    };
    let body_required = operation.pointer("/requestBody/required").and_then(Value::as_bool).unwrap_or(false);

    let mut properties = Map::new();
    let mut required = Vec::new();
    let (mut path_params, mut query_params, mut idempotency_key) = (Vec::new(), Vec::new(), false);
    for parameter in operation["parameters"].as_array().into_iter().flatten() {
        let (Some(name), Some(location)) = (parameter["name"].as_str(), parameter["in"].as_str()) else { continue };
        let argument = match location {
            "path" => {
                path_params.push(name.to_owned());
                name
            }
            "query" => {
                query_params.push(name.to_owned());
                name
            }
            "header" if name.eq_ignore_ascii_case("Idempotency-Key") => {
                idempotency_key = true;
                IDEMPOTENCY_ARGUMENT
            }
            // LT-Response-Shape repeats the responseShape query parameter.
            _ => continue,
        };
        let mut schema = parameter.get("schema").cloned().unwrap_or_else(|| json!({}));
        if let (Some(object), Some(description)) = (schema.as_object_mut(), parameter.get("description")) {
            object.insert("description".into(), description.clone());
        }
        if parameter["required"].as_bool() == Some(true) {
            required.push(argument.to_owned());
        }
        properties.insert(argument.to_owned(), schema);
    }

    let body = match &body_schema {
        None => BodyMode::None,
        Some(schema) => {
            let resolved = resolve(schema, schemas);
            let flat =
                resolved.filter(|s| is_plain_object(s)).and_then(|s| s["properties"].as_object().map(|p| (s, p)));
            match flat {
                Some((object, body_properties)) if body_properties.keys().all(|k| !properties.contains_key(k)) => {
                    for (key, value) in body_properties {
                        properties.insert(key.clone(), value.clone());
                    }
                    for key in object["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                        required.push(key.to_owned());
                    }
                    BodyMode::Flattened
                }
                _ => {
                    properties.insert(BODY_ARGUMENT.into(), schema.clone());
                    if body_required {
                        required.push(BODY_ARGUMENT.into());
                    }
                    BodyMode::Nested
                }
            }
        }
    };

    let mut input = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        input["required"] = json!(required);
    }
    let mut input = self_contained(input, schemas);
    for_a_model(&mut input);
    let output = output_schema(operation, schemas);
    let wraps_output = output.as_ref().is_some_and(|(_, wraps)| *wraps);
    let output = output.map(|(schema, _)| {
        let mut schema = self_contained(schema, schemas);
        structure_only(&mut schema);
        portable_nullables(&mut schema);
        share_repeated(&mut schema);
        schema
    });

    let read_only = method == Method::GET;
    let destructive = method == Method::DELETE || name.starts_with("disable") || name.starts_with("delete");
    let idempotent = matches!(method, Method::GET | Method::PUT | Method::DELETE);
    let summary = operation["summary"].as_str().unwrap_or(&name).to_owned();
    let description = operation["description"].as_str().filter(|d| !d.is_empty()).unwrap_or(&summary).to_owned();
    // The title once (`title`, not again in the annotations): it is what the listing costs a
    // model's context.
    let full_input_schema = input.clone();
    let mut listing = json!({
        "name": name,
        "title": summary,
        "description": description,
        "inputSchema": input,
        "annotations": {
            "readOnlyHint": read_only,
            "destructiveHint": destructive,
            "idempotentHint": idempotent,
            "openWorldHint": false,
        },
    });
    if let Some(output) = output {
        listing["outputSchema"] = output;
    }
    fit(&mut listing);
    let full_input_schema = (listing["inputSchema"] != full_input_schema)
        .then(|| serde_json::value::to_raw_value(&full_input_schema).expect("a Value serialises"));
    let listing = Listing::from(&listing);
    Some(Tool {
        name,
        method,
        path: path.to_owned(),
        path_params,
        query_params,
        idempotency_key,
        body,
        scope,
        toolset,
        reads: read_only,
        wraps_output,
        listing,
        full_input_schema,
    })
}

/// The schema a `$ref` to a component names (one level), or the schema itself.
fn resolve<'a>(schema: &'a Value, schemas: &'a Map<String, Value>) -> Option<&'a Value> {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => schemas.get(reference.strip_prefix(COMPONENTS)?),
        None => Some(schema),
    }
}

/// An object schema with properties and no composition at its top.
fn is_plain_object(schema: &Value) -> bool {
    schema["type"] == "object"
        && schema["properties"].is_object()
        && ["oneOf", "anyOf", "allOf", "$ref"].iter().all(|k| schema.get(*k).is_none())
}

/// The first 2xx JSON response's schema as an object schema: itself when it is an object,
/// else wrapped as the property `result` (then true), with no top-level property required.
/// None when the operation answers no JSON.
fn output_schema(operation: &Value, schemas: &Map<String, Value>) -> Option<(Value, bool)> {
    let responses = operation["responses"].as_object()?;
    let (_, response) = responses.iter().find(|(status, _)| status.starts_with('2'))?;
    let schema = response.pointer("/content/application~1json/schema")?;
    let resolved = resolve(schema, schemas)?;
    if resolved["type"] == "object" && resolved.get("oneOf").is_none() && resolved.get("anyOf").is_none() {
        let mut object = resolved.clone();
        // No top-level property is required: projection (`fieldsToReturn`) may leave any out,
        // and an error's structured content (the error body) must validate too, since some
        // clients check it against this schema even with isError (docs/mcp.md).
        if let Some(fields) = object.as_object_mut() {
            fields.remove("required");
        }
        return Some((object, false));
    }
    let mut wrapped = json!({"type": "object", "properties": {"result": schema}});
    let pages = operation["parameters"].as_array().is_some_and(|all| all.iter().any(|p| p["name"] == "cursor"));
    if pages {
        // The next page's `cursor`, absent on the last page (docs/conventions.md#paging).
        wrapped["properties"]["nextCursor"] = json!({"type": "string"});
    }
    Some((wrapped, true))
}

/// An output schema as the result's structure only, at any depth: types, properties, items,
/// enums, compositions, references; no examples, descriptions or titles (the model sees the
/// real result, the operation's description and input schema say what it means), and no
/// validation keywords (bounds, patterns, formats: the server wrote the result). Input schemas
/// keep theirs, which say how to write an argument.
fn structure_only(schema: &mut Value) {
    const NOT_STRUCTURE: &[&str] = &[
        "examples",
        "example",
        "description",
        "title",
        "default",
        "format",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "deprecated",
        "readOnly",
        "writeOnly",
    ];
    rewrite_schemas(schema, &|object| object.retain(|keyword, _| !NOT_STRUCTURE.contains(&keyword.as_str())));
}

/// An input schema as a model reads it: nullables portable; without the text guard's pattern
/// (every text field refuses control and invisible characters and blank text, with a 400 naming
/// the field: a rule, not a shape, and its expression was the largest part of many schemas);
/// without the descriptions of the arguments every operation shares (`idempotencyKey` and the
/// projection's), which the server's instructions give once; repeated subtrees shared.
fn for_a_model(schema: &mut Value) {
    rewrite_schemas(schema, &|object| {
        if object.get("pattern").and_then(Value::as_str).is_some_and(workapi_kit::input::is_text_guard) {
            object.remove("pattern");
        }
    });
    portable_nullables(schema);
    let shared = PROJECTION_PARAMETERS.iter().copied().chain([IDEMPOTENCY_ARGUMENT]);
    for name in shared {
        if let Some(Value::Object(argument)) = schema.pointer_mut(&format!("/properties/{name}")) {
            argument.remove("description");
        }
    }
    share_repeated(schema);
}

/// Every subschema of at least [`SHARED_MIN_BYTES`] that occurs more than once in the schema
/// (its `$defs` included) becomes one definition in `$defs`, named after the property it first
/// appears under (or the equal definition already there), and each occurrence a `$ref` to it:
/// the largest first, until nothing large repeats.
fn share_repeated(schema: &mut Value) {
    loop {
        let mut seen: BTreeMap<String, (usize, String)> = BTreeMap::new();
        let defs = schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
        for (name, def) in &defs {
            seen.insert(def.to_string(), (1, name.clone()));
        }
        visit_subschemas(schema, None, &mut |subschema, under| {
            let text = subschema.to_string();
            if text.len() >= SHARED_MIN_BYTES && !is_reference(subschema) {
                let entry = seen.entry(text).or_insert_with(|| (0, under.map(definition_name).unwrap_or_default()));
                entry.0 += 1;
            }
        });
        let Some((text, name)) = seen
            .into_iter()
            .filter(|(_, (count, _))| *count > 1)
            .max_by_key(|(text, _)| text.len())
            .map(|(text, (_, name))| (text, name))
        else {
            return;
        };
        let shared: Value = serde_json::from_str(&text).expect("serialized here");
        let name = if defs.get(&name) == Some(&shared) { name } else { unused_name(&defs, &name) };
        let reference = json!({"$ref": format!("{DEFS}{name}")});
        replace_subschemas(schema, &|subschema| (*subschema == shared).then(|| reference.clone()));
        schema["$defs"][&name] = shared;
    }
}

fn is_reference(schema: &Value) -> bool {
    schema.as_object().is_some_and(|object| object.len() == 1 && object.contains_key("$ref"))
}

/// A definition's name from a property's: `accessToken` → `AccessToken`.
fn definition_name(property: &str) -> String {
    let mut chars = property.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_else(|| "Shared".into())
}

fn unused_name(defs: &Map<String, Value>, name: &str) -> String {
    let base = if name.is_empty() { "Shared" } else { name };
    (1..).map(|n| if n == 1 { base.to_owned() } else { format!("{base}{n}") }).find(|n| !defs.contains_key(n)).unwrap()
}

/// The tool's listing within [`MAX_TOOL_BYTES`]: while it is larger, a definition of the output
/// schema is left out, then of the input schema's (`leave_out`): the deepest object first (the
/// one most references away from the schema's own properties; the largest of those), so that
/// the top levels stay described. A model calling such an operation gets its full input schema
/// from `searchOperations`.
fn fit(listing: &mut Value) {
    for key in ["outputSchema", "inputSchema"] {
        while listing.to_string().len() > MAX_TOOL_BYTES {
            let Some(schema) = listing.get_mut(key) else { break };
            let depths = definition_depths(schema);
            // Typed definitions only: a reference to one becomes its type, never a schema that
            // accepts anything (the MCP Inspector's strict check warns on those).
            let chosen = schema.get("$defs").and_then(Value::as_object).and_then(|defs| {
                defs.iter()
                    .filter(|(_, def)| def.get("type").is_some_and(Value::is_string))
                    .max_by_key(|(name, def)| {
                        (def["type"] == "object", depths.get(*name).copied().unwrap_or(0), def.to_string().len())
                    })
                    .map(|(name, _)| name.clone())
            });
            let Some(name) = chosen else { break };
            leave_out(schema, &name, key == "inputSchema");
        }
    }
}

/// How many references away from the schema's own properties each definition is (1: the
/// schema refers to it).
fn definition_depths(schema: &Value) -> BTreeMap<String, usize> {
    let mut outside = schema.clone();
    let defs = outside.as_object_mut().and_then(|object| object.remove("$defs")).unwrap_or_default();
    let mut level = BTreeSet::new();
    collect_refs(&outside, DEFS, &mut level);
    let mut depths = BTreeMap::new();
    let mut depth = 1;
    while !level.is_empty() {
        let mut next = BTreeSet::new();
        for name in level {
            if depths.contains_key(&name) {
                continue;
            }
            depths.insert(name.clone(), depth);
            if let Some(def) = defs.get(&name) {
                collect_refs(def, DEFS, &mut next);
            }
        }
        level = next;
        depth += 1;
    }
    depths
}

/// The schema without the definition `name` (a typed one): each reference to it becomes the
/// definition's type alone, saying [`LEFT_OUT`] in an input schema; a `oneOf`
/// holding such a reference becomes `anyOf` (two branches may now both match); definitions no
/// longer referenced go too. Every value the schema accepted it still accepts.
fn leave_out(schema: &mut Value, name: &str, input: bool) {
    let Some(def) = schema.get_mut("$defs").and_then(Value::as_object_mut).and_then(|defs| defs.remove(name)) else {
        return;
    };
    let target = format!("{DEFS}{name}");
    let refers = |subschema: &Value| subschema.get("$ref").and_then(Value::as_str) == Some(target.as_str());
    // The branches first: rewriting runs inside out, so the references are still there.
    rewrite_schemas(schema, &|object| {
        if let Some(Value::Array(branches)) = object.get("oneOf")
            && branches.iter().any(refers)
            && let Some(branches) = object.remove("oneOf")
        {
            object.insert("anyOf".into(), branches);
        }
    });
    rewrite_schemas(schema, &|object| {
        if object.get("$ref").and_then(Value::as_str) != Some(target.as_str()) {
            return;
        }
        object.remove("$ref");
        if let Some(kind) = def.get("type").filter(|kind| kind.is_string()) {
            object.insert("type".into(), kind.clone());
        }
        if input {
            let said = object.get("description").or(def.get("description")).and_then(Value::as_str);
            let description = match said {
                Some(said) => format!("{}. {LEFT_OUT}.", said.trim_end_matches('.')),
                None => format!("{LEFT_OUT}."),
            };
            object.insert("description".into(), Value::String(description));
        }
    });
    without_unreferenced_definitions(schema);
}

/// Removes the definitions nothing outside them (transitively) refers to.
fn without_unreferenced_definitions(schema: &mut Value) {
    let Some(Value::Object(defs)) = schema.as_object_mut().and_then(|object| object.remove("$defs")) else { return };
    let mut reached = BTreeSet::new();
    collect_refs(schema, DEFS, &mut reached);
    let mut pending: Vec<String> = reached.iter().cloned().collect();
    while let Some(name) = pending.pop() {
        let mut inner = BTreeSet::new();
        if let Some(def) = defs.get(&name) {
            collect_refs(def, DEFS, &mut inner);
        }
        for found in inner {
            if reached.insert(found.clone()) {
                pending.push(found);
            }
        }
    }
    let kept: Map<String, Value> = defs.into_iter().filter(|(name, _)| reached.contains(name)).collect();
    if !kept.is_empty() {
        schema["$defs"] = Value::Object(kept);
    }
}

/// Every nullable type written as a type array (`"type": ["string", "null"]`, as utoipa writes
/// `Option`) as `anyOf` of the type and `null`: the same values valid, in the form every
/// client's validator reads (the MCP Inspector's strict check warns on type arrays). The type's
/// own keywords (`format`, `maxLength`, `items`…) go with it; the annotations stay outside.
fn portable_nullables(schema: &mut Value) {
    const ANNOTATIONS: &[&str] =
        &["description", "title", "default", "examples", "example", "deprecated", "readOnly", "writeOnly", "$comment"];
    rewrite_schemas(schema, &|object| {
        let Some(Value::Array(types)) = object.get("type") else { return };
        let others: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if others.len() != 1 || others.len() == types.len() {
            return;
        }
        let mut branch = Map::new();
        let keys: Vec<String> = object.keys().filter(|k| !ANNOTATIONS.contains(&k.as_str())).cloned().collect();
        for key in keys {
            if let Some(value) = object.remove(&key) {
                branch.insert(key, value);
            }
        }
        branch.insert("type".into(), others[0].clone());
        if let Some(Value::Array(values)) = branch.get_mut("enum") {
            values.retain(|v| !v.is_null());
        }
        object.insert("anyOf".into(), json!([branch, {"type": "null"}]));
    });
}

/// Applies `rewrite` to every schema within `schema`, subschemas first, then to `schema`
/// itself; by keyword, so that property and `$defs` names are never read as keywords.
fn rewrite_schemas(schema: &mut Value, rewrite: &impl Fn(&mut Map<String, Value>)) {
    let Some(object) = schema.as_object_mut() else { return };
    for (keyword, value) in object.iter_mut() {
        match keyword.as_str() {
            // Maps of names to schemas.
            "properties" | "patternProperties" | "$defs" | "dependentSchemas" => {
                for inner in value.as_object_mut().into_iter().flat_map(|m| m.values_mut()) {
                    rewrite_schemas(inner, rewrite);
                }
            }
            "oneOf" | "anyOf" | "allOf" | "prefixItems" => {
                for inner in value.as_array_mut().into_iter().flatten() {
                    rewrite_schemas(inner, rewrite);
                }
            }
            "items" | "additionalProperties" | "not" | "if" | "then" | "else" | "contains" | "propertyNames" => {
                rewrite_schemas(value, rewrite);
            }
            _ => {}
        }
    }
    rewrite(object);
}

/// Calls `visit` with every schema within `schema` (not `schema` itself, nor the `$defs`
/// entries themselves, whose insides it visits) and the property name it is under, if any.
fn visit_subschemas(schema: &Value, under: Option<&str>, visit: &mut impl FnMut(&Value, Option<&str>)) {
    let Some(object) = schema.as_object() else { return };
    for (keyword, value) in object {
        match keyword.as_str() {
            "$defs" => {
                for inner in value.as_object().into_iter().flat_map(|m| m.values()) {
                    visit_subschemas(inner, None, visit);
                }
            }
            "properties" | "patternProperties" | "dependentSchemas" => {
                for (name, inner) in value.as_object().into_iter().flatten() {
                    visit(inner, Some(name));
                    visit_subschemas(inner, Some(name), visit);
                }
            }
            "oneOf" | "anyOf" | "allOf" | "prefixItems" => {
                for inner in value.as_array().into_iter().flatten() {
                    visit(inner, under);
                    visit_subschemas(inner, under, visit);
                }
            }
            "items" | "additionalProperties" | "not" | "if" | "then" | "else" | "contains" | "propertyNames" => {
                visit(value, under);
                visit_subschemas(value, under, visit);
            }
            _ => {}
        }
    }
}

/// Replaces each schema within `schema` (not itself, nor a `$defs` entry itself) for which
/// `replacement` answers one, without looking inside what it replaced.
fn replace_subschemas(schema: &mut Value, replacement: &impl Fn(&Value) -> Option<Value>) {
    let Some(object) = schema.as_object_mut() else { return };
    let mut replace = |inner: &mut Value| match replacement(inner) {
        Some(new) => *inner = new,
        None => replace_subschemas(inner, replacement),
    };
    for (keyword, value) in object.iter_mut() {
        match keyword.as_str() {
            "$defs" => {
                for inner in value.as_object_mut().into_iter().flat_map(|m| m.values_mut()) {
                    replace_subschemas(inner, replacement);
                }
            }
            "properties" | "patternProperties" | "dependentSchemas" => {
                value.as_object_mut().into_iter().flat_map(|m| m.values_mut()).for_each(&mut replace);
            }
            "oneOf" | "anyOf" | "allOf" | "prefixItems" => {
                value.as_array_mut().into_iter().flatten().for_each(&mut replace);
            }
            "items" | "additionalProperties" | "not" | "if" | "then" | "else" | "contains" | "propertyNames" => {
                replace(value);
            }
            _ => {}
        }
    }
}

/// The schema with every component reference rewritten to `#/$defs/…` and the referenced
/// components (transitively) copied into `$defs`.
pub fn self_contained(mut schema: Value, schemas: &Map<String, Value>) -> Value {
    let mut needed = BTreeSet::new();
    collect_refs(&schema, COMPONENTS, &mut needed);
    let mut defs = Map::new();
    let mut pending: Vec<String> = needed.iter().cloned().collect();
    while let Some(name) = pending.pop() {
        if defs.contains_key(&name) {
            continue;
        }
        let Some(component) = schemas.get(&name) else { continue };
        let mut inner = BTreeSet::new();
        collect_refs(component, COMPONENTS, &mut inner);
        pending.extend(inner.into_iter().filter(|n| !defs.contains_key(n)));
        defs.insert(name, component.clone());
    }
    rewrite_refs(&mut schema);
    if !defs.is_empty() {
        let mut defs = Value::Object(defs);
        rewrite_refs(&mut defs);
        schema["$defs"] = defs;
    }
    // OpenAPI's `discriminator` is no JSON Schema keyword and its mapping names the document's
    // components; each branch's own `enum` for the property tells the branches apart as well.
    rewrite_schemas(&mut schema, &|object| {
        object.remove("discriminator");
    });
    schema
}

/// The names of the schemas `schema` refers to with `$ref`s under `prefix` (`#/$defs/`…).
fn collect_refs(schema: &Value, prefix: &str, found: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value.as_str().and_then(|r| r.strip_prefix(prefix))) {
                    ("$ref", Some(name)) => {
                        found.insert(name.to_owned());
                    }
                    _ => collect_refs(value, prefix, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_refs(item, prefix, found)),
        _ => {}
    }
}

fn rewrite_refs(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(reference) if key == "$ref" && reference.starts_with(COMPONENTS) => {
                        *reference = format!("{DEFS}{}", &reference[COMPONENTS.len()..]);
                    }
                    _ => rewrite_refs(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document() -> Value {
        json!({
            "paths": {
                "/things/{id}": {
                    "put": {
                        "operationId": "saveThing", "tags": ["things"], "summary": "Save a thing", "description": "Saves it.",
                        "security": [{"bearer": ["api:write"]}, {"oauth2": ["api:write"]}],
                        "parameters": [
                            {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}, "description": "Thing id"},
                            {"name": "fieldsToReturn", "in": "query", "schema": {"type": "string"}},
                            {"name": "LT-Response-Shape", "in": "header", "schema": {"type": "string"}}
                        ],
                        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Body"}}}},
                        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}
                    },
                    "delete": {
                        "operationId": "deleteThing", "tags": ["things"], "summary": "Delete", "security": [{"bearer": ["api:write"]}],
                        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                        "responses": {"200": {"content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Thing"}}}}}}
                    }
                },
                "/things": {
                    "post": {
                        "operationId": "createThing", "tags": ["things"], "summary": "Create", "security": [{"bearer": ["api:write"]}],
                        "parameters": [{"name": "Idempotency-Key", "in": "header", "schema": {"type": "string"}}],
                        "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"idempotencyKey": {"type": "string"}}}}}},
                        "responses": {"201": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}
                    }
                },
                "/upload": {"post": {"operationId": "upload", "tags": ["things"], "security": [{"bearer": ["api:write"]}],
                    "requestBody": {"content": {"multipart/form-data": {"schema": {}}}}, "responses": {}}},
                "/public": {"get": {"operationId": "public", "security": [], "responses": {}}}
            },
            "components": {"schemas": {
                "Body": {"type": "object", "properties": {"name": {"$ref": "#/components/schemas/Name"}}, "required": ["name"]},
                "Name": {"type": "string"},
                "Thing": {"type": "object", "properties": {"id": {"type": "string"}, "name": {"$ref": "#/components/schemas/Name"}}},
                "Unused": {"type": "string"}
            }}
        })
    }

    #[test]
    fn output_schemas_are_structure_and_nullable_type_arrays_become_any_of() {
        let mut schema = json!({"type": "object", "examples": [{"note": "x"}], "description": "A thing", "properties": {
            "note": {"type": ["string", "null"], "maxLength": 5, "description": "A note", "example": "hi"},
            "level": {"type": ["string", "null"], "enum": ["low", "high", null]},
            "type": {"type": "string", "format": "uuid"},
            "examples": {"type": "array", "items": {"type": ["integer", "null"], "minimum": 1}, "maxItems": 3}
        }});
        structure_only(&mut schema);
        portable_nullables(&mut schema);
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "level": {"anyOf": [{"type": "string", "enum": ["low", "high"]}, {"type": "null"}]},
                "type": {"type": "string"},
                "examples": {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}
            }}),
            "property names are not keywords"
        );

        let mut input = json!({"type": ["string", "null"], "maxLength": 5, "description": "A note"});
        portable_nullables(&mut input);
        assert_eq!(
            input,
            json!({"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}], "description": "A note"})
        );
    }

    #[test]
    fn a_self_contained_schema_names_no_component_and_has_no_discriminator() {
        let schemas = json!({
            "Config": {"oneOf": [{"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/B"}],
                "discriminator": {"propertyName": "kind", "mapping": {"a": "#/components/schemas/A", "b": "#/components/schemas/B"}}},
            "A": {"type": "object", "properties": {"kind": {"enum": ["a"]}}, "required": ["kind"]},
            "B": {"type": "object", "properties": {"kind": {"enum": ["b"]}, "discriminator": {"type": "string"}}, "required": ["kind"]}
        });
        let schema = json!({"type": "object", "properties": {"config": {"$ref": "#/components/schemas/Config"}}});
        let contained = self_contained(schema, schemas.as_object().unwrap());
        assert!(!contained.to_string().contains("#/components/"), "{contained}");
        assert_eq!(contained["$defs"]["Config"], json!({"oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}));
        assert_eq!(
            contained["$defs"]["B"]["properties"]["discriminator"],
            json!({"type": "string"}),
            "a property stays"
        );
        assert!(jsonschema::draft202012::is_valid(&contained, &json!({"config": {"kind": "b"}})));
        assert!(!jsonschema::draft202012::is_valid(&contained, &json!({"config": {"kind": "c"}})));
    }

    #[test]
    fn input_schemas_leave_out_the_text_guard_and_the_shared_arguments_prose() {
        use workapi_kit::input::{Field, Text};
        let name = serde_json::to_value(Text::<1, 100>::schema()).unwrap();
        assert!(workapi_kit::input::is_text_guard(name["pattern"].as_str().unwrap()), "{name}");
        let mut schema = json!({"type": "object", "properties": {
            "name": name,
            "code": {"type": "string", "pattern": "^[A-Z]+$"},
            "idempotencyKey": {"type": "string", "maxLength": 255, "description": "Makes retries safe"},
            "fieldsToReturn": {"type": "string", "description": "Comma-separated fields"}
        }});
        for_a_model(&mut schema);
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 100},
                "code": {"type": "string", "pattern": "^[A-Z]+$"},
                "idempotencyKey": {"type": "string", "maxLength": 255},
                "fieldsToReturn": {"type": "string"}
            }})
        );
    }

    #[test]
    fn repeated_subtrees_become_shared_definitions() {
        let token = json!({"type": "string", "format": "password", "maxLength": 8192, "description": "A credential"});
        let url = json!({"type": "string", "format": "uri", "maxLength": 2048, "description": "An https URL"});
        let mut schema = json!({"type": "object", "properties": {
            "accessToken": token, "refreshToken": token,
            "small": {"type": "string"}, "alsoSmall": {"type": "string"},
            "server": {"$ref": "#/$defs/Server"},
            "servers": {"type": "array", "items": {"type": "object", "properties": {"url": url, "token": token}}}
        }, "$defs": {"Server": {"type": "object", "properties": {"url": url, "token": token}}}});
        share_repeated(&mut schema);
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {
                "accessToken": {"$ref": "#/$defs/Token"}, "refreshToken": {"$ref": "#/$defs/Token"},
                "small": {"type": "string"}, "alsoSmall": {"type": "string"},
                "server": {"$ref": "#/$defs/Server"},
                "servers": {"type": "array", "items": {"$ref": "#/$defs/Server"}}
            }, "$defs": {
                "Token": token,
                "Server": {"type": "object", "properties": {"url": url, "token": {"$ref": "#/$defs/Token"}}}
            }}),
            "the largest first (the server, equal to its definition), then the token (named where first seen, \
             the definitions first); small ones stay"
        );
    }

    #[test]
    fn a_tool_over_the_budget_leaves_out_its_largest_definitions() {
        let prose = "x".repeat(2500);
        // The output schema first: its largest definition goes, the other stays.
        let mut listing = json!({"name": "getThing", "inputSchema": {"type": "object"}, "outputSchema": {
            "type": "object",
            "properties": {"result": {"oneOf": [{"$ref": "#/$defs/Big"}, {"$ref": "#/$defs/Other"}]}},
            "$defs": {
                "Big": {"type": "object", "properties": {"a": {"enum": [prose, prose]}}},
                "Other": {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]}
            }
        }});
        let before = listing.clone();
        fit(&mut listing);
        assert_eq!(
            listing["outputSchema"],
            json!({"type": "object", "properties": {"result": {"anyOf": [{"type": "object"}, {"$ref": "#/$defs/Other"}]}},
                "$defs": {"Other": {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]}}}),
            "a oneOf that may now match twice is an anyOf"
        );
        let result = json!({"result": {"a": prose}});
        assert!(jsonschema::draft202012::is_valid(&before["outputSchema"], &result));
        assert!(jsonschema::draft202012::is_valid(&listing["outputSchema"], &result), "what was valid still is");

        // Then the input schema's, the deepest object first: its references say where the rest
        // is, and the definitions only it referred to go with it.
        let mut listing = json!({"name": "saveThing", "inputSchema": {"type": "object", "properties": {
            "config": {"$ref": "#/$defs/Config"},
            "kind": {"oneOf": [{"$ref": "#/$defs/Small"}, {"type": "null"}]}
        }, "$defs": {
            "Config": {"type": "object", "description": "The configuration", "properties": {
                "nested": {"$ref": "#/$defs/Nested"}, "note": {"type": "string", "description": prose}}},
            "Nested": {"type": "object", "properties": {"inner": {"$ref": "#/$defs/Inner"}, "note": {"type": "string", "description": prose}}},
            "Inner": {"type": "string", "enum": ["x", "y"]},
            "Small": {"type": "string", "enum": ["a", "b"]}
        }}});
        let before = listing.clone();
        fit(&mut listing);
        assert!(listing.to_string().len() <= MAX_TOOL_BYTES, "{}", listing.to_string().len());
        let input = &listing["inputSchema"];
        assert_eq!(input["properties"]["config"], json!({"$ref": "#/$defs/Config"}), "the top level stays");
        assert_eq!(
            input["$defs"]["Config"]["properties"]["nested"],
            json!({"type": "object", "description": "Its full schema: searchOperations."})
        );
        let kept: Vec<&String> = input["$defs"].as_object().unwrap().keys().collect();
        assert_eq!(kept, ["Config", "Small"], "Inner went with Nested");
        let arguments = json!({"config": {"nested": {"note": "x"}}, "kind": "a"});
        assert!(jsonschema::draft202012::is_valid(&before["inputSchema"], &arguments));
        assert!(jsonschema::draft202012::is_valid(&listing["inputSchema"], &arguments), "what was valid still is");

        let mut small = json!({"name": "small", "inputSchema": {"type": "object", "$defs": {"A": {"type": "string"}}}});
        let unchanged = small.clone();
        fit(&mut small);
        assert_eq!(small, unchanged, "a tool within the budget keeps everything");
    }

    /// The real tools: each listing within the budget, no subtree of a shared definition's size
    /// twice in one schema, the full input schema for searchOperations.
    #[test]
    fn every_tool_fits_and_repeats_nothing_large() {
        let mut largest = (0, "");
        for tool in all() {
            let listing = tool.listing.value();
            let bytes = tool.listing.bytes();
            assert_eq!(bytes, listing.to_string().len());
            assert!(bytes <= MAX_TOOL_BYTES, "{} is {bytes} bytes", tool.name);
            largest = largest.max((bytes, tool.name.as_str()));
            for key in ["inputSchema", "outputSchema"] {
                let Some(schema) = listing.get(key) else { continue };
                let mut seen = BTreeSet::new();
                let mut repeated = Vec::new();
                visit_subschemas(schema, None, &mut |subschema, _| {
                    let text = subschema.to_string();
                    if text.len() >= SHARED_MIN_BYTES && !is_reference(subschema) && !seen.insert(text.clone()) {
                        repeated.push(text);
                    }
                });
                assert!(repeated.is_empty(), "{} {key} repeats {repeated:?}", tool.name);
            }
            let full = tool.input_schema().to_string();
            assert!(full.len() >= listing["inputSchema"].to_string().len());
            assert!(!full.contains(LEFT_OUT), "{}: the full input schema leaves nothing out", tool.name);
        }
        assert!(crate::protocol::INSTRUCTIONS.contains(LEFT_OUT), "the instructions say what it means");
        let total: usize = all().iter().map(|t| t.listing.bytes()).sum();
        let fitted: Vec<&str> =
            all().iter().filter(|t| t.full_input_schema.is_some()).map(|t| t.name.as_str()).collect();
        eprintln!("{} tools, {total} bytes; the largest {largest:?}; input schemas fitted: {fitted:?}", all().len());
    }

    #[test]
    fn operations_become_self_contained_tools() {
        let tools = from_document(&document());
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["createThing", "deleteThing", "saveThing"], "no multipart, no public operation");

        let save = tools.iter().find(|t| t.name == "saveThing").unwrap();
        assert_eq!(save.body, BodyMode::Flattened);
        assert_eq!(save.scope, "api:write");
        let input = &save.listing.value()["inputSchema"];
        assert_eq!(input["required"], json!(["id", "name"]));
        assert_eq!(input["properties"]["id"]["description"], "Thing id");
        assert!(input["properties"].get("LT-Response-Shape").is_none());
        assert_eq!(input["properties"]["name"]["$ref"], "#/$defs/Name");
        assert_eq!(input["$defs"], json!({"Name": {"type": "string"}}));
        assert_eq!(save.listing.value()["outputSchema"]["properties"]["name"]["$ref"], "#/$defs/Name");
        assert_eq!(save.listing.value()["annotations"]["idempotentHint"], true);
        assert_eq!(save.listing.value()["annotations"]["destructiveHint"], false);

        let delete = tools.iter().find(|t| t.name == "deleteThing").unwrap();
        assert_eq!(delete.listing.value()["annotations"]["destructiveHint"], true);
        assert_eq!(delete.listing.value()["outputSchema"]["properties"]["result"]["items"]["$ref"], "#/$defs/Thing");
        assert!(delete.listing.value()["outputSchema"]["$defs"]["Name"].is_object(), "transitive references");

        // The body's own `idempotencyKey` clashes with the header's argument: nested body.
        let create = tools.iter().find(|t| t.name == "createThing").unwrap();
        assert!(create.idempotency_key);
        assert_eq!(create.body, BodyMode::Nested);
        assert_eq!(create.listing.value()["annotations"]["idempotentHint"], false);
        assert!(create.listing.value()["inputSchema"]["properties"]["body"].is_object());
    }
}
