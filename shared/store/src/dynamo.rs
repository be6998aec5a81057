//! DynamoDB backend (aws-sdk-dynamodb). The endpoint, region and credentials follow the SDK's
//! own settings, so `AWS_ENDPOINT_URL=http://127.0.0.1:8000` points it at DynamoDB Local.
//!
//! Each [`Condition`] becomes a condition expression that means exactly what
//! `condition_holds` means for the embedded backend, including "an expired item is absent".

use super::*;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, ConditionCheck, CreateGlobalSecondaryIndexAction, Delete,
    GlobalSecondaryIndex, GlobalSecondaryIndexUpdate, KeySchemaElement, KeyType, Projection, ProjectionType, Put,
    ReturnValue, ScalarAttributeType, StreamSpecification, StreamViewType, TableStatus, TimeToLiveSpecification,
    TransactWriteItem, Update as DynamoUpdate,
};
use std::collections::HashMap;

#[derive(Clone)]
pub struct DynamoStore {
    client: Client,
    table: String,
}

type AttrMap = HashMap<String, AttributeValue>;

impl DynamoStore {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoStore { client, table: table.into() }
    }

    /// Builds a client from the SDK's standard configuration (env, profile, container role)
    /// with the API's retry and timeout settings ([`crate::aws`]).
    pub async fn from_env(table: impl Into<String>) -> Self {
        DynamoStore::new(Client::new(crate::aws::sdk_config().await), table)
    }

    pub fn table(&self) -> &str {
        &self.table
    }

    /// The ARN of the table's stream (`LatestStreamArn`), None when it has none.
    pub async fn stream_arn(&self) -> StoreResult<Option<String>> {
        let described = self.client.describe_table().table_name(&self.table).send().await.map_err(sdk)?;
        Ok(described.table().and_then(|t| t.latest_stream_arn()).map(str::to_owned))
    }

    /// Creates the table with the schema `template.yaml` declares (for DynamoDB Local and the
    /// operator CLI). An existing table is left as it is.
    pub async fn create_table(&self) -> StoreResult<()> {
        let attr = |name: &str| {
            AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(ScalarAttributeType::S)
                .build()
                .expect("name and type are set")
        };
        let key = |name: &str, kind: KeyType| {
            KeySchemaElement::builder().attribute_name(name).key_type(kind).build().expect("name and type are set")
        };
        // Every secondary index projects the whole item: a listing answers from the index alone.
        let indexes = Index::SECONDARY.map(|index| {
            let (pk, sk) = index.key_attrs();
            GlobalSecondaryIndex::builder()
                .index_name(index.name().expect("a secondary index has a name"))
                .key_schema(key(pk, KeyType::Hash))
                .key_schema(key(sk, KeyType::Range))
                .projection(Projection::builder().projection_type(ProjectionType::All).build())
                .build()
                .expect("index fields are set")
        });
        let key_attrs = || {
            [Index::Table].into_iter().chain(Index::SECONDARY).flat_map(|index| <[&str; 2]>::from(index.key_attrs()))
        };
        let created = self
            .client
            .create_table()
            .table_name(&self.table)
            .billing_mode(BillingMode::PayPerRequest)
            .set_attribute_definitions(Some(key_attrs().map(attr).collect()))
            .key_schema(key(PK, KeyType::Hash))
            .key_schema(key(SK, KeyType::Range))
            .set_global_secondary_indexes(Some(indexes.to_vec()))
            // The outbox's reader (docs/events.md#delivery), as template.yaml declares it.
            .stream_specification(new_image_stream())
            .send()
            .await;
        match created {
            Ok(_) => {}
            Err(e) if e.as_service_error().is_some_and(|s| s.is_resource_in_use_exception()) => {
                return self.add_missing_indexes(&indexes, key_attrs().map(attr).collect()).await;
            }
            Err(e) => return Err(sdk(e)),
        }
        self.client
            .update_time_to_live()
            .table_name(&self.table)
            .time_to_live_specification(
                TimeToLiveSpecification::builder().enabled(true).attribute_name(TTL).build().expect("fields are set"),
            )
            .send()
            .await
            .map_err(sdk)?;
        Ok(())
    }

    /// Adds the secondary indexes an existing table lacks (a table created before the list
    /// index, GSI2): DynamoDB builds one index per update and backfills it from the items.
    async fn add_missing_indexes(
        &self,
        indexes: &[GlobalSecondaryIndex],
        definitions: Vec<AttributeDefinition>,
    ) -> StoreResult<()> {
        let described = self.client.describe_table().table_name(&self.table).send().await.map_err(sdk)?;
        let Some(table) = described.table().filter(|t| t.table_status() == Some(&TableStatus::Active)) else {
            // Being created (by a concurrent call, with every index) or already being updated.
            return Ok(());
        };
        let existing: Vec<&str> = table.global_secondary_indexes().iter().filter_map(|i| i.index_name()).collect();
        let streaming = table.stream_specification().is_some_and(|s| s.stream_enabled());
        let missing: Vec<&GlobalSecondaryIndex> =
            indexes.iter().filter(|i| !existing.contains(&i.index_name())).collect();
        if missing.is_empty() && !streaming {
            // A table made before events were dispatched: its stream (one update at a time, so
            // only once no index is being added; run `workapi table create` again after one).
            let enabled = self
                .client
                .update_table()
                .table_name(&self.table)
                .stream_specification(new_image_stream())
                .send()
                .await;
            match enabled {
                Ok(_) => {}
                Err(e) if e.as_service_error().is_some_and(|s| s.is_resource_in_use_exception()) => {}
                Err(e) => return Err(sdk(e)),
            }
        }
        for index in missing {
            let create = CreateGlobalSecondaryIndexAction::builder()
                .index_name(index.index_name())
                .set_key_schema(Some(index.key_schema().to_vec()))
                .set_projection(index.projection().cloned())
                .build()
                .map_err(|e| StoreError::Invalid(e.to_string()))?;
            let added = self
                .client
                .update_table()
                .table_name(&self.table)
                .set_attribute_definitions(Some(definitions.clone()))
                .global_secondary_index_updates(GlobalSecondaryIndexUpdate::builder().create(create).build())
                .send()
                .await;
            match added {
                Ok(_) => {}
                // Another call is adding it right now.
                Err(e) if e.as_service_error().is_some_and(|s| s.is_resource_in_use_exception()) => {}
                Err(e) => return Err(sdk(e)),
            }
        }
        Ok(())
    }

    fn key_map(key: &Key) -> AttrMap {
        HashMap::from([
            (PK.to_owned(), AttributeValue::S(key.pk.clone())),
            (SK.to_owned(), AttributeValue::S(key.sk.clone())),
        ])
    }
}

