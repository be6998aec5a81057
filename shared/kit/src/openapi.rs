//! The OpenAPI 3.1 document, generated from the code: each function registers its handlers
//! through `utoipa_axum::routes!`, so a route and its documentation are one declaration; this
//! module adds, as typed modifications, what every operation shares (security, error
//! responses, rate-limit headers) and the projection parameters of [P] endpoints, read from
//! their response types ([`crate::projection::Projected`]).

use crate::projection::COMPACT_EXTENSION;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::info::{ContactBuilder, InfoBuilder, LicenseBuilder};
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::path::{HttpMethod, Operation, ParameterBuilder, ParameterIn, PathItem};
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::security::{
    AuthorizationCode, Flow, HttpAuthScheme, HttpBuilder, OAuth2, Scopes, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::server::ServerBuilder;
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{Content, OpenApi, Ref, RefOr, Required};

/// The password login: public, yet it answers 401 for wrong credentials.
const LOGIN_PATH: &str = "/api/auth/login";
/// The projection parameters of [P] endpoints, in the order the document lists them.
pub const PROJECTION_PARAMETERS: [&str; 3] = ["fieldsToReturn", "responseShape", "LT-Response-Shape"];

/// `info.license.identifier`: an SPDX expression (OpenAPI 3.1) for a licence that is not on the
/// SPDX list.
pub const LICENSE_IDENTIFIER: &str = "LicenseRef-Proprietary";

/// A top-level tag: the name every operation of a function carries, and what it is about.
#[derive(Debug, Clone, Copy)]
pub struct ApiTag {
    pub name: &'static str,
    pub description: &'static str,
}

/// Completes a generated document: info, servers, tags, shared components, and per operation
/// its security, error responses, rate-limit headers and projection parameters.
pub fn finish(mut api: OpenApi, tags: &[ApiTag]) -> OpenApi {
    api.info = InfoBuilder::new()
        .title("workapi")
        .version("1.0")
        .description(Some(
            "Work-management public API. Errors have the body {statusCode, message, errors?}; every \
             response carries X-RateLimit-Limit and X-RateLimit-Remaining (1200 requests a minute per \
             token, 3000 per client IP). [P] operations accept fieldsToReturn, responseShape and \
             LT-Response-Shape (x-lt-response-projection names their compact default).",
        ))
        .contact(Some(ContactBuilder::new().name(Some("workapi developers")).build()))
        // Proprietary (Cargo.toml: UNLICENSED): no public licence text to link, so the SPDX
        // expression for a licence outside the SPDX list stands in for a URL.
        .license(Some(LicenseBuilder::new().name("Proprietary").identifier(Some(LICENSE_IDENTIFIER)).build()))
        .build();
    api.servers = Some(vec![
        ServerBuilder::new().url("/").description(Some("This deployment (the origin serving this document)")).build(),
    ]);
    api.tags =
        Some(tags.iter().map(|t| TagBuilder::new().name(t.name).description(Some(t.description)).build()).collect());
    let compact = take_compact_defaults(&mut api);
    add_components(&mut api);
    for (path, item) in api.paths.paths.iter_mut() {
        // Paths served without authentication: the OAuth endpoints and discovery documents (the
        // RFC 7592 client routes declare their own `registrationAccessToken` security, which is
        // kept), the login and the document itself; the same list routing uses.
        let public = crate::http::is_public(path);
        for (method, operation) in operations_mut(item) {
            let read = method == HttpMethod::Get;
            complete_operation(operation, method, public);
            if path == LOGIN_PATH {
                operation.responses.responses.insert("401".into(), error_ref());
            }
            if let Some(fields) = projected_compact(operation, &compact) {
                add_projection(operation, fields);
            }
            add_next_link(operation, path);
            if read {
                add_conditional_read(operation);
            } else if takes_header(operation, "If-Match") {
                // If-Match named none of the resource's current ETags; nothing was written.
                operation.responses.responses.insert("412".into(), error_ref());
                add_written_tag(operation);
            }
        }
    }
    add_links(&mut api);
    api
}

/// Creates whose created resources live under another path than the create's own: a tag is
/// created at `/tags/{type}/create` and addressed at `/tags/{type}/{id}`; an upload at
/// `/workspace/upload` becomes `/workspace/files/{id}`.
const CREATED_ELSEWHERE: [(&str, &str); 2] =
    [("/tags/{type}/create", "/tags/{type}"), ("/workspace/upload", "/workspace/files")];

/// The path's parameter names, in order (`/a/{x}/b/{y}` → `x`, `y`).
fn path_parameters(path: &str) -> Vec<&str> {
    path.split('/').filter_map(|s| s.strip_prefix('{')?.strip_suffix('}')).collect()
}

/// The top-level properties of a response's JSON schema, through one `$ref` to a component.
fn response_properties(schemas: &BTreeMap<String, RefOr<Schema>>, response: &Response) -> BTreeSet<String> {
    let Some(schema) = response.content.get("application/json").and_then(|c| c.schema.as_ref()) else {
        return BTreeSet::new();
    };
    let schema = match schema {
        RefOr::Ref(reference) => {
            let name = reference.ref_location.trim_start_matches("#/components/schemas/");
            match schemas.get(name) {
                Some(RefOr::T(schema)) => schema,
                _ => return BTreeSet::new(),
            }
        }
        RefOr::T(schema) => schema,
    };
    match schema {
        Schema::Object(object) => object.properties.keys().cloned().collect(),
        _ => BTreeSet::new(),
    }
}

/// OpenAPI `links` from each create (a POST answering a JSON body with its `id`) to the
/// operations that take what it created (docs/conventions.md, "Links"): every operation on
/// `{collection}/{param}` and below, `{param}` filled from the answer's `id` (or its property
/// of the parameter's own name, as `client_id`), the create's own path parameters from its
/// request; and a GET on the collection itself (the list it added to, or the settings it saved)
/// with the same path parameters. Stateful testing and generated clients follow them.
fn add_links(api: &mut OpenApi) {
    let targets: Vec<(String, String, HttpMethod)> = api
        .paths
        .paths
        .iter_mut()
        .flat_map(|(path, item)| {
            operations_mut(item)
                .into_iter()
                .filter_map(|(method, o)| Some((path.clone(), o.operation_id.clone()?, method)))
                .collect::<Vec<_>>()
        })
        .collect();
    let schemas = api.components.as_ref().map(|c| c.schemas.clone()).unwrap_or_default();
    for (path, item) in api.paths.paths.iter_mut() {
        let Some(create) = item.post.as_mut() else { continue };
        let own = path_parameters(path);
        let collection = CREATED_ELSEWHERE.iter().find(|(p, _)| p == path).map_or(path.as_str(), |(_, c)| c);
        let Some((_, RefOr::T(created))) = create.responses.responses.iter_mut().find(|(s, _)| s.starts_with('2'))
        else {
            continue;
        };
        let properties = response_properties(&schemas, created);
        for (target, operation_id, method) in &targets {
            let from_request = |name: &str| own.contains(&name).then(|| format!("$request.path.{name}"));
            let parameters: Option<Vec<(String, String)>> = if target == collection {
                (method == &HttpMethod::Get && !own.is_empty())
                    .then(|| own.iter().map(|name| (name.to_string(), format!("$request.path.{name}"))).collect())
            } else {
                // `{collection}/{param}…`: the created resource's own operations.
                target
                    .strip_prefix(collection)
                    .and_then(|rest| rest.strip_prefix("/{"))
                    .and_then(|rest| rest.split_once('}'))
                    .filter(|(name, _)| !own.contains(name))
                    .and_then(|(id_parameter, _)| {
                        let field = if properties.contains(id_parameter) { id_parameter } else { "id" };
                        properties.contains(field).then(|| {
                            path_parameters(target)
                                .into_iter()
                                .filter_map(|name| {
                                    let value = if name == id_parameter {
                                        Some(format!("$response.body#/{field}"))
                                    } else {
                                        from_request(name)
                                    };
                                    value.map(|v| (name.to_owned(), v))
                                })
                                .collect()
                        })
                    })
            };
            let Some(parameters) = parameters else { continue };
            let mut link = parameters
                .into_iter()
                .fold(LinkBuilder::new(), |link, (name, value)| link.parameter(name, value))
                .build();
            // utoipa 5.5 writes `Link::operation_id` as `operation_id` (its Link has no camelCase
            // rename); OpenAPI's field is `operationId`, written through the flattened extensions.
            let mut named = Extensions::default();
            named.insert("operationId".into(), Value::String(operation_id.clone()));
            link.extensions = Some(named);
            created.links.insert(operation_id.clone(), RefOr::T(link));
        }
    }
}

/// The operations of a path item with their methods.
pub fn operations_mut(item: &mut PathItem) -> Vec<(HttpMethod, &mut Operation)> {
    [
        (HttpMethod::Get, item.get.as_mut()),
        (HttpMethod::Put, item.put.as_mut()),
        (HttpMethod::Post, item.post.as_mut()),
        (HttpMethod::Delete, item.delete.as_mut()),
        (HttpMethod::Patch, item.patch.as_mut()),
        (HttpMethod::Head, item.head.as_mut()),
        (HttpMethod::Options, item.options.as_mut()),
        (HttpMethod::Trace, item.trace.as_mut()),
    ]
    .into_iter()
    .filter_map(|(method, operation)| operation.map(|o| (method, o)))
    .collect()
}

fn is_read(method: &HttpMethod) -> bool {
    matches!(method, HttpMethod::Get | HttpMethod::Head | HttpMethod::Options)
}

/// The compact defaults carried by `…Projection` schemas, removed from them: the document
/// states them once, on the operation (`x-lt-response-projection`).
fn take_compact_defaults(api: &mut OpenApi) -> BTreeMap<String, Value> {
    let mut found = BTreeMap::new();
    let Some(components) = api.components.as_mut() else { return found };
    for (name, schema) in components.schemas.iter_mut() {
        if let RefOr::T(Schema::Object(object)) = schema
            && let Some(extensions) = object.extensions.as_mut()
            && let Some(compact) = extensions.remove(COMPACT_EXTENSION)
        {
            found.insert(format!("#/components/schemas/{name}"), compact);
        }
    }
    found
}

fn projected_compact(operation: &Operation, compact: &BTreeMap<String, Value>) -> Option<Value> {
    operation.responses.responses.iter().filter(|(status, _)| status.starts_with('2')).find_map(|(_, response)| {
        let RefOr::T(response) = response else { return None };
        let schema = response.content.get("application/json")?.schema.as_ref()?;
        let RefOr::Ref(reference) = schema else { return None };
        compact.get(&reference.ref_location).cloned()
    })
}

fn error_ref() -> RefOr<Response> {
    RefOr::Ref(Ref::from_response_name("Error"))
}

fn integer_header(description: &str) -> utoipa::openapi::header::Header {
    HeaderBuilder::new().schema(ObjectBuilder::new().schema_type(Type::Integer)).description(Some(description)).build()
}

fn rate_headers() -> BTreeMap<String, utoipa::openapi::header::Header> {
    BTreeMap::from([
        ("X-RateLimit-Limit".to_owned(), integer_header("Requests allowed in the current window")),
        ("X-RateLimit-Remaining".to_owned(), integer_header("Requests left in the current window")),
    ])
}

fn add_components(api: &mut OpenApi) {
    let components = api.components.get_or_insert_with(Default::default);
    let error_schema = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some("The error body of every failed request"))
        .property("statusCode", ObjectBuilder::new().schema_type(Type::Integer).description(Some("The HTTP status")))
        .required("statusCode")
        .property("message", ObjectBuilder::new().schema_type(Type::String).description(Some("What went wrong")))
        .required("message")
        .property(
            "errors",
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .description(Some("Validation errors: field path to messages"))
                .additional_properties(Some(
                    utoipa::openapi::schema::ArrayBuilder::new().items(ObjectBuilder::new().schema_type(Type::String)),
                )),
        )
        .examples([
            json!({"statusCode": 400, "message": "Validation failed", "errors": {"name": ["name is required"]}}),
        ])
        .build();
    components.schemas.insert("Error".into(), RefOr::T(Schema::Object(error_schema)));
    let error_content = || Content::new(Some(Ref::from_schema_name("Error")));
    let mut error = ResponseBuilder::new()
        .description("Error in the API's error body")
        .content("application/json", error_content())
        .build();
    error.headers = rate_headers();
    let mut too_many =
        ResponseBuilder::new().description("Rate limit exceeded").content("application/json", error_content()).build();
    too_many.headers = rate_headers();
    too_many.headers.insert("Retry-After".into(), integer_header("Seconds until the window resets"));
    // A dependency (the table, S3, Secrets Manager) failing beyond its retries, or a request
    // out of time: docs/reliability.md.
    let mut unavailable = ResponseBuilder::new()
        .description("A dependency is unavailable; retry after the given seconds")
        .content("application/json", error_content())
        .build();
    unavailable.headers = rate_headers();
    unavailable.headers.insert("Retry-After".into(), integer_header("Seconds to wait before retrying"));
    components.responses.insert("Error".into(), RefOr::T(error));
    components.responses.insert("TooManyRequests".into(), RefOr::T(too_many));
    components.responses.insert("ServiceUnavailable".into(), RefOr::T(unavailable));

    let bearer = |description: &str| {
        SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).description(Some(description)).build())
    };
    components.security_schemes.insert(
        "bearer".into(),
        bearer(
            "A personal access token (lt_pat_…), an OAuth access token or a session JWT. Tokens carry \
                 scopes; an operation's requirement names the scope it needs (api:read for reads, \
                 api:write for writes), as OpenAPI 3.1 allows for non-OAuth schemes.",
        ),
    );
    components.security_schemes.insert(
        "registrationAccessToken".into(),
        bearer("RFC 7592: the registration access token returned by POST /api/oauth/register"),
    );
    let scopes = Scopes::from_iter([("api:read", "Read access"), ("api:write", "Write access")]);
    let flow =
        AuthorizationCode::with_refresh_url("/api/oauth/authorize", "/api/oauth/token", scopes, "/api/oauth/token");
    components
        .security_schemes
        .insert("oauth2".into(), SecurityScheme::OAuth2(OAuth2::new([Flow::AuthorizationCode(flow)])));
}

