//! The tools: one per documented operation that takes a bearer token and a JSON body (or none),
//! derived from the finished OpenAPI document (`docs::document()`, embedded), the same declarations the
//! document is. Built once per container, on first use.
//!
//! - name: the operationId; title: the summary; description: the description.
//! - `inputSchema`: an object whose properties are the path and query parameters, the
//!   `Idempotency-Key` header as `idempotencyKey`, and the JSON body's properties flattened
//!   beside them; when flattening is impossible (the body is not a plain object, or one of its
//!   property names is also a parameter's) the body is the one property `body`.
//! - `outputSchema`: the 2xx JSON response's schema when it is an object; any other JSON
//!   response is wrapped as `{"result": …}` (MCP wants objects as structured content).
//! - `$ref`s to `#/components/schemas/…` become `#/$defs/…` with the referenced schemas copied
//!   in, so each schema stands alone (JSON Schema 2020-12, which OpenAPI 3.1 schemas are).

use axum::http::Method;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// The tool argument that carries the `Idempotency-Key` header.
pub const IDEMPOTENCY_ARGUMENT: &str = "idempotencyKey";
/// The argument holding the body when it is not flattened.
pub const BODY_ARGUMENT: &str = "body";
const COMPONENTS: &str = "#/components/schemas/";
const DEFS: &str = "#/$defs/";

/// One tool: what `tools/list` shows, and how `tools/call` turns arguments into a request.
#[derive(Debug)]
pub struct Tool {
    pub name: String,
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
    pub listing: Value,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyMode {
    None,
    /// The body's properties are arguments beside the parameters.
    Flattened,
    /// The body is the argument `body`.
    Nested,
}

/// Every tool, in document order (paths sorted, then methods).
pub fn all() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        // The embedded document (functions/docs/openapi.json, held equal to the generated one by
        // the tests): parsed, not generated, on a cold start.
        from_document(docs::document())
    })
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
    portable_nullables(&mut input);
    let output = output_schema(operation, schemas);
    let wraps_output = output.as_ref().is_some_and(|(_, wraps)| *wraps);
    let output = output.map(|(schema, _)| {
        let mut schema = self_contained(schema, schemas);
        without_examples(&mut schema);
        portable_nullables(&mut schema);
        schema
    });

    let read_only = method == Method::GET;
    let destructive = method == Method::DELETE || name.starts_with("disable") || name.starts_with("delete");
    let idempotent = matches!(method, Method::GET | Method::PUT | Method::DELETE);
    let summary = operation["summary"].as_str().unwrap_or(&name).to_owned();
    let description = operation["description"].as_str().filter(|d| !d.is_empty()).unwrap_or(&summary).to_owned();
    // The title once (`title`, not again in the annotations): it is what the listing costs a
    // model's context.
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
    Some((json!({"type": "object", "properties": {"result": schema}}), true))
}

/// An output schema without its examples (`examples`, `example`), at any depth: the model sees
/// the real result, and the examples were the largest part of every output schema. Input
/// schemas keep theirs, which show how to write an argument.
fn without_examples(schema: &mut Value) {
    rewrite_schemas(schema, &|object| {
        object.remove("examples");
        object.remove("example");
    });
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

/// The schema with every component reference rewritten to `#/$defs/…` and the referenced
/// components (transitively) copied into `$defs`.
pub fn self_contained(mut schema: Value, schemas: &Map<String, Value>) -> Value {
    let mut needed = BTreeSet::new();
    collect_refs(&schema, &mut needed);
    let mut defs = Map::new();
    let mut pending: Vec<String> = needed.iter().cloned().collect();
    while let Some(name) = pending.pop() {
        if defs.contains_key(&name) {
            continue;
        }
        let Some(component) = schemas.get(&name) else { continue };
        let mut inner = BTreeSet::new();
        collect_refs(component, &mut inner);
        pending.extend(inner.into_iter().filter(|n| !defs.contains_key(n)));
        defs.insert(name, component.clone());
    }
    rewrite_refs(&mut schema);
    if !defs.is_empty() {
        let mut defs = Value::Object(defs);
        rewrite_refs(&mut defs);
        schema["$defs"] = defs;
    }
    schema
}

fn collect_refs(schema: &Value, found: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value.as_str().and_then(|r| r.strip_prefix(COMPONENTS))) {
                    ("$ref", Some(name)) => {
                        found.insert(name.to_owned());
                    }
                    _ => collect_refs(value, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_refs(item, found)),
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
    fn nullable_type_arrays_become_any_of_and_output_examples_go() {
        let mut schema = json!({"type": "object", "examples": [{"note": "x"}], "properties": {
            "note": {"type": ["string", "null"], "maxLength": 5, "description": "A note", "example": "hi"},
            "level": {"type": ["string", "null"], "enum": ["low", "high", null]},
            "type": {"type": "string"},
            "examples": {"type": "array", "items": {"type": ["integer", "null"]}}
        }});
        without_examples(&mut schema);
        portable_nullables(&mut schema);
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {
                "note": {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}], "description": "A note"},
                "level": {"anyOf": [{"type": "string", "enum": ["low", "high"]}, {"type": "null"}]},
                "type": {"type": "string"},
                "examples": {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}
            }}),
            "property names are not keywords"
        );
    }

    #[test]
    fn operations_become_self_contained_tools() {
        let tools = from_document(&document());
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["createThing", "deleteThing", "saveThing"], "no multipart, no public operation");

        let save = tools.iter().find(|t| t.name == "saveThing").unwrap();
        assert_eq!(save.body, BodyMode::Flattened);
        assert_eq!(save.scope, "api:write");
        let input = &save.listing["inputSchema"];
        assert_eq!(input["required"], json!(["id", "name"]));
        assert_eq!(input["properties"]["id"]["description"], "Thing id");
        assert!(input["properties"].get("LT-Response-Shape").is_none());
        assert_eq!(input["properties"]["name"]["$ref"], "#/$defs/Name");
        assert_eq!(input["$defs"], json!({"Name": {"type": "string"}}));
        assert_eq!(save.listing["outputSchema"]["properties"]["name"]["$ref"], "#/$defs/Name");
        assert_eq!(save.listing["annotations"]["idempotentHint"], true);
        assert_eq!(save.listing["annotations"]["destructiveHint"], false);

        let delete = tools.iter().find(|t| t.name == "deleteThing").unwrap();
        assert_eq!(delete.listing["annotations"]["destructiveHint"], true);
        assert_eq!(delete.listing["outputSchema"]["properties"]["result"]["items"]["$ref"], "#/$defs/Thing");
        assert!(delete.listing["outputSchema"]["$defs"]["Name"].is_object(), "transitive references");

        // The body's own `idempotencyKey` clashes with the header's argument: nested body.
        let create = tools.iter().find(|t| t.name == "createThing").unwrap();
        assert!(create.idempotency_key);
        assert_eq!(create.body, BodyMode::Nested);
        assert_eq!(create.listing["annotations"]["idempotentHint"], false);
        assert!(create.listing["inputSchema"]["properties"]["body"].is_object());
    }
}