/// A failed call: [`StoreError::Unavailable`] when DynamoDB could not answer (throttled, timed
/// out, reset, 5xx: [`crate::aws::is_transient`]), [`StoreError::TooLarge`] when it refused an
/// item's size, else [`StoreError::Backend`].
fn sdk<E: ProvideErrorMetadata + std::error::Error + 'static>(e: SdkError<E, HttpResponse>) -> StoreError {
    if let Some(service) = e.as_service_error()
        && let Some(too_large) = too_large(service.code(), service.message())
    {
        return too_large;
    }
    let message = DisplayErrorContext(&e).to_string();
    if crate::aws::is_transient(&e) { StoreError::Unavailable(message) } else { StoreError::Backend(message) }
}

/// DynamoDB's refusal of an item's size ("Item size has exceeded the maximum allowed size",
/// "Item size to update has exceeded…"), as a ValidationException or a transaction's
/// cancellation reason.
fn too_large(code: Option<&str>, message: Option<&str>) -> Option<StoreError> {
    let refused = matches!(code, Some("ValidationException" | "ValidationError"))
        && message.is_some_and(|m| m.contains("Item size"));
    refused.then(|| StoreError::TooLarge {
        message: format!("an item over the {} KB DynamoDB stores", limits::MAX_ITEM_BYTES / 1024),
        part: None,
    })
}

/// A failed condition of a single-item write is `ConditionFailed`; anything else is a backend error.
fn write_error<E: ProvideErrorMetadata + std::error::Error + 'static>(e: SdkError<E, HttpResponse>) -> StoreError {
    if e.as_service_error().and_then(|s| s.code()) == Some("ConditionalCheckFailedException") {
        StoreError::ConditionFailed
    } else {
        sdk(e)
    }
}

