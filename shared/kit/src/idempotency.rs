//! `Idempotency-Key` on creating POSTs (the Stripe convention; docs/conventions.md#idempotency).
//!
//! A function declares its creating operations once, where it registers them:
//! `.routes(idempotent(routes!(create_tag)))`. [`idempotent`] puts one layer on those routes'
//! POST and adds the optional `Idempotency-Key` header parameter (and the 422 answer) to the
//! same operations in the document, so the document and the behaviour come from one
//! declaration. The layer, for a request that carries the header:
//!
//! 1. authenticates the caller (the handler reuses that [`Caller`]: one authentication);
//! 2. checks the key: 1–255 printable ASCII characters, one header (else 400);
//! 3. reads the body within the route's own limit (`DefaultBodyLimit`: the API's 1 MiB, the
//!    upload's 4 MiB), and writes an in-flight record with `NotExists`, keyed by workspace,
//!    caller and key, holding the request's fingerprint (a SHA-256 of method, path with query
//!    and canonical body, never the body itself) and a nonce of this attempt's claim, and
//!    expiring after [`IN_FLIGHT_SECS`];
//! 4. if the record exists: another fingerprint → 422; still in flight → 409; completed → the
//!    recorded response again (status, body, `Content-Type`, `Location`), marked
//!    `Idempotent-Replayed: true`, without running the handler;
//! 5. runs the handler with an [`Idempotency`] handle in the request. The handler answers with
//!    an [`Answer`] built from it: the response, and the [`Completion`] that records exactly
//!    that response in the record, which the handler's create writes in its own transaction
//!    (`entity::create`, `entity::put`, `entity::transact`). So the create and its recorded
//!    response are all or nothing (docs/reliability.md);
//! 6. after a 2xx whose completion was written and matches the response, writes nothing more;
//!    after another 2xx (a get-or-create that found the resource, a handler whose write could
//!    not tell whether it was applied) records the response with a separate update (kept
//!    [`REPLAY_WINDOW_SECS`]); after any other answer deletes the record if it is still in
//!    flight, so the retry is evaluated afresh (nothing was created) — a record holding a
//!    response stays: its create was applied although the handler could not say so, and the
//!    retry replays it.

use crate::app::AppState;
use crate::auth::Caller;
use crate::entity::Completion;
use crate::error::{ApiError, ApiResult};
use axum::RequestExt;
use axum::body::Body;
use axum::extract::{FromRequestParts, MatchedPath, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{Ref, RefOr, Required};
use utoipa_axum::router::UtoipaMethodRouter;
use workapi_store::clock;
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, ENTITY, Item, Key, PK, SK, StoreError, TTL, TxOp, Update};

/// The request header, as the document names it.
pub const HEADER: &str = "Idempotency-Key";
/// Set on a replayed response.
pub const REPLAYED_HEADER: &str = "Idempotent-Replayed";
/// How long a completed request is replayed.
pub const REPLAY_WINDOW_SECS: i64 = 24 * 3600;
/// How long an in-flight record blocks the key: longer than any request may run (the Lambda
/// timeout is 10 s, API Gateway's 29 s), short enough that a crashed attempt frees its key soon.
pub const IN_FLIGHT_SECS: i64 = 60;
/// Longest key accepted.
pub const MAX_KEY_CHARS: usize = 255;

const ENTITY_RECORD: &str = "IdempotencyRecord";
/// The partition name of a record, inside the workspace: `WS#<ws>#IDEM#<hash>`.
pub const PARTITION_PREFIX: &str = "IDEM#";
/// Response headers a replay repeats; the rest are per request (rate limits) or added by the
/// shared layers again.
const REPLAYED_HEADERS: [HeaderName; 3] = [header::CONTENT_TYPE, header::LOCATION, header::ETAG];

