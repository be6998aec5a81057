//! Webhook endpoints (docs/events.md#webhook-endpoints): where a workspace's events are to be
//! delivered. An endpoint has a URL (https, public addresses only: `workapi_kit::net::WebhookTargets`),
//! the event types it takes and a signing secret (`whsec_…`, Standard Webhooks), kept in the
//! secret store like every secret of the project and shown once: in the create's answer and in
//! a rotation's. A rotation keeps the previous secret valid for 24 hours. Managing endpoints needs
//! `WsSettings.manageSettings`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use workapi_domain::event::types;
use workapi_domain::permissions::{Requirement, key};
use workapi_kit::conditional::{IfMatch, IfMatchParams, with_etag};
use workapi_kit::entity::{self, Attempt, Change, Completion, Created, Entity, Versioned};
use workapi_kit::events::Event;
use workapi_kit::http::Success;
use workapi_kit::input::{At, Checked, Errors, Field, Input, List, Patch, SchemaRef, Schemas, Text};
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging};
use workapi_kit::request::{Body, Path};
use workapi_kit::secrets::{SecretName, SecretStore, SecretValue, forget};
use workapi_kit::{ApiError, ApiResult, AppState, Caller};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Key, Query, Store, TxOp, Update, clock, query_all};

/// Managing endpoints: a workspace setting.
pub const MANAGE: Requirement = Requirement::Permission(key::WS_SETTINGS_MANAGE_SETTINGS);
/// Endpoints a workspace may have: every event is delivered to each endpoint that takes it.
pub const MAX_ENDPOINTS: i64 = 20;
/// How long the previous secret keeps signing after a rotation.
pub const ROTATION_OVERLAP_SECS: i64 = 24 * 3600;
const MAX_DESCRIPTION_CHARS: usize = 500;
const PARTITION: &str = "WEBHOOKS";
const COUNT: &str = "count";

/// A webhook endpoint as the API returns it: never a secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "5b0d3f7e-2a4c-4e6b-9d1f-3a5c7e9b1d20", "url": "https://hooks.example.com/workapi",
    "description": "Quotation decisions to the CRM", "eventTypes": ["express_quotation.accepted", "express_quotation.rejected"],
    "enabled": true, "createdAt": "2026-11-27T10:00:00.000Z", "updatedAt": "2026-11-27T10:00:00.000Z",
    "secretCreatedAt": "2026-11-27T10:00:00.000Z", "previousSecretExpiresAt": null})))]
pub struct WebhookEndpoint {
    pub id: Uuid,
    /// Where events are POSTed
    pub url: String,
    pub description: Option<String>,
    /// The event types delivered to it (the document's webhooks)
    pub event_types: Vec<String>,
    /// A disabled endpoint gets no deliveries
    pub enabled: bool,
    #[schema(format = DateTime)]
    pub created_at: String,
    #[schema(format = DateTime)]
    pub updated_at: String,
    /// When the current signing secret was made
    #[schema(format = DateTime)]
    pub secret_created_at: String,
    /// Until when the previous secret still signs, after a rotation
    #[schema(format = DateTime)]
    pub previous_secret_expires_at: Option<String>,
}

/// An endpoint with its signing secret: the answer of the create and of a rotation, the only
/// answers that carry it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "5b0d3f7e-2a4c-4e6b-9d1f-3a5c7e9b1d20", "url": "https://hooks.example.com/workapi",
    "description": "Quotation decisions to the CRM", "eventTypes": ["express_quotation.accepted"],
    "enabled": true, "createdAt": "2026-11-27T10:00:00.000Z", "updatedAt": "2026-11-27T10:00:00.000Z",
    "secretCreatedAt": "2026-11-27T10:00:00.000Z", "previousSecretExpiresAt": null,
    "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo="})))]
pub struct WebhookEndpointWithSecret {
    #[serde(flatten)]
    pub endpoint: WebhookEndpoint,
    /// The signing secret (`whsec_` and base64 of 32 random bytes): verify deliveries with it.
    /// Shown here once; it cannot be read again (rotate it to get a new one)
    pub secret: String,
}

/// A signing secret the record refers to: the secret store's name, never the value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretRef {
    pub name: String,
    pub created_at: String,
    /// Set on the previous secret by a rotation.
    pub expires_at: Option<String>,
}

