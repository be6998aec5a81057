//! IDoc to HTML. Every attribute is written from a typed value (numbers, checked shortcodes,
//! re-checked hrefs, constants) and every string is escaped, so a hostile stored document
//! cannot produce active content. Adjacent inline nodes share open mark elements, as in
//! ProseMirror's DOMSerializer, which keeps `parse(render(doc)) == doc`.

use super::href::checked_href;
use super::model::{CellAttrs, Doc, LINK_REL, LINK_TARGET, Mark, Node, is_shortcode};
use super::text::{is_preformatted, is_removed_control};

pub fn render(doc: &Doc) -> String {
    let mut out = String::new();
    blocks(&mut out, &doc.content);
    out
}

fn blocks(out: &mut String, nodes: &[Node]) {
    for node in nodes {
        block(out, node);
    }
}

fn block(out: &mut String, node: &Node) {
    match node {
        Node::Paragraph { content } if is_preformatted(content) => wrap(out, "pre", |o| inline(o, content, true)),
        Node::Paragraph { content } => wrap(out, "p", |o| inline(o, content, false)),
        Node::Heading { attrs, content } => {
            let tag = ["h1", "h2", "h3", "h4", "h5", "h6"][usize::from(attrs.level.clamp(1, 6)) - 1];
            wrap(out, tag, |o| inline(o, content, false));
        }
        Node::Blockquote { content } => wrap(out, "blockquote", |o| blocks(o, content)),
        Node::BulletList { content } => wrap(out, "ul", |o| blocks(o, content)),
        Node::OrderedList { attrs, content } => {
            match attrs.map(|a| a.start).filter(|&s| s != 1) {
                Some(start) => {
                    out.push_str("<ol start=\"");
                    out.push_str(&start.to_string());
                    out.push_str("\">");
                }
                None => out.push_str("<ol>"),
            }
            blocks(out, content);
            out.push_str("</ol>");
        }
        Node::ListItem { content } => wrap(out, "li", |o| blocks(o, content)),
        Node::HorizontalRule => out.push_str("<hr>"),
        Node::Table { content } => {
            out.push_str("<table><tbody>");
            blocks(out, content);
            out.push_str("</tbody></table>");
        }
        Node::TableRow { content } => wrap(out, "tr", |o| blocks(o, content)),
        Node::TableHeader { attrs, content } => cell(out, "th", attrs, content),
        Node::TableCell { attrs, content } => cell(out, "td", attrs, content),
        Node::Callout { attrs, content } => {
            let icon = if is_shortcode(&attrs.icon) { attrs.icon.as_str() } else { "bulb" };
            out.push_str("<div data-type=\"callout\" data-icon=\"");
            out.push_str(icon);
            out.push_str("\">");
            blocks(out, content);
            out.push_str("</div>");
        }
        // Inline nodes where a block belongs only come from a hand-made Doc; keep their text.
        Node::Text { .. } | Node::HardBreak { .. } | Node::Emoji { .. } => {
            wrap(out, "p", |o| inline(o, std::slice::from_ref(node), false))
        }
    }
}

fn wrap(out: &mut String, tag: &str, inner: impl FnOnce(&mut String)) {
    out.push('<');
    out.push_str(tag);
    out.push('>');
    inner(out);
    out.push_str("</");
    out.push_str(tag);
    out.push('>');
}

fn cell(out: &mut String, tag: &str, attrs: &CellAttrs, content: &[Node]) {
    out.push('<');
    out.push_str(tag);
    if attrs.colspan != 1 {
        out.push_str(&format!(" colspan=\"{}\"", attrs.colspan));
    }
    if attrs.rowspan != 1 {
        out.push_str(&format!(" rowspan=\"{}\"", attrs.rowspan));
    }
    if let Some(widths) = attrs.colwidth.as_ref().filter(|w| !w.is_empty()) {
        let list: Vec<String> = widths.iter().map(u32::to_string).collect();
        out.push_str(&format!(" colwidth=\"{}\"", list.join(",")));
    }
    out.push('>');
    blocks(out, content);
    out.push_str("</");
    out.push_str(tag);
    out.push('>');
}

/// Inline content with marks kept open across adjacent nodes that share them. In `<pre>`
/// (`text::is_preformatted`) a hard break is a line feed.
fn inline(out: &mut String, nodes: &[Node], pre: bool) {
    let mut open: Vec<&Mark> = Vec::new();
    for node in nodes {
        let marks: Vec<&Mark> = match node {
            Node::Text { marks, .. } | Node::HardBreak { marks } | Node::Emoji { marks, .. } => marks
                .iter()
                .filter(|m| !matches!(m, Mark::Link { attrs } if checked_href(&attrs.href).is_none()))
                .collect(),
            _ => vec![],
        };
        let keep = open.iter().zip(&marks).take_while(|(a, b)| a == b).count();
        while open.len() > keep {
            close_mark(out, open.pop().expect("len > keep"));
        }
        for m in &marks[keep..] {
            open_mark(out, m);
            open.push(m);
        }
        match node {
            Node::Text { text, .. } => out.push_str(&escape_text(text)),
            Node::HardBreak { .. } => out.push_str(if pre { "\n" } else { "<br>" }),
            Node::Emoji { attrs, .. } if is_shortcode(&attrs.icon) => {
                out.push_str("<span data-type=\"emoji\" data-icon=\"");
                out.push_str(&attrs.icon);
                out.push_str("\">:");
                out.push_str(&attrs.icon);
                out.push_str(":</span>");
            }
            Node::Emoji { .. } => {}
            block_node => {
                // A block where inline content belongs (hand-made Doc): close and skip it.
                let _ = block_node;
            }
        }
    }
    while let Some(m) = open.pop() {
        close_mark(out, m);
    }
}

fn open_mark(out: &mut String, mark: &Mark) {
    match mark {
        Mark::Link { attrs } => {
            let href = checked_href(&attrs.href).unwrap_or_default();
            out.push_str("<a target=\"");
            out.push_str(LINK_TARGET);
            out.push_str("\" rel=\"");
            out.push_str(LINK_REL);
            out.push_str("\" href=\"");
            out.push_str(&escape_attr(&href));
            out.push_str("\">");
        }
        Mark::Bold => out.push_str("<strong>"),
        Mark::Code => out.push_str("<code>"),
        Mark::Italic => out.push_str("<em>"),
        Mark::Strike => out.push_str("<s>"),
        Mark::Underline => out.push_str("<u>"),
    }
}

fn close_mark(out: &mut String, mark: &Mark) {
    out.push_str(match mark {
        Mark::Link { .. } => "</a>",
        Mark::Bold => "</strong>",
        Mark::Code => "</code>",
        Mark::Italic => "</em>",
        Mark::Strike => "</s>",
        Mark::Underline => "</u>",
    });
}

/// Escapes text content. Control characters, which stored text no longer holds (`text.rs`), are
/// left out here too, so a document stored before that rule cannot write them either.
pub fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            c if is_removed_control(c) => {}
            '\u{2028}' | '\u{2029}' => out.push('\n'),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\u{a0}' => out.push_str("&nbsp;"),
            c => out.push(c),
        }
    }
    out
}

pub fn escape_attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
