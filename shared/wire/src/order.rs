//! A list's order as values ([`OrderKey`]): what the lists sort by and what a page's cursor
//! carries (`workapi_kit::paging`). Here, below the domain, so that a list's order is defined
//! once, beside the records it orders.

use serde::{Deserialize, Serialize};

/// One component of a list's order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Part {
    Int(i64),
    Text(String),
}

/// An item's place in its list's order: compared component by component. The last component
/// is always the item's id, so no two items share a place.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct OrderKey(Vec<Part>);

impl OrderKey {
    pub fn new() -> Self {
        OrderKey(Vec::new())
    }

    pub fn int(mut self, n: i64) -> Self {
        self.0.push(Part::Int(n));
        self
    }

    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.0.push(Part::Text(text.into()));
        self
    }

    /// A name compared case-insensitively, as the lists order names.
    pub fn name(self, name: &str) -> Self {
        self.text(name.to_lowercase())
    }

    /// An id: its canonical text sorts as the id does.
    pub fn id(self, id: impl std::fmt::Display) -> Self {
        self.text(id.to_string())
    }

    /// Whether `other` has the same components of the same kinds (a cursor of this list).
    pub fn same_shape(&self, other: &OrderKey) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|pair| matches!(pair, (Part::Int(_), Part::Int(_)) | (Part::Text(_), Part::Text(_))))
    }

    /// The key as one string whose byte order (UTF-8: DynamoDB's and SQLite's order of string
    /// keys) is the key's own order: the sort key of the list index (GSI2), so the store serves
    /// a list in the order the API documents. Text parts are joined by U+0001, which sorts
    /// below every character a name may hold (names refuse control characters); numbers are
    /// written in 20 digits, offset so that negative ones sort first.
    pub fn sort_text(&self) -> String {
        let parts = self.0.iter().map(|part| match part {
            Part::Int(n) => format!("{:020}", (i128::from(*n) - i128::from(i64::MIN)) as u64),
            Part::Text(text) => text.clone(),
        });
        parts.collect::<Vec<_>>().join(SEPARATOR)
    }

    /// The text of the component at `index` (`None` past the end or for a number): an id
    /// that a list's place holds beside the item's own (`last_text`).
    pub fn text_at(&self, index: usize) -> Option<&str> {
        match self.0.get(index)? {
            Part::Text(text) => Some(text),
            Part::Int(_) => None,
        }
    }

    /// The last component's text: the item's id.
    pub fn last_text(&self) -> Option<&str> {
        match self.0.last()? {
            Part::Text(text) => Some(text),
            Part::Int(_) => None,
        }
    }
}

/// What [`OrderKey::sort_text`] joins parts with.
const SEPARATOR: &str = "\u{1}";

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn part() -> impl Strategy<Value = Part> {
        // Names refuse control characters: the text parts are printable (a prefix of another
        // name included, the case the separator exists for).
        prop_oneof![any::<i64>().prop_map(Part::Int), "[ -~\u{a0}-\u{2ff}]{0,6}".prop_map(Part::Text)]
    }

    proptest! {
        /// Two keys of one shape compare as their sort texts do.
        #[test]
        fn sort_text_orders_as_the_key(a in proptest::collection::vec(part(), 1..4), b in proptest::collection::vec(part(), 1..4)) {
            let b: Vec<Part> = a.iter().zip(b.iter().cycle()).map(|(x, y)| match (x, y) {
                (Part::Int(_), Part::Int(_)) | (Part::Text(_), Part::Text(_)) => y.clone(),
                _ => x.clone(),
            }).collect();
            let (a, b) = (OrderKey(a), OrderKey(b));
            prop_assert_eq!(a.cmp(&b), a.sort_text().cmp(&b.sort_text()));
        }
    }

    #[test]
    fn sort_text_of_prefixes_numbers_and_ids() {
        let key = |name: &str| OrderKey::new().text(name).id("7");
        // "host" before "host plus", although ' ' sorts before '#' or any other separator but U+0001.
        assert!(key("host").sort_text() < key("host plus").sort_text());
        assert!(key("host!").sort_text() > key("host").sort_text());
        let n = |n: i64| OrderKey::new().int(n).id("a").sort_text();
        assert!(n(-2) < n(-1) && n(-1) < n(0) && n(0) < n(9) && n(9) < n(10) && n(i64::MAX) > n(10));
        assert_eq!(n(0), format!("{:020}\u{1}a", 1u64 << 63));
        assert_eq!(OrderKey::new().text("x").id("42").last_text(), Some("42"));
        assert_eq!(OrderKey::new().text("x").int(1).id("42").text_at(0), Some("x"));
        assert_eq!(OrderKey::new().text("x").int(1).id("42").text_at(1), None);
        assert_eq!(OrderKey::new().text("x").id("42").text_at(2), None);
    }
}