/// The stored endpoint: `WS#ws#WEBHOOKS` / `WEBHOOK#<id>` (docs/data-model.md#events).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointRecord {
    #[serde(flatten)]
    pub endpoint: WebhookEndpoint,
    /// The current secret first, then the previous one while it overlaps.
    pub secrets: Vec<SecretRef>,
    pub created_by: Uuid,
    /// When its deliveries began failing (epoch seconds), without a success since: the
    /// dispatcher disables it after 5 days of this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failing_since: Option<i64>,
    pub version: i64,
}

impl Entity for EndpointRecord {
    const TYPE: &'static str = "WebhookEndpoint";
    const PREFIX: &'static str = "WEBHOOK#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        endpoint_key(keys, self.endpoint.id)
    }
}

impl Versioned for EndpointRecord {
    fn version(&self) -> i64 {
        self.version
    }
    fn set_version(&mut self, version: i64) {
        self.version = version;
    }
}

/// The count of a workspace's endpoints, kept in each create's and delete's transaction so the
/// [`MAX_ENDPOINTS`] cap holds under concurrent creates.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndpointCount {
    pub count: i64,
}

impl Entity for EndpointCount {
    const TYPE: &'static str = "WebhookEndpointCount";
    const PREFIX: &'static str = "WHCOUNT";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        count_key(keys)
    }
}

pub fn endpoint_key(keys: WsKeys, id: Uuid) -> Key {
    Key::new(keys.partition(PARTITION), format!("{}{id}", EndpointRecord::PREFIX))
}

fn count_key(keys: WsKeys) -> Key {
    Key::new(keys.partition(PARTITION), EndpointCount::PREFIX)
}

/// Every endpoint of the workspace (at most [`MAX_ENDPOINTS`]).
pub async fn list(store: &dyn Store, keys: WsKeys) -> ApiResult<Vec<EndpointRecord>> {
    let query = Query::table(keys.partition(PARTITION)).begins_with(EndpointRecord::PREFIX);
    query_all(store, query).await?.into_iter().map(|item| Ok(entity::from_item(item)?)).collect()
}

/// The endpoint, or 404.
pub async fn get(store: &dyn Store, keys: WsKeys, id: Uuid) -> ApiResult<EndpointRecord> {
    find(store, keys, id).await?.ok_or_else(not_found)
}

/// The endpoint, if it exists.
pub async fn find(store: &dyn Store, keys: WsKeys, id: Uuid) -> ApiResult<Option<EndpointRecord>> {
    Ok(entity::get(store, &endpoint_key(keys, id)).await?)
}

fn not_found() -> ApiError {
    ApiError::not_found("Webhook endpoint not found")
}

/// A new signing secret: `whsec_` and the base64 of 32 random bytes (Standard Webhooks).
fn new_secret() -> String {
    let bytes: [u8; 32] = rand::random();
    format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn secret_name(keys: WsKeys, endpoint: Uuid) -> ApiResult<SecretName> {
    SecretName::new(format!("{}/webhooks/{endpoint}/{}", keys.workspace_id(), Uuid::new_v4().simple()))
        .ok_or_else(|| ApiError::internal("a webhook secret name the secret store refuses"))
}

fn secret_store(state: &AppState) -> ApiResult<&dyn SecretStore> {
    state.secrets().ok_or_else(|| ApiError::internal("the events function has no secret store (SECRETS_PREFIX)"))
}

/// The secret store's names of `refs`.
fn names(refs: impl IntoIterator<Item = String>) -> Vec<SecretName> {
    refs.into_iter().filter_map(SecretName::new).collect()
}

/// An event type of the catalogue, as a request names it: the schema `EventType` lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventTypeName(&'static str);

impl Field for EventTypeName {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let named = value.as_str().and_then(types::named).map(|t| EventTypeName(t.name));
        if named.is_none() {
            let shown = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            errors.add(at, format!("{}: {shown} is not an event type of this API", at.name()));
        }
        named
    }

    fn schema() -> SchemaRef {
        workapi_kit::input::reference("EventType")
    }

    fn schemas(out: &mut Schemas) {
        let schema = ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("An event type (`<resource>.<verb>`): one of the document's webhooks"))
            .enum_values(Some(types::ALL.iter().map(|t| t.name)))
            .examples(["tag.created"])
            .into();
        out.push(("EventType".into(), schema));
    }
}

/// A new webhook endpoint
#[derive(Input)]
#[input(example = serde_json::json!({"url": "https://hooks.example.com/workapi",
    "eventTypes": ["express_quotation.accepted", "express_quotation.rejected"],
    "description": "Quotation decisions to the CRM"}))]
