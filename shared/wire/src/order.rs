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
}
