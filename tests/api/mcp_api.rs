//! The MCP endpoint over HTTP (docs/mcp.md), on every store backend: the transport and its
//! errors, the 401 challenge, the tools (every documented bearer operation, filtered by scope,
//! valid JSON Schema 2020-12), and tools/call running operations in process.

use api_tests::{Backend, TestApi, each_backend};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;
use workapi_kit::cors::AllowedOrigins;
use workapi_kit::ratelimit::RateLimits;

const NEW: &str = "2026-07-28";
/// The two tools every surface lists, which reach every operation.
const REACHING: [&str; 2] = ["searchOperations", "callOperation"];

/// A 2026-07-28 request: the version in `_meta` and in its header, `Mcp-Method` and (for
/// tools/call) `Mcp-Name`.
fn stateless(id: u64, method: &str, mut params: Value) -> (Value, Vec<(&'static str, String)>) {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": NEW,
        "io.modelcontextprotocol/clientCapabilities": {}});
    let mut headers = vec![("MCP-Protocol-Version", NEW.to_owned()), ("Mcp-Method", method.to_owned())];
    if let Some(name) = params["name"].as_str() {
        headers.push(("Mcp-Name", name.to_owned()));
    }
    (json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}), headers)
}

async fn post(
    api: &TestApi,
    token: Option<&str>,
    headers: &[(&str, String)],
    body: &str,
) -> (u16, reqwest::header::HeaderMap, Value) {
    post_to(api, "/mcp", token, headers, body).await
}

/// A POST to one of the MCP URLs (`/mcp`, `/mcp/readonly`, `/mcp/x/{toolset}`…).
async fn post_to(
    api: &TestApi,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, String)],
    body: &str,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = api.http.post(api.url(path)).header("content-type", "application/json").body(body.to_owned());
    request = request.header("accept", "application/json, text/event-stream");
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.bytes().await.unwrap();
    let body = if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).expect("a JSON body") };
    (status, headers, body)
}

/// A 2026-07-28 call: its status and JSON-RPC answer.
async fn rpc(api: &TestApi, token: &str, method: &str, params: Value) -> (u16, Value) {
    rpc_at(api, "/mcp", &[], token, method, params).await
}