fn complete_operation(operation: &mut Operation, method: HttpMethod, public: bool) {
    let scope = if is_read(&method) { "api:read" } else { "api:write" };
    if operation.security.is_none() {
        operation.security = Some(if public {
            Vec::new()
        } else {
            vec![SecurityRequirement::new("bearer", [scope]), SecurityRequirement::new("oauth2", [scope])]
        });
    }
    for response in operation.responses.responses.values_mut() {
        if let RefOr::T(response) = response {
            response.headers.extend(rate_headers());
        }
    }
    // Public operations can refuse too (a signed file URL that is wrong or expired, a
    // workspace whose API feature is off): 403 everywhere, 401 only where a credential is read.
    let mut errors = vec!["400", "403", "404", "405", "413", "414", "415", "500"];
    if !public {
        errors.push("401");
    }
    // Writes use optimistic concurrency: a write that keeps losing races (or a delete of
    // something still in use) answers 409.
    if !is_read(&method) {
        errors.push("409");
    }
    let responses = &mut operation.responses.responses;
    for status in errors {
        responses.entry(status.into()).or_insert_with(error_ref);
    }
    responses.entry("429".into()).or_insert_with(|| RefOr::Ref(Ref::from_response_name("TooManyRequests")));
    responses.entry("503".into()).or_insert_with(|| RefOr::Ref(Ref::from_response_name("ServiceUnavailable")));
}

