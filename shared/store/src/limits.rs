//! DynamoDB's limits, which both backends enforce (docs/data-model.md, "Limits"): an item of at
//! most 400 KB, a transaction of at most 100 operations and 4 MB, a query page of at most 1 MB,
//! no empty key value in a query.
//! The embedded store refuses exactly where DynamoDB would, so that a local run or a test on the
//! embedded store cannot pass what production refuses.

use crate::{Item, Query, SortKey, StoreError, StoreResult};
use serde_json::Value;

/// The largest item DynamoDB stores, in its own accounting ([`item_size`]).
pub const MAX_ITEM_BYTES: usize = 400 * 1024;
/// The most operations one transaction takes.
pub const MAX_TX_OPS: usize = 100;
/// The largest total of the items one transaction writes.
pub const MAX_TX_BYTES: usize = 4 * 1024 * 1024;
/// A query reads at most this much before it answers a page (and a cursor for the rest).
pub const MAX_QUERY_PAGE_BYTES: usize = 1024 * 1024;

/// `item`'s size if DynamoDB would store it; else [`StoreError::TooLarge`] with its size and
/// its largest part ([`largest_part`]), which the API names as the field to shorten.
pub fn check_item(item: &Item) -> StoreResult<usize> {
    let size = item_size(item);
    if size > MAX_ITEM_BYTES {
        let (path, part_size) = largest_part(item);
        return Err(StoreError::TooLarge {
            message: format!(
                "an item of {} KB, over the {} KB DynamoDB stores; its largest part is {path} ({} KB)",
                kb(size),
                MAX_ITEM_BYTES / 1024,
                kb(part_size)
            ),
            part: Some(path),
        });
    }
    Ok(size)
}

fn kb(bytes: usize) -> usize {
    bytes.div_ceil(1024)
}

/// The part of an oversized item to shorten, as a field path (`variants`, `variants[3].description`)
/// and its size. From the largest attribute, it descends into the largest element while that
/// element holds at least half of its parent, so that one huge text is named itself and fifty
/// medium ones are named by their list. It stops at a rich-text document (a map with a
/// list `content`): the field is the document, not a paragraph of it.
pub fn largest_part(item: &Item) -> (String, usize) {
    let Some((name, value)) = item.iter().max_by_key(|(name, value)| name.len() + value_size(value)) else {
        return (String::new(), 0);
    };
    let mut path = name.clone();
    let mut node = value;
    loop {
        let size = value_size(node);
        let largest = match node {
            Value::Object(map) if !map.get("content").is_some_and(Value::is_array) => {
                map.iter().map(|(k, v)| (format!(".{k}"), v)).max_by_key(|(_, v)| value_size(v))
            }
            Value::Array(items) => {
                items.iter().enumerate().map(|(i, v)| (format!("[{i}]"), v)).max_by_key(|(_, v)| value_size(v))
            }
            _ => None,
        };
        match largest {
            Some((step, child)) if 2 * value_size(child) >= size => {
                path.push_str(&step);
                node = child;
            }
            _ => return (path, size),
        }
    }
}

/// A transaction's items (each checked) if their total is within [`MAX_TX_BYTES`].
pub fn check_transaction<'a>(items: impl IntoIterator<Item = &'a Item>) -> StoreResult<()> {
    let mut total = 0;
    for item in items {
        total += check_item(item)?;
    }
    if total > MAX_TX_BYTES {
        return Err(StoreError::TooLarge {
            message: format!(
                "a transaction of {} KB, over the {} MB DynamoDB takes",
                kb(total),
                MAX_TX_BYTES / (1024 * 1024)
            ),
            part: None,
        });
    }
    Ok(())
}

/// A query DynamoDB would take: no key value is empty, and a range's low end is not above its
/// high end. DynamoDB refuses both (a `ValidationException`); the embedded store does too, so a
/// query built wrong fails in every test, not only on DynamoDB.
pub fn check_query(query: &Query) -> StoreResult<()> {
    let empty = match &query.sk {
        SortKey::Any => false,
        SortKey::Equals(v) | SortKey::BeginsWith(v) => v.is_empty(),
        SortKey::Between(low, high) => {
            if low > high {
                return Err(StoreError::Invalid("a key range whose low end is above its high end".into()));
            }
            low.is_empty() || high.is_empty()
        }
    };
    if empty || query.pk.is_empty() {
        return Err(StoreError::Invalid("an empty key value in a query".into()));
    }
    Ok(())
}

