//! `tools/call`: the operation runs in process, through the registry's merged routes, as the
//! caller authenticated at `/mcp` (the `Caller` rides in the inner request's extensions, so
//! the token is never sent again and the token's rate limit is charged once per `/mcp`
//! request). Everything after authentication is the operation's own: permission, validation,
//! projection, idempotency, errors.

use crate::protocol::INVALID_PARAMS;
use crate::reach;
use crate::surface::Surface;
use crate::tools::{self, BODY_ARGUMENT, BodyMode, IDEMPOTENCY_ARGUMENT, Tool};
use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Request, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use std::sync::OnceLock;
use tower::ServiceExt;
use workapi_kit::AppState;
use workapi_kit::auth::Caller;
use workapi_kit::error::ApiError;
use workapi_kit::paging;

/// Why a call produced no tool result.
pub enum Refused {
    /// A JSON-RPC error (unknown tool, malformed arguments object).
    Rpc(i64, String),
    /// An HTTP answer (403 `insufficient_scope`, as the MCP authorization spec asks).
    Http(Response),
}

/// The routes of every function it runs (`FUNCTION.needs.runs`: the registry's functions with
/// bearer operations), merged without the shared layers: built once per container.
fn routes() -> &'static Router<AppState> {
    static ROUTES: OnceLock<Router<AppState>> = OnceLock::new();
    ROUTES.get_or_init(|| crate::FUNCTION.needs.runs.iter().fold(Router::new(), |routes, f| routes.merge(f.routes())))
}

/// `tools/call`: one of the two reaching tools (`crate::reach`) or an operation's own tool, which
/// runs on any surface, listed or not (`callOperation` reaches it anyway), unless the surface
/// is read-only and it writes.
pub async fn run(
    state: &AppState,
    caller: &Caller,
    headers: &HeaderMap,
    surface: &Surface,
    params: &Value,
) -> Result<Value, Refused> {
    let name = params["name"].as_str().ok_or_else(|| Refused::Rpc(INVALID_PARAMS, "name is required".into()))?;
    let tool = match name {
        reach::SEARCH | reach::CALL => None,
        _ => Some(tools::find(name).ok_or_else(|| Refused::Rpc(INVALID_PARAMS, format!("Unknown tool: {name}")))?),
    };
    if let Some(tool) = tool
        && !caller.scopes.contains(&tool.scope)
    {
        return Err(Refused::Http(crate::insufficient_scope(state, headers, &tool.scope, caller)));
    }
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(_) => return Err(Refused::Rpc(INVALID_PARAMS, "arguments must be an object".into())),
    };
    match (name, tool) {
        (_, Some(tool)) => operation(state, caller, headers, surface, tool, arguments).await,
        (reach::SEARCH, None) => Ok(match reach::search(surface, &caller.scopes, &arguments) {
            Ok(found) => json_result(found),
            Err(error) => tool_error(error.into_response()).await,
        }),
        _ => match reach::target(&arguments) {
            Ok((tool, arguments)) => {
                if !caller.scopes.contains(&tool.scope) {
                    return Err(Refused::Http(crate::insufficient_scope(state, headers, &tool.scope, caller)));
                }
                operation(state, caller, headers, surface, tool, arguments).await
            }
            Err(error) => Ok(tool_error(error.into_response()).await),
        },
    }
}

/// An operation, its scope checked: refused on a read-only surface when it writes (nothing
/// runs), else run in process through the registry's routes.
async fn operation(
    state: &AppState,
    caller: &Caller,
    headers: &HeaderMap,
    surface: &Surface,
    tool: &Tool,
    arguments: Map<String, Value>,
) -> Result<Value, Refused> {
    if !surface.allows(tool) {
        let message = format!("This MCP endpoint is read-only: {} writes, so it did not run", tool.name);
        return Ok(tool_error(ApiError::forbidden(message).into_response()).await);
    }
    let request = match request(tool, arguments, headers) {
        Ok(request) => request,
        Err(error) => return Ok(tool_error(error.into_response()).await),
    };
    let mut request = request;
    request.extensions_mut().insert(caller.clone());
    // The idempotency layer reads the state from the request, as behind the shared layers.
    request.extensions_mut().insert(state.clone());
    let response = match routes().clone().with_state(state.clone()).oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    if response.status().is_success() { Ok(tool_success(tool, response).await) } else { Ok(tool_error(response).await) }
}