/// A 2026-07-28 call to one of the MCP URLs, with extra headers.
async fn rpc_at(
    api: &TestApi,
    path: &str,
    extra: &[(&'static str, &str)],
    token: &str,
    method: &str,
    params: Value,
) -> (u16, Value) {
    let (body, mut headers) = stateless(1, method, params);
    headers.extend(extra.iter().map(|(name, value)| (*name, (*value).to_owned())));
    let (status, _, answer) = post_to(api, path, Some(token), &headers, &body.to_string()).await;
    (status, answer)
}

async fn call_tool(api: &TestApi, token: &str, name: &str, arguments: Value) -> Value {
    let (status, answer) = rpc(api, token, "tools/call", json!({"name": name, "arguments": arguments})).await;
    assert_eq!(status, 200, "[{}] {name}: {answer}", api.backend);
    answer["result"].clone()
}

async fn list_tools(api: &TestApi, token: &str) -> Vec<Value> {
    list_tools_at(api, "/mcp", &[], token).await
}

async fn list_tools_at(api: &TestApi, path: &str, extra: &[(&'static str, &str)], token: &str) -> Vec<Value> {
    let (status, answer) = rpc_at(api, path, extra, token, "tools/list", json!({})).await;
    assert_eq!(status, 200, "[{}] {answer}", api.backend);
    answer["result"]["tools"].as_array().expect("tools").clone()
}

/// What the MCP Inspector's strict check (`inspector --cli … --method tools/list --strict`,
/// 2.12.0, its schema-portability lint) reports in a tool schema, as `rule at path`: a type
/// array (`type-union`), a subschema with no validation keyword (`untyped-schema`), a bare
/// `true`/`false` where a schema belongs (`boolean-schema`), a `$ref` outside the document
/// (`remote-ref`). The walk follows the same keywords.
fn portability_findings(schema: &Value) -> Vec<String> {
    const MAPS: &[&str] =
        &["properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"];
    const ARRAYS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
    const ONES: &[&str] = &[
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
        "contentSchema",
    ];
    const BOOLEAN_VALUED: &[&str] =
        &["additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"];
    const CONSTRAINING: &[&str] = &[
        "type",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "format",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "items",
        "prefixItems",
        "contains",
        "additionalItems",
        "unevaluatedItems",
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "dependentSchemas",
        "dependencies",
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
    ];
    fn walk(node: &Value, path: String, keyword: Option<&str>, found: &mut Vec<String>) {
        let Some(object) = node.as_object() else {
            if node.is_boolean() && !keyword.is_some_and(|k| BOOLEAN_VALUED.contains(&k)) {
                found.push(format!("boolean-schema at {path}"));
            }
            return;
        };
        if object.get("type").is_some_and(Value::is_array) {
            found.push(format!("type-union at {path}"));
        }
        if object.get("$ref").and_then(Value::as_str).is_some_and(|r| !r.is_empty() && !r.starts_with('#')) {
            found.push(format!("remote-ref at {path}"));
        }
        let conditional = object.contains_key("if") && (object.contains_key("then") || object.contains_key("else"));
        if !object.keys().any(|k| CONSTRAINING.contains(&k.as_str())) && !conditional && keyword != Some("not") {
            found.push(format!("untyped-schema at {path}"));
        }
        for (key, value) in object {
            let key = key.as_str();
            if MAPS.contains(&key) {
                for (name, inner) in value.as_object().into_iter().flatten() {
                    walk(inner, format!("{path}.{key}.{name}"), Some(key), found);
                }
            } else if ARRAYS.contains(&key) {
                for (i, inner) in value.as_array().into_iter().flatten().enumerate() {
                    walk(inner, format!("{path}.{key}[{i}]"), Some(key), found);
                }
            } else if ONES.contains(&key) {
                walk(value, format!("{path}.{key}"), Some(key), found);
            }
        }
    }
    let mut found = Vec::new();
    walk(schema, String::new(), None, &mut found);
    found
}

/// The operations that should be tools: documented, needing a bearer token, JSON or no body.
fn documented_bearer_operations() -> Vec<(String, String)> {
    let document = serde_json::to_value(registry::document()).unwrap();
    let mut found = Vec::new();
    for item in document["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            let bearer = operation["security"].as_array().into_iter().flatten().find_map(|r| r.get("bearer"));
            let json_or_none =
                operation.get("requestBody").is_none_or(|b| b["content"].get("application/json").is_some());
            if let (Some(scopes), true) = (bearer, json_or_none) {
                let name = operation["operationId"].as_str().unwrap().to_owned();
                found.push((name, scopes[0].as_str().unwrap().to_owned()));
            }
        }
    }
    found
}

#[tokio::test]
async fn the_transport_refuses_what_it_does_not_serve() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let b = api.backend;
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();

        // 401 without a credential and with a bad one, naming the MCP resource's metadata.
        for credential in [None, Some("lt_pat_not_a_token")] {
            let (status, headers, body) = post(api, credential, &[], &list).await;
            assert_eq!(status, 401, "[{b}] {body}");
            assert_eq!(body["statusCode"], 401);
            let challenge = headers["www-authenticate"].to_str().unwrap();
            assert!(
                challenge.contains(&format!(
                    "resource_metadata=\"{}\"",
                    api.url("/.well-known/oauth-protected-resource/mcp")
                )),
                "[{b}] {challenge}"
            );
            assert!(challenge.contains("scope=\"api:read api:write\""), "[{b}] {challenge}");
            assert_eq!(challenge.contains("invalid_token"), credential.is_some(), "[{b}] {challenge}");
        }
        // POST only.
        for method in [Method::GET, Method::DELETE, Method::PUT] {
            let (status, headers, body) = api.call(method.clone(), "/mcp", Some(&token), None).await;
            assert_eq!(status, 405, "[{b}] {method} {body}");
            assert_eq!(headers["allow"], "POST", "[{b}] {method}");
        }
        // An Origin that is not allowed (none are configured here) is refused before anything.
        let (status, _, body) = post(api, Some(&token), &[("Origin", "https://evil.example".into())], &list).await;
        assert_eq!((status, body["statusCode"].as_u64()), (403, Some(403)), "[{b}] {body}");
        let (status, _, _) = post(api, Some(&token), &[("Origin", api.base.clone())], &list).await;
        assert_eq!(status, 200, "[{b}] the site's own origin");

        // JSON-RPC errors.
        let (status, _, body) = post(api, Some(&token), &[], "{not json").await;
        assert_eq!((status, body["error"]["code"].as_i64()), (400, Some(-32700)), "[{b}] {body}");
        let (status, _, body) = post(api, Some(&token), &[], &format!("[{list}]")).await;
        assert_eq!((status, body["error"]["code"].as_i64()), (400, Some(-32600)), "[{b}] batches: {body}");
        let (status, _, body) = post(api, Some(&token), &[], r#"{"jsonrpc": "1.0", "id": 1, "method": "ping"}"#).await;
        assert_eq!((status, body["error"]["code"].as_i64()), (400, Some(-32600)), "[{b}] {body}");
        let (status, body) = rpc(api, &token, "no/such", json!({})).await;
        assert_eq!((status, body["error"]["code"].as_i64()), (200, Some(-32601)), "[{b}] {body}");

        // A key twice in an object, at any depth, is refused as the REST API refuses it: the
        // message is JSON but no valid Request (-32600, not -32700), and nothing runs. The id is
        // echoed unless the id itself is repeated.
        let name = format!("Smuggled {}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
        let smuggled = format!(
            r#"{{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {{"name": "createTag",
                "arguments": {{"type": "task", "name": "{name}"}}}}, "method": "tools/call"}}"#
        );
        let nested = format!(
            r#"{{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {{"name": "createTag",
                "arguments": {{"type": "task", "name": "x", "name": "{name}"}}}}}}"#
        );
        for (body, path) in [(&smuggled, "method"), (&nested, "params.arguments.name")] {
            let (status, _, answer) = post(api, Some(&token), &[], body).await;
            assert_eq!(
                (status, answer["error"]["code"].as_i64(), answer["id"].as_i64()),
                (400, Some(-32600), Some(7)),
                "[{b}] {answer}"
            );
            assert!(answer["error"]["message"].as_str().unwrap().ends_with(path), "[{b}] {answer}");
        }
        let (status, tags) = api.get("/tags/task", &token).await;
        assert_eq!(status, 200);
        assert!(!tags.to_string().contains(&name), "[{b}] no tag was created: {tags}");
        let (status, _, answer) =
            post(api, Some(&token), &[], r#"{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}"#).await;
        assert_eq!(
            (status, answer["error"]["code"].as_i64(), &answer["id"]),
            (400, Some(-32600), &Value::Null),
            "[{b}] {answer}"
        );

        // The 2026-07-28 headers must match the body.
        let (body, mut headers) = stateless(1, "tools/list", json!({}));
        headers[1].1 = "tools/call".into();
        let (status, _, answer) = post(api, Some(&token), &headers, &body.to_string()).await;
        assert_eq!((status, answer["error"]["code"].as_i64()), (400, Some(-32020)), "[{b}] Mcp-Method: {answer}");
        headers.remove(1);
        let (status, _, answer) = post(api, Some(&token), &headers, &body.to_string()).await;
        assert_eq!(status, 400, "[{b}] Mcp-Method is required in 2026-07-28: {answer}");
        let (body, mut headers) =
            stateless(1, "tools/call", json!({"name": "listTags", "arguments": {"type": "task"}}));
        headers[2].1 = "createTag".into();
        let (status, _, answer) = post(api, Some(&token), &headers, &body.to_string()).await;
        assert_eq!((status, answer["error"]["code"].as_i64()), (400, Some(-32020)), "[{b}] Mcp-Name: {answer}");
        let (body, mut headers) = stateless(1, "tools/list", json!({}));
        headers[0].1 = "2025-11-25".into();
        let (status, _, answer) = post(api, Some(&token), &headers, &body.to_string()).await;
        assert_eq!(
            (status, answer["error"]["code"].as_i64()),
            (400, Some(-32020)),
            "[{b}] version header vs _meta: {answer}"
        );
        // An unsupported version: 400 with the supported list.
        let (status, _, answer) =
            post(api, Some(&token), &[("MCP-Protocol-Version", "2024-01-01".into())], &list).await;
        assert_eq!((status, answer["error"]["code"].as_i64()), (400, Some(-32022)), "[{b}] {answer}");
        let supported = &answer["error"]["data"]["supported"];
        assert!(supported.as_array().unwrap().contains(&json!(NEW)), "[{b}] {answer}");
        assert!(supported.as_array().unwrap().contains(&json!("2025-11-25")), "[{b}] {answer}");
    })
    .await;
}