/// Declares the POST operations of a `routes!` group as creating: the idempotency layer on
/// their route, and the `Idempotency-Key` parameter and 422 answer in their documentation.
/// Other methods of the group are untouched (the layer lets them through).
pub fn idempotent(routes: UtoipaMethodRouter<AppState>) -> UtoipaMethodRouter<AppState> {
    let (schemas, mut paths, method_router) = routes;
    for item in paths.paths.values_mut() {
        if let Some(operation) = item.post.as_mut() {
            document(operation);
        }
    }
    (schemas, paths, method_router.layer(axum::middleware::from_fn(layer)))
}

/// The parameter and the 422 of one declared operation.
fn document(operation: &mut utoipa::openapi::path::Operation) {
    let parameter = ParameterBuilder::new()
        .name(HEADER)
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(
            "Makes retries safe: the same key with the same request within 24 hours replays the first \
             successful response (marked Idempotent-Replayed: true) without creating again; with another \
             request 422; while the first is still running 409. Scoped to the workspace and the calling \
             user. 1 to 255 printable ASCII characters, e.g. a UUID.",
        ))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(MAX_KEY_CHARS))
                .pattern(Some("^[\\x20-\\x7E]+$")),
        ))
        .example(Some(Value::String("5f7c2b8e-3d1a-4c6f-9b0e-2a4d6c8e0f13".into())))
        .build();
    operation.parameters.get_or_insert_with(Vec::new).push(parameter);
    operation.responses.responses.entry("422".into()).or_insert_with(|| RefOr::Ref(Ref::from_response_name("Error")));
}

/// Whether a key is acceptable: 1–255 characters, each printable ASCII (space to `~`).
pub fn valid_key(key: &[u8]) -> bool {
    (1..=MAX_KEY_CHARS).contains(&key.len()) && key.iter().all(|b| (0x20..=0x7e).contains(b))
}

/// The key of the request: None without the header; 400 when repeated or malformed.
pub fn key_of(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let mut values = headers.get_all(HEADER).iter();
    let Some(value) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err(ApiError::field(HEADER, format!("send one {HEADER} header, not several")));
    }
    if !valid_key(value.as_bytes()) {
        return Err(ApiError::field(
            HEADER,
            format!("{HEADER} must be 1 to {MAX_KEY_CHARS} printable ASCII characters"),
        ));
    }
    Ok(Some(String::from_utf8_lossy(value.as_bytes()).into_owned()))
}

/// JSON with object keys sorted and no insignificant whitespace, so that two bodies meaning
/// the same thing compare equal; a body that is not JSON is compared as its bytes.
pub fn canonical_body(bytes: &[u8]) -> Vec<u8> {
    fn write(value: &Value, out: &mut String) {
        match value {
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                out.push('{');
                for (i, (name, value)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(name.clone()).to_string());
                    out.push(':');
                    write(value, out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            scalar => out.push_str(&scalar.to_string()),
        }
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => {
            let mut out = String::new();
            write(&value, &mut out);
            out.into_bytes()
        }
        Err(_) => bytes.to_vec(),
    }
}

/// A multipart body without its boundary: clients draw a new boundary for every request
/// (browsers, curl, HTTP libraries), so a retry of the same form differs only there. The
/// boundary never occurs inside a part (RFC 2046 §5.1.1), so taking it out loses nothing else.
/// Any other body is returned as is.
pub fn without_multipart_boundary<'a>(content_type: Option<&str>, body: &'a [u8]) -> Cow<'a, [u8]> {
    let Some((essence, params)) = content_type.and_then(|t| t.split_once(';')) else { return Cow::Borrowed(body) };
    if !essence.trim().to_ascii_lowercase().starts_with("multipart/") {
        return Cow::Borrowed(body);
    }
    let boundary = params.split(';').find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim().eq_ignore_ascii_case("boundary").then(|| value.trim().trim_matches('"'))
    });
    let Some(boundary) = boundary.filter(|b| !b.is_empty()) else { return Cow::Borrowed(body) };
    let delimiter = format!("--{boundary}").into_bytes();
    let mut out = Vec::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.windows(delimiter.len()).position(|w| w == delimiter.as_slice()) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(b"--");
        rest = &rest[at + delimiter.len()..];
    }
    out.extend_from_slice(rest);
    Cow::Owned(out)
}

