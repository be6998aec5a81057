//! JSON-RPC over Streamable HTTP, stateless, for both generations of clients (docs/mcp.md):
//! the 2026-07-28 revision (`server/discover`, the protocol version in each request's `_meta`
//! and the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers checked against the
//! body) and the 2025 revisions (`initialize`, `notifications/initialized`, `ping`), with
//! `tools/list` and `tools/call` for all. One JSON response per POST; never a session id.

use crate::call;
use crate::reach;
use crate::surface::Surface;
use crate::tools;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use workapi_kit::AppState;
use workapi_kit::auth::Caller;

/// The stateless revision.
pub const STATELESS: &str = "2026-07-28";
/// The newest revision with `initialize`: what an `initialize` asking for a version this server
/// does not speak is answered with (the client then decides).
pub const LATEST_WITH_INITIALIZE: &str = "2025-11-25";
/// Every revision served. 2025-03-26 is what a request without any version is taken for (the
/// 2025-06-18 and 2025-11-25 transports say so); the handling is the same for all of them.
pub const SUPPORTED: &[&str] = &[STATELESS, "2025-11-25", "2025-06-18", "2025-03-26"];
const ASSUMED_WITHOUT_VERSION: &str = "2025-03-26";

pub const VERSION_HEADER: &str = "mcp-protocol-version";
pub const METHOD_HEADER: &str = "mcp-method";
pub const NAME_HEADER: &str = "mcp-name";
/// The `_meta` keys of the 2026-07-28 revision (SEP-2567): the request's protocol version and
/// the client's capabilities.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

// JSON-RPC error codes: the standard ones and those of the 2026-07-28 revision (both with
// HTTP 400).
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const HEADER_MISMATCH: i64 = -32020;
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// How long a client may keep a tool list or the discovery result (2026-07-28 `ttlMs`): the
/// tools change only with a deployment.
const TTL_MS: u64 = 300_000;

/// What every tool shares, said once here rather than in each tool (docs/mcp.md, "Schemas a
/// model can read"); clients give it to the model with the tools.
pub(crate) const INSTRUCTIONS: &str = "The workapi REST API as tools. A few of its operations are listed as tools; \
    searchOperations finds any other (by words, toolset, read or write) with its full input schema, and callOperation \
    runs it by operationId. Arguments are the operation's path and query parameters and its JSON body's fields (or \
    `body`). `fieldsToReturn` (comma-separated top-level fields) and `responseShape` (`compact`, the default, or \
    `full`) project the result as in the REST API. `idempotencyKey` (1-255 printable ASCII characters, e.g. a UUID) \
    makes a create safe to retry: the same key and request within 24 hours replay the first result; another request \
    with it is refused. Text fields refuse control and invisible characters, and blank text where one is required. \
    A property whose schema \
    says \"Its full schema: searchOperations\" was shortened to keep the tool small: searchOperations with the \
    operationId as query gives it. Errors come back as results with isError and the API's error body \
    {statusCode, message, errors}.";

/// A JSON-RPC answer with its HTTP status.
pub fn rpc_error(status: StatusCode, id: &Value, code: i64, message: &str, data: Option<Value>) -> Response {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    (status, axum::Json(json!({"jsonrpc": "2.0", "id": id, "error": error}))).into_response()
}

/// A result; under 2026-07-28 with the fields that revision requires of every result
/// (`resultType`) and asks of every response (the server's identity in `_meta`).
fn rpc_result(id: &Value, version: &str, result: Value) -> Response {
    axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": complete(result, version)})).into_response()
}

fn complete(mut result: Value, version: &str) -> Value {
    if version == STATELESS {
        result["resultType"] = json!("complete");
        result["_meta"] = json!({"io.modelcontextprotocol/serverInfo": server_info()});
    }
    result
}

/// `tools/list`'s result: `tools` written from the listings' text as the catalog keeps it
/// (`tools::Listing`), never parsed into trees and written out again, beside the result's
/// other fields.
fn tools_result(id: &Value, version: &str, tools: &[&RawValue], result: Value) -> Response {
    #[derive(Serialize)]
    struct Listed<'a> {
        tools: &'a [&'a RawValue],
        #[serde(flatten)]
        rest: Value,
    }
    #[derive(Serialize)]
    struct Answer<'a> {
        jsonrpc: &'static str,
        id: &'a Value,
        result: Listed<'a>,
    }
    let result = Listed { tools, rest: complete(result, version) };
    axum::Json(Answer { jsonrpc: "2.0", id, result }).into_response()
}