#[tokio::test]
async fn both_generations_of_clients_are_served_statelessly() {
    each_backend(async |_, api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let b = api.backend;
        // 2025-11-25: initialize, the initialized notification, ping; no session id ever.
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
        let (status, headers, body) = post(api, Some(&token), &[], &initialize.to_string()).await;
        assert_eq!(status, 200, "[{b}] {body}");
        assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(body["result"]["capabilities"]["tools"]["listChanged"], false);
        assert!(headers.get("mcp-session-id").is_none(), "[{b}] no session");
        assert!(headers["content-type"].to_str().unwrap().starts_with("application/json"));
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        let versioned = [("MCP-Protocol-Version", "2025-11-25".to_owned())];
        let (status, _, body) = post(api, Some(&token), &versioned, &initialized).await;
        assert_eq!((status, body), (202, Value::Null), "[{b}]");
        let ping = json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}).to_string();
        let (status, _, body) = post(api, Some(&token), &versioned, &ping).await;
        assert_eq!((status, &body["result"], &body["id"]), (200, &json!({}), &json!("p")), "[{b}] {body}");
        // An initialize for an unknown revision is answered with the newest one that has it.
        let mut old = initialize.clone();
        old["params"]["protocolVersion"] = json!("2099-01-01");
        let (_, _, body) = post(api, Some(&token), &[], &old.to_string()).await;
        assert_eq!(body["result"]["protocolVersion"], "2025-11-25", "[{b}] {body}");

        // 2026-07-28: server/discover.
        let (status, body) = rpc(api, &token, "server/discover", json!({})).await;
        assert_eq!(status, 200, "[{b}] {body}");
        assert!(body["result"]["supportedVersions"].as_array().unwrap().contains(&json!(NEW)), "[{b}] {body}");
        assert_eq!(body["result"]["serverInfo"]["name"], "workapi");
        assert!(body["result"]["capabilities"]["tools"].is_object());
    })
    .await;
}

