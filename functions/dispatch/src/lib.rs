//! The dispatcher (docs/events.md#delivery): what happens to an event once its change has
//! committed. One code path, two transports:
//!
//! - [`Dispatcher::on_event`] takes an event item as the table's stream gives it (DynamoDB
//!   Streams deployed, the embedded store's feed locally), creates its notifications and one
//!   delivery per enabled endpoint that takes its type, and queues each delivery's first attempt;
//! - [`Dispatcher::on_job`] takes a queued attempt (SQS deployed, the embedded queue locally),
//!   POSTs the event, signed (Standard Webhooks), records the attempt and queues the next one on
//!   the schedule (`workapi_domain::webhook`).
//!
//! Both may see the same input twice (at-least-once transports) and after a crash: a delivery is
//! created once (conditional put), an attempt is claimed before it is made (so a duplicate job
//! makes no second request while the first runs), and a next attempt is queued once. A receiver
//! can still, rarely, get an attempt twice (a dispatcher that died after sending, before
//! recording): with the same `webhook-id`.

pub mod lambda;

use axum::body::Bytes;
use axum::http::{Request, header};
use events::deliveries::{self, DeliveryAttempt, DeliveryRecord, DeliveryStatus};
use events::jobs::{CLAIM_SECS, Job, enqueue, epoch_ms};
use events::webhooks::{self, EndpointRecord};
use http_body_util::Full;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;
use workapi_domain::event::{self, EventRecord};
use workapi_domain::webhook::{self, ATTEMPT_TIMEOUT_SECS, Next, Outcome};
use workapi_kit::entity::{self, Change};
use workapi_kit::net::{self, WebhookTargets};
use workapi_kit::outbound;
use workapi_kit::secrets::{SecretName, SecretStore};
use workapi_kit::{ApiError, ApiResult, AppState};
use workapi_store::changes::{ChangeFeed, PolledQueue, Queue, Received, STREAMED_ENTITY};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, ENTITY, Item, PK, Store, StoreError, clock};

/// The dispatcher of one process: the store, the secrets that sign, the queue, and where
/// endpoints may point.
pub struct Dispatcher {
    state: AppState,
    queue: Arc<dyn Queue>,
    targets: WebhookTargets,
    tls: Arc<rustls::ClientConfig>,
    /// Secret values by name: a name's value never changes (a rotation makes a new name).
    secrets: Mutex<HashMap<String, String>>,
}

impl Dispatcher {
    pub fn new(state: AppState, queue: Arc<dyn Queue>) -> ApiResult<Dispatcher> {
        let tls = outbound::tls_config(&[]).map_err(ApiError::internal)?;
        let targets = state.webhook_targets();
        Ok(Dispatcher { state, queue, targets, tls, secrets: Mutex::new(HashMap::new()) })
    }

    fn store(&self) -> &dyn Store {
        self.state.store()
    }

    /// An inserted item of the stream: an event's notifications and deliveries (other items:
    /// nothing).
    pub async fn on_event(&self, item: Item) -> ApiResult<()> {
        if item.get(ENTITY).and_then(|e| e.as_str()) != Some(STREAMED_ENTITY) {
            return Ok(());
        }
        let keys = item
            .get(PK)
            .and_then(|pk| pk.as_str())
            .and_then(workspace_of)
            .ok_or_else(|| ApiError::internal("an event item outside a workspace partition"))?;
        let record: EventRecord = entity::from_item(item)?;
        let now = clock::now();
        if record.ttl <= now.unix_timestamp() {
            return Ok(());
        }
        account::notify::from_event(self.store(), keys, &record).await?;
        let event_type = &record.payload.event_type;
        for endpoint in webhooks::list(self.store(), keys).await? {
            let takes = endpoint.endpoint.event_types.iter().any(|t| t == event_type);
            if endpoint.endpoint.enabled && takes {
                self.start_delivery(keys, endpoint.endpoint.id, &record, now).await?;
            }
        }
        Ok(())
    }

