//! The dispatcher on AWS Lambda (docs/events.md#delivery): one function, two event source
//! mappings. DynamoDB Streams' batches of inserted event items ([`Dispatcher::on_event`]), and
//! the delivery queue's messages ([`Dispatcher::on_job`]); both with `ReportBatchItemFailures`,
//! so a failed record is retried alone (a stream from its first failure on, in order; a queue
//! message by itself, then to the dead-letter queue).

use crate::Dispatcher;
use events::jobs::Job;
use serde_json::{Value, json};
use workapi_store::Item;
use workapi_store::dynamo::item_from_json;

/// The response to a batch: the records to retry (`batchItemFailures`).
pub async fn handle(dispatcher: &Dispatcher, event: &Value) -> Value {
    let records = event["Records"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut failures = Vec::new();
    for record in records {
        match record["eventSource"].as_str() {
            Some("aws:dynamodb") => {
                if let Err(why) = stream_record(dispatcher, record).await {
                    tracing::warn!(error = %why, "a stream record failed; it and those after it are retried");
                    // A stream is retried from its first failure on, in order.
                    failures.push(json!({"itemIdentifier": record["dynamodb"]["SequenceNumber"]}));
                    break;
                }
            }
            Some("aws:sqs") => {
                if let Err(why) = queue_record(dispatcher, record).await {
                    tracing::warn!(error = %why, "a delivery job failed; it is retried");
                    failures.push(json!({"itemIdentifier": record["messageId"]}));
                }
            }
            other => tracing::error!(source = ?other, "a record of an unknown source: ignored"),
        }
    }
    json!({"batchItemFailures": failures})
}

/// The inserted item of a stream record (`INSERT` with a `NewImage`); None for any other.
pub fn inserted_item(record: &Value) -> Option<Item> {
    if record["eventName"].as_str() != Some("INSERT") {
        return None;
    }
    item_from_json(&record["dynamodb"]["NewImage"])
}

async fn stream_record(dispatcher: &Dispatcher, record: &Value) -> Result<(), String> {
    match inserted_item(record) {
        Some(item) => dispatcher.on_event(item).await.map_err(|e| e.message),
        None => Ok(()),
    }
}

async fn queue_record(dispatcher: &Dispatcher, record: &Value) -> Result<(), String> {
    let body = record["body"].as_str().ok_or("a message without a body")?;
    match serde_json::from_str::<Job>(body) {
        Ok(job) => dispatcher.on_job(job).await.map_err(|e| e.message),
        Err(e) => {
            // Retrying cannot make it one: dropped, loudly.
            tracing::error!(error = %e, "a delivery job that is not one: dropped");
            Ok(())
        }
    }
}
