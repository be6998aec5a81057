//! Deliveries (docs/events.md#delivery): one per event and endpoint, with its attempts, kept 30
//! days like the events. `GET /webhooks/{id}/deliveries` lists an endpoint's, newest first;
//! `POST /webhooks/{id}/deliveries/{deliveryId}/redeliver` sends one again now, signed with the
//! endpoint's current secrets. The attempts themselves are made by the dispatcher
//! (functions/dispatch).

use crate::jobs::{self, Job};
use crate::webhooks::{self, EndpointPath, MANAGE};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;
use workapi_domain::event::types;
use workapi_domain::webhook::DELIVERY_RETENTION_SECS;
use workapi_kit::entity::{self, Change, Entity, Versioned};
use workapi_kit::events::Event;
use workapi_kit::paging::{OrderKey, PageParams, Paged, Paging, StoreList};
use workapi_kit::request::Path;
use workapi_kit::{ApiError, ApiResult, AppState, Caller};
use workapi_store::keys::WsKeys;
use workapi_store::{Cursor, Key, Query, clock};

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum DeliveryStatus {
    /// An attempt is due (`nextAttemptAt`)
    Pending,
    /// A 2xx answered an attempt
    Delivered,
    /// No more attempts: the schedule is spent, the endpoint answered 410, or it was disabled or deleted
    Failed,
}

/// One attempt to deliver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryAttempt {
    /// 1 for the first attempt
    pub number: u32,
    #[schema(format = DateTime)]
    pub at: String,
    /// The receiver's status code; null when it did not answer
    #[schema(required)]
    pub response_status: Option<u16>,
    /// From sending the request to its answer (or the failure)
    pub duration_ms: u64,
    /// Why it failed without an answer (no connection, timeout, an address refused)
    #[schema(required)]
    pub error: Option<String>,
    /// `schedule` (the delivery's own attempts) or `redelivery` (asked for)
    pub trigger: String,
}

/// A delivery of one event to one endpoint: the event's id is its id (and every attempt's
/// `webhook-id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({"id": "evt_01KB0M7Q4ZJ3W1X9Y2C5V8N6RT", "eventType": "tag.created",
    "status": "pending", "createdAt": "2026-11-27T10:15:00.123Z", "nextAttemptAt": "2026-11-27T10:15:05.400Z",
    "attempts": [{"number": 1, "at": "2026-11-27T10:15:00.400Z", "responseStatus": 503, "durationMs": 42,
        "error": null, "trigger": "schedule"}]})))]
pub struct Delivery {
    /// The event's id
    pub id: String,
    pub event_type: String,
    pub status: DeliveryStatus,
    #[schema(format = DateTime)]
    pub created_at: String,
    /// When the next attempt is due, while pending
    #[schema(required, format = DateTime)]
    pub next_attempt_at: Option<String>,
    /// Oldest first
    pub attempts: Vec<DeliveryAttempt>,
}

/// The stored delivery: `WS#ws#DELIVERIES#<endpoint>` / `DLV#<event id>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryRecord {
    #[serde(flatten)]
    pub delivery: Delivery,
    pub endpoint_id: Uuid,
    /// The attempt number a dispatcher has claimed (may be one past `attempts` while it runs).
    pub claimed: u32,
    /// When that claim was made (epoch ms): a claim older than a dispatcher's visibility
    /// timeout belongs to a dispatcher that died.
    pub claimed_at_ms: i64,
    /// The highest attempt number queued: a message for an attempt already queued is not sent
    /// again.
    pub queued: u32,
    pub ttl: i64,
    pub version: i64,
}

impl Entity for DeliveryRecord {
    const TYPE: &'static str = "WebhookDelivery";
    const PREFIX: &'static str = "DLV#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        key(keys, self.endpoint_id, &self.delivery.id)
    }
}

impl Versioned for DeliveryRecord {
    fn version(&self) -> i64 {
        self.version
    }
    fn set_version(&mut self, version: i64) {
        self.version = version;
    }
}

fn partition(keys: WsKeys, endpoint: Uuid) -> String {
    keys.partition(&format!("DELIVERIES#{endpoint}"))
}

pub fn key(keys: WsKeys, endpoint: Uuid, event_id: &str) -> Key {
    Key::new(partition(keys, endpoint), format!("{}{event_id}", DeliveryRecord::PREFIX))
}

impl DeliveryRecord {
    /// A new delivery of `event_id`, its first attempt not queued yet.
    pub fn new(endpoint_id: Uuid, event_id: &str, event_type: &str, now: time::OffsetDateTime) -> DeliveryRecord {
        let at = clock::rfc3339(now);
        DeliveryRecord {
            delivery: Delivery {
                id: event_id.to_owned(),
                event_type: event_type.to_owned(),
                status: DeliveryStatus::Pending,
                created_at: at.clone(),
                next_attempt_at: Some(at),
                attempts: Vec::new(),
            },
            endpoint_id,
            claimed: 0,
            claimed_at_ms: 0,
            queued: 0,
            ttl: now.unix_timestamp() + DELIVERY_RETENTION_SECS,
            version: 1,
        }
    }
}

pub async fn get(
    store: &dyn workapi_store::Store,
    keys: WsKeys,
    endpoint: Uuid,
    event_id: &str,
) -> ApiResult<Option<DeliveryRecord>> {
    Ok(entity::get(store, &key(keys, endpoint, event_id)).await?)
}