/// What makes two requests "the same request": method, path with query, canonical body (JSON
/// by meaning, multipart without its boundary, anything else byte for byte).
pub fn fingerprint(method: &Method, path_and_query: &str, content_type: Option<&str>, body: &[u8]) -> String {
    let body = canonical_body(&without_multipart_boundary(content_type, body));
    let mut hash = Sha256::new();
    for part in [method.as_str().as_bytes(), path_and_query.as_bytes(), &body] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part);
    }
    hex(&hash.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whom a key belongs to: the acting user, and the token's owner when it differs (imposter
/// mode), so an imposter's keys never collide with the target user's own.
pub fn principal(caller: &Caller) -> String {
    match caller.impersonated_by {
        Some(owner) => format!("{owner}>{}", caller.user.id),
        None => caller.user.id.to_string(),
    }
}

/// The record's key: its own partition inside the workspace, named by a hash of the principal
/// and the client's key (free text never enters a key).
pub fn record_key(keys: WsKeys, principal: &str, key: &str) -> Key {
    let mut hash = Sha256::new();
    for part in [principal.as_bytes(), key.as_bytes()] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part);
    }
    Key::new(keys.partition(&format!("{PARTITION_PREFIX}{}", hex(&hash.finalize()))), "IDEM")
}

/// What the store says about a key when a request arrives.
#[derive(Debug, PartialEq)]
pub enum Found {
    /// The in-flight record is ours now: run the request.
    Claimed,
    /// The key was used for another request: 422.
    OtherRequest,
    /// The first request with this key is still running: 409.
    InFlight,
    /// The first request completed: replay its response.
    Completed(Recorded),
}

/// A recorded response.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recorded {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// The decision for an existing record, given the arriving request's fingerprint.
pub fn decide(item: &Item, fingerprint: &str) -> Found {
    if item.get("fingerprint").and_then(Value::as_str) != Some(fingerprint) {
        return Found::OtherRequest;
    }
    match item.get(RESPONSE).cloned().map(serde_json::from_value::<Recorded>) {
        Some(Ok(recorded)) => Found::Completed(recorded),
        _ => Found::InFlight,
    }
}

/// The record's attribute holding the recorded response.
const RESPONSE: &str = "response";
/// The record's attribute holding the nonce of the claim that wrote it.
const CLAIM: &str = "claim";

/// The request's claim on its record, which the layer puts in the request's extensions for
/// the handler ([`Idempotency`]): which record, the claim's nonce, and the response that a
/// handler's transaction recorded in it, once that transaction succeeded.
#[derive(Clone, Debug)]
pub struct Pending {
    record: Key,
    nonce: String,
    written: Arc<Mutex<Option<Recorded>>>,
}

impl Pending {
    fn new(record: Key, nonce: String) -> Self {
        Pending { record, nonce, written: Arc::new(Mutex::new(None)) }
    }

    /// The condition of every later write to the record: it is still this request's claim
    /// (so an attempt that outlived its in-flight record never resurrects or overwrites it).
    fn ours(&self) -> Condition {
        Condition::Equals { attr: CLAIM.into(), value: self.nonce.clone() }
    }

    /// What records `recorded` as the response (kept for [`REPLAY_WINDOW_SECS`]), on condition
    /// [`Pending::ours`]: in the create's transaction, or on its own when that did not.
    fn completion(recorded: &Recorded) -> Update {
        Update::default()
            .set(RESPONSE, serde_json::to_value(recorded).unwrap_or(Value::Null))
            .set(TTL, clock::now_epoch() + REPLAY_WINDOW_SECS)
    }

    fn completion_op(&self, recorded: &Recorded) -> TxOp {
        TxOp::Update { key: self.record.clone(), update: Self::completion(recorded), cond: self.ours() }
    }