fn takes_header(operation: &Operation, name: &str) -> bool {
    operation.parameters.iter().flatten().any(|p| p.name == name && p.parameter_in == ParameterIn::Header)
}

/// A JSON read answers an `ETag` and takes `If-None-Match` (`crate::conditional`).
fn add_conditional_read(operation: &mut Operation) {
    let Some(RefOr::T(ok)) = operation.responses.responses.get_mut("200") else { return };
    if !ok.content.keys().any(|media| media.starts_with("application/json")) {
        return;
    }
    let etag = HeaderBuilder::new()
        .schema(ObjectBuilder::new().schema_type(Type::String))
        .description(Some("Strong validator of this exact body; send it as If-None-Match to get 304 while unchanged"))
        .build();
    ok.headers.insert("ETag".into(), etag);
    let not_modified = ResponseBuilder::new()
        .description("Not modified: the If-None-Match named the current ETag (no body)")
        .header("ETag", HeaderBuilder::new().schema(ObjectBuilder::new().schema_type(Type::String)).build())
        .build();
    operation.responses.responses.insert("304".into(), RefOr::T(not_modified));
    let parameter = ParameterBuilder::new()
        .name("If-None-Match")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some("ETags of earlier answers (or *): 304 when one is the current one"))
        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
        .build();
    operation.parameters.get_or_insert_with(Vec::new).push(parameter);
}

