//! DynamoDB Local's stream of the test table as a change feed, for the tests' dispatcher
//! ([`crate::TestApiBuilder::dispatch`]). It calls the DynamoDB Streams API (JSON over HTTP)
//! itself and reads each record with `dispatch::lambda::inserted_item`, the parser of the
//! records Lambda hands the deployed dispatcher: one reading of stream records, tested here.
//! (The SDK's own client refused some of DynamoDB Local's records: "Union did not contain a
//! valid variant".)
//!
//! Shards present when the feed is made are read from their latest position (what was inserted
//! before is not this test's); shards that appear later, from their start. Positions are kept in
//! memory, like a Lambda event source mapping's.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;
use workapi_store::changes::{ChangeFeed, STREAMED_ENTITY};
use workapi_store::{ENTITY, Item, StoreError, StoreResult};

/// GetRecords calls per shard in one `next`, at most (1,000 records each): other tests'
/// records are read past.
const PAGES_PER_READ: usize = 50;
/// How often the shards are listed again (a stream opens new shards as it grows and ages).
const SHARDS_EVERY: Duration = Duration::from_secs(2);

pub struct DynamoStreamFeed {
    http: reqwest::Client,
    endpoint: String,
    stream_arn: String,
    state: Mutex<Positions>,
}

#[derive(Default)]
struct Positions {
    /// Each shard's iterator from which the next read starts; None once the shard is closed and read.
    current: HashMap<String, Option<String>>,
    /// Where each shard's reading got to in the last `next`, taken on `done`.
    read: HashMap<String, Option<String>>,
    listed: Option<Instant>,
}

impl DynamoStreamFeed {
    /// The feed of `stream_arn` on DynamoDB Local at `endpoint`, from now on.
    pub async fn new(endpoint: &str, stream_arn: &str) -> StoreResult<DynamoStreamFeed> {
        let feed = DynamoStreamFeed {
            http: reqwest::Client::new(),
            endpoint: endpoint.to_owned(),
            stream_arn: stream_arn.to_owned(),
            state: Mutex::new(Positions::default()),
        };
        let mut positions = Positions { listed: Some(Instant::now()), ..Positions::default() };
        for shard in feed.shards().await? {
            let iterator = feed.iterator(&shard, "LATEST").await?;
            positions.current.insert(shard, iterator);
        }
        *feed.state.lock().await = positions;
        Ok(feed)
    }

    async fn call(&self, action: &str, body: Value) -> StoreResult<Value> {
        let failed = |e: String| StoreError::Backend(format!("DynamoDB Streams {action}: {e}"));
        let response = self
            .http
            .post(&self.endpoint)
            .header("X-Amz-Target", format!("DynamoDBStreams_20120810.{action}"))
            .header("Content-Type", "application/x-amz-json-1.0")
            // DynamoDB Local reads the credential, it checks no signature.
            .header(
                "Authorization",
                "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0",
            )
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| failed(e.to_string()))?;
        let status = response.status();
        let answer: Value = response.json().await.map_err(|e| failed(e.to_string()))?;
        if !status.is_success() {
            return Err(failed(format!("{status}: {answer}")));
        }
        Ok(answer)
    }

    async fn shards(&self) -> StoreResult<Vec<String>> {
        let mut shards = Vec::new();
        let mut start: Option<String> = None;
        loop {
            let mut body = json!({"StreamArn": self.stream_arn});
            if let Some(start) = &start {
                body["ExclusiveStartShardId"] = json!(start);
            }
            let described = self.call("DescribeStream", body).await?;
            let description = &described["StreamDescription"];
            let ids = description["Shards"].as_array().into_iter().flatten();
            shards.extend(ids.filter_map(|s| s["ShardId"].as_str().map(str::to_owned)));
            match description["LastEvaluatedShardId"].as_str() {
                Some(last) => start = Some(last.to_owned()),
                None => return Ok(shards),
            }
        }
    }

    async fn iterator(&self, shard: &str, kind: &str) -> StoreResult<Option<String>> {
        let body = json!({"StreamArn": self.stream_arn, "ShardId": shard, "ShardIteratorType": kind});
        let got = self.call("GetShardIterator", body).await?;
        Ok(got["ShardIterator"].as_str().map(str::to_owned))
    }
}

#[async_trait::async_trait]
impl ChangeFeed for DynamoStreamFeed {
    async fn next(&self, max: usize) -> StoreResult<Vec<Item>> {
        let mut state = self.state.lock().await;
        if state.listed.is_none_or(|at| at.elapsed() >= SHARDS_EVERY) {
            state.listed = Some(Instant::now());
            for shard in self.shards().await? {
                if let std::collections::hash_map::Entry::Vacant(slot) = state.current.entry(shard) {
                    let iterator = self.iterator(slot.key(), "TRIM_HORIZON").await?;
                    slot.insert(iterator);
                }
            }
        }
        let mut items = Vec::new();
        let mut read = HashMap::new();
        for (shard, iterator) in &state.current {
            let mut iterator = iterator.clone();
            for _ in 0..PAGES_PER_READ {
                let Some(at) = iterator.clone() else { break };
                let got = self.call("GetRecords", json!({"ShardIterator": at, "Limit": 1000})).await?;
                let records = got["Records"].as_array().cloned().unwrap_or_default();
                let ours = records.iter().filter_map(dispatch::lambda::inserted_item);
                items.extend(ours.filter(|i| i.get(ENTITY).and_then(Value::as_str) == Some(STREAMED_ENTITY)));
                iterator = got["NextShardIterator"].as_str().map(str::to_owned);
                if records.len() < 1000 || items.len() >= max {
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
