//! The IDoc model: typed serde data in Tiptap's JSON shape (`{type, attrs?, content?, marks?, text?}`).
//!
//! Only what the schema can express is representable: link attributes other than `href` are
//! constants (they are written, never stored), attributes are numbers or checked strings, so
//! nothing a client sends can reach the rendered HTML except through typed values.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `target` and `rel` of every link, forced on parse and on render (spec §1.4).
pub const LINK_TARGET: &str = "_blank";
pub const LINK_REL: &str = "noopener noreferrer nofollow";

/// A whole document: `{"type":"doc","content":[...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "doc")]
pub struct Doc {
    pub content: Vec<Node>,
}

impl Doc {
    /// The empty document: one empty paragraph, as Tiptap produces for empty input.
    pub fn empty() -> Doc {
        Doc { content: vec![Node::Paragraph { content: vec![] }] }
    }
}

/// Every node type of the three profiles; which ones a profile allows is checked in `schema`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Node {
    Paragraph {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        content: Vec<Node>,
    },
    Heading {
        attrs: HeadingAttrs,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        content: Vec<Node>,
    },
    Blockquote {
        content: Vec<Node>,
    },
    BulletList {
        content: Vec<Node>,
    },
    OrderedList {
        /// Written only when `start` is not 1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attrs: Option<OrderedListAttrs>,
        content: Vec<Node>,
    },
    ListItem {
        content: Vec<Node>,
    },
    HorizontalRule,
    HardBreak {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        marks: Vec<Mark>,
    },
    Text {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        marks: Vec<Mark>,
        text: String,
    },
    Table {
        content: Vec<Node>,
    },
    TableRow {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        content: Vec<Node>,
    },
    TableHeader {
        #[serde(default)]
        attrs: CellAttrs,
        content: Vec<Node>,
    },
    TableCell {
        #[serde(default)]
        attrs: CellAttrs,
        content: Vec<Node>,
    },
    Callout {
        attrs: IconAttrs,
        content: Vec<Node>,
    },
    Emoji {
        attrs: IconAttrs,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        marks: Vec<Mark>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadingAttrs {
    pub level: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderedListAttrs {
    pub start: i32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellAttrs {
    pub colspan: u32,
    pub rowspan: u32,
    pub colwidth: Option<Vec<u32>>,
}

impl Default for CellAttrs {
    fn default() -> Self {
        CellAttrs { colspan: 1, rowspan: 1, colwidth: None }
    }
}

/// `icon` of callout and emoji: an emoji shortcode such as `bulb` (checked by `is_shortcode`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IconAttrs {
    pub icon: String,
}

/// Marks, declared in the canonical order (link, bold, code, italic, strike, underline), which is
/// also Tiptap's rank order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Mark {
    Link { attrs: LinkAttrs },
    Bold,
    Code,
    Italic,
    Strike,
    Underline,
}

impl Mark {
    pub fn rank(&self) -> u8 {
        match self {
            Mark::Link { .. } => 0,
            Mark::Bold => 1,
            Mark::Code => 2,
            Mark::Italic => 3,
            Mark::Strike => 4,
            Mark::Underline => 5,
        }
    }

    /// ProseMirror's `Mark.addToSet` for our schema: one mark per type (a new link replaces an
    /// old one), rank order kept, and `code` excludes every other mark whichever comes first.
    pub fn add_to_set(self, set: &[Mark]) -> Vec<Mark> {
        if set.contains(&self) || set.contains(&Mark::Code) {
            return set.to_vec();
        }
        if self == Mark::Code {
            return vec![Mark::Code];
        }
        let mut out: Vec<Mark> = set.iter().filter(|m| m.rank() != self.rank()).cloned().collect();
        let at = out.iter().position(|m| m.rank() > self.rank()).unwrap_or(out.len());
        out.insert(at, self);
        out
    }
}

/// A link's attributes. Only `href` is data; `target` and `rel` are serialised as the forced
/// constants and ignored on input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkAttrs {
    pub href: String,
}

impl Serialize for LinkAttrs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Out<'a> {
            href: &'a str,
            target: &'static str,
            rel: &'static str,
        }
        Out { href: &self.href, target: LINK_TARGET, rel: LINK_REL }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for LinkAttrs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Stored documents were validated when written; extra keys (target, rel) are ignored.
        #[derive(Deserialize)]
        struct In {
            href: String,
        }
        In::deserialize(d).map(|i| LinkAttrs { href: i.href })
    }
}

/// An emoji shortcode: 1–64 of `a-z 0-9 _ + -`, the alphabet of the common shortcode sets.
pub fn is_shortcode(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'+' | b'-'))
}
