//! DynamoDB capacity units of the store calls a request makes, for the cost table of
//! docs/performance.md ("Cost per million requests", bench `roundtrips`). Computed from the
//! items the calls carry, by DynamoDB's documented rules (Developer Guide, "Read/write capacity
//! mode" and "Item sizes"), on the embedded store, which makes exactly the calls DynamoDB gets:
//!
//! - an item's size is the UTF-8 length of its attribute names plus its values: a string its
//!   UTF-8 length, a number about one byte per two digits plus one, a boolean or null one byte,
//!   a list or map three bytes plus one per element plus the elements (and a map's names);
//! - a strongly consistent read costs one read unit per 4 KB read (rounded up, at least one, an
//!   absent item included), an eventually consistent one half of that; a query sums the sizes
//!   of the items it returns before rounding (the store reads the table strongly and the GSI
//!   eventually, as `DynamoStore` does);
//! - a write costs one write unit per 1 KB of the larger of the item before and after (at least
//!   one, a failed condition included); inside a transaction every item costs twice.
//!
//! Where the store does not see an item's size (the item a put replaces, the item a
//! transaction's update or condition check touches), it counts the smallest charge: the figures
//! are a floor for large items, exact for the small items this API keeps.

use workapi_store::limits::item_size;
use workapi_store::{Index, Item, Query, TxOp};

/// Capacity units consumed, summed over calls.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Capacity {
    pub read_units: f64,
    pub write_units: f64,
}

impl Capacity {
    pub fn add(&mut self, other: Capacity) {
        self.read_units += other.read_units;
        self.write_units += other.write_units;
    }

    pub fn since(self, earlier: Capacity) -> Capacity {
        Capacity {
            read_units: self.read_units - earlier.read_units,
            write_units: self.write_units - earlier.write_units,
        }
    }

    fn read_bytes(bytes: usize, consistent: bool) -> Capacity {
        let units = bytes.div_ceil(4096).max(1) as f64;
        Capacity { read_units: if consistent { units } else { units / 2.0 }, write_units: 0.0 }
    }

    fn write_bytes(bytes: usize, transactional: bool) -> Capacity {
        let units = bytes.div_ceil(1024).max(1) as f64;
        Capacity { read_units: 0.0, write_units: if transactional { 2.0 * units } else { units } }
    }

    /// A GetItem, strongly consistent (`Store::get`) or not (`Store::get_eventually`).
    pub fn get(found: Option<&Item>, consistent: bool) -> Capacity {
        Capacity::read_bytes(found.map_or(0, item_size), consistent)
    }

    /// One page of a Query: strongly consistent on the table, eventually on the GSI.
    pub fn query(query: &Query, items: &[Item]) -> Capacity {
        Capacity::read_bytes(items.iter().map(item_size).sum(), query.index == Index::Table && !query.eventual)
    }

    /// A PutItem, UpdateItem, DeleteItem or counter increment, given the item written (after an
    /// update, before a delete) when known.
    pub fn write(item: Option<&Item>) -> Capacity {
        Capacity::write_bytes(item.map_or(0, item_size), false)
    }

    /// A TransactWriteItems: every item twice.
    pub fn transact(ops: &[TxOp]) -> Capacity {
        let mut total = Capacity::default();
        for op in ops {
            let size = match op {
                TxOp::Put { item, .. } => item_size(item),
                TxOp::Update { .. } | TxOp::Delete { .. } | TxOp::Check { .. } => 0,
            };
            total.add(Capacity::write_bytes(size, true));
        }
        total
    }
}

/// DynamoDB's throughput limit of one partition, per second (Developer Guide, "Partitions and
/// data distribution"): what one partition key's items can take, however they are spread.
pub const PARTITION_READ_UNITS: f64 = 3000.0;
pub const PARTITION_WRITE_UNITS: f64 = 1000.0;