/// An item's size as DynamoDB counts it: each attribute's name (UTF-8 bytes) plus its value:
/// a string's UTF-8 bytes, a number's significant digits halved plus one, 1 byte for a boolean
/// or null, and for a list or map 3 bytes plus 1 per element plus the elements (a map's
/// elements with their names).
pub fn item_size(item: &Item) -> usize {
    item.iter().map(|(name, value)| name.len() + value_size(value)).sum()
}

fn value_size(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 1,
        Value::String(s) => s.len(),
        Value::Number(n) => number_size(&n.to_string()),
        Value::Array(items) => 3 + items.iter().map(|v| 1 + value_size(v)).sum::<usize>(),
        Value::Object(map) => 3 + map.iter().map(|(k, v)| 1 + k.len() + value_size(v)).sum::<usize>(),
    }
}

/// A number's size: its significant digits (no sign, point, exponent, leading or trailing
/// zeros), two to a byte, plus one.
fn number_size(text: &str) -> usize {
    let mantissa = text.split(['e', 'E']).next().unwrap_or_default();
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let significant = digits.trim_start_matches('0').trim_end_matches('0').len().max(1);
    significant.div_ceil(2) + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(value: Value) -> Item {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn queries_dynamodb_refuses_are_refused() {
        let refused = |query: Query| matches!(check_query(&query), Err(StoreError::Invalid(_)));
        let between = |low: &str, high: &str| Query::gsi2("P").sk(SortKey::Between(low.into(), high.into()));
        assert!(refused(between("", "b")));
        assert!(refused(between("b", "a")));
        assert!(refused(Query::table("P").begins_with("")));
        assert!(refused(Query::table("")));
        assert!(check_query(&between("a", "a")).is_ok());
        assert!(check_query(&Query::table("P")).is_ok());
    }

    #[test]
    fn sizes_follow_dynamodbs_accounting() {
        // name + value, table of cases.
        for (value, size) in [
            (json!({"a": "xyz"}), 1 + 3),
            (json!({"name": "é"}), 4 + 2),
            (json!({"n": 12345}), 1 + 4),
            (json!({"n": 100}), 1 + 2),
            (json!({"n": -0.5}), 1 + 2),
            (json!({"n": 0}), 1 + 2),
            (json!({"b": true, "z": null}), 2 + 2),
            (json!({"l": ["ab", 1]}), 1 + 3 + (1 + 2) + (1 + 2)),
            (json!({"m": {"k": "v"}}), 1 + 3 + 1 + 1 + 1),
        ] {
            assert_eq!(item_size(&item(value.clone())), size, "{value}");
        }
    }

    #[test]
    fn an_item_may_take_400_kib_and_a_transaction_4_mib() {
        let at = item(json!({"s": "x".repeat(MAX_ITEM_BYTES - 1)}));
        assert_eq!(check_item(&at).unwrap(), MAX_ITEM_BYTES);
        let over = item(json!({"s": "x".repeat(MAX_ITEM_BYTES)}));
        let error = check_item(&over).unwrap_err();
        assert!(
            matches!(&error, StoreError::TooLarge { message, part: Some(part) }
                if message == "an item of 401 KB, over the 400 KB DynamoDB stores; its largest part is s (400 KB)" && part == "s"),
            "{error}"
        );
        let ten = vec![at; 10];
        assert!(check_transaction(&ten).is_ok());
        let eleven = vec![ten[0].clone(); 11];
        assert!(
            matches!(check_transaction(&eleven), Err(StoreError::TooLarge { message, part: None }) if message.contains("4 MB"))
        );
    }

    #[test]
    fn the_largest_part_is_one_huge_text_itself_or_the_list_of_many() {
        let doc = |n: usize| json!({"content": [{"type": "paragraph", "content": [{"type": "text", "text": "x".repeat(n)}]}]});
        let one_huge = json!({"name": "P", "description": doc(10),
            "variants": [{"name": "a", "description": doc(100)}, {"name": "b", "description": doc(300_000)}]});
        assert_eq!(largest_part(&item(one_huge)).0, "variants[1].description");
        let many = json!({"name": "P", "description": doc(10),
            "variants": (0..50).map(|i| json!({"name": i, "description": doc(9_000)})).collect::<Vec<_>>()});
        assert_eq!(largest_part(&item(many)).0, "variants");
        let flat = json!({"a": "x".repeat(10), "b": "y".repeat(20)});
        assert_eq!(largest_part(&item(flat)), ("b".to_owned(), 20));
    }
}