pub struct NewEndpointBody {
    /// https, resolving to public addresses only; no credentials, no fragment
    pub url: Text<1, 2000>,
    /// The event types to deliver: types of the document's webhooks
    pub event_types: List<EventTypeName, 100, 1>,
    pub description: Patch<Text<1, MAX_DESCRIPTION_CHARS>>,
}

/// Changes to an endpoint: only the fields sent change
#[derive(Input)]
#[input(example = serde_json::json!({"enabled": false}))]
pub struct EndpointPatchBody {
    pub url: Option<Text<1, 2000>>,
    pub event_types: Option<List<EventTypeName, 100, 1>>,
    /// Null clears it
    pub description: Patch<Text<1, MAX_DESCRIPTION_CHARS>>,
    pub enabled: Option<bool>,
}

/// The event types named, deduplicated, in the catalogue's order.
fn event_types(named: &[EventTypeName]) -> Vec<String> {
    let named: BTreeSet<&str> = named.iter().map(|t| t.0).collect();
    types::ALL.iter().filter(|t| named.contains(t.name)).map(|t| t.name.to_owned()).collect()
}

/// The URL, checked: its syntax, then where its host resolves (every address admitted).
async fn checked_url(state: &AppState, url: &str) -> Result<String, String> {
    let targets = state.webhook_targets();
    let parsed = targets.check_url(url)?;
    targets.check_addresses(&parsed).await?;
    Ok(parsed.to_string())
}

/// The body's `url` (as `sent` finds it), checked, or its failure recorded on `url`.
async fn checked_url_field<T: Input>(
    state: &AppState,
    body: &mut Checked<T>,
    sent: impl Fn(&T::Fields) -> Option<&Text<1, 2000>>,
) -> Option<String> {
    let text = sent(&body.fields)?.as_str().to_owned();
    match checked_url(state, &text).await {
        Ok(checked) => Some(checked),
        Err(message) => {
            body.fail("url", message);
            None
        }
    }
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct EndpointPath {
    /// Webhook endpoint id
    #[param(example = "5b0d3f7e-2a4c-4e6b-9d1f-3a5c7e9b1d20")]
    pub id: Uuid,
}

/// The event of a change to an endpoint (never its secret).
fn event(caller: &Caller, event_type: workapi_domain::event::EventType, endpoint: &WebhookEndpoint) -> ApiResult<TxOp> {
    Event::new(caller, event_type, endpoint.id).op(endpoint)
}

/// Create a webhook endpoint
///
/// Registers a URL to which the workspace's events of the given types are delivered, signed
/// (Standard Webhooks). The URL must be https and resolve to public addresses only (no
/// loopback, private, link-local or metadata addresses). The answer carries the signing secret
/// (`whsec_…`) once: store it; it cannot be read again. At most 20 endpoints per workspace.
/// Needs `WsSettings.manageSettings`. Not replayed by `Idempotency-Key`: an answer holding a
/// secret is never stored outside the secret store (rotate the secret if the answer was lost).
#[utoipa::path(post, path = "/webhooks", operation_id = "createWebhookEndpoint", tag = "webhooks",
    request_body = NewEndpointBody,
    responses((status = 201, description = "The endpoint, with its signing secret (shown once)", body = WebhookEndpointWithSecret)))]