    /// Creates the delivery and queues its first attempt; a second reading of the event finds
    /// the delivery and queues the first attempt only if the first reading did not.
    async fn start_delivery(
        &self,
        keys: WsKeys,
        endpoint: Uuid,
        record: &EventRecord,
        now: time::OffsetDateTime,
    ) -> ApiResult<()> {
        let delivery = DeliveryRecord::new(endpoint, &record.id, &record.payload.event_type, now);
        match self.store().put(entity::to_item(&delivery, keys)?, Condition::NotExists).await {
            Ok(()) => {}
            Err(StoreError::ConditionFailed) => {}
            Err(e) => return Err(e.into()),
        }
        let job = Job {
            workspace: keys.workspace_id(),
            endpoint,
            event: record.id.clone(),
            attempt: 1,
            due_ms: epoch_ms(now),
            redelivery: false,
        };
        self.queue_once(keys, &job).await
    }

    /// Queues `job` unless a job for its attempt was queued already, and records that it was.
    async fn queue_once(&self, keys: WsKeys, job: &Job) -> ApiResult<()> {
        let Some(stored) = deliveries::get(self.store(), keys, job.endpoint, &job.event).await? else { return Ok(()) };
        if stored.queued >= job.attempt {
            return Ok(());
        }
        enqueue(self.queue.as_ref(), job).await?;
        let change = |stored: Option<DeliveryRecord>| {
            let mut record = stored.ok_or_else(|| ApiError::not_found("Delivery not found"))?;
            if record.queued >= job.attempt {
                return Ok(Change::Keep(record));
            }
            record.queued = job.attempt;
            Ok(Change::Write(record))
        };
        let key = deliveries::key(keys, job.endpoint, &job.event);
        entity::modify(self.store(), &key, keys, "The delivery is being changed concurrently", change).await?;
        Ok(())
    }

    /// A queued attempt: made when due, once.
    pub async fn on_job(&self, job: Job) -> ApiResult<()> {
        let now_ms = epoch_ms(clock::now());
        if job.due_ms > now_ms + 1000 {
            // Read before its time (a wait longer than the queue's longest delay).
            return enqueue(self.queue.as_ref(), &job).await;
        }
        let keys = WsKeys::new(job.workspace);
        let Some(claimed) = self.claim(keys, &job, now_ms).await? else { return Ok(()) };
        let endpoint = webhooks::find(self.store(), keys, job.endpoint).await?;
        let event = entity::get::<EventRecord>(self.store(), &event::key(keys, &job.event)).await?;
        let (Some(endpoint), Some(event)) = (endpoint.filter(|e| e.endpoint.enabled), event) else {
            // Deleted or disabled since, or the event expired: nothing more to send.
            return self.settle(keys, &job, &claimed, None, Next::GiveUp).await;
        };
        let attempt = self.send(&endpoint, &event).await?;
        let next = webhook::next(job.attempt, attempt.outcome);
        self.settle(keys, &job, &claimed, Some(attempt.record(job.attempt, job.redelivery)), next).await?;
        self.endpoint_health(keys, &endpoint, next).await
    }