/// Collects placeholder names and values so an expression never carries unused ones
/// (DynamoDB rejects those).
#[derive(Default)]
struct Expr {
    names: HashMap<String, String>,
    values: AttrMap,
}

impl Expr {
    fn name(&mut self, attr: &str) -> String {
        if let Some((placeholder, _)) = self.names.iter().find(|(_, a)| a.as_str() == attr) {
            return placeholder.clone();
        }
        let placeholder = format!("#n{}", self.names.len());
        self.names.insert(placeholder.clone(), attr.to_owned());
        placeholder
    }

    fn value(&mut self, value: AttributeValue) -> String {
        let placeholder = format!(":v{}", self.values.len());
        self.values.insert(placeholder.clone(), value);
        placeholder
    }

    fn now(&mut self) -> String {
        self.value(AttributeValue::N(now_epoch().to_string()))
    }

    fn condition(&mut self, cond: &Condition) -> Option<String> {
        let live = |e: &mut Expr| {
            let (ttl, now) = (e.name(TTL), e.now());
            format!("(attribute_not_exists({ttl}) OR {ttl} > {now})")
        };
        Some(match cond {
            Condition::None => return None,
            Condition::NotExists => {
                let (pk, ttl, now) = (self.name(PK), self.name(TTL), self.now());
                format!("attribute_not_exists({pk}) OR {ttl} <= {now}")
            }
            Condition::Exists => {
                let pk = self.name(PK);
                format!("attribute_exists({pk}) AND {}", live(self))
            }
            Condition::VersionEquals(v) => {
                let (attr, v) = (self.name(VERSION), self.value(AttributeValue::N(v.to_string())));
                format!("{attr} = {v} AND {}", live(self))
            }
            Condition::CounterBelow { attr, limit } => {
                let (a, l) = (self.name(attr), self.value(AttributeValue::N(limit.to_string())));
                let (ttl, now) = (self.name(TTL), self.now());
                format!("attribute_not_exists({a}) OR {a} < {l} OR {ttl} <= {now}")
            }
            Condition::Equals { attr, value } => {
                let (a, v) = (self.name(attr), self.value(AttributeValue::S(value.clone())));
                format!("{a} = {v} AND {}", live(self))
            }
            Condition::Lacks(attr) => {
                let (a, ttl, now) = (self.name(attr), self.name(TTL), self.now());
                format!("attribute_not_exists({a}) OR {ttl} <= {now}")
            }
            Condition::All(all) => {
                let parts: Vec<String> =
                    all.iter().filter_map(|c| self.condition(c)).map(|c| format!("({c})")).collect();
                if parts.is_empty() {
                    return None;
                }
                parts.join(" AND ")
            }
        })
    }

    fn update(&mut self, update: &Update) -> String {
        let mut expr = String::new();
        let sets: Vec<String> = update
            .set
            .iter()
            .map(|(attr, value)| format!("{} = {}", self.name(attr), self.value(to_attr(value))))
            .collect();
        if !sets.is_empty() {
            expr = format!("SET {}", sets.join(", "));
        }
        let removes: Vec<String> = update.remove.iter().map(|attr| self.name(attr)).collect();
        if !removes.is_empty() {
            expr = format!("{expr} REMOVE {}", removes.join(", "));
        }
        let adds: Vec<String> = update
            .add
            .iter()
            .map(|(attr, by)| format!("{} {}", self.name(attr), self.value(AttributeValue::N(by.to_string()))))
            .collect();
        if !adds.is_empty() {
            expr = format!("{expr} ADD {}", adds.join(", "));
        }
        expr.trim().to_owned()
    }

    fn names(&self) -> Option<HashMap<String, String>> {
        (!self.names.is_empty()).then(|| self.names.clone())
    }

    fn values(&self) -> Option<AttrMap> {
        (!self.values.is_empty()).then(|| self.values.clone())
    }
}

/// The table's stream as template.yaml declares it: new images, read by the dispatcher
/// (docs/events.md#delivery).
fn new_image_stream() -> StreamSpecification {
    StreamSpecification::builder()
        .stream_enabled(true)
        .stream_view_type(StreamViewType::NewImage)
        .build()
        .expect("fields are set")
}