/// A conditional write's answer carries the written resource's `ETag` when it is the resource.
fn add_written_tag(operation: &mut Operation) {
    let Some(RefOr::T(ok)) = operation.responses.responses.get_mut("200") else { return };
    let etag = HeaderBuilder::new()
        .schema(ObjectBuilder::new().schema_type(Type::String))
        .description(Some(
            "The resource's ETag as written, the one its next read answers (absent when the answer is not the \
             resource): the next write's If-Match",
        ))
        .build();
    ok.headers.insert("ETag".into(), etag);
}

/// The list whose cursor `PageParams` gives as the `cursor` example (the task tags').
const CURSOR_EXAMPLE_LIST: &str = "/tags/{type}";

/// A paged list (`params(workapi_kit::paging::PageParams)`) names its next page in `Link`.
/// A cursor names its list, so the example cursor is kept only on the list it is a cursor of:
/// on any other list it is the documented 400, and an example must be one the operation takes.
fn add_next_link(operation: &mut Operation, path: &str) {
    let Some(cursor) =
        operation.parameters.iter_mut().flatten().find(|p| p.name == "cursor" && p.parameter_in == ParameterIn::Query)
    else {
        return;
    };
    if path != CURSOR_EXAMPLE_LIST {
        *cursor = ParameterBuilder::from(cursor.clone()).example(None).build();
    }
    if let Some(RefOr::T(ok)) = operation.responses.responses.get_mut("200") {
        let link = HeaderBuilder::new()
            .schema(ObjectBuilder::new().schema_type(Type::String))
            .description(Some(
                "`<URL>; rel=\"next\"` (RFC 8288): the next page, the same request with its `cursor`; \
                 absent on the last page",
            ))
            .build();
        ok.headers.insert("Link".into(), link);
    }
}