    /// Claims the job's attempt: None when it is not the delivery's next attempt, or another
    /// dispatcher holds it.
    async fn claim(&self, keys: WsKeys, job: &Job, now_ms: i64) -> ApiResult<Option<DeliveryRecord>> {
        // One read: a delivery not claimable is kept as read, which writes nothing.
        let change = |stored: Option<DeliveryRecord>| {
            let mut record = stored.ok_or_else(|| ApiError::not_found("Delivery not found"))?;
            if !claimable(&record, job, now_ms) {
                return Ok(Change::Keep(record));
            }
            record.claimed = job.attempt;
            record.claimed_at_ms = now_ms;
            Ok(Change::Write(record))
        };
        let key = deliveries::key(keys, job.endpoint, &job.event);
        let record = match entity::modify(
            self.store(),
            &key,
            keys,
            "The delivery is being changed concurrently",
            change,
        )
        .await
        {
            Ok(record) => record,
            // Expired (30 days) since the job was queued: nothing to attempt.
            Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok((record.claimed == job.attempt && record.claimed_at_ms == now_ms).then_some(record))
    }

    /// Records the attempt (if one was made) and what follows it, then queues the next one.
    async fn settle(
        &self,
        keys: WsKeys,
        job: &Job,
        claimed: &DeliveryRecord,
        attempt: Option<DeliveryAttempt>,
        next: Next,
    ) -> ApiResult<()> {
        let now = clock::now();
        let due = match next {
            Next::RetryAfter(secs) => Some(now + time::Duration::seconds(secs)),
            _ => None,
        };
        let change = |stored: Option<DeliveryRecord>| {
            let mut record = stored.ok_or_else(|| ApiError::not_found("Delivery not found"))?;
            if record.claimed_at_ms != claimed.claimed_at_ms || record.delivery.attempts.len() as u32 >= job.attempt {
                return Ok(Change::Keep(record));
            }
            record.delivery.attempts.extend(attempt.clone());
            record.delivery.status = match next {
                Next::Delivered => DeliveryStatus::Delivered,
                Next::RetryAfter(_) => DeliveryStatus::Pending,
                Next::GiveUp | Next::DisableEndpoint => DeliveryStatus::Failed,
            };
            record.delivery.next_attempt_at = due.map(clock::rfc3339);
            Ok(Change::Write(record))
        };
        let key = deliveries::key(keys, job.endpoint, &job.event);
        entity::modify(self.store(), &key, keys, "The delivery is being changed concurrently", change).await?;
        if let Some(due) = due {
            let next_job = Job { attempt: job.attempt + 1, due_ms: epoch_ms(due), redelivery: false, ..job.clone() };
            self.queue_once(keys, &next_job).await?;
        }
        Ok(())
    }

    /// The endpoint after an attempt: healthy again after a success; disabled after a 410, or
    /// after failing for 5 days without a success (its creator is told).
    async fn endpoint_health(&self, keys: WsKeys, endpoint: &EndpointRecord, next: Next) -> ApiResult<()> {
        let now = clock::now().unix_timestamp();
        let delivered = next == Next::Delivered;
        if delivered && endpoint.failing_since.is_none() {
            return Ok(());
        }
        let change = |stored: Option<EndpointRecord>| {
            let mut record = stored.ok_or_else(|| ApiError::not_found("Webhook endpoint not found"))?;
            let before = record.clone();
            if delivered {
                record.failing_since = None;
            } else {
                let since = *record.failing_since.get_or_insert(now);
                if next == Next::DisableEndpoint || webhook::failing_too_long(since, now) {
                    record.endpoint.enabled = false;
                    record.endpoint.updated_at = clock::now_rfc3339();
                }
            }
            Ok(if record == before { Change::Keep(record) } else { Change::Write(record) })
        };
        let key = webhooks::endpoint_key(keys, endpoint.endpoint.id);
        let after =
            entity::modify(self.store(), &key, keys, "The webhook endpoint is being changed concurrently", change)
                .await?;
        if endpoint.endpoint.enabled && !after.endpoint.enabled {
            let why = if next == Next::DisableEndpoint {
                "it answered 410 Gone"
            } else {
                "its deliveries have failed for 5 days"
            };
            let body = format!(
                "Nothing more is delivered to {} because {why}. Enable it again when it is fixed.",
                after.endpoint.url
            );
            let source = format!("webhook-disabled:{}:{}", after.endpoint.id, after.version);
            account::notify::to_user(self.store(), keys, after.created_by, &source, "Webhook endpoint disabled", &body)
                .await?;
        }
        Ok(())
    }

    /// One signed POST of the event to the endpoint.
    async fn send(&self, endpoint: &EndpointRecord, event: &EventRecord) -> ApiResult<Sent> {
        let body = serde_json::to_vec(&event.payload).map_err(ApiError::internal)?;
        let now = clock::now();
        let timestamp = now.unix_timestamp();
        let mut values = Vec::new();
        for secret in webhooks::signing_secrets(endpoint, &clock::rfc3339(now)) {
            values.push(self.secret(&secret.name).await?);
        }
        let signature = webhook::signature_header(values.iter().map(String::as_str), &event.id, timestamp, &body)
            .map_err(|_| ApiError::internal("a webhook secret that is not a Standard Webhooks secret"))?;
        let started = Instant::now();
        let limit = Duration::from_secs(ATTEMPT_TIMEOUT_SECS);
        let result =
            tokio::time::timeout(limit, self.post(&endpoint.endpoint.url, &event.id, timestamp, &signature, body))
                .await;
        let duration = started.elapsed();
        Ok(match result {
            Ok(Ok(status)) => Sent { outcome: Outcome::Answered(status), duration, error: None },
            Ok(Err(why)) => Sent { outcome: Outcome::NoAnswer, duration, error: Some(why) },
            Err(_) => Sent {
                outcome: Outcome::NoAnswer,
                duration,
                error: Some(format!("no answer within {ATTEMPT_TIMEOUT_SECS} s")),
            },
        })
    }

    async fn post(&self, url: &str, id: &str, timestamp: i64, signature: &str, body: Vec<u8>) -> Result<u16, String> {
        let url = url::Url::parse(url).map_err(|_| "an invalid URL".to_owned())?;
        let port = url.port_or_known_default().unwrap_or(443);
        let targets = self.targets;
        let addresses = match net::resolve_admitted(&url, port, |ip| targets.admits(ip)).await {
            Ok(addresses) => addresses,
            Err(net::Refused::NoSuchHost) => return Err("its host does not resolve".into()),
            Err(net::Refused::Address(ip)) => {
                return Err(format!("its host resolves to an address not admitted ({ip})"));
            }
        };
        let lifetime = Duration::from_secs(ATTEMPT_TIMEOUT_SECS);
        let mut sender = outbound::connect::<Full<Bytes>>(&url, &addresses, &self.tls, lifetime).await?;
        let request = Request::post(outbound::target(&url))
            .header(header::HOST, outbound::authority(&url))
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::USER_AGENT, "workapi-webhooks/1")
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let response = sender.send_request(request).await.map_err(|_| "no response".to_owned())?;
        Ok(response.status().as_u16())
    }

