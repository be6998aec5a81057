//! Recording events (docs/events.md): a change's handler builds its [`Event`] from the caller and
//! the resource as the API returns it, and writes the outbox item in the change's own
//! transaction, beside the idempotency record when there is one: [`Answer::with_event`] for an
//! answer built before the write, [`Event::completion`] for a write without one. So an event
//! exists exactly when its change does.

use crate::auth::Caller;
use crate::entity::{Completion, Recorded};
use crate::error::{ApiError, ApiResult};
use crate::idempotency::Answer;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;
use workapi_domain::event::{
    Actor, Audience, EventRecord, EventType, MAX_DATA_BYTES, Payload, RETENTION_SECS, ResourceRef, new_id,
};
pub use workapi_domain::event::{Emits, types};
use workapi_store::entity::to_item;
use workapi_store::{Condition, TxOp, clock};

/// The event of one change: its type, the resource it names, and who made it.
pub struct Event<'a> {
    caller: &'a Caller,
    event_type: EventType,
    resource_id: String,
    project_id: Option<Uuid>,
}

impl<'a> Event<'a> {
    pub fn new(caller: &'a Caller, event_type: EventType, resource_id: impl ToString) -> Self {
        Event { caller, event_type, resource_id: resource_id.to_string(), project_id: None }
    }

    /// The project a project-bound resource belongs to (the feed shows the event only to
    /// callers who may access it).
    pub fn in_project(mut self, project_id: Uuid) -> Self {
        self.project_id = Some(project_id);
        self
    }

    /// The outbox item with `data`, the resource as the API returns it (unprojected).
    pub fn record<T: Serialize>(&self, data: &T) -> ApiResult<EventRecord> {
        let now = clock::now();
        let data = serde_json::to_value(data).map_err(ApiError::internal)?;
        let (data, truncated) = bounded(data, &self.resource_id);
        let owner = matches!(self.event_type.resource.audience, Audience::Owner).then_some(self.caller.user.id);
        Ok(EventRecord {
            id: new_id((now.unix_timestamp_nanos() / 1_000_000) as i64),
            actor: Actor { user_id: self.caller.user.id, impersonated_by: self.caller.impersonated_by },
            resource: ResourceRef {
                kind: self.event_type.resource.name.to_owned(),
                id: self.resource_id.clone(),
                project_id: self.project_id,
            },
            owner,
            payload: Payload { event_type: self.event_type.name.to_owned(), timestamp: clock::rfc3339(now), data },
            truncated,
            ttl: now.unix_timestamp() + RETENTION_SECS,
        })
    }

    /// The write of the outbox item (a new item: its id is fresh).
    pub fn op<T: Serialize>(&self, data: &T) -> ApiResult<TxOp> {
        let item = to_item(&self.record(data)?, self.caller.keys())?;
        Ok(TxOp::Put { item, cond: Condition::NotExists })
    }

    /// A completion holding only this event, for a write that has no idempotency answer.
    pub fn completion<T: Serialize>(&self, data: &T) -> ApiResult<Completion> {
        Ok(Completion::of(vec![self.op(data)?]))
    }
}

/// `data` whole when it fits [`MAX_DATA_BYTES`], else `truncated` and the resource's id, with
/// its `createdBy` when it has one (the notifications of a quotation's decision go to its
/// creator: `account::notify`).
fn bounded(data: Value, resource_id: &str) -> (Value, bool) {
    let size = serde_json::to_vec(&data).map_or(usize::MAX, |bytes| bytes.len());
    if size <= MAX_DATA_BYTES {
        return (data, false);
    }
    let mut kept = serde_json::json!({ "id": resource_id });
    if let Some(creator) = data.get("createdBy").filter(|creator| creator.is_string()) {
        kept["createdBy"] = creator.clone();
    }
    (kept, true)
}

impl Answer {
    /// This answer with `event` written in the same transaction as its change (and its
    /// idempotency record, when the request has a key).
    pub fn with_event(self, event: TxOp) -> Answer {
        self.with_write(event)
    }
}

/// A completion is itself an answer's record for `entity::modify_answering`: a change whose
/// only write beside it is its event.
impl Recorded for Completion {
    fn completion(&self) -> Option<&Completion> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_beyond_the_bound_is_the_id_and_truncated() {
        let small = serde_json::json!({"id": "a", "name": "x"});
        assert_eq!(bounded(small.clone(), "a"), (small, false));
        let large = serde_json::json!({"id": "a", "text": "x".repeat(MAX_DATA_BYTES)});
        assert_eq!(bounded(large, "a"), (serde_json::json!({"id": "a"}), true));
        let creator = "0b7e4c1a-5e2d-4f6a-9d2f-7c1e01e53df4";
        let quotation = serde_json::json!({"id": "q", "createdBy": creator, "text": "x".repeat(MAX_DATA_BYTES)});
        assert_eq!(bounded(quotation, "q"), (serde_json::json!({"id": "q", "createdBy": creator}), true));
    }
}