fn add_projection(operation: &mut Operation, compact: Value) {
    let string = || ObjectBuilder::new().schema_type(Type::String);
    let parameters = [
        ParameterBuilder::new()
            .name(PROJECTION_PARAMETERS[0])
            .parameter_in(ParameterIn::Query)
            .required(Required::False)
            .description(Some(
                "Comma-separated top-level response fields; overrides the compact default unless \
                 responseShape=full. Unknown names are ignored.",
            ))
            .schema(Some(string()))
            .build(),
        ParameterBuilder::new()
            .name(PROJECTION_PARAMETERS[1])
            .parameter_in(ParameterIn::Query)
            .required(Required::False)
            .description(Some("compact (default) or full (the complete response)"))
            .schema(Some(string().enum_values(Some(["compact", "full"]))))
            .build(),
        ParameterBuilder::new()
            .name(PROJECTION_PARAMETERS[2])
            .parameter_in(ParameterIn::Header)
            .required(Required::False)
            .description(Some("full: same as responseShape=full"))
            .schema(Some(string().enum_values(Some(["full"]))))
            .build(),
    ];
    operation.parameters.get_or_insert_with(Vec::new).extend(parameters);
    operation
        .extensions
        .get_or_insert_with(Extensions::default)
        .insert("x-lt-response-projection".into(), json!({"compact": compact, "parameters": PROJECTION_PARAMETERS}));
}