    async fn secret(&self, name: &str) -> ApiResult<String> {
        if let Some(value) = self.secrets.lock().unwrap_or_else(|p| p.into_inner()).get(name) {
            return Ok(value.clone());
        }
        let store = self.state.secrets().ok_or_else(|| ApiError::internal("the dispatcher has no secret store"))?;
        let secret_name = SecretName::new(name)
            .ok_or_else(|| ApiError::internal("a stored webhook secret name the secret store refuses"))?;
        let value = store_value(store, &secret_name).await?;
        self.secrets.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_owned(), value.clone());
        Ok(value)
    }
}

/// How often the local dispatcher looks for new events and due attempts when it found none.
const LOCAL_POLL: Duration = Duration::from_millis(200);
/// Attempts the local dispatcher makes at once.
const LOCAL_CONCURRENCY: usize = 16;

impl Dispatcher {
    /// The dispatcher of a process that has no Lambda to call it (`workapi serve`, the tests):
    /// reads `feed` and `queue` until the process ends. What fails is read again: an event
    /// whose handling failed stays in the feed, a job whose handling failed comes back when its
    /// visibility ends.
    pub async fn run_local(self: Arc<Self>, feed: Arc<dyn ChangeFeed>, queue: Arc<dyn PolledQueue>) {
        let mut running = tokio::task::JoinSet::new();
        loop {
            let events = self.read_feed(feed.as_ref()).await;
            while running.try_join_next().is_some() {}
            let room = LOCAL_CONCURRENCY.saturating_sub(running.len());
            let jobs = match queue.receive(room, Duration::from_secs(CLAIM_SECS as u64)).await {
                Ok(jobs) => jobs,
                Err(e) => {
                    tracing::warn!(error = %e, "the local delivery queue could not be read");
                    Vec::new()
                }
            };
            let idle = events == 0 && jobs.is_empty();
            for received in jobs {
                let (dispatcher, queue) = (self.clone(), queue.clone());
                running.spawn(async move { dispatcher.run_received(queue.as_ref(), received).await });
            }
            if idle {
                tokio::time::sleep(LOCAL_POLL).await;
            }
        }
    }

    /// Handles the feed's next events; how many it read.
    async fn read_feed(&self, feed: &dyn ChangeFeed) -> usize {
        let items = match feed.next(100).await {
            Ok(items) => items,
            Err(e) => {
                tracing::warn!(error = %e, "the change feed could not be read");
                return 0;
            }
        };
        let count = items.len();
        for item in items {
            if let Err(e) = self.on_event(item).await {
                // Not done: the same events are read again on the next round.
                tracing::warn!(error = %e.message, "an event could not be dispatched; it is read again");
                return count;
            }
        }
        if let Err(e) = feed.done().await {
            tracing::warn!(error = %e, "the change feed could not be advanced; its events are read again");
        }
        count
    }