/// A partition key with its instances named: the workspace `<ws>`, any other id `<id>`, a
/// token hash `<hash>`, an address `<ip>`, a number (a rate window) `<n>`. Keys that differ only
/// in those are one kind of partition.
pub fn partition_kind(pk: &str, workspace: uuid::Uuid) -> String {
    let ws = workspace.to_string();
    let segment = |s: &str| -> String {
        if s == ws {
            "<ws>".into()
        } else if s.starts_with(&ws) {
            format!("<ws>{}", &s[ws.len()..]).split('_').next().map(|p| format!("{p}_<id>")).unwrap_or_default()
        } else if uuid::Uuid::parse_str(s).is_ok() || s.starts_with("dcr_") {
            "<id>".into()
        } else if s.len() >= 32 && s.chars().all(|c| c.is_ascii_hexdigit()) {
            "<hash>".into()
        } else if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) {
            "<n>".into()
        } else if s.parse::<std::net::IpAddr>().is_ok() {
            "<ip>".into()
        } else {
            s.into()
        }
    };
    let (index, key) =
        pk.split_once(' ').filter(|(i, _)| ["GSI1", "GSI2"].contains(i)).map_or(("", pk), |(i, k)| (i, k));
    // A segment may name its kind before a colon (`RL#token:<id>#<window>`).
    let part = |s: &str| -> String {
        if s.contains('@') {
            return "<email>".into();
        }
        match s.split_once(':').filter(|(_, rest)| segment(rest) != *rest) {
            Some((kind, rest)) => format!("{kind}:{}", segment(rest)),
            None => segment(s),
        }
    };
    let named: Vec<String> = key.split('#').map(part).collect();
    let named = named.join("#");
    if index.is_empty() { named } else { format!("{index} {named}") }
}

/// Whether a partition kind is one partition for the whole workspace (so all of its requests
/// land on it), rather than one per token, user, address or other instance.
pub fn one_per_workspace(kind: &str) -> bool {
    kind.contains("<ws>") && !["<id>", "<hash>", "<ip>", "<n>"].iter().any(|i| kind.contains(i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use workapi_store::{Condition, Key};

    fn item(value: Value) -> Item {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn partitions_are_named_by_kind() {
        let ws = uuid::Uuid::new_v4();
        let other = uuid::Uuid::new_v4();
        for (pk, kind, per_workspace) in [
            (format!("WS#{ws}"), "WS#<ws>", true),
            (format!("WS#{ws}#TAGS#task"), "WS#<ws>#TAGS#task", true),
            (format!("GSI1 WS#{ws}#USER#{other}#PATS"), "GSI1 WS#<ws>#USER#<id>#PATS", false),
            (format!("CRED#{}", "ab".repeat(32)), "CRED#<hash>", false),
            ("RL#ip:127.0.0.1#29000000".to_owned(), "RL#ip:<ip>#<n>", false),
            (format!("RL#token:{other}#29000000"), "RL#token:<id>#<n>", false),
            ("GSI1 EMAIL#a@b.example".to_owned(), "GSI1 EMAIL#<email>", false),
        ] {
            assert_eq!(partition_kind(&pk, ws), kind, "{pk}");
            assert_eq!(one_per_workspace(kind), per_workspace, "{kind}");
        }
    }

    #[test]
    fn units_round_up_with_a_minimum_of_one() {
        let small = item(json!({"PK": "a"}));
        let big = item(json!({"PK": "x".repeat(5000)}));
        assert_eq!(Capacity::get(None, true), Capacity { read_units: 1.0, write_units: 0.0 });
        assert_eq!(Capacity::get(Some(&big), true).read_units, 2.0);
        assert_eq!(Capacity::get(Some(&big), false).read_units, 1.0);
        assert_eq!(
            Capacity::query(&Query::table("p").eventually_consistent(), std::slice::from_ref(&small)).read_units,
            0.5
        );
        let gsi = Query::gsi1("p");
        assert_eq!(Capacity::query(&gsi, &[small.clone(), small.clone()]).read_units, 0.5);
        assert_eq!(Capacity::query(&Query::table("p"), &[big.clone(), big.clone()]).read_units, 3.0);
        assert_eq!(Capacity::write(Some(&big)).write_units, 5.0);
        assert_eq!(Capacity::write(None).write_units, 1.0);
        let ops = vec![
            TxOp::Put { item: big, cond: Condition::NotExists },
            TxOp::Check { key: Key::new("p", "s"), cond: Condition::Exists },
        ];
        assert_eq!(Capacity::transact(&ops).write_units, 2.0 * 5.0 + 2.0);
    }
}