/// The document's JSON text as YAML, keys in the order the JSON has them (`openapi`, `info`,
/// `servers`, `paths`… first, as the document is written), not sorted: YAML's mapping keeps
/// insertion order where `serde_json::Value` would sort.
pub fn json_to_yaml(json: &str) -> Result<String, String> {
    let document: serde_norway::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    serde_norway::to_string(&document).map_err(|e| e.to_string())
}

/// The document's top-level `webhooks` (OpenAPI 3.1): one per event type of `catalogue`, a POST
/// of the Standard Webhooks payload `{type, timestamp, data}` whose `data` is the schema the
/// type names (or, for a resource too large to copy, only its id: `TruncatedData`), so that
/// generated clients get the event types (docs/events.md). utoipa has no field for them: they
/// join the document as a top-level key beside its extensions.
pub fn add_webhooks(api: &mut OpenApi, catalogue: &[workapi_domain::event::EventType]) {
    let header = |name: &str, description: &str, example: &str| {
        json!({"name": name, "in": "header", "required": true, "description": description,
               "schema": {"type": "string"}, "example": example})
    };
    let parameters = [
        header(
            "webhook-id",
            "The event's id: the same on every retry of its delivery",
            "evt_01KB0M7Q4ZJ3W1X9Y2C5V8N6RT",
        ),
        header("webhook-timestamp", "When the delivery was signed (epoch seconds)", "1795000000"),
        header(
            "webhook-signature",
            "v1,<base64 HMAC-SHA256 of `id.timestamp.body` with the endpoint's secret> (Standard Webhooks 1.0); \
             several, space-separated, while a rotated secret overlaps",
            "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
        ),
    ];
    let mut webhooks = serde_json::Map::new();
    for event_type in catalogue {
        let data = json!({"anyOf": [
            {"$ref": format!("#/components/schemas/{}", event_type.schema)},
            {"$ref": "#/components/schemas/TruncatedData"}
        ]});
        let payload = json!({
            "type": "object",
            "required": ["type", "timestamp", "data"],
            "properties": {
                "type": {"type": "string", "const": event_type.name},
                "timestamp": {"type": "string", "format": "date-time", "description": "When the change was made"},
                "data": data
            }
        });
        let operation_id: String = event_type
            .name
            .split(['.', '_'])
            .enumerate()
            .map(|(i, word)| {
                let mut chars = word.chars();
                match (i, chars.next()) {
                    (0, Some(first)) => first.to_string() + chars.as_str(),
                    (_, Some(first)) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                    (_, None) => String::new(),
                }
            })
            .collect();
        let operation = json!({
            "operationId": format!("{operation_id}Event"),
            "summary": event_type.summary,
            "description": format!(
                "`{}`: sent to the webhook endpoints subscribed to it, and listed by `GET /events`. `data` is the {} \
                 as the API returns it after the change; a resource over 64 KiB is sent as its id only \
                 (`TruncatedData`): read it.",
                event_type.name, event_type.resource.name
            ),
            "tags": ["events"],
            "security": [],
            "parameters": parameters,
            "requestBody": {"required": true, "content": {"application/json": {"schema": payload}}},
            "responses": {
                "200": {"description": "Received. Any 2xx within 15 s is success; anything else is retried"},
                "410": {"description": "The endpoint is gone: it is disabled and not called again"}
            }
        });
        webhooks.insert(event_type.name.to_owned(), json!({"post": operation}));
    }
    api.extensions.get_or_insert_with(Extensions::default).insert("webhooks".to_owned(), Value::Object(webhooks));
}