#[tokio::test]
async fn the_tools_are_the_documented_bearer_operations_filtered_by_scope() {
    each_backend(async |_, api| {
        let b = api.backend;
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let expected = documented_bearer_operations();
        let (body, headers) = stateless(1, "tools/list", json!({}));
        let (status, response_headers, answer) =
            post_to(api, "/mcp/x/all", Some(&token), &headers, &body.to_string()).await;
        assert_eq!(status, 200, "[{b}] {answer}");
        assert!(response_headers["cache-control"].to_str().unwrap().contains("private"), "[{b}] per caller");
        assert_eq!(answer["result"]["cacheScope"], "private", "[{b}]");
        assert_eq!(answer["result"]["resultType"], "complete", "[{b}]");
        let tools = answer["result"]["tools"].as_array().unwrap();
        let names: BTreeSet<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        let mut documented: BTreeSet<&str> = expected.iter().map(|(n, _)| n.as_str()).collect();
        documented.extend(REACHING);
        assert_eq!(names, documented, "[{b}] every toolset: one tool per documented bearer operation, and the two");
        assert_eq!(tools.len(), expected.len() + REACHING.len());
        assert!(tools.len() >= 50, "[{b}] {}", tools.len());
        for skipped in ["oauthToken", "apiIndex", "openApiJson", "uploadFile"] {
            assert!(!names.contains(skipped), "[{b}] {skipped}");
        }
        for tool in tools {
            let name = tool["name"].as_str().unwrap();
            for key in ["inputSchema", "outputSchema"] {
                let Some(schema) = tool.get(key) else { continue };
                assert_eq!(schema["type"], "object", "[{b}] {name} {key}");
                assert!(jsonschema::draft202012::meta::is_valid(schema), "[{b}] {name} {key} is 2020-12");
                jsonschema::draft202012::new(schema).unwrap_or_else(|e| panic!("{name} {key} compiles: {e}"));
                assert!(!schema.to_string().contains("#/components/"), "[{b}] {name} {key} is self-contained");
                let findings = portability_findings(schema);
                assert!(
                    findings.is_empty(),
                    "[{b}] {name} {key}: what the MCP Inspector's strict check warns on: {findings:?}"
                );
            }
            if let Some(output) = tool.get("outputSchema") {
                // An error's structured content is the error body; clients may check it too.
                let error =
                    json!({"statusCode": 400, "message": "Validation failed", "errors": {"name": ["required"]}});
                assert!(jsonschema::draft202012::is_valid(output, &error), "[{b}] {name}: the error body validates");
            }
            assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()), "[{b}] {name}");
            assert!(tool["title"].is_string(), "[{b}] {name}");
        }
        let largest = tools.iter().map(|t| (t.to_string().len(), t["name"].as_str().unwrap())).max().unwrap();
        assert!(largest.0 <= mcp::tools::MAX_TOOL_BYTES, "[{b}] the largest tool: {largest:?}");
        eprintln!(
            "[{b}] every toolset: {} tools, {} bytes, the largest {largest:?}",
            tools.len(),
            answer.to_string().len()
        );
        // A tool shortened to fit says so where it left a definition out, and searchOperations
        // answers its full input schema: the same arguments, described in full.
        let shortened: Vec<&Value> =
            tools.iter().filter(|t| t["inputSchema"].to_string().contains(mcp::tools::LEFT_OUT)).collect();
        for tool in &shortened {
            let name = tool["name"].as_str().unwrap();
            let found = call_tool(api, &token, "searchOperations", json!({"query": name, "limit": 1})).await;
            let full = &found["structuredContent"]["operations"][0];
            assert_eq!(full["operationId"], name, "[{b}] {found}");
            let full = &full["inputSchema"];
            assert!(!full.to_string().contains(mcp::tools::LEFT_OUT), "[{b}] {name}: the full schema");
            assert!(full.to_string().len() > tool["inputSchema"].to_string().len(), "[{b}] {name}");
            let arguments =
                |schema: &Value| schema["properties"].as_object().unwrap().keys().cloned().collect::<Vec<_>>();
            assert_eq!(arguments(full), arguments(&tool["inputSchema"]), "[{b}] {name}");
            jsonschema::draft202012::new(full).unwrap_or_else(|e| panic!("{name} full input compiles: {e}"));
        }
        eprintln!("[{b}] shortened to fit: {:?}", shortened.iter().map(|t| &t["name"]).collect::<Vec<_>>());
        let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap().clone();
        assert_eq!(tool("listTags")["annotations"]["readOnlyHint"], true);
        assert_eq!(tool("deleteTag")["annotations"]["destructiveHint"], true);
        assert_eq!(tool("disableHelpdesk")["annotations"]["destructiveHint"], true);
        assert_eq!(tool("createTag")["annotations"]["destructiveHint"], false);
        assert_eq!(tool("saveTagColor")["annotations"]["idempotentHint"], true);
        assert_eq!(tool("createTag")["annotations"]["idempotentHint"], false);
        let create = tool("createTag")["inputSchema"].clone();
        assert_eq!(create["properties"]["type"]["$ref"], "#/$defs/TagType", "[{b}] path parameter: {create}");
        assert!(create["properties"]["name"].is_object(), "[{b}] flattened body: {create}");
        assert!(create["properties"]["fieldsToReturn"].is_object(), "[{b}] projection: {create}");

        // A read-only token sees the read tools only, and a write tool is a 403 for it.
        let (_, reader) = api.user_in(api.workspace_id, ROOT, UserKind::Employee, &["api:read"]).await;
        let read_tools = list_tools_at(api, "/mcp/x/all", &[], &reader).await;
        let reads = expected.iter().filter(|(_, scope)| scope == "api:read").count();
        assert_eq!(read_tools.len(), reads + REACHING.len(), "[{b}]");
        assert!(read_tools.iter().all(|t| t["annotations"]["readOnlyHint"] == true), "[{b}] no write tool");
        let (body, headers) =
            stateless(1, "tools/call", json!({"name": "createTag", "arguments": {"type": "task", "name": "x"}}));
        let (status, headers, answer) = post(api, Some(&reader), &headers, &body.to_string()).await;
        assert_eq!(status, 403, "[{b}] {answer}");
        assert_eq!(answer["statusCode"], 403);
        let challenge = headers["www-authenticate"].to_str().unwrap();
        assert!(challenge.contains("error=\"insufficient_scope\""), "[{b}] {challenge}");
        assert!(challenge.contains("scope=\"api:read api:write\""), "[{b}] {challenge}");
        let (status, _) = api.get("/tags/task", &reader).await;
        assert_eq!(status, 200, "[{b}] the read-only token still reads");
    })
    .await;
}