pub async fn create_endpoint(
    State(state): State<AppState>,
    caller: Caller,
    body: Body<NewEndpointBody>,
) -> ApiResult<(StatusCode, Json<WebhookEndpointWithSecret>)> {
    let permit = caller.authorize(MANAGE)?;
    let mut body = body.check(&permit)?;
    let url = checked_url_field(&state, &mut body, |fields| fields.url.as_ref()).await;
    let body = body.finish()?;
    let url = url.ok_or_else(|| ApiError::internal("a checked endpoint body without its url"))?;
    let event_types = event_types(&body.event_types.0);
    let secrets = secret_store(&state)?;
    let keys = caller.keys();
    let now = clock::now_rfc3339();
    let id = Uuid::new_v4();
    let secret = new_secret();
    let name = secret_name(keys, id)?;
    secrets.create(&name, &SecretValue::new(secret.clone())).await?;
    let endpoint = WebhookEndpoint {
        id,
        url,
        description: body.description.into_option().map(|d| d.as_str().to_owned()),
        event_types,
        enabled: true,
        created_at: now.clone(),
        updated_at: now.clone(),
        secret_created_at: now.clone(),
        previous_secret_expires_at: None,
    };
    let record = EndpointRecord {
        endpoint: endpoint.clone(),
        secrets: vec![SecretRef { name: name.as_str().to_owned(), created_at: now, expires_at: None }],
        created_by: caller.user.id,
        failing_since: None,
        version: 1,
    };
    let count = TxOp::Update {
        key: count_key(keys),
        update: Update::default().add(COUNT, 1),
        cond: Condition::CounterBelow { attr: COUNT.into(), limit: MAX_ENDPOINTS },
    };
    let beside = Completion::of(vec![event(&caller, types::WEBHOOK_ENDPOINT_CREATED, &endpoint)?]);
    let store = state.store();
    let created = entity::retry_on_conflict("Webhook endpoints are being created concurrently; retry", |_| {
        let (count, beside, record) = (count.clone(), &beside, &record);
        async move {
            match entity::create_with(store, record, keys, "The endpoint exists", vec![count], Some(beside)).await {
                Ok(Created::Done) => Ok(Attempt::Done(true)),
                Ok(Created::Refused(_)) => Ok(Attempt::Done(false)),
                Ok(Created::Contended) => Ok(Attempt::Conflict),
                Err(e) => Err(ApiError::from(e)),
            }
        }
    })
    .await;
    match created {
        Ok(true) => Ok((StatusCode::CREATED, Json(WebhookEndpointWithSecret { endpoint, secret }))),
        Ok(false) => {
            forget(secrets, std::slice::from_ref(&name)).await;
            Err(ApiError::field("body", format!("a workspace has at most {MAX_ENDPOINTS} webhook endpoints")))
        }
        Err(e) => {
            // Not written (or not known to be): a secret nothing may refer to stays an orphan
            // only if the write was applied with its answer lost; then the record names it.
            if e.status != StatusCode::SERVICE_UNAVAILABLE {
                forget(secrets, std::slice::from_ref(&name)).await;
            }
            Err(e)
        }
    }
}

/// List webhook endpoints
///
/// The workspace's webhook endpoints, oldest first; never their secrets. Needs
/// `WsSettings.manageSettings`.
#[utoipa::path(get, path = "/webhooks", operation_id = "listWebhookEndpoints", tag = "webhooks", params(PageParams),
    responses((status = 200, description = "The endpoints, oldest first", body = [WebhookEndpoint])))]
pub async fn list_endpoints(
    State(state): State<AppState>,
    caller: Caller,
    paging: Paging,
) -> ApiResult<Paged<WebhookEndpoint>> {
    caller.authorize(MANAGE)?;
    let all = list(state.store(), caller.keys()).await?.into_iter().map(|r| r.endpoint);
    paging.window(all, |e: &WebhookEndpoint| OrderKey::new().text(e.created_at.clone()).id(e.id))?.answer()
}

/// Get a webhook endpoint
///
/// One endpoint, without its secret. Needs `WsSettings.manageSettings`.
#[utoipa::path(get, path = "/webhooks/{id}", operation_id = "getWebhookEndpoint", tag = "webhooks",
    params(EndpointPath), responses((status = 200, description = "The endpoint", body = WebhookEndpoint)))]
pub async fn get_endpoint(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<EndpointPath>,
) -> ApiResult<Response> {
    caller.authorize(MANAGE)?;
    let endpoint = get(state.store(), caller.keys(), path.id).await?.endpoint;
    with_etag(&endpoint, Json(&endpoint))
}

/// Update a webhook endpoint
///
/// Changes the fields sent: `url` (checked as on create), `eventTypes`, `description` (null
/// clears it) and `enabled` (a disabled endpoint gets no deliveries). The secret stays. Needs
/// `WsSettings.manageSettings`.
#[utoipa::path(patch, path = "/webhooks/{id}", operation_id = "updateWebhookEndpoint", tag = "webhooks",
    params(EndpointPath, IfMatchParams), request_body = EndpointPatchBody,
    responses((status = 200, description = "The endpoint as changed", body = WebhookEndpoint)))]
