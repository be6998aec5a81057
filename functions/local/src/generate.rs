//! A large workspace, generated (`workapi seed generate`; docs/seed.md#a-large-workspace): the
//! scale at which every list must still page (docs/conventions.md#paging). By default 10,000
//! task tags, 2,000 projects, 500 catalog products at the largest size an item holds, and
//! 50,000 notifications of one user; each record is built by the function that owns it (the
//! tag with its name guard, the product from a create body through the create's own parser),
//! so the items are exactly what the API writes. Written in transactions of 100 operations.

use account::notifications::{self, Notification, NotificationRecord};
use serde_json::{Value, json};
use uuid::Uuid;
use workapi_domain::catalog::{CatalogCategory, ProductRecord};
use workapi_domain::project::{Project, ProjectRecord};
use workapi_domain::tag::TagType;
use workapi_kit::ApiResult;
use workapi_kit::entity;
use workapi_store::keys::WsKeys;
use workapi_store::limits::{self, MAX_ITEM_BYTES, MAX_TX_BYTES, MAX_TX_OPS};
use workapi_store::{Condition, Store, TxOp};

/// How much to generate.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    pub tags: usize,
    pub projects: usize,
    pub products: usize,
    pub notifications: usize,
}

impl Sizes {
    /// The large workspace of issue 33 (`workapi seed generate`, the `large_lists` benchmark).
    pub const LARGE: Sizes = Sizes { tags: 10_000, projects: 2_000, products: 500, notifications: 50_000 };
    /// What the black-box test pages through on both backends: the large workspace with 50 of
    /// its 500 largest products (a debug build renders one in about 130 ms, so 500 would take
    /// minutes per walk; 50 still make 17 pages bounded by their bytes, not their count).
    pub const TEST: Sizes = Sizes { products: 50, ..Sizes::LARGE };
}

/// The tags' type: the generated tags are all of one, so one list holds them all.
pub const TAG_TYPE: TagType = TagType::Task;

/// Words the names start with: capitals, accents, one name a prefix of another (the orders
/// the lists must keep, case-insensitively).
const WORDS: [&str; 8] = ["Urgent", "urgent review", "Ärger", "zebra", "Host", "Host plus", "élan", "Backlog"];

/// A generated name: distinct for each `i`, so no two fold to one.
fn name(i: usize) -> String {
    format!("{} {i:05}", WORDS[i % WORDS.len()])
}

/// Generates the records into `workspace` for `user` (the projects' member, the notifications'
/// owner and the tags' creator).
pub async fn generate(store: &dyn Store, workspace: Uuid, user: Uuid, sizes: Sizes) -> ApiResult<()> {
    let keys = WsKeys::new(workspace);
    let mut ops = Vec::new();
    for i in 0..sizes.tags {
        ops.extend(tags::store::new_tag((keys, TAG_TYPE), &name(i), user)?.1);
    }
    for i in 0..sizes.projects {
        let project = Project {
            id: Uuid::new_v4(),
            name: name(i),
            customer_organization_id: None,
            express_quotations_enabled: i % 2 == 0,
            hour_rate: rust_decimal::Decimal::new(9500, 2),
            currency: "EUR".into(),
            tax_rate: rust_decimal::Decimal::new(19, 0),
        };
        let record = ProjectRecord { project, member_ids: vec![user] };
        ops.push(TxOp::Put { item: entity::to_item(&record, keys)?, cond: Condition::NotExists });
    }
    if sizes.products > 0 {
        let category = CatalogCategory { id: Uuid::new_v4(), name: "Generated".into() };
        ops.push(TxOp::Put { item: entity::to_item(&category, keys)?, cond: Condition::NotExists });
        let largest = largest_product()?;
        for i in 0..sizes.products {
            let mut record = ProductRecord { id: Uuid::new_v4(), ..largest.clone() };
            record.definition.category_id = category.id;
            record.definition.name = name(i);
            ops.push(TxOp::Put { item: entity::to_item(&record, keys)?, cond: Condition::NotExists });
        }
    }
    for i in 0..sizes.notifications {
        // One a minute, back from 2026-11-01; every hundredth unread (each page of the list
        // counts the unread: docs/performance.md, "Lists at scale").
        let at = time::macros::datetime!(2026-11-01 00:00 UTC) - time::Duration::minutes(i as i64);
        let created_at = workapi_store::clock::rfc3339(at);
        let is_read = i % 100 != 0;
        let notification = Notification {
            id: Uuid::new_v4(),
            title: format!("Generated notification {i}"),
            body: "A notification of the generated large workspace.".into(),
            read_at: is_read.then(|| created_at.clone()),
            created_at,
            is_read,
        };
        let record = NotificationRecord { notification, user_id: user, version: 1 };
        ops.extend(notifications::puts((keys, user), record, Condition::None)?);
    }
    write_all(store, ops).await
}