    async fn run_received(&self, queue: &dyn PolledQueue, received: Received) {
        let job: Job = match serde_json::from_str(&received.body) {
            Ok(job) => job,
            Err(e) => {
                tracing::error!(error = %e, "a delivery job that is not one: dropped");
                let _ = queue.acknowledge(&received.receipt).await;
                return;
            }
        };
        match self.on_job(job).await {
            Ok(()) => {
                if let Err(e) = queue.acknowledge(&received.receipt).await {
                    tracing::warn!(error = %e, "a delivery job could not be acknowledged; it comes again");
                }
            }
            Err(e) => tracing::warn!(error = %e.message, "a delivery job failed; it comes again"),
        }
    }
}

async fn store_value(store: &dyn SecretStore, name: &SecretName) -> ApiResult<String> {
    let value = store
        .get(name)
        .await?
        .ok_or_else(|| ApiError::internal("a webhook signing secret is missing from the secret store"))?;
    Ok(value.expose().to_owned())
}

/// Whether `job` is `stored`'s next attempt and no live dispatcher holds it.
fn claimable(stored: &DeliveryRecord, job: &Job, now_ms: i64) -> bool {
    let next = stored.delivery.attempts.len() as u32 + 1;
    let held = stored.claimed == job.attempt && now_ms - stored.claimed_at_ms < CLAIM_SECS * 1000;
    stored.delivery.status == DeliveryStatus::Pending && job.attempt == next && !held
}

/// The workspace of a partition key `WS#<id>#…`.
fn workspace_of(pk: &str) -> Option<WsKeys> {
    let id = pk.strip_prefix("WS#")?.split('#').next()?;
    Uuid::parse_str(id).ok().map(WsKeys::new)
}

/// An attempt as sent.
struct Sent {
    outcome: Outcome,
    duration: Duration,
    error: Option<String>,
}

impl Sent {
    fn record(&self, number: u32, redelivery: bool) -> DeliveryAttempt {
        DeliveryAttempt {
            number,
            at: clock::now_rfc3339(),
            response_status: match self.outcome {
                Outcome::Answered(status) => Some(status),
                Outcome::NoAnswer => None,
            },
            duration_ms: self.duration.as_millis() as u64,
            error: self.error.clone(),
            trigger: if redelivery { "redelivery" } else { "schedule" }.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivery(attempts: u32, claimed: u32, claimed_at_ms: i64, status: DeliveryStatus) -> DeliveryRecord {
        let mut record = DeliveryRecord::new(Uuid::nil(), "evt_1", "tag.created", clock::now());
        record.delivery.status = status;
        record.delivery.attempts = (1..=attempts)
            .map(|number| DeliveryAttempt {
                number,
                at: String::new(),
                response_status: Some(500),
                duration_ms: 1,
                error: None,
                trigger: "schedule".into(),
            })
            .collect();
        (record.claimed, record.claimed_at_ms) = (claimed, claimed_at_ms);
        record
    }

    #[test]
    fn only_the_next_attempt_unheld_is_claimed() {
        let job = |attempt| Job {
            workspace: Uuid::nil(),
            endpoint: Uuid::nil(),
            event: "evt_1".into(),
            attempt,
            due_ms: 0,
            redelivery: false,
        };
        let now = 1_000_000;
        use DeliveryStatus::*;
        assert!(claimable(&delivery(0, 0, 0, Pending), &job(1), now));
        assert!(!claimable(&delivery(1, 1, 0, Pending), &job(1), now), "made already");
        assert!(claimable(&delivery(1, 1, 0, Pending), &job(2), now));
        assert!(!claimable(&delivery(1, 2, now - 1000, Pending), &job(2), now), "held by a live dispatcher");
        assert!(claimable(&delivery(1, 2, now - CLAIM_SECS * 1000, Pending), &job(2), now), "its dispatcher died");
        assert!(!claimable(&delivery(1, 1, 0, Delivered), &job(2), now));
        assert!(!claimable(&delivery(8, 8, 0, Failed), &job(9), now));
    }

    #[test]
    fn event_partitions_name_their_workspace() {
        let ws = Uuid::new_v4();
        assert_eq!(workspace_of(&format!("WS#{ws}#EVENTS")), Some(WsKeys::new(ws)));
        assert_eq!(workspace_of("OAUTH#x"), None);
        assert_eq!(workspace_of("WS#nope#EVENTS"), None);
    }
}