/// The operation's request from the tool's arguments: path parameters substituted and
/// percent-encoded, query parameters, the `Idempotency-Key`, the JSON body.
fn request(tool: &Tool, mut arguments: Map<String, Value>, headers: &HeaderMap) -> Result<Request<Body>, ApiError> {
    let mut url = url::Url::parse("http://in-process.invalid/").expect("a valid base");
    {
        let mut segments = url.path_segments_mut().expect("a base with a path");
        segments.clear();
        for segment in tool.path.trim_start_matches('/').split('/') {
            match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => {
                    let value = arguments.remove(name).and_then(|v| text(&v));
                    match value.as_deref() {
                        None => return Err(ApiError::field(name, "required (a string or a number)")),
                        Some("" | "." | "..") => return Err(ApiError::field(name, "must not be empty, . or ..")),
                        Some(value) => segments.push(value),
                    };
                }
                None => {
                    segments.push(segment);
                }
            }
        }
    }
    let mut query = Vec::new();
    for name in &tool.query_params {
        if let Some(value) = arguments.remove(name).filter(|v| !v.is_null()) {
            // A list is sent comma-separated, as the document declares its list parameters
            // (`style: form, explode: false`: the event feed's `type`).
            let sent = match &value {
                Value::Array(items) => items.iter().map(text).collect::<Option<Vec<_>>>().map(|items| items.join(",")),
                value => text(value),
            };
            query.push((
                name.as_str(),
                sent.ok_or_else(|| ApiError::field(name, "must be a string, number, boolean or a list of them"))?,
            ));
        }
    }
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    let mut builder = Request::builder().method(tool.method.clone()).uri(&url[url::Position::BeforePath..]);
    // The request's own host, so that URLs in responses name the site as over REST.
    if let Some(host) = headers.get(header::HOST) {
        builder = builder.header(header::HOST, host);
    }
    if tool.idempotency_key
        && let Some(key) = arguments.remove(IDEMPOTENCY_ARGUMENT).filter(|v| !v.is_null())
    {
        let key = key.as_str().and_then(|k| HeaderValue::from_str(k).ok());
        let key = key.ok_or_else(|| ApiError::field(IDEMPOTENCY_ARGUMENT, "must be a string of visible ASCII"))?;
        builder = builder.header("idempotency-key", key);
    }
    let body = match tool.body {
        BodyMode::None => None,
        // The remaining arguments are the body: the operation's validation names any unknown one.
        BodyMode::Flattened => Some(Value::Object(std::mem::take(&mut arguments))),
        BodyMode::Nested => arguments.remove(BODY_ARGUMENT),
    };
    if let Some(unknown) = arguments.keys().next() {
        return Err(ApiError::field(unknown, format!("{} takes no argument {unknown}", tool.name)));
    }
    let body = match body {
        Some(body) => {
            builder = builder.header(header::CONTENT_TYPE, "application/json");
            Body::from(serde_json::to_vec(&body).expect("JSON serialises"))
        }
        None => Body::empty(),
    };
    builder.body(body).map_err(|e| ApiError::bad_request(format!("the arguments make no valid request: {e}")))
}

/// A parameter's text: strings as they are, numbers and booleans written out.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

async fn body_of(response: Response) -> (Option<Value>, String) {
    let bytes =
        axum::body::to_bytes(response.into_body(), workapi_kit::http::MAX_BODY_BYTES * 16).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    (serde_json::from_slice(&bytes).ok(), text)
}

/// A JSON object as a tool's result: structured content and text.
fn json_result(object: Value) -> Value {
    json!({"content": [{"type": "text", "text": object.to_string()}], "structuredContent": object, "isError": false})
}

/// Success: the JSON as structured content (an object as it is, anything else as `result`, as
/// the tool's `outputSchema` says) and as text.
/// A page of a list names the next one as `nextCursor` (the `cursor` of its `Link` header),
/// in the structured content and in a line of text a model reads.
async fn tool_success(tool: &Tool, response: Response) -> Value {
    let next = response.headers().get(header::LINK).and_then(|v| v.to_str().ok()).and_then(paging::next_cursor);
    let (body, text) = body_of(response).await;
    let mut result = json!({"content": [{"type": "text", "text": text}], "isError": false});
    match body {
        Some(Value::Object(object)) if !tool.wraps_output => result["structuredContent"] = Value::Object(object),
        Some(other) => {
            result["structuredContent"] = json!({"result": other});
            if let Some(cursor) = &next {
                result["structuredContent"]["nextCursor"] = json!(cursor);
            }
        }
        None => {}
    }
    if let (Some(cursor), Some(content)) = (&next, result["content"].as_array_mut()) {
        let more = format!("More items: call {} again with the same arguments and cursor \"{cursor}\".", tool.name);
        content.push(json!({"type": "text", "text": more}));
    }
    result
}

/// An API error: `isError` with the error body `{statusCode, message, errors?}` as text and as
/// structured content.
async fn tool_error(response: Response) -> Value {
    let (body, text) = body_of(response).await;
    let mut result = json!({"content": [{"type": "text", "text": text}], "isError": true});
    if let Some(body @ Value::Object(_)) = body {
        result["structuredContent"] = body;
    }
    result
}