#[tokio::test]
async fn tools_run_the_operations_in_process() {
    each_backend(async |_, api| {
        let b = api.backend;
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let name = format!("Via MCP {}", &uuid::Uuid::new_v4().simple().to_string()[..8]);

        // A create through a tool, visible through the REST API.
        let created = call_tool(api, &token, "createTag", json!({"type": "task", "name": name})).await;
        assert_eq!(created["isError"], false, "[{b}] {created}");
        let tag = created["structuredContent"].clone();
        assert_eq!(tag["name"], name.as_str(), "[{b}] {created}");
        let text: Value = serde_json::from_str(created["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, tag, "[{b}] the JSON as text too");
        let (status, listed) = api.get("/tags/task", &token).await;
        assert_eq!(status, 200);
        assert!(listed.as_array().unwrap().iter().any(|t| t["id"] == tag["id"]), "[{b}] {listed}");

        // Projection through the tool's arguments, and a path parameter that needs encoding.
        let colored = call_tool(
            api,
            &token,
            "saveTagColor",
            json!({"type": "task", "id": tag["id"], "color": "red", "fieldsToReturn": "color,isDeleted"}),
        )
        .await;
        assert_eq!(colored["structuredContent"], json!({"color": "red", "isDeleted": false}), "[{b}] {colored}");
        let listed = call_tool(api, &token, "listTags", json!({"type": "task"})).await;
        assert!(listed["structuredContent"]["result"].as_array().unwrap().iter().any(|t| t["id"] == tag["id"]));

        // API errors are tool results with isError and the error body.
        let refused = call_tool(api, &token, "createTag", json!({"type": "task", "name": ""})).await;
        assert_eq!(refused["isError"], true, "[{b}] {refused}");
        assert_eq!(refused["structuredContent"]["statusCode"], 400, "[{b}] {refused}");
        assert!(refused["structuredContent"]["errors"]["name"].is_array(), "[{b}] {refused}");
        let text: Value = serde_json::from_str(refused["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, refused["structuredContent"]);
        let bad_type = call_tool(api, &token, "listTags", json!({"type": "no/such type"})).await;
        assert_eq!(bad_type["isError"], true, "[{b}] {bad_type}");
        assert_eq!(bad_type["structuredContent"]["statusCode"], 400, "[{b}] routed, refused by the path: {bad_type}");
        let missing = call_tool(api, &token, "listTags", json!({})).await;
        assert!(missing["structuredContent"]["errors"]["type"].is_array(), "[{b}] {missing}");
        let unknown = call_tool(api, &token, "listTags", json!({"type": "task", "nope": 1})).await;
        assert!(unknown["structuredContent"]["errors"]["nope"].is_array(), "[{b}] {unknown}");
        let (status, answer) = rpc(api, &token, "tools/call", json!({"name": "noSuchTool", "arguments": {}})).await;
        assert_eq!((status, answer["error"]["code"].as_i64()), (200, Some(-32602)), "[{b}] {answer}");

        // Idempotency-Key as an argument: the same key replays the first creation.
        let key = uuid::Uuid::new_v4().to_string();
        let role = json!({"name": format!("MCP role {}", &key[..8]), "icon": "fa-eye", "type": "normal", "idempotencyKey": key});
        let first = call_tool(api, &token, "createRole", role.clone()).await;
        assert_eq!(first["isError"], false, "[{b}] {first}");
        let again = call_tool(api, &token, "createRole", role).await;
        assert_eq!(again["structuredContent"]["id"], first["structuredContent"]["id"], "[{b}] {again}");
    })
    .await;
}

/// One charge to the token's rate limit per `/mcp` request: the in-process call is not charged
/// again.
#[tokio::test]
async fn a_tool_call_is_one_request_to_the_rate_limit() {
    for backend in api_tests::backends().await {
        limited(&backend).await;
    }
}

async fn limited(backend: &Backend) {
    let limits = RateLimits { per_token: 3, per_ip: 1_000_000, window_secs: 60 };
    let api = TestApi::builder(backend).rate_limits(limits).cors_origins(AllowedOrigins::none()).start().await;
    let (_, token) = api.user(ROOT, UserKind::Employee).await;
    for _ in 0..3 {
        let result = call_tool(&api, &token, "listTags", json!({"type": "task"})).await;
        assert_eq!(result["isError"], false, "[{}] {result}", api.backend);
    }
    let (status, answer) =
        rpc(&api, &token, "tools/call", json!({"name": "listTags", "arguments": {"type": "task"}})).await;
    assert_eq!(status, 429, "[{}] the fourth request: {answer}", api.backend);
}

/// Browser-based MCP clients: the preflights of `/mcp` (an allowed origin) and of the MCP
/// resource's metadata (any origin) allow the MCP headers, and a 401 exposes its challenge.
#[tokio::test]
async fn browser_clients_may_send_the_mcp_headers() {
    for backend in api_tests::backends().await {
        let origins = AllowedOrigins::parse("https://app.example").unwrap();
        let api = TestApi::builder(&backend).cors_origins(origins).start().await;
        let b = api.backend;
        for path in ["/mcp", "/.well-known/oauth-protected-resource/mcp"] {
            let response = api
                .http
                .request(Method::OPTIONS, api.url(path))
                .header("Origin", "https://app.example")
                .header("Access-Control-Request-Method", "POST")
                .header(
                    "Access-Control-Request-Headers",
                    "mcp-protocol-version, mcp-method, mcp-name, authorization, content-type",
                )
                .send()
                .await
                .unwrap();
            assert_eq!(response.status().as_u16(), 204, "[{b}] {path}");
            let allowed = response.headers()["access-control-allow-headers"].to_str().unwrap().to_ascii_lowercase();
            for header in ["mcp-protocol-version", "mcp-method", "mcp-name", "authorization", "content-type"] {
                assert!(allowed.split(", ").any(|h| h == header), "[{b}] {path}: {header} in {allowed}");
            }
        }
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
        let (status, headers, _) = post(&api, None, &[("Origin", "https://app.example".into())], &list).await;
        assert_eq!(status, 401, "[{b}]");
        assert_eq!(headers["access-control-allow-origin"], "https://app.example", "[{b}]");
        assert!(headers["access-control-expose-headers"].to_str().unwrap().contains("WWW-Authenticate"), "[{b}]");
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let (status, _, _) = post(&api, Some(&token), &[("Origin", "https://app.example".into())], &list).await;
        assert_eq!(status, 200, "[{b}] an allowed origin");
    }
}

/// The default surface: at most 15 tools in at most 16 KB (the whole `tools/list` answer),
/// the same every time, the two reaching tools first; `searchOperations` finds what it does not
/// list, with the input schema a call needs.
#[tokio::test]
async fn the_default_surface_is_small_and_reaches_everything() {
    each_backend(async |_, api| {
        let b = api.backend;
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let (body, headers) = stateless(1, "tools/list", json!({}));
        let list = async || {
            let response = api
                .http
                .post(api.url("/mcp"))
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .headers(headers.iter().map(|(n, v)| (n.parse().unwrap(), v.parse().unwrap())).collect())
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200, "[{b}]");
            response.bytes().await.unwrap()
        };
        let bytes = list().await;
        assert_eq!(bytes, list().await, "[{b}] deterministic: the same bytes every time");
        let answer: Value = serde_json::from_slice(&bytes).unwrap();
        let tools = answer["result"]["tools"].as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        let mut expected = REACHING.to_vec();
        expected.extend(mcp::surface::DEFAULT_OPERATIONS);
        assert_eq!(names, expected, "[{b}] the default tools, in their order");
        assert!(tools.len() <= 15, "[{b}] {} tools", tools.len());
        assert!(bytes.len() <= 16 * 1024, "[{b}] the default tools/list answer is {} bytes", bytes.len());
        eprintln!("[{b}] default tools/list: {} tools, {} bytes: {names:?}", tools.len(), bytes.len());
        for tool in tools {
            for key in ["inputSchema", "outputSchema"] {
                let Some(schema) = tool.get(key) else { continue };
                jsonschema::draft202012::new(schema).unwrap_or_else(|e| panic!("{} {key} compiles: {e}", tool["name"]));
            }
        }

        // Search finds what the default surface does not list, with its input schema.
        let found = call_tool(api, &token, "searchOperations", json!({"query": "subscription billing"})).await;
        assert_eq!(found["isError"], false, "[{b}] {found}");
        let operations = found["structuredContent"]["operations"].as_array().unwrap();
        let create = operations.iter().find(|o| o["operationId"] == "createSubscriptionBilling");
        let create = create.unwrap_or_else(|| panic!("[{b}] createSubscriptionBilling found: {found}"));
        assert_eq!(
            (&create["scope"], &create["access"], &create["toolset"]),
            (&json!("api:write"), &json!("write"), &json!("billing"))
        );
        let schema = &create["inputSchema"];
        assert!(
            schema["properties"]["projectId"].is_object() && schema["properties"]["frequency"].is_object(),
            "[{b}] {schema}"
        );
        assert!(jsonschema::draft202012::new(schema).is_ok(), "[{b}] the input schema compiles");
        let search = tools.iter().find(|t| t["name"] == "searchOperations").unwrap();
        let output = jsonschema::draft202012::new(&search["outputSchema"]).unwrap();
        assert!(output.is_valid(&found["structuredContent"]), "[{b}] the search result validates: {found}");
        let refused = call_tool(api, &token, "searchOperations", json!({"access": "both"})).await;
        assert_eq!(refused["isError"], true, "[{b}] {refused}");
        assert!(refused["structuredContent"]["errors"]["access"].is_array(), "[{b}] {refused}");

        // A reader's default surface: no write tool, callOperation says it reads only.
        let (_, reader) = api.user_in(api.workspace_id, ROOT, UserKind::Employee, &["api:read"]).await;
        let read_tools = list_tools(api, &reader).await;
        assert!(read_tools.iter().all(|t| t["annotations"]["readOnlyHint"] == true), "[{b}] {read_tools:?}");
        assert!(!read_tools.iter().any(|t| t["name"] == "markNotificationRead"), "[{b}]");
        let found = call_tool(api, &reader, "searchOperations", json!({"query": "subscription billing"})).await;
        assert!(!found.to_string().contains("createSubscriptionBilling"), "[{b}] private to the scopes: {found}");
    })
    .await;
}

/// `callOperation` runs an operation as its own tool does: the result, validation errors as
/// `isError`, the scope's 403, an unknown operation named.
#[tokio::test]
async fn call_operation_runs_an_operation_as_its_tool() {
    each_backend(async |_, api| {
        let b = api.backend;
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let name = format!("Via callOperation {}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
        let arguments = json!({"type": "task", "name": name, "fieldsToReturn": "id,name"});
        let created = call_tool(api, &token, "callOperation", json!({"operationId": "createTag", "arguments": arguments})).await;
        assert_eq!(created["isError"], false, "[{b}] {created}");
        assert_eq!(created["structuredContent"]["name"], name.as_str(), "[{b}] {created}");
        assert_eq!(created["structuredContent"].as_object().unwrap().len(), 2, "[{b}] projected: {created}");
        let (_, tags) = api.get("/tags/task", &token).await;
        assert!(tags.as_array().unwrap().iter().any(|t| t["name"] == name.as_str()), "[{b}] created over REST");

        let listed = call_tool(api, &token, "callOperation", json!({"operationId": "listTags", "arguments": {"type": "task"}})).await;
        assert!(listed["structuredContent"]["result"].is_array(), "[{b}] a list as result: {listed}");
        assert!(listed["structuredContent"].get("nextCursor").is_none(), "[{b}] one page: {listed}");

        // A list pages through the tool as over REST: `nextCursor` names the next page.
        call_tool(api, &token, "callOperation", json!({"operationId": "createTag", "arguments": {"type": "task", "name": format!("{name} 2")}})).await;
        let mut seen = Vec::new();
        let mut arguments = json!({"type": "task", "limit": 1});
        loop {
            let page = call_tool(api, &token, "callOperation", json!({"operationId": "listTags", "arguments": arguments.clone()})).await;
            assert_eq!(page["isError"], false, "[{b}] {page}");
            let items = page["structuredContent"]["result"].as_array().unwrap().clone();
            assert_eq!(items.len(), 1, "[{b}] {page}");
            seen.push(items[0]["id"].clone());
            let Some(cursor) = page["structuredContent"]["nextCursor"].as_str() else { break };
            assert!(page["content"][1]["text"].as_str().unwrap().contains(cursor), "[{b}] the model reads it: {page}");
            arguments["cursor"] = json!(cursor);
        }
        assert_eq!(seen.len(), 2, "[{b}] both tags, one page each: {seen:?}");
        assert_ne!(seen[0], seen[1]);
        // A list argument goes as the document declares it (`style: form, explode: false`):
        // the feed's `type` filter, comma-separated.
        let events = json!({"type": ["tag.created", "tag.deleted"], "resourceKind": "tag"});
        let listed = call_tool(api, &token, "callOperation", json!({"operationId": "listEvents", "arguments": events})).await;
        assert_eq!(listed["isError"], false, "[{b}] {listed}");
        let types: Vec<&Value> = listed["structuredContent"]["result"].as_array().unwrap().iter().map(|e| &e["type"]).collect();
        assert!(types.contains(&&json!("tag.created")) && types.iter().all(|t| *t == "tag.created" || *t == "tag.deleted"), "[{b}] {listed}");
        let invalid = call_tool(api, &token, "callOperation", json!({"operationId": "createTag", "arguments": {"type": "task", "name": ""}})).await;
        assert_eq!((&invalid["isError"], &invalid["structuredContent"]["statusCode"]), (&json!(true), &json!(400)), "[{b}] {invalid}");
        assert!(invalid["structuredContent"]["errors"]["name"].is_array(), "[{b}] {invalid}");
        for (arguments, field) in [
            (json!({"operationId": "noSuchOperation"}), "operationId"),
            (json!({"operationId": "uploadFile"}), "operationId"),
            (json!({"arguments": {}}), "operationId"),
            (json!({"operationId": "listTags", "arguments": [1]}), "arguments"),
        ] {
            let refused = call_tool(api, &token, "callOperation", arguments.clone()).await;
            assert_eq!(refused["isError"], true, "[{b}] {arguments}: {refused}");
            assert!(refused["structuredContent"]["errors"][field].is_array(), "[{b}] {arguments}: {refused}");
        }

        // A reader calling a write: the HTTP 403 with the step-up challenge, as the tool itself.
        let (_, reader) = api.user_in(api.workspace_id, ROOT, UserKind::Employee, &["api:read"]).await;
        let params = json!({"name": "callOperation", "arguments": {"operationId": "createTag", "arguments": {"type": "task", "name": "x"}}});
        let (body, headers) = stateless(1, "tools/call", params);
        let (status, headers, answer) = post(api, Some(&reader), &headers, &body.to_string()).await;
        assert_eq!(status, 403, "[{b}] {answer}");
        assert!(headers["www-authenticate"].to_str().unwrap().contains("insufficient_scope"), "[{b}]");
    })
    .await;
}

/// Toolsets by URL or header list their tools in full; read-only lists reads only and refuses
/// every write, through `callOperation` too, writing nothing; unknown surfaces are refused.
#[tokio::test]
async fn toolsets_and_read_only_surfaces() {
    each_backend(async |_, api| {
        let b = api.backend;
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let names = |tools: Vec<Value>| -> Vec<String> {
            tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
        };
        let tags = ["searchOperations", "callOperation", "listTags", "createTag", "deleteTag", "saveTagColor"];
        assert_eq!(names(list_tools_at(api, "/mcp/x/tags", &[], &token).await), tags, "[{b}] by URL");
        let by_header = list_tools_at(api, "/mcp", &[("X-MCP-Toolsets", "tags")], &token).await;
        assert_eq!(names(by_header), tags, "[{b}] by header");
        let two = names(list_tools_at(api, "/mcp/x/tags,billing", &[], &token).await);
        assert!(two.contains(&"createSubscriptionBilling".to_owned()) && two.contains(&"createTag".to_owned()), "[{b}] {two:?}");
        assert_eq!(two, names(list_tools_at(api, "/mcp", &[("X-MCP-Toolsets", "billing, tags")], &token).await));
        let read_tags = names(list_tools_at(api, "/mcp/x/tags/readonly", &[], &token).await);
        assert_eq!(read_tags, ["searchOperations", "callOperation", "listTags"], "[{b}]");

        for (path, extra) in [("/mcp/readonly", vec![]), ("/mcp", vec![("X-MCP-Readonly", "true")])] {
            let tools = list_tools_at(api, path, &extra, &token).await;
            assert!(tools.iter().all(|t| t["annotations"]["readOnlyHint"] == true), "[{b}] {path}: reads only");
            assert!(tools.iter().any(|t| t["name"] == "listProjects"), "[{b}] {path}");
            let name = format!("Read-only {}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
            let write = json!({"type": "task", "name": name});
            let call = |params: Value| rpc_at(api, path, &extra, &token, "tools/call", params);
            let (_, through) = call(json!({"name": "callOperation", "arguments": {"operationId": "createTag", "arguments": write}})).await;
            let (_, direct) = call(json!({"name": "createTag", "arguments": write})).await;
            for refused in [&through["result"], &direct["result"]] {
                assert_eq!(refused["isError"], true, "[{b}] {path}: {refused}");
                assert_eq!(refused["structuredContent"]["statusCode"], 403, "[{b}] {path}: {refused}");
            }
            let (_, tags) = api.get("/tags/task", &token).await;
            assert!(!tags.to_string().contains(&name), "[{b}] {path}: nothing written");
            let (_, found) = call(json!({"name": "searchOperations", "arguments": {"query": "tag"}})).await;
            assert!(!found.to_string().contains("createTag"), "[{b}] {path}: search finds reads only: {found}");
            let (_, read) = call(json!({"name": "callOperation", "arguments": {"operationId": "listTags", "arguments": {"type": "task"}}})).await;
            assert_eq!(read["result"]["isError"], false, "[{b}] {path}: reads run: {read}");
        }

        let (body, headers) = stateless(1, "tools/list", json!({}));
        for (path, status) in [("/mcp/x/nosuch", 404), ("/mcp/x", 404), ("/mcp/other", 404)] {
            let (got, _, answer) = post_to(api, path, Some(&token), &headers, &body.to_string()).await;
            assert_eq!((got, answer["statusCode"].as_u64()), (status, Some(status as u64)), "[{b}] {path}: {answer}");
        }
        let mut unknown = headers.clone();
        unknown.push(("X-MCP-Toolsets", "tags,nosuch".to_owned()));
        let (got, _, answer) = post(api, Some(&token), &unknown, &body.to_string()).await;
        assert_eq!(got, 400, "[{b}] {answer}");
        assert!(answer["errors"]["X-MCP-Toolsets"][0].as_str().unwrap().contains("nosuch"), "[{b}] {answer}");

        // Every URL is the one resource: the same challenge names the /mcp metadata.
        let (got, response_headers, _) = post_to(api, "/mcp/x/tags/readonly", None, &headers, &body.to_string()).await;
        assert_eq!(got, 401, "[{b}]");
        let challenge = response_headers["www-authenticate"].to_str().unwrap();
        assert!(challenge.contains("/.well-known/oauth-protected-resource/mcp\""), "[{b}] {challenge}");
        // A client deriving the metadata URL from a surface's URL (RFC 9728 §3.1) finds the MCP
        // resource's metadata, not the API's.
        let (_, _, mcp_metadata) = api.call(Method::GET, "/.well-known/oauth-protected-resource/mcp", None, None).await;
        for surface in ["readonly", "x/tags", "x/tags,billing/readonly"] {
            let path = format!("/.well-known/oauth-protected-resource/mcp/{surface}");
            let (got, _, metadata) = api.call(Method::GET, &path, None, None).await;
            assert_eq!(got, 200, "[{b}] {path}: {metadata}");
            assert_eq!(metadata, mcp_metadata, "[{b}] {path}");
            assert!(metadata["resource"].as_str().unwrap().ends_with("/mcp"), "[{b}] {metadata}");
        }
    })
    .await;
}

/// Every documented bearer operation runs through `callOperation`: the operation catalogue
/// (`api_tests::operations`), each request's path, query and body turned into the operation's
/// arguments, succeeds on a fresh workspace of every backend, its structured content valid
/// against the tool's output schema, and no tool is left unwalked.
#[tokio::test]
async fn every_bearer_operation_of_the_catalogue_runs_through_call_operation() {
    use api_tests::operations::{Credential, catalogue};
    use mcp::tools::BodyMode;
    for backend in api_tests::backends().await {
        let api = TestApi::start(&backend).await;
        let b = api.backend;
        let catalogue = catalogue(&api).await;
        let (mut walked, mut failures) = (BTreeSet::new(), Vec::new());
        for request in &catalogue.requests {
            let Some(tool) = mcp::tools::find(&request.operation_id) else { continue };
            assert_eq!(request.credential, Credential::RootPat, "[{b}] {} takes a bearer token", tool.name);
            let (parts, body) = catalogue.http_request(request).into_parts();
            let mut arguments = serde_json::Map::new();
            let segments = parts.uri.path().trim_start_matches('/').split('/');
            for (template, segment) in tool.path.trim_start_matches('/').split('/').zip(segments) {
                if let Some(name) = template.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
                    let decoded: String =
                        url::form_urlencoded::parse(format!("v={segment}").as_bytes()).next().unwrap().1.into();
                    arguments.insert(name.to_owned(), json!(decoded));
                }
            }
            for (name, value) in url::form_urlencoded::parse(parts.uri.query().unwrap_or_default().as_bytes()) {
                arguments.insert(name.into_owned(), json!(value));
            }
            let body: Option<Value> = (!body.is_empty()).then(|| serde_json::from_slice(&body).unwrap());
            match (&tool.body, body) {
                (BodyMode::Flattened, Some(Value::Object(fields))) => arguments.extend(fields),
                (BodyMode::Nested, Some(body)) => {
                    arguments.insert("body".to_owned(), body);
                }
                _ => {}
            }
            let extra: Vec<(&'static str, &str)> = request
                .headers
                .iter()
                .map(|(name, value)| {
                    assert_eq!(name, "LT_CUSTOM_NOW", "[{b}] a header the walk does not carry");
                    ("LT_CUSTOM_NOW", value.as_str())
                })
                .collect();
            let params =
                json!({"name": "callOperation", "arguments": {"operationId": tool.name, "arguments": arguments}});
            let (status, answer) = rpc_at(&api, "/mcp", &extra, &catalogue.root_token, "tools/call", params).await;
            if status != 200 || answer["result"]["isError"] != false {
                failures.push(format!("{} {}: {status} {answer}", tool.name, request.path));
            } else if let Some(output) = tool.listing.value().get("outputSchema") {
                // The structured content validates against the tool's output schema, as
                // clients check it.
                let content = &answer["result"]["structuredContent"];
                let validator = jsonschema::draft202012::new(output).unwrap();
                let errors: Vec<String> =
                    validator.iter_errors(content).map(|e| format!("{} at {}", e, e.instance_path())).take(3).collect();
                if !errors.is_empty() {
                    failures.push(format!("{}: the structured content fails the output schema: {errors:?}", tool.name));
                }
            }
            walked.insert(tool.name.as_str());
        }
        assert!(failures.is_empty(), "[{b}] operations that failed through callOperation:\n{}", failures.join("\n"));
        let tools: BTreeSet<&str> = mcp::tools::all().iter().map(|t| t.name.as_str()).collect();
        assert_eq!(walked, tools, "[{b}] every tool is walked");
        assert!(walked.len() >= 50, "[{b}] {}", walked.len());
    }
}