pub async fn update_endpoint(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<EndpointPath>,
    if_match: IfMatch,
    body: Body<EndpointPatchBody>,
) -> ApiResult<Response> {
    let permit = caller.authorize(MANAGE)?;
    let mut body = body.check(&permit)?;
    let url = checked_url_field(&state, &mut body, |fields| fields.url.as_ref().and_then(Option::as_ref)).await;
    let body = body.finish()?;
    let types = body.event_types.as_ref().map(|named| event_types(&named.0));
    let now = clock::now_rfc3339();
    let change = |stored: Option<EndpointRecord>| {
        let mut record = stored.ok_or_else(not_found)?;
        if_match.check(&record.endpoint)?;
        let before = record.endpoint.clone();
        let endpoint = &mut record.endpoint;
        if let Some(url) = &url {
            endpoint.url = url.clone();
        }
        if let Some(types) = &types {
            endpoint.event_types = types.clone();
        }
        match &body.description {
            Patch::Absent => {}
            Patch::Null => endpoint.description = None,
            Patch::Value(text) => endpoint.description = Some(text.as_str().to_owned()),
        }
        if let Some(enabled) = body.enabled {
            endpoint.enabled = enabled;
        }
        if record.endpoint == before {
            return Ok(Change::Keep(record));
        }
        record.endpoint.updated_at = now.clone();
        Ok(Change::Write(record))
    };
    let beside = |record: &EndpointRecord| {
        Ok(Completion::of(vec![event(&caller, types::WEBHOOK_ENDPOINT_UPDATED, &record.endpoint)?]))
    };
    let busy = "The webhook endpoint is being changed concurrently; retry";
    let key = endpoint_key(caller.keys(), path.id);
    let record = entity::modify_with(state.store(), &key, caller.keys(), busy, change, beside).await?;
    with_etag(&record.endpoint, Json(&record.endpoint))
}

/// Delete a webhook endpoint
///
/// Removes the endpoint and its secrets: nothing more is delivered to it. Needs
/// `WsSettings.manageSettings`.
#[utoipa::path(delete, path = "/webhooks/{id}", operation_id = "deleteWebhookEndpoint", tag = "webhooks",
    params(EndpointPath, IfMatchParams),
    responses((status = 200, description = "Deleted", body = Success, example = json!({"success": true}))))]
pub async fn delete_endpoint(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<EndpointPath>,
    if_match: IfMatch,
) -> ApiResult<Json<Success>> {
    caller.authorize(MANAGE)?;
    let secrets = secret_store(&state)?;
    let keys = caller.keys();
    let store = state.store();
    let deleted = entity::retry_on_conflict("The webhook endpoint is being changed concurrently; retry", |_| async {
        let record = get(store, keys, path.id).await?;
        if_match.check(&record.endpoint)?;
        let ops = vec![
            TxOp::Delete { key: endpoint_key(keys, path.id), cond: Condition::VersionEquals(record.version) },
            TxOp::Update { key: count_key(keys), update: Update::default().add(COUNT, -1), cond: Condition::Exists },
            event(&caller, types::WEBHOOK_ENDPOINT_DELETED, &record.endpoint)?,
        ];
        match store.transact(ops).await {
            Ok(()) => Ok(Attempt::Done(record)),
            Err(e) if entity::is_conflict(&e) => Ok(Attempt::Conflict),
            Err(e) => Err(e.into()),
        }
    })
    .await?;
    forget(secrets, &names(deleted.secrets.into_iter().map(|s| s.name))).await;
    Ok(Json(Success { success: true }))
}

/// Rotate a webhook endpoint's secret
///
/// Makes a new signing secret, answered once. Deliveries are signed with both the new and the
/// previous secret for 24 hours (one `webhook-signature` entry each), then with the new one
/// only; a rotation within those 24 hours ends the older overlap at once (at most two secrets
/// sign). Needs `WsSettings.manageSettings`.
#[utoipa::path(post, path = "/webhooks/{id}/secret/rotate", operation_id = "rotateWebhookSecret", tag = "webhooks",
    params(EndpointPath, IfMatchParams),
    responses((status = 201, description = "The endpoint with its new secret (shown once)", body = WebhookEndpointWithSecret)))]
