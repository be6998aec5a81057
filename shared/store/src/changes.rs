//! What the dispatcher reads (docs/events.md#delivery): the items inserted in the table, in
//! the order their transactions committed (per partition), as DynamoDB Streams' `INSERT`
//! records give them; and the queue that holds a delivery's next attempt until it is due, as
//! SQS does with `DelaySeconds`. Deployed, Lambda's event source mappings read the stream and
//! the queue; locally, `workapi serve` reads the embedded store's feed and queue
//! ([`crate::sqlite`]), and the tests read DynamoDB Local's stream ([`crate::dynamo_stream`]).

use crate::{Item, StoreResult};
use async_trait::async_trait;
use std::time::Duration;

/// The entity whose inserts the feed carries: the outbox's event items.
pub const STREAMED_ENTITY: &str = "Event";

/// Inserted items, at least once: what [`ChangeFeed::next`] returned comes again until
/// [`ChangeFeed::done`] is called (a reader that dies before handling them reads them again).
#[async_trait]
pub trait ChangeFeed: Send + Sync {
    /// The next inserted [`STREAMED_ENTITY`] items, oldest first, at most `max`.
    async fn next(&self, max: usize) -> StoreResult<Vec<Item>>;
    /// Everything `next` returned has been handled.
    async fn done(&self) -> StoreResult<()>;
}

/// A message received from a [`Queue`]: invisible to other receivers until deleted or until its
/// visibility ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    pub receipt: String,
    pub body: String,
}

/// The longest delay a message may have (SQS's `DelaySeconds` limit): a longer wait is one
/// message re-sent until its time comes.
pub const MAX_DELAY: Duration = Duration::from_secs(900);

/// A queue of messages, each visible after its delay (at most [`MAX_DELAY`]).
#[async_trait]
pub trait Queue: Send + Sync {
    async fn send(&self, body: &str, delay: Duration) -> StoreResult<()>;
}

/// A queue a process polls itself (the embedded one); SQS is polled by Lambda.
#[async_trait]
pub trait PolledQueue: Queue {
    /// At most `max` messages due now, each hidden for `visibility` (then visible again unless
    /// deleted: a receiver that dies gets its messages redelivered).
    async fn receive(&self, max: usize, visibility: Duration) -> StoreResult<Vec<Received>>;
    async fn acknowledge(&self, receipt: &str) -> StoreResult<()>;
}
