//! The deployed delivery queue (cargo feature `sqs`): an SQS queue whose messages Lambda's
//! event source mapping hands to the dispatcher (docs/events.md#delivery). The client is built
//! on first use, like the other AWS clients, so a request that queues nothing loads nothing.

use crate::changes::{MAX_DELAY, Queue};
use crate::{StoreError, StoreResult};
use async_trait::async_trait;
use aws_sdk_sqs::Client;
use aws_sdk_sqs::error::DisplayErrorContext;
use std::time::Duration;
use tokio::sync::OnceCell;

pub struct SqsQueue {
    url: String,
    client: OnceCell<Client>,
}

impl SqsQueue {
    /// The queue through a client given now (tests: moto).
    pub fn new(client: Client, url: impl Into<String>) -> Self {
        SqsQueue { url: url.into(), client: OnceCell::new_with(Some(client)) }
    }

    /// The queue through a client built from the environment on first use.
    pub fn from_env(url: impl Into<String>) -> Self {
        SqsQueue { url: url.into(), client: OnceCell::new() }
    }

    async fn client(&self) -> &Client {
        self.client.get_or_init(|| async { Client::new(crate::aws::sdk_config().await) }).await
    }
}

#[async_trait]
impl Queue for SqsQueue {
    async fn send(&self, body: &str, delay: Duration) -> StoreResult<()> {
        let delay = delay.min(MAX_DELAY).as_secs() as i32;
        let sent = self
            .client()
            .await
            .send_message()
            .queue_url(&self.url)
            .message_body(body)
            .delay_seconds(delay)
            .send()
            .await;
        sent.map(|_| ()).map_err(|e| {
            let message = format!("SQS SendMessage: {}", DisplayErrorContext(&e));
            if crate::aws::is_transient(&e) { StoreError::Unavailable(message) } else { StoreError::Backend(message) }
        })
    }
}