/// A 2026-07-28 cacheable result's scope and lifetime (ignored by older clients).
fn cacheable(mut result: Value, scope: &str, version: &str) -> Value {
    if version == STATELESS {
        result["cacheScope"] = json!(scope);
        result["ttlMs"] = json!(TTL_MS);
    }
    result
}

fn bad_request(id: &Value, code: i64, message: &str) -> Response {
    rpc_error(StatusCode::BAD_REQUEST, id, code, message, None)
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<Result<&'a str, ()>> {
    headers.get(name).map(|value| value.to_str().map_err(|_| ()))
}

fn server_info() -> Value {
    let catalog = tools::catalog();
    json!({"name": "workapi", "title": catalog.title, "version": catalog.version})
}

fn capabilities() -> Value {
    json!({"tools": {"listChanged": false}})
}

/// One POST body, authenticated already as `caller`.
pub async fn handle(
    state: &AppState,
    caller: &Caller,
    headers: &HeaderMap,
    surface: &Surface,
    body: &[u8],
) -> Response {
    let null = Value::Null;
    let message: Value = match serde_json::from_slice(body) {
        Ok(message) => message,
        Err(_) => return bad_request(&null, PARSE_ERROR, "The body is not JSON"),
    };
    if message.is_array() {
        // Batching left the protocol in 2025-06-18; no revision served here has it.
        return bad_request(&null, INVALID_REQUEST, "Batches are not supported: send one JSON-RPC message per POST");
    }
    let Some(object) = message.as_object() else {
        return bad_request(&null, INVALID_REQUEST, "A JSON-RPC message is an object");
    };
    let id = object.get("id").cloned();
    let reply_id = id.clone().unwrap_or(Value::Null);
    // Refused as the REST API refuses them (workapi_kit::input): a proxy or a client keeping the
    // first of two equal keys would read another request than ours, which keeps the last. The
    // text is JSON, so not -32700; it is no valid Request object (-32600). The id is echoed
    // unless it is itself one of the repeated keys (then it could not be told: null).
    let duplicates = workapi_kit::input::duplicate_keys(body);
    if !duplicates.is_empty() {
        let id = if duplicates.iter().any(|(path, _)| path == "id") { &null } else { &reply_id };
        let paths: Vec<&str> = duplicates.iter().map(|(path, _)| path.as_str()).collect();
        let message = format!("A key appears more than once in its object: {}", paths.join(", "));
        return bad_request(id, INVALID_REQUEST, &message);
    }
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return bad_request(&reply_id, INVALID_REQUEST, "jsonrpc must be \"2.0\"");
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        if id.is_some() && (object.contains_key("result") || object.contains_key("error")) {
            // A response to a request this server never sends: accepted and dropped.
            return StatusCode::ACCEPTED.into_response();
        }
        return bad_request(&reply_id, INVALID_REQUEST, "method is required");
    };
    if id.as_ref().is_some_and(|id| !(id.is_string() || id.is_i64() || id.is_u64())) {
        return bad_request(&Value::Null, INVALID_REQUEST, "id must be a string or an integer");
    }
    let params = object.get("params").cloned().unwrap_or_else(|| json!({}));
    if !params.is_object() {
        return bad_request(&reply_id, INVALID_PARAMS, "params must be an object");
    }

    let version = match request_version(headers, &params, method) {
        Ok(version) => version,
        Err(response) => return response(&reply_id),
    };
    if let Err(message) = check_method_headers(headers, &params, method, &version) {
        return bad_request(&reply_id, HEADER_MISMATCH, &message);
    }
    if params.pointer(&format!("/_meta/{}", META_CAPABILITIES.replace('/', "~1"))).is_some_and(|c| !c.is_object()) {
        return bad_request(&reply_id, INVALID_PARAMS, "The client capabilities in _meta must be an object");
    }

    let Some(id) = id else {
        // Notifications (notifications/initialized, cancellations…): nothing to answer.
        return StatusCode::ACCEPTED.into_response();
    };
    match method {
        "initialize" => rpc_result(
            &id,
            &version,
            json!({
                "protocolVersion": version,
                "capabilities": capabilities(),
                "serverInfo": server_info(),
                "instructions": INSTRUCTIONS,
            }),
        ),
        "server/discover" => rpc_result(
            &id,
            &version,
            cacheable(
                json!({
                    "supportedVersions": SUPPORTED,
                    "capabilities": capabilities(),
                    "serverInfo": server_info(),
                    "instructions": INSTRUCTIONS,
                }),
                // The same for every caller.
                "public",
                &version,
            ),
        ),
        "ping" => rpc_result(&id, &version, json!({})),
        "tools/list" => {
            // The two reaching tools, then the surface's operations in document order.
            let reaching = reach::listings(surface, &caller.scopes)
                .map(|listing| serde_json::value::to_raw_value(&listing).expect("a Value serialises"));
            let operations =
                tools::all().iter().filter(|tool| caller.scopes.contains(&tool.scope) && surface.lists(tool));
            let visible: Vec<&RawValue> =
                reaching.iter().map(|listing| &**listing).chain(operations.map(|tool| tool.listing.raw())).collect();
            // Per caller (its scopes): private, in the result and for HTTP caches.
            let mut response = tools_result(&id, &version, &visible, cacheable(json!({}), "private", &version));
            let headers = response.headers_mut();
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
            headers.insert(header::VARY, HeaderValue::from_static("Authorization, X-MCP-Toolsets, X-MCP-Readonly"));
            response
        }
        "tools/call" => match call::run(state, caller, headers, surface, &params).await {
            Ok(result) => rpc_result(&id, &version, result),
            Err(call::Refused::Rpc(code, message)) => rpc_error(StatusCode::OK, &id, code, &message, None),
            Err(call::Refused::Http(response)) => response,
        },
        _ => rpc_error(StatusCode::OK, &id, METHOD_NOT_FOUND, &format!("Method not found: {method}"), None),
    }
}

