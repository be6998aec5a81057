//! What stored text may hold. Everything that is stored (parsed HTML and Markdown, and IDoc
//! JSON) goes through `normalize`:
//!
//! - Control characters (C0, DEL, C1) are removed, except tab, line feed and carriage return;
//!   form feed, which HTML counts as whitespace, becomes a space; U+2028 and U+2029 (line and
//!   paragraph separator) become a line feed: a line break in `<pre>`, a space elsewhere. They
//!   are invisible or break JavaScript and JSON consumers of the HTML; none is something a
//!   reader wrote. DIFF: Tiptap keeps them.
//! - Whitespace is collapsed as a browser shows it (a run is one space; none at the start of a
//!   text block, after a hard break or at its end), except in a paragraph written as `<pre>`
//!   (`is_preformatted`), which keeps it exactly, so the rendered HTML parses back to the same
//!   IDoc. DIFF: ProseMirror keeps the whitespace of `white-space: pre` elements, and a leading
//!   space in some wrapper paragraphs, which its own `<p>` output then loses
//!   (`<p style="white-space:pre">a  b</p>` is `a  b` in Tiptap, rendered `<p>a  b</p>`, read
//!   back as `a b`).

use std::borrow::Cow;

use super::html::merge_text;
use super::model::{Mark, Node};

/// HTML's whitespace (space, tab, LF, CR, form feed; not NBSP).
pub fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n' | '\u{c}')
}

/// Removed from text (see the module docs); tab, LF and CR are whitespace, form feed is handled
/// apart.
pub fn is_removed_control(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{c}')
}

/// `s` with control characters removed or replaced as the module docs say.
pub fn clean(s: &str) -> Cow<'_, str> {
    // Every character concerned starts with one of these bytes in UTF-8 (C1 controls with 0xC2,
    // U+2028/U+2029 with 0xE2): a cheap first look, as most text has none.
    let maybe = s.bytes().any(|b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || matches!(b, 0x7f | 0xc2 | 0xe2));
    if !maybe || !s.contains(|c| is_removed_control(c) || matches!(c, '\u{c}' | '\u{2028}' | '\u{2029}')) {
        return Cow::Borrowed(s);
    }
    s.chars()
        .filter(|&c| !is_removed_control(c))
        .map(|c| match c {
            '\u{c}' => ' ',
            '\u{2028}' | '\u{2029}' => '\n',
            c => c,
        })
        .collect::<String>()
        .into()
}

fn marks(node: &Node) -> Option<&[Mark]> {
    match node {
        Node::Text { marks, .. } | Node::HardBreak { marks } | Node::Emoji { marks, .. } => Some(marks),
        _ => None,
    }
}

/// Whether a paragraph is written as `<pre>` rather than `<p>`: code lines, or preformatted text
/// (code, and links or other marks that were inside `<pre>`) whose whitespace `<p>` would
/// collapse. Every node carries a mark, as text without one would parse back as code; the first
/// run of text must be visible, as HTML parsers drop whitespace-only text before a block starts.
pub fn is_preformatted(content: &[Node]) -> bool {
    let marked = |n: &Node| match n {
        Node::Text { text, marks } => !marks.is_empty() && !text.contains(['\n', '\r']),
        Node::HardBreak { marks } | Node::Emoji { marks, .. } => !marks.is_empty(),
        _ => false,
    };
    let Some(first) = content.first() else { return false };
    if !content.iter().all(marked) {
        return false;
    }
    let visible = matches!(first, Node::Emoji { .. })
        || content
            .iter()
            .take_while(|n| marks(n) == marks(first) && !matches!(n, Node::Emoji { .. }))
            .any(|n| matches!(n, Node::Text { text, .. } if text.contains(|c| !is_ws(c))));
    let code = |n: &Node| marks(n) == Some(&[Mark::Code][..]);
    let lines = content.iter().all(code) && content.iter().any(|n| matches!(n, Node::HardBreak { .. }));
    visible && (lines || (content.iter().any(code) && collapses(content)))
}

/// Whether `<p>` would show this inline content with other whitespace than it holds.
pub fn collapses(content: &[Node]) -> bool {
    // The block, or a line after a hard break, starts out as if after whitespace.
    let mut after_ws = true;
    for node in content {
        match node {
            Node::Text { text, .. } => {
                // Bytes: whitespace is ASCII, and no byte of a longer UTF-8 character is ASCII.
                for b in text.bytes() {
                    let ws = is_ws(char::from(b));
                    if ws && (b != b' ' || after_ws) {
                        return true;
                    }
                    after_ws = ws;
                }
            }
            Node::HardBreak { .. } => after_ws = true,
            _ => after_ws = false,
        }
    }
    matches!(content.last(), Some(Node::Text { text, .. }) if text.ends_with(is_ws))
}

/// Collapses whitespace the way `<p>` shows it (see `collapses`).
fn collapse(content: Vec<Node>) -> Vec<Node> {
    let mut out = Vec::with_capacity(content.len());
    let mut after_ws = true;
    for node in content {
        match node {
            Node::Text { text, marks } => {
                let mut kept = String::with_capacity(text.len());
                for c in text.chars() {
                    if !is_ws(c) {
                        kept.push(c);
                        after_ws = false;
                    } else if !after_ws {
                        kept.push(' ');
                        after_ws = true;
                    }
                }
                if !kept.is_empty() {
                    out.push(Node::Text { text: kept, marks });
                }
            }
            Node::HardBreak { .. } => {
                after_ws = true;
                out.push(node);
            }
            other => {
                after_ws = false;
                out.push(other);
            }
        }
    }
    if let Some(Node::Text { text, .. }) = out.last_mut() {
        text.truncate(text.trim_end_matches(' ').len());
        if text.is_empty() {
            out.pop();
        }
    }
    merge_text(out)
}

/// Applies both rules to every text block in `nodes`; `controls: false` skips the first for
/// text that was cleaned as it was read (the HTML parser's).
pub fn normalize(nodes: &mut [Node], controls: bool) {
    for node in nodes {
        match node {
            Node::Paragraph { content } => {
                if controls {
                    clean_all(content);
                }
                if !is_preformatted(content) && collapses(content) {
                    *content = collapse(std::mem::take(content));
                }
            }
            Node::Heading { content, .. } => {
                if controls {
                    clean_all(content);
                }
                if collapses(content) {
                    *content = collapse(std::mem::take(content));
                }
            }
            Node::Blockquote { content }
            | Node::BulletList { content }
            | Node::OrderedList { content, .. }
            | Node::ListItem { content }
            | Node::Table { content }
            | Node::TableRow { content }
            | Node::TableHeader { content, .. }
            | Node::TableCell { content, .. }
            | Node::Callout { content, .. } => normalize(content, controls),
            Node::HorizontalRule | Node::HardBreak { .. } | Node::Text { .. } | Node::Emoji { .. } => {}
        }
    }
}

/// Cleans every text node of control characters, dropping text left empty.
fn clean_all(content: &mut Vec<Node>) {
    let mut emptied = false;
    for node in content.iter_mut() {
        if let Node::Text { text, .. } = node
            && let Cow::Owned(cleaned) = clean(text)
        {
            emptied |= cleaned.is_empty();
            *text = cleaned;
        }
    }
    if emptied {
        content.retain(|n| !matches!(n, Node::Text { text, .. } if text.is_empty()));
        *content = merge_text(std::mem::take(content));
    }
}
