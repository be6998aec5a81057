//! The schema of each profile as ProseMirror content expressions, and the two questions the
//! parser and the validator ask of it: may this node go here, and if not, which wrappers make
//! it fit (`findWrapping`). Kept as small hand-written state machines because the schema is
//! fixed; the order of the lists below is Tiptap's schema order, which decides which wrapper
//! wins, so do not sort them.

use super::Profile;
use super::model::Node;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Doc,
    Paragraph,
    Heading,
    Blockquote,
    BulletList,
    OrderedList,
    ListItem,
    HorizontalRule,
    HardBreak,
    Text,
    Table,
    TableRow,
    TableHeader,
    TableCell,
    Callout,
    Emoji,
}

use Kind::*;

const EDITOR_BLOCKS: &[Kind] = &[Paragraph, Blockquote, BulletList, Heading, HorizontalRule, OrderedList];
const PRODUCT_BLOCKS: &[Kind] =
    &[Paragraph, Blockquote, BulletList, Heading, HorizontalRule, OrderedList, Table, Callout];
const EDITOR_INLINE: &[Kind] = &[HardBreak, Text];
const PRODUCT_INLINE: &[Kind] = &[HardBreak, Text, Emoji];

impl Kind {
    pub fn of(node: &Node) -> Kind {
        match node {
            Node::Paragraph { .. } => Paragraph,
            Node::Heading { .. } => Heading,
            Node::Blockquote { .. } => Blockquote,
            Node::BulletList { .. } => BulletList,
            Node::OrderedList { .. } => OrderedList,
            Node::ListItem { .. } => ListItem,
            Node::HorizontalRule => HorizontalRule,
            Node::HardBreak { .. } => HardBreak,
            Node::Text { .. } => Text,
            Node::Table { .. } => Table,
            Node::TableRow { .. } => TableRow,
            Node::TableHeader { .. } => TableHeader,
            Node::TableCell { .. } => TableCell,
            Node::Callout { .. } => Callout,
            Node::Emoji { .. } => Emoji,
        }
    }

    pub fn is_inline(self) -> bool {
        matches!(self, HardBreak | Text | Emoji)
    }

    pub fn is_leaf(self) -> bool {
        matches!(self, HardBreak | Text | Emoji | HorizontalRule)
    }

    /// Nodes whose content is inline (ProseMirror's textblocks).
    pub fn is_textblock(self) -> bool {
        matches!(self, Paragraph | Heading)
    }

    pub fn allowed_in(self, profile: Profile) -> bool {
        profile == Profile::Product || !matches!(self, Table | TableRow | TableHeader | TableCell | Callout | Emoji)
    }
}

/// A position in a node's content expression (ProseMirror's `ContentMatch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match {
    pub kind: Kind,
    /// At least one child matched; `listItem` uses it for "paragraph first", `+` for validity.
    pub started: bool,
    pub profile: Profile,
}

impl Match {
    pub fn start(kind: Kind, profile: Profile) -> Match {
        Match { kind, started: false, profile }
    }

    /// The child types allowed next, in schema order.
    pub fn next(&self) -> &'static [Kind] {
        let product = self.profile == Profile::Product;
        let blocks = if product { PRODUCT_BLOCKS } else { EDITOR_BLOCKS };
        match self.kind {
            Doc | Blockquote | TableHeader | TableCell | Callout => blocks,
            ListItem if !self.started => &[Paragraph],
            ListItem => blocks,
            Paragraph | Heading if product => PRODUCT_INLINE,
            Paragraph | Heading => EDITOR_INLINE,
            BulletList | OrderedList => &[ListItem],
            Table => &[TableRow],
            TableRow => &[TableCell, TableHeader],
            HorizontalRule | HardBreak | Text | Emoji => &[],
        }
    }

    pub fn match_type(&self, child: Kind) -> Option<Match> {
        self.next().contains(&child).then_some(Match { started: true, ..*self })
    }

    /// Whether the content may end here.
    pub fn valid_end(&self) -> bool {
        self.started || matches!(self.kind, Paragraph | Heading | TableRow) || self.kind.is_leaf()
    }

    /// ProseMirror's `ContentMatch.findWrapping`: the shortest chain of wrapper nodes that lets
    /// `target` be placed here (empty when it fits directly), breadth first in schema order.
    pub fn find_wrapping(&self, target: Kind) -> Option<Vec<Kind>> {
        let mut seen: Vec<Kind> = Vec::new();
        // (match, the wrapper type that led here, index of the entry it came from)
        let mut active: Vec<(Match, Option<Kind>, usize)> = vec![(*self, None, usize::MAX)];
        let mut i = 0;
        while i < active.len() {
            let (m, ty, _) = active[i];
            if m.match_type(target).is_some() {
                let mut chain = Vec::new();
                let mut at = i;
                while let Some(k) = active[at].1 {
                    chain.push(k);
                    at = active[at].2;
                }
                chain.reverse();
                return Some(chain);
            }
            for &next in m.next() {
                let after = m.match_type(next).expect("listed as next");
                if !next.is_leaf() && !seen.contains(&next) && (ty.is_none() || after.valid_end()) {
                    active.push((Match::start(next, self.profile), Some(next), i));
                    seen.push(next);
                }
            }
            i += 1;
        }
        None
    }

    /// ProseMirror's `fillBefore(Fragment.empty, true)`: what must be appended for the content
    /// to be valid when it ends here.
    pub fn fill_end(&self) -> Option<Node> {
        if self.valid_end() {
            return None;
        }
        Some(match self.next()[0] {
            ListItem => Node::ListItem { content: vec![Node::Paragraph { content: vec![] }] },
            TableRow => Node::TableRow { content: vec![] },
            _ => Node::Paragraph { content: vec![] },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_follows_tiptap_schema_order() {
        let doc = Match::start(Doc, Profile::Product);
        assert_eq!(doc.find_wrapping(Text), Some(vec![Paragraph]));
        assert_eq!(doc.find_wrapping(ListItem), Some(vec![BulletList]));
        assert_eq!(doc.find_wrapping(TableCell), Some(vec![Table, TableRow]));
        assert_eq!(doc.find_wrapping(Paragraph), Some(vec![]));
        let table = Match::start(Table, Profile::Product);
        assert_eq!(table.find_wrapping(Text), Some(vec![TableRow, TableCell, Paragraph]));
        // A list item must start with a paragraph, so a nested list cannot open it.
        assert_eq!(Match::start(ListItem, Profile::Editor).find_wrapping(BulletList), None);
        assert_eq!(Match::start(Doc, Profile::Editor).find_wrapping(TableRow), None);
        assert_eq!(Match::start(Paragraph, Profile::Editor).find_wrapping(Paragraph), None);
    }
}