pub(crate) fn to_attr(value: &Value) -> AttributeValue {
    match value {
        Value::Null => AttributeValue::Null(true),
        Value::Bool(b) => AttributeValue::Bool(*b),
        Value::Number(n) => AttributeValue::N(n.to_string()),
        Value::String(s) => AttributeValue::S(s.clone()),
        Value::Array(items) => AttributeValue::L(items.iter().map(to_attr).collect()),
        Value::Object(map) => AttributeValue::M(map.iter().map(|(k, v)| (k.clone(), to_attr(v))).collect()),
    }
}

pub fn from_attr(attr: &AttributeValue) -> Value {
    match attr {
        AttributeValue::S(s) => Value::String(s.clone()),
        AttributeValue::N(n) => parse_number(n),
        AttributeValue::Bool(b) => Value::Bool(*b),
        AttributeValue::L(items) => Value::Array(items.iter().map(from_attr).collect()),
        AttributeValue::M(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), from_attr(v))).collect()),
        AttributeValue::Ss(items) => Value::Array(items.iter().cloned().map(Value::String).collect()),
        AttributeValue::Ns(items) => Value::Array(items.iter().map(|n| parse_number(n)).collect()),
        _ => Value::Null, // NULL, and binary types we never write
    }
}

/// An item from DynamoDB's JSON form (`{"S": "…"}`, `{"N": "1"}`, …), as DynamoDB Streams
/// records carry an image (`dynamodb.NewImage`) in a Lambda event and in `GetRecords`: the
/// same values [`from_attr`] reads from the SDK's types. None for what is not that form.
pub fn item_from_json(image: &Value) -> Option<Item> {
    image.as_object()?.iter().map(|(name, value)| Some((name.clone(), value_from_json(value)?))).collect()
}

fn value_from_json(value: &Value) -> Option<Value> {
    let (kind, inner) = value.as_object().filter(|typed| typed.len() == 1)?.iter().next()?;
    Some(match (kind.as_str(), inner) {
        ("S", Value::String(s)) => Value::String(s.clone()),
        ("N", Value::String(n)) => parse_number(n),
        ("BOOL", Value::Bool(b)) => Value::Bool(*b),
        ("NULL", _) => Value::Null,
        ("L", Value::Array(items)) => Value::Array(items.iter().map(value_from_json).collect::<Option<_>>()?),
        ("M", map @ Value::Object(_)) => Value::Object(item_from_json(map)?),
        ("SS", Value::Array(items)) => Value::Array(items.clone()),
        ("NS", Value::Array(items)) => {
            Value::Array(items.iter().map(|n| n.as_str().map(parse_number)).collect::<Option<_>>()?)
        }
        _ => return None,
    })
}

pub(crate) fn parse_number(n: &str) -> Value {
    n.parse::<i64>()
        .map(Value::from)
        .or_else(|_| n.parse::<u64>().map(Value::from))
        .or_else(|_| serde_json::from_str::<serde_json::Number>(n).map(Value::Number))
        .unwrap_or(Value::Null)
}

fn to_map(item: &Item) -> AttrMap {
    item.iter().map(|(k, v)| (k.clone(), to_attr(v))).collect()
}

fn from_map(map: &AttrMap) -> Item {
    map.iter().map(|(k, v)| (k.clone(), from_attr(v))).collect()
}

impl DynamoStore {
    async fn get_item(&self, key: &Key, consistent: bool) -> StoreResult<Option<Item>> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(Self::key_map(key)))
            .consistent_read(consistent)
            .send()
            .await
            .map_err(sdk)?;
        Ok(out.item.as_ref().map(from_map).filter(|item| !is_expired(item, now_epoch())))
    }
}

#[async_trait]
impl Store for DynamoStore {
    async fn get(&self, key: &Key) -> StoreResult<Option<Item>> {
        self.get_item(key, true).await
    }

    async fn get_eventually(&self, key: &Key) -> StoreResult<Option<Item>> {
        self.get_item(key, false).await
    }