/// List an endpoint's deliveries
///
/// The deliveries of the last 30 days to one endpoint, newest first, each with its attempts
/// (status code, duration, attempt number) and, while pending, when the next attempt is due.
/// Needs `WsSettings.manageSettings`.
#[utoipa::path(get, path = "/webhooks/{id}/deliveries", operation_id = "listWebhookDeliveries", tag = "webhooks",
    params(EndpointPath, PageParams),
    responses((status = 200, description = "The deliveries, newest first", body = [Delivery])))]
pub async fn list_deliveries(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<EndpointPath>,
    paging: Paging,
) -> ApiResult<Paged<Delivery>> {
    caller.authorize(MANAGE)?;
    let (store, keys) = (state.store(), caller.keys());
    webhooks::get(store, keys, path.id).await?;
    let endpoint = path.id;
    let list = StoreList {
        query: Query::table(partition(keys, endpoint)).begins_with(DeliveryRecord::PREFIX).backward(),
        start_after: |after: &OrderKey| -> Option<Cursor> {
            let id = after.last_text()?;
            workapi_domain::event::id_epoch_ms(id)?;
            Some(entity::table_start(&key(keys, endpoint, id)))
        },
        key: |d: &Delivery| OrderKey::new().text(d.id.clone()),
        largest_item: 8 * 1024,
    };
    let now = clock::now().unix_timestamp();
    let decode = |item| {
        let record: DeliveryRecord = entity::from_item(item)?;
        Ok((record.ttl > now).then_some(record.delivery))
    };
    paging.window_from_store(store, list, decode).await?.answer()
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryPath {
    /// Webhook endpoint id
    #[param(example = "5b0d3f7e-2a4c-4e6b-9d1f-3a5c7e9b1d20")]
    id: Uuid,
    /// The delivery's id (its event's id)
    #[param(example = "evt_01KB0M7Q4ZJ3W1X9Y2C5V8N6RT")]
    delivery_id: String,
}

impl DeliveryPath {
    /// The delivery's id, checked: an event id (`evt_` and a ULID), else a 400 naming it. Read
    /// before the permission, as every path parameter is (docs/conventions.md).
    fn delivery_id(&self) -> ApiResult<&str> {
        match workapi_domain::event::id_epoch_ms(&self.delivery_id) {
            Some(_) => Ok(&self.delivery_id),
            None => Err(ApiError::field("deliveryId", "deliveryId is not a delivery id (evt_ and 26 characters)")),
        }
    }
}

/// Redeliver an event
///
/// Sends the delivery again now (its next attempt, `trigger: redelivery`), signed with the
/// endpoint's current secrets; a pending delivery's scheduled attempt is brought forward. The
/// endpoint must be enabled. A redelivery that fails is not retried by itself once the
/// delivery's 8 scheduled attempts are spent. Needs `WsSettings.manageSettings`.
#[utoipa::path(post, path = "/webhooks/{id}/deliveries/{deliveryId}/redeliver", operation_id = "redeliverWebhookDelivery",
    tag = "webhooks", params(DeliveryPath),
    responses((status = 202, description = "The delivery, its next attempt queued", body = Delivery)))]
pub async fn redeliver(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<DeliveryPath>,
) -> ApiResult<(StatusCode, Json<Delivery>)> {
    let delivery_id = path.delivery_id()?.to_owned();
    caller.authorize(MANAGE)?;
    let (store, keys) = (state.store(), caller.keys());
    let endpoint = webhooks::get(store, keys, path.id).await?;
    if !endpoint.endpoint.enabled {
        return Err(ApiError::conflict("The webhook endpoint is disabled: enable it to redeliver"));
    }
    let queue = state.queue().ok_or_else(|| ApiError::internal("the events function has no delivery queue"))?;
    let now = clock::now();
    let now_text = clock::rfc3339(now);
    let not_found = || ApiError::not_found("Delivery not found");
    let change = |stored: Option<DeliveryRecord>| {
        let mut record = stored.filter(|r| r.ttl > now.unix_timestamp()).ok_or_else(not_found)?;
        record.queued = record.queued.max(record.delivery.attempts.len() as u32 + 1);
        record.delivery.status = DeliveryStatus::Pending;
        record.delivery.next_attempt_at = Some(now_text.clone());
        Ok(Change::Write(record))
    };
    let beside = |record: &DeliveryRecord| {
        let resource = format!("{}:{}", path.id, record.delivery.id);
        Event::new(&caller, types::WEBHOOK_DELIVERY_REDELIVERY_REQUESTED, resource).completion(&record.delivery)
    };
    let key = key(keys, path.id, &delivery_id);
    let busy = "The delivery is being changed concurrently; retry";
    let record = entity::modify_with(store, &key, keys, busy, change, beside).await?;
    let job = Job {
        workspace: keys.workspace_id(),
        endpoint: path.id,
        event: delivery_id.clone(),
        attempt: record.delivery.attempts.len() as u32 + 1,
        due_ms: jobs::epoch_ms(now),
        redelivery: true,
    };
    jobs::enqueue(queue, &job).await?;
    Ok((StatusCode::ACCEPTED, Json(record.delivery)))
}