    fn written(&self) -> Option<Recorded> {
        self.written.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

/// The handler's view of the request's idempotency: `Idempotency(None)` without a key (or on a
/// route not declared [`idempotent`]). Creating handlers build their response with
/// [`Idempotency::answer`] and write [`Answer::completion`] with their create.
#[derive(Clone, Debug, Default)]
pub struct Idempotency(pub Option<Pending>);

impl<S: Send + Sync> FromRequestParts<S> for Idempotency {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Idempotency(parts.extensions.get::<Pending>().cloned()))
    }
}

impl Idempotency {
    /// The answer of a create: `body` as JSON with `status` (and `Location` when given), and,
    /// with a key, the completion recording exactly that response. The response and the
    /// recorded one are the same bytes: both come from the one [`Recorded`] built here.
    /// Build it before the create's write and answer with it after.
    pub fn answer<T: serde::Serialize>(
        &self,
        status: StatusCode,
        location: Option<&str>,
        body: &T,
    ) -> ApiResult<Answer> {
        self.record(status, location, None, body)
    }

    /// [`Self::answer`] of a create whose answer is (a projection of) a resource that has a
    /// read: with the `ETag` that read would answer (`conditional::etag_of(resource)`), so that
    /// the client's first write of it can send `If-Match` without reading it first.
    pub fn answer_resource<R: serde::Serialize, T: serde::Serialize>(
        &self,
        status: StatusCode,
        resource: &R,
        body: &T,
    ) -> ApiResult<Answer> {
        self.record(status, None, Some(crate::conditional::etag_of(resource)?), body)
    }

    fn record<T: serde::Serialize>(
        &self,
        status: StatusCode,
        location: Option<&str>,
        etag: Option<String>,
        body: &T,
    ) -> ApiResult<Answer> {
        let body = serde_json::to_string(body).map_err(ApiError::internal)?;
        let mut headers = vec![(header::CONTENT_TYPE.as_str().to_owned(), "application/json".to_owned())];
        if let Some(location) = location {
            headers.push((header::LOCATION.as_str().to_owned(), location.to_owned()));
        }
        if let Some(etag) = etag {
            headers.push((header::ETAG.as_str().to_owned(), etag));
        }
        let recorded = Recorded { status: status.as_u16(), headers, body };
        let completion = self.0.as_ref().map(|pending| {
            let written = pending.written.clone();
            let mark = recorded.clone();
            Completion::new(pending.completion_op(&recorded), move || {
                *written.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(mark.clone());
            })
        });
        Ok(Answer { recorded, completion })
    }
}

/// A create's response, and the completion that records it (None without a key and events).
#[derive(Debug)]
pub struct Answer {
    recorded: Recorded,
    completion: Option<Completion>,
}

impl Answer {
    /// What the create's write takes (`entity::create(…, answer.completion())`): the
    /// idempotency record's completion (with a key) and the change's events.
    pub fn completion(&self) -> Option<&Completion> {
        self.completion.as_ref()
    }

    /// This answer with `op` written in its change's transaction too (`events::Event`).
    pub(crate) fn with_write(mut self, op: TxOp) -> Answer {
        self.completion = Some(match self.completion.take() {
            Some(completion) => completion.and(op),
            None => Completion::of(vec![op]),
        });
        self
    }
}

/// `entity::modify_answering` writes the answer's completion with the entity.
impl crate::entity::Recorded for Answer {
    fn completion(&self) -> Option<&Completion> {
        Answer::completion(self)
    }
}

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        response_of(self.recorded)
    }
}

