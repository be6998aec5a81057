//! DynamoDB Streams read by a process (cargo feature `streams`): the change feed of a table on
//! DynamoDB for the local server and the tests (docs/events.md#delivery). Deployed, Lambda's
//! event source mapping reads the stream instead, with the same records.
//!
//! Shards present when the feed is made are read from their latest position (what was inserted
//! before is not this reader's); shards that appear later, from their start. Positions are kept
//! in memory: a process that restarts reads from the latest position again, so this reader is
//! at-least-once only while it runs (deployed, Lambda keeps the positions).

use crate::changes::{ChangeFeed, STREAMED_ENTITY};
use crate::{ENTITY, Item, StoreError, StoreResult};
use async_trait::async_trait;
use aws_sdk_dynamodbstreams::Client;
use aws_sdk_dynamodbstreams::error::DisplayErrorContext;
use aws_sdk_dynamodbstreams::types::{AttributeValue, OperationType, ShardIteratorType};
use serde_json::Value;
use std::collections::HashMap;
use tokio::sync::Mutex;

/// GetRecords calls per shard in one `next`, at most.
const PAGES_PER_READ: usize = 5;

pub struct DynamoStreamFeed {
    client: Client,
    stream_arn: String,
    state: Mutex<Positions>,
}

#[derive(Default)]
struct Positions {
    /// Each shard's iterator from which the next read starts; None once the shard is closed and read.
    current: HashMap<String, Option<String>>,
    /// Where each shard's reading got to in the last `next`, taken on `done`.
    read: HashMap<String, Option<String>>,
}

fn backend(what: &str, e: impl std::error::Error) -> StoreError {
    StoreError::Backend(format!("{what}: {}", DisplayErrorContext(e)))
}

impl DynamoStreamFeed {
    /// The feed of `stream_arn` (the table's `LatestStreamArn`), from now on.
    pub async fn new(client: Client, stream_arn: impl Into<String>) -> StoreResult<DynamoStreamFeed> {
        let feed = DynamoStreamFeed { client, stream_arn: stream_arn.into(), state: Mutex::new(Positions::default()) };
        let mut positions = Positions::default();
        for shard in feed.shards().await? {
            let iterator = feed.iterator(&shard, ShardIteratorType::Latest).await?;
            positions.current.insert(shard, iterator);
        }
        *feed.state.lock().await = positions;
        Ok(feed)
    }

    async fn shards(&self) -> StoreResult<Vec<String>> {
        let mut shards = Vec::new();
        let mut start = None;
        loop {
            let described = self
                .client
                .describe_stream()
                .stream_arn(&self.stream_arn)
                .set_exclusive_start_shard_id(start.take())
                .send()
                .await
                .map_err(|e| backend("DescribeStream", e))?;
            let Some(description) = described.stream_description else { return Ok(shards) };
            shards.extend(description.shards().iter().filter_map(|s| s.shard_id().map(str::to_owned)));
            match description.last_evaluated_shard_id {
                Some(last) => start = Some(last),
                None => return Ok(shards),
            }
        }
    }

    async fn iterator(&self, shard: &str, kind: ShardIteratorType) -> StoreResult<Option<String>> {
        let got = self
            .client
            .get_shard_iterator()
            .stream_arn(&self.stream_arn)
            .shard_id(shard)
            .shard_iterator_type(kind)
            .send()
            .await
            .map_err(|e| backend("GetShardIterator", e))?;
        Ok(got.shard_iterator)
    }
}

#[async_trait]
impl ChangeFeed for DynamoStreamFeed {
    async fn next(&self, max: usize) -> StoreResult<Vec<Item>> {
        let mut state = self.state.lock().await;
        for shard in self.shards().await? {
            if let std::collections::hash_map::Entry::Vacant(slot) = state.current.entry(shard) {
                let iterator = self.iterator(slot.key(), ShardIteratorType::TrimHorizon).await?;
                slot.insert(iterator);
            }
        }
        let mut items = Vec::new();
        let mut read = HashMap::new();
        for (shard, iterator) in &state.current {
            let mut iterator = iterator.clone();
            // A shard's backlog (other writers' records, which the feed skips) is read on in
            // pages of 1,000 until it is caught up or `max` events are found.
            for _ in 0..PAGES_PER_READ {
                let Some(at) = iterator.clone() else { break };
                let got = self
                    .client
                    .get_records()
                    .shard_iterator(at)
                    .limit(1000)
                    .send()
                    .await
                    .map_err(|e| backend("GetRecords", e))?;
                let full = got.records().len() == 1000;
                for record in got.records() {
                    if record.event_name() != Some(&OperationType::Insert) {
                        continue;
                    }
                    let image = record.dynamodb().and_then(|d| d.new_image());
                    let item: Option<Item> =
                        image.map(|image| image.iter().map(|(k, v)| (k.clone(), value(v))).collect());
                    if let Some(item) = item.filter(|i| i.get(ENTITY).and_then(Value::as_str) == Some(STREAMED_ENTITY))
                    {
                        items.push(item);
                    }
                }
                iterator = got.next_shard_iterator;
                if !full || items.len() >= max {
                    break;
                }
            }
            read.insert(shard.clone(), iterator);
        }
        state.read = read;
        Ok(items)
    }

    async fn done(&self) -> StoreResult<()> {
        let mut state = self.state.lock().await;
        let read = std::mem::take(&mut state.read);
        state.current.extend(read);
        Ok(())
    }
}

/// The value of a stream image's attribute, as `crate::dynamo::from_attr` reads the table's.
fn value(attr: &AttributeValue) -> Value {
    match attr {
        AttributeValue::S(s) => Value::String(s.clone()),
        AttributeValue::N(n) => crate::dynamo::parse_number(n),
        AttributeValue::Bool(b) => Value::Bool(*b),
        AttributeValue::L(items) => Value::Array(items.iter().map(value).collect()),
        AttributeValue::M(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), value(v))).collect()),
        AttributeValue::Ss(items) => Value::Array(items.iter().cloned().map(Value::String).collect()),
        AttributeValue::Ns(items) => Value::Array(items.iter().map(|n| crate::dynamo::parse_number(n)).collect()),
        _ => Value::Null,
    }
}
