//! The two tools that reach every operation from any surface (docs/mcp.md, "Surfaces"):
//! `searchOperations` finds operations by words, toolset and access, with what a call needs;
//! `callOperation` runs one by its operationId as its own tool would (`crate::call`).

use crate::surface::Surface;
use crate::tools::{self, Tool};
use serde_json::{Map, Value, json};
use workapi_kit::error::ApiError;

pub const SEARCH: &str = "searchOperations";
pub const CALL: &str = "callOperation";
/// How many operations a search answers when it does not say.
const DEFAULT_LIMIT: u64 = 10;
const MAX_LIMIT: u64 = 60;

/// The two tools' listings, for a token's scopes on this surface: `callOperation` says it only
/// reads when the surface or the scopes allow no write.
pub fn listings(surface: &Surface, scopes: &[String]) -> [Value; 2] {
    let writes = !surface.read_only && tools::all().iter().any(|t| !t.reads && scopes.contains(&t.scope));
    let toolsets: Vec<&str> = tools::toolsets().iter().map(String::as_str).collect();
    let search = json!({
        "name": SEARCH,
        "title": "Search the API's operations",
        "description": "Finds the API operations you can call here (every one, not only the listed tools): by words \
            (all must match the operationId, summary, description or toolset), toolset, or read/write access. Each \
            comes with its operationId, summary, toolset, access, the scope it needs and its inputSchema; run one with \
            callOperation.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words, e.g. \"subscription billing\""},
                "toolset": {"type": "string", "enum": toolsets},
                "access": {"type": "string", "enum": ["read", "write"]},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
            },
            "additionalProperties": false,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "operations": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "operationId": {"type": "string"},
                        "summary": {"type": "string"},
                        "toolset": {"type": "string"},
                        "access": {"type": "string", "enum": ["read", "write"]},
                        "scope": {"type": "string"},
                        "inputSchema": {"type": "object"},
                    },
                }},
                "total": {"type": "integer", "description": "How many matched (more than listed when over limit)"},
            },
        },
        "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
    });
    let call = json!({
        "name": CALL,
        "title": "Call an API operation",
        "description": "Runs one API operation by its operationId (from searchOperations) with its arguments (its \
            inputSchema: path and query parameters, body fields, idempotencyKey, fieldsToReturn), exactly as its own \
            tool: same scope, permissions, validation and projection. Errors come back with isError and the API's \
            error body {statusCode, message, errors}.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "operationId": {"type": "string"},
                "arguments": {"type": "object"},
            },
            "required": ["operationId"],
            "additionalProperties": false,
        },
        "annotations": {"readOnlyHint": !writes, "destructiveHint": writes, "idempotentHint": !writes, "openWorldHint": false},
    });
    [search, call]
}

/// `searchOperations`: the operations a token with these scopes may run on this surface that match, those
/// matching in their name or summary first, then in document order.
pub fn search(surface: &Surface, scopes: &[String], arguments: &Map<String, Value>) -> Result<Value, ApiError> {
    if let Some(unknown) = arguments.keys().find(|k| !["query", "toolset", "access", "limit"].contains(&k.as_str())) {
        return Err(ApiError::field(unknown, format!("{SEARCH} takes no argument {unknown}")));
    }
    let text = |name: &str| -> Result<Option<&str>, ApiError> {
        match arguments.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(value)) => Ok(Some(value.as_str())),
            Some(_) => Err(ApiError::field(name, "must be a string")),
        }
    };
    let words = words(text("query")?.unwrap_or_default());
    let toolset = text("toolset")?;
    if let Some(toolset) = toolset
        && !tools::toolsets().iter().any(|t| t == toolset)
    {
        return Err(ApiError::field("toolset", format!("must be one of {}", tools::toolsets().join(", "))));
    }
    let reads = match text("access")? {
        None => None,
        Some("read") => Some(true),
        Some("write") => Some(false),
        Some(_) => return Err(ApiError::field("access", "must be read or write")),
    };
    let limit = match arguments.get("limit") {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(value) => value
            .as_u64()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .ok_or_else(|| ApiError::field("limit", format!("must be an integer from 1 to {MAX_LIMIT}")))?,
    };
    let mut found: Vec<(bool, &Tool)> = tools::all()
        .iter()
        .filter(|tool| scopes.contains(&tool.scope) && surface.allows(tool))
        .filter(|tool| toolset.is_none_or(|t| tool.toolset == t) && reads.is_none_or(|r| tool.reads == r))
        .filter_map(|tool| {
            let (strong, weak) = haystacks(tool);
            let in_name = words.iter().all(|w| strong.contains(w.as_str()));
            (in_name || words.iter().all(|w| strong.contains(w.as_str()) || weak.contains(w.as_str())))
                .then_some((in_name, tool))
        })
        .collect();
    // Stable: document order within each group.
    found.sort_by_key(|(in_name, _)| !in_name);
    let total = found.len();
    let operations: Vec<Value> = found.into_iter().take(limit as usize).map(|(_, tool)| describe(tool)).collect();
    Ok(json!({"operations": operations, "total": total}))
}