async fn claim(state: &AppState, key: &Key, fingerprint: &str, nonce: &str, now: i64) -> Result<Found, ApiError> {
    let store = state.store();
    // This attempt's mark on the record: when the put was applied but its answer lost (a reset
    // connection, a timeout after the write), the SDK's retry fails the condition, and the mark
    // tells that the record is ours, not another request's (docs/reliability.md). Every later
    // write of the record is conditioned on it.
    let mut item = Item::new();
    item.insert(PK.into(), key.pk.clone().into());
    item.insert(SK.into(), key.sk.clone().into());
    item.insert(ENTITY.into(), ENTITY_RECORD.into());
    item.insert("fingerprint".into(), fingerprint.into());
    item.insert(CLAIM.into(), nonce.into());
    item.insert("createdAt".into(), now.into());
    item.insert(TTL.into(), (now + IN_FLIGHT_SECS).into());
    let ours = |existing: &Item| existing.get(CLAIM).and_then(Value::as_str) == Some(nonce);
    // Twice at most: a record that expires between the failed put and the read is gone.
    for _ in 0..2 {
        match store.put(item.clone(), Condition::NotExists).await {
            Ok(()) => return Ok(Found::Claimed),
            Err(StoreError::ConditionFailed) => {}
            Err(e) => {
                // Perhaps applied: take back a record that is ours, so that the client's retry
                // of this 503 is not refused as "in progress" for IN_FLIGHT_SECS.
                if let Ok(Some(existing)) = store.get(key).await
                    && ours(&existing)
                {
                    release(state, &Pending::new(key.clone(), nonce.to_owned())).await;
                }
                return Err(e.into());
            }
        }
        if let Some(existing) = store.get(key).await? {
            if ours(&existing) {
                return Ok(Found::Claimed);
            }
            return Ok(decide(&existing, fingerprint));
        }
    }
    Ok(Found::InFlight)
}

/// The response as a replay repeats it: status, the [`REPLAYED_HEADERS`] and the body.
fn recorded_of(parts: &axum::http::response::Parts, body: String) -> Recorded {
    let headers = REPLAYED_HEADERS
        .iter()
        .filter_map(|name| {
            let value = parts.headers.get(name)?.to_str().ok()?;
            Some((name.as_str().to_owned(), value.to_owned()))
        })
        .collect();
    Recorded { status: parts.status.as_u16(), headers, body }
}