pub async fn rotate_secret(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<EndpointPath>,
    if_match: IfMatch,
) -> ApiResult<(StatusCode, Json<WebhookEndpointWithSecret>)> {
    caller.authorize(MANAGE)?;
    let secrets = secret_store(&state)?;
    let keys = caller.keys();
    let store = state.store();
    let secret = new_secret();
    let name = secret_name(keys, path.id)?;
    // The endpoint must exist before a secret is made for it.
    get(store, keys, path.id).await?;
    secrets.create(&name, &SecretValue::new(secret.clone())).await?;
    let now = clock::now();
    let (now_text, overlap_ends) =
        (clock::rfc3339(now), clock::rfc3339(now + time::Duration::seconds(ROTATION_OVERLAP_SECS)));
    let rotated = entity::retry_on_conflict("The webhook endpoint is being changed concurrently; retry", |_| async {
        let mut record = get(store, keys, path.id).await?;
        if_match.check(&record.endpoint)?;
        let read = record.version;
        let mut kept = record.secrets.clone();
        // The current secret overlaps 24 h; any older one stops now.
        let superseded: Vec<String> = kept.drain(1.min(kept.len())..).map(|s| s.name).collect();
        let previous = kept.pop().map(|s| SecretRef { expires_at: Some(overlap_ends.clone()), ..s });
        record.secrets = std::iter::once(SecretRef {
            name: name.as_str().to_owned(),
            created_at: now_text.clone(),
            expires_at: None,
        })
        .chain(previous)
        .collect();
        record.endpoint.secret_created_at = now_text.clone();
        record.endpoint.previous_secret_expires_at = Some(overlap_ends.clone());
        record.endpoint.updated_at = now_text.clone();
        record.version = read + 1;
        let ops = vec![
            TxOp::Put { item: entity::to_item(&record, keys)?, cond: Condition::VersionEquals(read) },
            event(&caller, types::WEBHOOK_ENDPOINT_SECRET_ROTATED, &record.endpoint)?,
        ];
        match store.transact(ops).await {
            Ok(()) => Ok(Attempt::Done((record, superseded))),
            Err(e) if entity::is_conflict(&e) => Ok(Attempt::Conflict),
            Err(e) => Err(e.into()),
        }
    })
    .await;
    match rotated {
        Ok((record, superseded)) => {
            forget(secrets, &names(superseded)).await;
            Ok((StatusCode::CREATED, Json(WebhookEndpointWithSecret { endpoint: record.endpoint, secret })))
        }
        Err(e) => {
            if e.status != StatusCode::SERVICE_UNAVAILABLE {
                forget(secrets, std::slice::from_ref(&name)).await;
            }
            Err(e)
        }
    }
}

/// The secrets that sign a delivery now: the current one, and the previous one until its
/// overlap ends (for the dispatcher, issue 35 item 4).
pub fn signing_secrets<'a>(record: &'a EndpointRecord, now: &str) -> Vec<&'a SecretRef> {
    record.secrets.iter().filter(|s| s.expires_at.as_deref().is_none_or(|end| end > now)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_standard_webhooks_secrets() {
        let secret = new_secret();
        let bytes = base64::engine::general_purpose::STANDARD.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
        assert_eq!(bytes.len(), 32);
        assert_ne!(new_secret(), secret);
    }

    #[test]
    fn a_previous_secret_signs_until_its_overlap_ends() {
        let secret = |name: &str, expires: Option<&str>| SecretRef {
            name: name.into(),
            created_at: "2026-11-27T10:00:00.000Z".into(),
            expires_at: expires.map(str::to_owned),
        };
        let record = EndpointRecord {
            endpoint: WebhookEndpoint {
                id: Uuid::nil(),
                url: "https://hooks.example.com/".into(),
                description: None,
                event_types: vec!["tag.created".into()],
                enabled: true,
                created_at: String::new(),
                updated_at: String::new(),
                secret_created_at: String::new(),
                previous_secret_expires_at: None,
            },
            secrets: vec![secret("new", None), secret("old", Some("2026-11-28T10:00:00.000Z"))],
            created_by: Uuid::nil(),
            failing_since: None,
            version: 2,
        };
        let names = |now| signing_secrets(&record, now).iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        assert_eq!(names("2026-11-28T09:59:59.999Z"), ["new", "old"]);
        assert_eq!(names("2026-11-28T10:00:00.000Z"), ["new"]);
    }

    #[test]
    fn event_types_must_be_catalogued_and_come_in_catalogue_order() {
        #[derive(Debug, Input)]
        struct Wrapper {
            t: List<EventTypeName, 10>,
        }
        let read = |v: serde_json::Value| workapi_kit::input::parse::<Wrapper>(&serde_json::json!({"t": v}));
        let named = read(serde_json::json!(["tag.deleted", "tag.created", "tag.created"])).unwrap().t;
        assert_eq!(event_types(&named.0), ["tag.created", "tag.deleted"]);
        let refused = read(serde_json::json!(["tag.exploded"])).unwrap_err();
        assert!(format!("{:?}", refused).contains("tag.exploded"), "{refused:?}");
    }
}