/// What a caller needs to call an operation.
fn describe(tool: &Tool) -> Value {
    json!({
        "operationId": tool.name,
        "summary": tool.listing.title(),
        "toolset": tool.toolset,
        "access": if tool.reads { "read" } else { "write" },
        "scope": tool.scope,
        "inputSchema": tool.input_schema(),
    })
}

/// The query's words, lower case, a plural's final `s` dropped (`billings` finds `billing`).
fn words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let w = w.to_lowercase();
            match w.strip_suffix('s') {
                Some(stem) if stem.len() >= 3 => stem.to_owned(),
                _ => w,
            }
        })
        .collect()
}

/// The text a query's words are looked for in, lower case: the operationId (its camel-case
/// words run together, so `subscription billing` finds `createSubscriptionBilling` too) and
/// summary; then the description and toolset.
fn haystacks(tool: &Tool) -> (String, String) {
    let (title, description) = (tool.listing.title(), tool.listing.description());
    let strong = format!("{} {} {}", tool.name, split_camel_case(&tool.name), title).to_lowercase();
    let weak = format!("{description} {}", tool.toolset).to_lowercase();
    (strong, weak)
}

fn split_camel_case(name: &str) -> String {
    let mut words = String::new();
    for c in name.chars() {
        if c.is_uppercase() {
            words.push(' ');
        }
        words.push(c);
    }
    words
}

/// `callOperation`'s arguments: the operation (a documented bearer operation) and its own
/// arguments (an object, or none).
pub fn target(arguments: &Map<String, Value>) -> Result<(&'static Tool, Map<String, Value>), ApiError> {
    if let Some(unknown) = arguments.keys().find(|k| !["operationId", "arguments"].contains(&k.as_str())) {
        return Err(ApiError::field(unknown, format!("{CALL} takes no argument {unknown}")));
    }
    let Some(id) = arguments.get("operationId").and_then(Value::as_str) else {
        return Err(ApiError::field("operationId", "required (a string)"));
    };
    let tool = tools::find(id).ok_or_else(|| {
        ApiError::field(
            "operationId",
            format!("{id} is no operation a bearer token may call with JSON; searchOperations lists them"),
        )
    })?;
    match arguments.get("arguments") {
        None | Some(Value::Null) => Ok((tool, Map::new())),
        Some(Value::Object(inner)) => Ok((tool, inner.clone())),
        Some(_) => Err(ApiError::field("arguments", "must be an object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(found: &Value) -> Vec<&str> {
        found["operations"].as_array().unwrap().iter().map(|o| o["operationId"].as_str().unwrap()).collect()
    }

    fn caller(scopes: &[&str]) -> Vec<String> {
        scopes.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn words_find_operations_by_name_first() {
        let all = caller(&["api:read", "api:write"]);
        let query = |q: &str| Map::from_iter([("query".to_owned(), json!(q))]);
        let found = search(&Surface::default(), &all, &query("subscription billing")).unwrap();
        let found_ids = ids(&found);
        assert_eq!(found_ids[..2], ["listSubscriptionBillings", "createSubscriptionBilling"], "{found}");
        let create = &found["operations"][1];
        assert_eq!(create["scope"], "api:write");
        assert_eq!(create["access"], "write");
        assert_eq!(create["toolset"], "billing");
        assert!(create["inputSchema"]["properties"]["projectId"].is_object(), "{create}");

        let read_only = Surface { read_only: true, ..Surface::default() };
        assert_eq!(
            ids(&search(&read_only, &all, &query("subscription billing")).unwrap())[0],
            "listSubscriptionBillings"
        );
        assert!(!ids(&search(&read_only, &all, &query("billing")).unwrap()).contains(&"createSubscriptionBilling"));
        let reader = caller(&["api:read"]);
        assert!(!ids(&search(&Surface::default(), &reader, &query("tag")).unwrap()).contains(&"createTag"));
    }

    #[test]
    fn toolset_access_and_limit_filter() {
        let all = caller(&["api:read", "api:write"]);
        let args = json!({"toolset": "tags", "access": "write", "limit": 2});
        let found = search(&Surface::default(), &all, args.as_object().unwrap()).unwrap();
        assert_eq!(ids(&found), ["createTag", "deleteTag"]);
        assert_eq!(found["total"], 3);
        for bad in [json!({"toolset": "nosuch"}), json!({"access": "both"}), json!({"limit": 0}), json!({"nope": 1})] {
            assert!(search(&Surface::default(), &all, bad.as_object().unwrap()).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_call_names_an_operation_and_its_arguments() {
        let call =
            |v: Value| target(v.as_object().unwrap()).map(|(tool, args)| (tool.name.clone(), Value::Object(args)));
        assert_eq!(call(json!({"operationId": "listTags", "arguments": {"type": "task"}})).unwrap().1["type"], "task");
        assert_eq!(call(json!({"operationId": "listProjects"})).unwrap(), ("listProjects".to_owned(), json!({})));
        for bad in
            [json!({}), json!({"operationId": "uploadFile"}), json!({"operationId": "listTags", "arguments": []})]
        {
            assert_eq!(call(bad.clone()).unwrap_err().status, 400, "{bad}");
        }
    }
}