/// After a 2xx: nothing more when the handler's transaction recorded this very response, else
/// the response is recorded now (a separate write). After anything else: the record is
/// released unless it holds a response.
async fn finish(state: &AppState, pending: &Pending, operation: &str, response: Response) -> Response {
    let (parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(e) => {
            release(state, pending).await;
            return ApiError::internal(format!("reading the response to record it: {e}")).into_response();
        }
    };
    let text = String::from_utf8(bytes.to_vec()).ok();
    match text.filter(|_| parts.status.is_success()) {
        Some(body) => {
            let recorded = recorded_of(&parts, body);
            let written = pending.written();
            if written.as_ref() != Some(&recorded) {
                let why = match written {
                    Some(_) => "the response differs from the one its transaction recorded",
                    None => "its create did not record the response in its transaction",
                };
                tracing::warn!(operation, "idempotent create: {why}; recording it with a separate write");
                let update = Pending::completion(&recorded);
                if let Err(e) = state.store().update(&pending.record, update, pending.ours()).await {
                    tracing::warn!(operation, error = %e, "could not record an idempotent response");
                }
            }
        }
        None => release(state, pending).await,
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// Deletes the record while it is still this request's claim and in flight. A record holding a
/// response stays: the handler's transaction recorded it (its create was applied) although
/// the handler could not tell, and the retry replays it.
async fn release(state: &AppState, pending: &Pending) {
    let cond = Condition::All(vec![pending.ours(), Condition::Lacks(RESPONSE.into())]);
    match state.store().delete(&pending.record, cond).await {
        Ok(_) => {}
        Err(StoreError::ConditionFailed) => {
            tracing::info!("kept an idempotency record holding a response: the retry replays it");
        }
        Err(e) => tracing::warn!(error = %e, "could not release an idempotency key; it expires by itself"),
    }
}

/// A response from its record: what a handler's [`Answer`] sends and what a replay repeats.
fn response_of(recorded: Recorded) -> Response {
    let status = StatusCode::from_u16(recorded.status).unwrap_or(StatusCode::OK);
    let mut response = (status, recorded.body).into_response();
    let headers = response.headers_mut();
    headers.remove(header::CONTENT_TYPE);
    for (name, value) in recorded.headers {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            headers.insert(name, value);
        }
    }
    response
}

fn replay(recorded: Recorded) -> Response {
    let mut response = response_of(recorded);
    response.headers_mut().insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
    response
}

/// The layer [`idempotent`] puts on declared routes.
async fn layer(request: Request, next: Next) -> Response {
    if request.method() != Method::POST || !request.headers().contains_key(HEADER) {
        return next.run(request).await;
    }
    match run(request, next).await {
        Ok(response) | Err(response) => response,
    }
}

async fn run(request: Request, next: Next) -> Result<Response, Response> {
    let reject = |e: ApiError| e.into_response();
    let (mut parts, body) = request.into_parts();
    let state =
        parts.extensions.get::<AppState>().cloned().ok_or_else(|| {
            reject(ApiError::internal("an idempotent route served outside workapi_kit::http::service"))
        })?;
    // Authentication first, as on every protected route; the handler reuses this caller.
    let caller = Caller::from_request_parts(&mut parts, &state).await.map_err(reject)?;
    let Some(key) = key_of(&parts.headers).map_err(reject)? else {
        return Err(reject(ApiError::internal("idempotency key vanished")));
    };
    // The route's own `DefaultBodyLimit` (what its handler's extractor would apply), so a
    // declared route accepts with a key exactly the bodies it accepts without one.
    let (mut parts, body) = Request::from_parts(parts, body).with_limited_body().into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .map_err(|_| reject(ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large")))?;
    let path = parts.uri.path_and_query().map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned());
    let content_type = parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let fingerprint = fingerprint(&parts.method, &path, content_type, &bytes);
    let record = record_key(caller.keys(), &principal(&caller), &key);
    let nonce = uuid::Uuid::new_v4().to_string();
    match claim(&state, &record, &fingerprint, &nonce, clock::now_epoch()).await.map_err(reject)? {
        Found::Claimed => {}
        Found::OtherRequest => {
            return Err(reject(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("This {HEADER} was used for a different request; use a new key for a new request"),
            )));
        }
        Found::InFlight => {
            return Err(reject(ApiError::conflict(format!(
                "A request with this {HEADER} is still in progress; retry later"
            ))));
        }
        Found::Completed(recorded) => return Ok(replay(recorded)),
    }
    let operation =
        parts.extensions.get::<MatchedPath>().map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned());
    let operation = format!("{} {operation}", parts.method);
    let pending = Pending::new(record, nonce);
    parts.extensions.insert(caller);
    parts.extensions.insert(pending.clone());
    let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    Ok(finish(&state, &pending, &operation, response).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_1_to_255_printable_ascii() {
        assert!(valid_key(b"a"));
        assert!(valid_key(b"5f7c2b8e-3d1a-4c6f-9b0e-2a4d6c8e0f13"));
        assert!(valid_key(b"order 42 / retry ~"));
        assert!(valid_key(&[b'x'; 255]));
        assert!(!valid_key(b""));
        assert!(!valid_key(&[b'x'; 256]));
        assert!(!valid_key(b"tab\there"));
        assert!(!valid_key("caf\u{e9}".as_bytes()));
        assert!(!valid_key(b"del\x7f"));
    }

    #[test]
    fn one_header_at_most() {
        let mut headers = HeaderMap::new();
        assert_eq!(key_of(&headers), Ok(None));
        headers.append(HEADER, HeaderValue::from_static("k1"));
        assert_eq!(key_of(&headers), Ok(Some("k1".into())));
        headers.append(HEADER, HeaderValue::from_static("k1"));
        assert_eq!(key_of(&headers).unwrap_err().status, StatusCode::BAD_REQUEST);
        let mut bad = HeaderMap::new();
        bad.insert(HEADER, HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap());
        assert_eq!(key_of(&bad).unwrap_err().status, StatusCode::BAD_REQUEST);
    }

    #[test]
    fn bodies_compare_by_meaning_not_layout() {
        let a = fingerprint(&Method::POST, "/tags/task/create", None, br#"{"name":"A","color":{"b":1,"a":[1,2]}}"#);
        let b = fingerprint(
            &Method::POST,
            "/tags/task/create",
            None,
            b" { \"color\": {\"a\": [1, 2], \"b\": 1},\n \"name\": \"A\" } ",
        );
        assert_eq!(a, b);
        assert_ne!(
            a,
            fingerprint(&Method::POST, "/tags/task/create", None, br#"{"name":"B","color":{"b":1,"a":[1,2]}}"#)
        );
        assert_ne!(
            a,
            fingerprint(&Method::POST, "/tags/task/create", None, br#"{"name":"A","color":{"b":1,"a":[2,1]}}"#)
        );
        assert_ne!(
            a,
            fingerprint(&Method::POST, "/tags/project/create", None, br#"{"name":"A","color":{"b":1,"a":[1,2]}}"#)
        );
        assert_ne!(
            a,
            fingerprint(
                &Method::POST,
                "/tags/task/create?responseShape=full",
                None,
                br#"{"name":"A","color":{"b":1,"a":[1,2]}}"#
            )
        );
        // Not JSON: the bytes themselves.
        assert_eq!(canonical_body(b"not json"), b"not json");
        assert_ne!(canonical_body(b"not json"), canonical_body(b"not  json"));
        // Strings keep their escapes' meaning.
        assert_eq!(canonical_body(br#"{"a":"\u00e9"}"#), canonical_body("{\"a\":\"\u{e9}\"}".as_bytes()));
    }

    #[test]
    fn multipart_bodies_compare_without_their_boundary() {
        let form = |boundary: &str, content: &str| {
            let body = format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n{content}\r\n--{boundary}--\r\n"
            );
            (format!("multipart/form-data; boundary=\"{boundary}\""), body.into_bytes())
        };
        let of = |(content_type, body): (String, Vec<u8>)| {
            fingerprint(&Method::POST, "/workspace/upload", Some(&content_type), &body)
        };
        assert_eq!(of(form("a1", "PNG")), of(form("zz-other", "PNG")));
        assert_ne!(of(form("a1", "PNG")), of(form("a1", "GIF")));
        // Without a multipart type the bytes compare as they are.
        let (_, one) = form("a1", "PNG");
        let (_, two) = form("b2", "PNG");
        assert_ne!(
            fingerprint(&Method::POST, "/x", Some("application/octet-stream"), &one),
            fingerprint(&Method::POST, "/x", Some("application/octet-stream"), &two)
        );
    }

    #[test]
    fn an_existing_record_decides_by_fingerprint_then_state() {
        let mut item = Item::new();
        item.insert("fingerprint".into(), "f1".into());
        assert_eq!(decide(&item, "f2"), Found::OtherRequest);
        assert_eq!(decide(&item, "f1"), Found::InFlight);
        let recorded = Recorded {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: "{}".into(),
        };
        item.insert("response".into(), serde_json::to_value(&recorded).unwrap());
        assert_eq!(decide(&item, "f1"), Found::Completed(recorded));
        assert_eq!(decide(&item, "f2"), Found::OtherRequest);
    }

    #[test]
    fn records_are_per_workspace_principal_and_key() {
        let ws = WsKeys::new(uuid::Uuid::new_v4());
        let other = WsKeys::new(uuid::Uuid::new_v4());
        let a = record_key(ws, "u1", "k");
        assert!(a.pk.starts_with(&ws.root_pk()));
        assert_ne!(a, record_key(other, "u1", "k"));
        assert_ne!(a, record_key(ws, "u2", "k"));
        assert_ne!(a, record_key(ws, "u1", "k2"));
        // The length prefix keeps ("u1", "#k") and ("u1#", "k") apart.
        assert_ne!(record_key(ws, "u1", "#k"), record_key(ws, "u1#", "k"));
    }
}