    async fn put(&self, item: Item, cond: Condition) -> StoreResult<()> {
        check_item_keys(&item)?;
        // Refused here as the embedded store refuses it, without a round trip.
        limits::check_item(&item)?;
        let mut expr = Expr::default();
        let condition = expr.condition(&cond);
        let result = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(to_map(&item)))
            .set_condition_expression(condition)
            .set_expression_attribute_names(expr.names())
            .set_expression_attribute_values(expr.values())
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => Err(write_error(e)),
        }
    }

    async fn update(&self, key: &Key, update: Update, cond: Condition) -> StoreResult<Item> {
        check_update(&update)?;
        if update.set.is_empty() && update.remove.is_empty() && update.add.is_empty() {
            return Err(StoreError::Invalid("an update must change something".into()));
        }
        let mut expr = Expr::default();
        let update_expression = expr.update(&update);
        let condition = expr.condition(&cond);
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(Self::key_map(key)))
            .update_expression(update_expression)
            .set_condition_expression(condition)
            .set_expression_attribute_names(expr.names())
            .set_expression_attribute_values(expr.values())
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        match result {
            Ok(out) => Ok(out.attributes.as_ref().map(from_map).unwrap_or_default()),
            Err(e) => Err(write_error(e)),
        }
    }

    async fn delete(&self, key: &Key, cond: Condition) -> StoreResult<Option<Item>> {
        let mut expr = Expr::default();
        let condition = expr.condition(&cond);
        let result = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(Self::key_map(key)))
            .set_condition_expression(condition)
            .set_expression_attribute_names(expr.names())
            .set_expression_attribute_values(expr.values())
            .return_values(ReturnValue::AllOld)
            .send()
            .await;
        match result {
            Ok(out) => Ok(out.attributes.as_ref().map(from_map).filter(|item| !is_expired(item, now_epoch()))),
            Err(e) => Err(write_error(e)),
        }
    }

    async fn query(&self, query: Query) -> StoreResult<Page> {
        let mut expr = Expr::default();
        let (pk_attr, sk_attr) = query.index.key_attrs();
        let pk = format!("{} = {}", expr.name(pk_attr), expr.value(AttributeValue::S(query.pk.clone())));
        let key_condition = match &query.sk {
            SortKey::Any => pk,
            SortKey::Equals(v) => {
                format!("{pk} AND {} = {}", expr.name(sk_attr), expr.value(AttributeValue::S(v.clone())))
            }
            SortKey::BeginsWith(p) => {
                format!("{pk} AND begins_with({}, {})", expr.name(sk_attr), expr.value(AttributeValue::S(p.clone())))
            }
            SortKey::Between(lo, hi) => format!(
                "{pk} AND {} BETWEEN {} AND {}",
                expr.name(sk_attr),
                expr.value(AttributeValue::S(lo.clone())),
                expr.value(AttributeValue::S(hi.clone()))
            ),
        };
        let (ttl, now) = (expr.name(TTL), expr.now());
        let filter = format!("attribute_not_exists({ttl}) OR {ttl} > {now}");
        let out = self
            .client
            .query()
            .table_name(&self.table)
            .set_index_name(query.index.name().map(str::to_owned))
            // Index reads cannot be strongly consistent; table reads are.
            .consistent_read(query.index == Index::Table && !query.eventual)
            .key_condition_expression(key_condition)
            .filter_expression(filter)
            .set_expression_attribute_names(expr.names())
            .set_expression_attribute_values(expr.values())
            .scan_index_forward(query.forward)
            .set_limit(query.limit.map(|l| l.min(i32::MAX as u32) as i32))
            .set_exclusive_start_key(query.after.as_ref().map(|Cursor(c)| to_map(c)))
            .send()
            .await
            .map_err(sdk)?;
        Ok(Page {
            items: out.items().iter().map(from_map).collect(),
            next: out.last_evaluated_key.as_ref().map(|k| Cursor(from_map(k))),
        })
    }

    async fn transact(&self, ops: Vec<TxOp>) -> StoreResult<()> {
        if ops.is_empty() || ops.len() > MAX_TX_OPS {
            return Err(StoreError::Invalid(format!("a transaction takes 1 to {MAX_TX_OPS} operations")));
        }
        // The puts are known whole: refused before the call. An update that grows an item past
        // the limit is DynamoDB's to refuse (`too_large`).
        limits::check_transaction(ops.iter().filter_map(|op| match op {
            TxOp::Put { item, .. } => Some(item),
            _ => None,
        }))?;
        let mut items = Vec::with_capacity(ops.len());
        for op in &ops {
            let mut expr = Expr::default();
            let invalid = |e: aws_sdk_dynamodb::error::BuildError| StoreError::Invalid(e.to_string());
            let item = match op {
                TxOp::Put { item, cond } => {
                    check_item_keys(item)?;
                    let condition = expr.condition(cond);
                    TransactWriteItem::builder().put(
                        Put::builder()
                            .table_name(&self.table)
                            .set_item(Some(to_map(item)))
                            .set_condition_expression(condition)
                            .set_expression_attribute_names(expr.names())
                            .set_expression_attribute_values(expr.values())
                            .build()
                            .map_err(invalid)?,
                    )
                }
                TxOp::Update { key, update, cond } => {
                    check_update(update)?;
                    let update_expression = expr.update(update);
                    let condition = expr.condition(cond);
                    TransactWriteItem::builder().update(
                        DynamoUpdate::builder()
                            .table_name(&self.table)
                            .set_key(Some(Self::key_map(key)))
                            .update_expression(update_expression)
                            .set_condition_expression(condition)
                            .set_expression_attribute_names(expr.names())
                            .set_expression_attribute_values(expr.values())
                            .build()
                            .map_err(invalid)?,
                    )
                }
                TxOp::Delete { key, cond } => {
                    let condition = expr.condition(cond);
                    TransactWriteItem::builder().delete(
                        Delete::builder()
                            .table_name(&self.table)
                            .set_key(Some(Self::key_map(key)))
                            .set_condition_expression(condition)
                            .set_expression_attribute_names(expr.names())
                            .set_expression_attribute_values(expr.values())
                            .build()
                            .map_err(invalid)?,
                    )
                }
                TxOp::Check { key, cond } => {
                    let condition =
                        expr.condition(cond).ok_or_else(|| StoreError::Invalid("a check needs a condition".into()))?;
                    TransactWriteItem::builder().condition_check(
                        ConditionCheck::builder()
                            .table_name(&self.table)
                            .set_key(Some(Self::key_map(key)))
                            .condition_expression(condition)
                            .set_expression_attribute_names(expr.names())
                            .set_expression_attribute_values(expr.values())
                            .build()
                            .map_err(invalid)?,
                    )
                }
            };
            items.push(item.build());
        }
        let result = self.client.transact_write_items().set_transact_items(Some(items)).send().await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match e.as_service_error() {
                Some(aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError::TransactionCanceledException(
                    cancelled,
                )) if let Some(too_large) =
                    cancelled.cancellation_reasons().iter().find_map(|r| too_large(r.code(), r.message())) =>
                {
                    Err(too_large)
                }
                Some(aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError::TransactionCanceledException(
                    cancelled,
                )) => Err(StoreError::TransactionCancelled {
                    failed: cancelled
                        .cancellation_reasons()
                        .iter()
                        .enumerate()
                        .filter(|(_, r)| r.code() == Some("ConditionalCheckFailed"))
                        .map(|(i, _)| i)
                        .collect(),
                }),
                Some(s) if s.meta().code() == Some("TransactionConflictException") => {
                    Err(StoreError::TransactionCancelled { failed: vec![] })
                }
                _ => Err(sdk(e)),
            },
        }
    }

    async fn increment(&self, key: &Key, attr: &str, by: i64, init: Item, cond: Condition) -> StoreResult<i64> {
        let mut expr = Expr::default();
        let (a, zero, step) =
            (expr.name(attr), expr.value(AttributeValue::N("0".into())), expr.value(AttributeValue::N(by.to_string())));
        let mut sets = vec![format!("{a} = if_not_exists({a}, {zero}) + {step}")];
        for (name, value) in init.iter().filter(|(n, _)| n.as_str() != attr && n.as_str() != PK && n.as_str() != SK) {
            let (n, v) = (expr.name(name), expr.value(to_attr(value)));
            sets.push(format!("{n} = if_not_exists({n}, {v})"));
        }
        let condition = expr.condition(&cond);
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(Self::key_map(key)))
            .update_expression(format!("SET {}", sets.join(", ")))
            .set_condition_expression(condition)
            .set_expression_attribute_names(expr.names())
            .set_expression_attribute_values(expr.values())
            .return_values(ReturnValue::UpdatedNew)
            .send()
            .await;
        match result {
            Ok(out) => out
                .attributes
                .as_ref()
                .and_then(|m| m.get(attr))
                .and_then(|v| from_attr(v).as_i64())
                .ok_or_else(|| StoreError::Backend("counter missing from the update result".into())),
            Err(e) => Err(write_error(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expression with its placeholders replaced, so the test reads what DynamoDB evaluates.
    fn expression(cond: &Condition) -> Option<String> {
        let mut expr = Expr::default();
        let mut text = expr.condition(cond)?;
        let mut names: Vec<_> = expr.names.iter().collect();
        names.sort_by_key(|(placeholder, _)| std::cmp::Reverse(placeholder.len()));
        for (placeholder, name) in names {
            text = text.replace(placeholder.as_str(), name);
        }
        let mut values: Vec<_> = expr.values.iter().collect();
        values.sort_by_key(|(placeholder, _)| std::cmp::Reverse(placeholder.len()));
        for (placeholder, value) in values {
            let shown = match value {
                AttributeValue::S(s) => format!("'{s}'"),
                AttributeValue::N(_) => "NOW".to_owned(),
                other => format!("{other:?}"),
            };
            text = text.replace(placeholder.as_str(), &shown);
        }
        Some(text)
    }

    #[test]
    fn stream_images_read_as_the_sdk_s_items() {
        let item: Item = serde_json::from_value(serde_json::json!({
            "PK": "WS#w#EVENTS", "n": 42, "f": 1.5, "b": true, "z": null,
            "l": ["a", 1], "m": {"x": {"y": "z"}}
        }))
        .unwrap();
        let json = serde_json::to_value(
            to_map(&item).iter().map(|(k, v)| (k.clone(), sdk_json(v))).collect::<serde_json::Map<_, _>>(),
        )
        .unwrap();
        assert_eq!(item_from_json(&json), Some(item));
        assert_eq!(item_from_json(&serde_json::json!({"a": {"S": 1}})), None);
    }

    /// The SDK's value as DynamoDB's JSON writes it.
    fn sdk_json(attr: &AttributeValue) -> Value {
        match attr {
            AttributeValue::S(s) => serde_json::json!({"S": s}),
            AttributeValue::N(n) => serde_json::json!({"N": n}),
            AttributeValue::Bool(b) => serde_json::json!({"BOOL": b}),
            AttributeValue::Null(_) => serde_json::json!({"NULL": true}),
            AttributeValue::L(items) => serde_json::json!({"L": items.iter().map(sdk_json).collect::<Vec<_>>()}),
            AttributeValue::M(map) => {
                serde_json::json!({"M": map.iter().map(|(k, v)| (k.clone(), sdk_json(v))).collect::<serde_json::Map<_, _>>()})
            }
            _ => unreachable!(),
        }
    }

    #[test]
    fn attribute_conditions_translate_with_the_embedded_meaning() {
        let equals = Condition::Equals { attr: "claim".into(), value: "n1".into() };
        // Exists and not expired, holding exactly the string (`=` on an S compares strings only).
        assert_eq!(expression(&equals).unwrap(), "claim = 'n1' AND (attribute_not_exists(ttl) OR ttl > NOW)");
        // Absent, expired, or without the attribute (absent items hold for attribute_not_exists).
        let lacks = Condition::Lacks("response".into());
        assert_eq!(expression(&lacks).unwrap(), "attribute_not_exists(response) OR ttl <= NOW");
        // Each part parenthesised, so an OR inside one never leaks into the conjunction.
        let all = Condition::All(vec![equals, Condition::None, lacks]);
        assert_eq!(
            expression(&all).unwrap(),
            "(claim = 'n1' AND (attribute_not_exists(ttl) OR ttl > NOW)) AND (attribute_not_exists(response) OR ttl <= NOW)"
        );
        assert_eq!(expression(&Condition::All(vec![])), None);
        assert_eq!(expression(&Condition::All(vec![Condition::None])), None);
    }
}
