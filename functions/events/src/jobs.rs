//! The delivery queue's messages (docs/events.md#delivery): a [`Job`] is one queued attempt of
//! a delivery, made by the dispatcher (functions/dispatch) when it is due; a redelivery
//! (`deliveries::redeliver`) queues one too.

use serde::{Deserialize, Serialize};
use std::time::Duration;
use uuid::Uuid;
use workapi_kit::{ApiError, ApiResult};
use workapi_store::changes::Queue;
use workapi_store::clock;

/// How long a claimed attempt belongs to the dispatcher that claimed it: longer than an
/// attempt can take (15 s and the writes around it). A claim older than this belongs to a
/// dispatcher that died; the job's next reading makes the attempt again.
pub const CLAIM_SECS: i64 = 60;

/// One queued attempt: the message body of the delivery queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub workspace: Uuid,
    pub endpoint: Uuid,
    /// The event's id: the delivery's
    pub event: String,
    /// The attempt number this job makes (1-based)
    pub attempt: u32,
    /// When it is due (epoch ms): a job read earlier is queued again until then
    pub due_ms: i64,
    /// Asked for (`redeliver`), not scheduled
    #[serde(default)]
    pub redelivery: bool,
}

pub fn epoch_ms(at: time::OffsetDateTime) -> i64 {
    (at.unix_timestamp_nanos() / 1_000_000) as i64
}

/// Queues `job`, visible when it is due (or after the queue's longest delay, when it is read
/// early and queued again).
pub async fn enqueue(queue: &dyn Queue, job: &Job) -> ApiResult<()> {
    let wait = (job.due_ms - epoch_ms(clock::now())).max(0) as u64;
    let body = serde_json::to_string(job).map_err(ApiError::internal)?;
    queue.send(&body, Duration::from_millis(wait)).await?;
    Ok(())
}