type Refusal = Box<dyn FnOnce(&Value) -> Response>;

/// The revision a request is handled under. `initialize` negotiates (its `protocolVersion`,
/// or the newest revision with `initialize`); every other request states it in `_meta` (2026)
/// or the `MCP-Protocol-Version` header (both must agree), or is taken for 2025-03-26.
fn request_version(headers: &HeaderMap, params: &Value, method: &str) -> Result<String, Refusal> {
    if method == "initialize" {
        let asked = params["protocolVersion"].as_str().unwrap_or_default();
        let chosen = if SUPPORTED.contains(&asked) && asked != STATELESS { asked } else { LATEST_WITH_INITIALIZE };
        return Ok(chosen.to_owned());
    }
    let in_header = match header(headers, VERSION_HEADER) {
        Some(Ok(value)) => Some(value.trim().to_owned()),
        Some(Err(())) => return Err(unsupported(String::from("(not text)"))),
        None => None,
    };
    let in_meta = params.pointer(&format!("/_meta/{}", META_VERSION.replace('/', "~1")));
    let in_meta = match in_meta {
        None => None,
        Some(Value::String(version)) => Some(version.clone()),
        Some(_) => return Err(unsupported(String::from("(not a string)"))),
    };
    if let (Some(header), Some(meta)) = (&in_header, &in_meta)
        && header != meta
    {
        let message =
            format!("The MCP-Protocol-Version header ({header}) differs from _meta's protocol version ({meta})");
        return Err(Box::new(move |id| bad_request(id, HEADER_MISMATCH, &message)));
    }
    let version = in_meta.or(in_header).unwrap_or_else(|| ASSUMED_WITHOUT_VERSION.to_owned());
    if SUPPORTED.contains(&version.as_str()) { Ok(version) } else { Err(unsupported(version)) }
}

/// 400 naming the revisions served (2026-07-28 `UnsupportedProtocolVersionError`).
fn unsupported(requested: String) -> Refusal {
    Box::new(move |id| {
        rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            UNSUPPORTED_PROTOCOL_VERSION,
            &format!("Unsupported protocol version {requested}; supported: {}", SUPPORTED.join(", ")),
            Some(json!({"supported": SUPPORTED, "requested": requested})),
        )
    })
}

/// `Mcp-Method` must name the body's method and, for `tools/call`, `Mcp-Name` the tool: always
/// when sent, and both are required from 2026-07-28 clients.
fn check_method_headers(headers: &HeaderMap, params: &Value, method: &str, version: &str) -> Result<(), String> {
    let required = version == STATELESS;
    match header(headers, METHOD_HEADER) {
        Some(Ok(value)) if value == method => {}
        Some(_) => return Err(format!("The Mcp-Method header does not match the body's method {method}")),
        None if required => return Err(format!("The Mcp-Method header is required with protocol version {version}")),
        None => {}
    }
    if method == "tools/call" {
        let name = params["name"].as_str().unwrap_or_default();
        match header(headers, NAME_HEADER) {
            Some(Ok(value)) if value == name => {}
            Some(_) => return Err(format!("The Mcp-Name header does not match the tool name {name}")),
            None if required => {
                return Err(format!("The Mcp-Name header is required for tools/call with protocol version {version}"));
            }
            None => {}
        }
    }
    Ok(())
}