/// Writes `ops` in transactions of up to 100 operations and 1 MB (DynamoDB takes 4 MB, but
/// DynamoDB Local needs more than the API's 5 s to write that much), 2 at a time. One
/// creation's items (a tag and its guard) may land in two transactions: a generator's run is
/// not an API request.
async fn write_all(store: &dyn Store, ops: Vec<TxOp>) -> ApiResult<()> {
    const BATCH_BYTES: usize = MAX_TX_BYTES / 4;
    let mut batches: Vec<Vec<TxOp>> = vec![Vec::new()];
    let mut bytes = 0;
    for op in ops {
        let size = match &op {
            TxOp::Put { item, .. } => limits::item_size(item),
            _ => 0,
        };
        let batch = batches.last_mut().expect("never empty");
        if batch.len() == MAX_TX_OPS || (!batch.is_empty() && bytes + size > BATCH_BYTES) {
            batches.push(Vec::new());
            bytes = 0;
        }
        batches.last_mut().expect("never empty").push(op);
        bytes += size;
    }
    // A few at once: more make DynamoDB Local queue them past the store's 5 s timeout.
    use futures_util::{StreamExt, TryStreamExt, stream};
    let writes = stream::iter(batches.into_iter().filter(|b| !b.is_empty())).map(|batch| store.transact(batch));
    writes.buffer_unordered(2).try_collect::<Vec<()>>().await?;
    Ok(())
}

/// The largest product the API stores: a create body whose description, variants and options
/// carry rich text, grown until its item is within 8 KB of DynamoDB's 400 KB (the largest
/// accepted size: docs/data-model.md#limits), parsed by the create's own parser.
fn largest_product() -> ApiResult<ProductRecord> {
    // Found once per process: parsing 400 KB of rich text a dozen times takes a while.
    static LARGEST: std::sync::OnceLock<ProductRecord> = std::sync::OnceLock::new();
    if let Some(largest) = LARGEST.get() {
        return Ok(largest.clone());
    }
    let item_size = |paragraphs: usize| -> ApiResult<(usize, ProductRecord)> {
        let record = administration::catalog::products::new_record(administration::catalog::products::parse_draft(
            &product_body(paragraphs),
        )?);
        Ok((limits::item_size(&entity::to_item(&record, WsKeys::new(Uuid::nil()))?), record))
    };
    // Item size grows with the paragraphs: find the most that fit.
    let (mut fits, mut too_many) = (1, 2);
    while item_size(too_many)?.0 <= MAX_ITEM_BYTES {
        (fits, too_many) = (too_many, too_many * 2);
    }
    while too_many - fits > 1 {
        let middle = (fits + too_many) / 2;
        if item_size(middle)?.0 <= MAX_ITEM_BYTES { fits = middle } else { too_many = middle }
    }
    Ok(LARGEST.get_or_init(|| item_size(fits).expect("it was built before").1).clone())
}

/// A create body with `paragraphs` paragraphs of Markdown spread over the description and 20
/// variants (the rich text), with 10 options of 5 values.
fn product_body(paragraphs: usize) -> Value {
    const PARTS: usize = 21;
    let text = |part: usize| -> String {
        let n = paragraphs / PARTS + usize::from(part < paragraphs % PARTS);
        (0..n)
            .map(|i| format!("Paragraph {i} with **bold**, _emphasis_, `code` & a [link](https://example.com/{i})."))
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    let variants: Vec<Value> = (1..PARTS)
        .map(|i| json!({"name": format!("Variant {i}"), "description": text(i), "priceFixed": 10 + i}))
        .collect();
    let options: Vec<Value> = (0..10)
        .map(|i| {
            let values: Vec<Value> =
                (0..5).map(|v| json!({"name": format!("Value {v}"), "extraPriceFixed": v})).collect();
            json!({"name": format!("Option {i}"), "isMultiple": i % 2 == 0, "isRequired": false, "values": values})
        })
        .collect();
    json!({"categoryId": Uuid::nil(), "name": "Generated product", "description": text(0),
        "priceFixed": 99.5, "variants": variants, "options": options})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_product_is_within_8_kb_of_the_item_limit() {
        let record = largest_product().unwrap();
        let size = limits::item_size(&entity::to_item(&record, WsKeys::new(Uuid::nil())).unwrap());
        assert!(size <= MAX_ITEM_BYTES && size > MAX_ITEM_BYTES - 8 * 1024, "{size}");
    }

    #[test]
    fn names_are_distinct_once_folded() {
        let folded: std::collections::HashSet<String> = (0..5000).map(|i| tags::domain::fold_name(&name(i))).collect();
        assert_eq!(folded.len(), 5000);
    }
}
