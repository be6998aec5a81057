//! DynamoDB's limits, which both backends enforce (docs/data-model.md, "Limits"): an item of at
//! most 400 KB, a transaction of at most 100 operations and 4 MB, a query page of at most 1 MB.
//! The embedded store refuses exactly where DynamoDB would, so that a local run or a test on the
//! embedded store cannot pass what production refuses.

use crate::{Item, StoreError, StoreResult};
use serde_json::Value;

/// The largest item DynamoDB stores, in its own accounting ([`item_size`]).
pub const MAX_ITEM_BYTES: usize = 400 * 1024;
/// The most operations one transaction takes.
pub const MAX_TX_OPS: usize = 100;
/// The largest total of the items one transaction writes.
pub const MAX_TX_BYTES: usize = 4 * 1024 * 1024;
/// A query reads at most this much before it answers a page (and a cursor for the rest).
pub const MAX_QUERY_PAGE_BYTES: usize = 1024 * 1024;

/// `item` if DynamoDB would store it; else [`StoreError::TooLarge`] with its size.
pub fn check_item(item: &Item) -> StoreResult<usize> {
    let size = item_size(item);
    if size > MAX_ITEM_BYTES {
        return Err(StoreError::TooLarge(format!(
            "an item of {} KB, over the {} KB DynamoDB stores",
            size.div_ceil(1024),
            MAX_ITEM_BYTES / 1024
        )));
    }
    Ok(size)
}

/// A transaction's items (each checked) if their total is within [`MAX_TX_BYTES`].
pub fn check_transaction<'a>(items: impl IntoIterator<Item = &'a Item>) -> StoreResult<()> {
    let mut total = 0;
    for item in items {
        total += check_item(item)?;
    }
    if total > MAX_TX_BYTES {
        return Err(StoreError::TooLarge(format!(
            "a transaction of {} KB, over the {} MB DynamoDB takes",
            total.div_ceil(1024),
            MAX_TX_BYTES / (1024 * 1024)
        )));
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
        assert!(matches!(&error, StoreError::TooLarge(m) if m == "an item of 401 KB, over the 400 KB DynamoDB stores"));
        let ten = vec![at; 10];
        assert!(check_transaction(&ten).is_ok());
        let eleven = vec![ten[0].clone(); 11];
        assert!(matches!(check_transaction(&eleven), Err(StoreError::TooLarge(m)) if m.contains("4 MB")));
    }
}
