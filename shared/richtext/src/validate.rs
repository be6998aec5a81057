//! Strict validation of IDoc: JSON given by a client (agent instructions) is converted node by
//! node with a precise path in every error, then checked against the profile's schema. The
//! parsers' own output is checked with the same `check` in tests and debug builds.

use serde_json::{Map, Value};

use super::href::checked_href;
use super::html::merge_text;
use super::model::{CellAttrs, Doc, HeadingAttrs, IconAttrs, LinkAttrs, Mark, Node, OrderedListAttrs, is_shortcode};
use super::schema::{Kind, Match};
use super::text;
use super::{MAX_DEPTH, Profile, RichTextError};

type Res<T> = Result<T, (String, String)>;

fn err<T>(path: &str, message: impl Into<String>) -> Res<T> {
    Err((if path.is_empty() { "$".to_string() } else { format!("${path}") }, message.into()))
}

/// IDoc JSON (an object) to a checked, normalised [`Doc`].
pub fn from_json(value: &Value, profile: Profile) -> Result<Doc, RichTextError> {
    check_json_depth(value)?;
    let to_err = |(path, message)| RichTextError::InvalidIdoc { path, message };
    let obj = value.as_object().ok_or_else(|| to_err(("$".into(), "must be an object".into())))?;
    keys(obj, "", &["type", "content"]).map_err(to_err)?;
    if obj.get("type").and_then(Value::as_str) != Some("doc") {
        return Err(to_err(("$.type".into(), "must be \"doc\"".into())));
    }
    let mut content = children(obj, "", profile).map_err(to_err)?;
    // Stored text is what a reader sees, whatever its source (text.rs).
    text::normalize(&mut content, true);
    let doc = Doc { content };
    if depth(&doc) > MAX_DEPTH {
        return Err(RichTextError::TooDeep { max: MAX_DEPTH });
    }
    check(&doc, profile).map_err(to_err)?;
    Ok(doc)
}

/// Measured without recursion, so hostile nesting cannot exhaust the stack in later steps.
pub fn check_json_depth(value: &Value) -> Result<(), RichTextError> {
    // Each IDoc level is two JSON levels (the node object and its content array).
    if json_depth(value) > 2 * MAX_DEPTH + 2 { Err(RichTextError::TooDeep { max: MAX_DEPTH }) } else { Ok(()) }
}

fn json_depth(v: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    max
}

fn keys(obj: &Map<String, Value>, path: &str, allowed: &[&str]) -> Res<()> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => err(path, format!("unknown field \"{k}\"")),
        None => Ok(()),
    }
}

fn children(obj: &Map<String, Value>, path: &str, profile: Profile) -> Res<Vec<Node>> {
    match obj.get("content") {
        None | Some(Value::Null) => Ok(vec![]),
        Some(Value::Array(items)) => {
            let nodes = items
                .iter()
                .enumerate()
                .map(|(i, v)| node(v, &format!("{path}.content[{i}]"), profile))
                .collect::<Res<Vec<_>>>()?;
            Ok(merge_text(nodes))
        }
        Some(_) => err(&format!("{path}.content"), "must be an array"),
    }
}

fn node(v: &Value, path: &str, profile: Profile) -> Res<Node> {
    let Some(obj) = v.as_object() else { return err(path, "must be an object") };
    let Some(ty) = obj.get("type").and_then(Value::as_str) else {
        return err(&format!("{path}.type"), "must be a string");
    };
    let content = |p| children(obj, path, p);
    let no_attrs = || empty_attrs(obj, path);
    let node = match ty {
        "paragraph" => {
            keys(obj, path, &["type", "attrs", "content"])?;
            no_attrs()?;
            Node::Paragraph { content: content(profile)? }
        }
        "heading" => {
            keys(obj, path, &["type", "attrs", "content"])?;
            let a = attrs(obj, path, &["level"])?;
            let level = a.get("level").and_then(Value::as_u64).filter(|l| (1..=6).contains(l));
            let Some(level) = level else {
                return err(&format!("{path}.attrs.level"), "must be an integer from 1 to 6");
            };
            Node::Heading { attrs: HeadingAttrs { level: level as u8 }, content: content(profile)? }
        }
        "blockquote" | "bulletList" | "listItem" | "table" | "tableRow" => {
            keys(obj, path, &["type", "attrs", "content"])?;
            no_attrs()?;
            let content = content(profile)?;
            match ty {
                "blockquote" => Node::Blockquote { content },
                "bulletList" => Node::BulletList { content },
                "listItem" => Node::ListItem { content },
                "table" => Node::Table { content },
                _ => Node::TableRow { content },
            }
        }
        "orderedList" => {
            keys(obj, path, &["type", "attrs", "content"])?;
            let a = attrs(obj, path, &["start", "type"])?;
            let start = match a.get("start") {
                None | Some(Value::Null) => 1,
                Some(s) => match s.as_i64().and_then(|s| i32::try_from(s).ok()) {
                    Some(s) => s,
                    None => return err(&format!("{path}.attrs.start"), "must be an integer"),
                },
            };
            Node::OrderedList { attrs: (start != 1).then_some(OrderedListAttrs { start }), content: content(profile)? }
        }
        "tableHeader" | "tableCell" => {
            keys(obj, path, &["type", "attrs", "content"])?;
            let a = attrs(obj, path, &["colspan", "rowspan", "colwidth", "align"])?;
            let span = |name: &str| -> Res<u32> {
                match a.get(name) {
                    None | Some(Value::Null) => Ok(1),
                    Some(v) => match v.as_u64().filter(|n| (1..=1000).contains(n)) {
                        Some(n) => Ok(n as u32),
                        None => err(&format!("{path}.attrs.{name}"), "must be an integer from 1 to 1000"),
                    },
                }
            };
            let colwidth = match a.get("colwidth") {
                None | Some(Value::Null) => None,
                Some(Value::Array(ws)) => Some(
                    ws.iter()
                        .map(|w| w.as_u64().filter(|n| (1..=100_000).contains(n)).map(|n| n as u32))
                        .collect::<Option<Vec<u32>>>()
                        .map_or_else(|| err(&format!("{path}.attrs.colwidth"), "must be positive integers"), Ok)?,
                ),
                Some(_) => return err(&format!("{path}.attrs.colwidth"), "must be an array of integers or null"),
            };
            let attrs = CellAttrs { colspan: span("colspan")?, rowspan: span("rowspan")?, colwidth };
            let content = content(profile)?;
            if ty == "tableHeader" { Node::TableHeader { attrs, content } } else { Node::TableCell { attrs, content } }
        }
        "callout" => {
            keys(obj, path, &["type", "attrs", "content"])?;
            Node::Callout { attrs: icon(obj, path)?, content: content(profile)? }
        }
        "horizontalRule" => {
            keys(obj, path, &["type", "attrs"])?;
            no_attrs()?;
            Node::HorizontalRule
        }
        "hardBreak" => {
            keys(obj, path, &["type", "attrs", "marks"])?;
            no_attrs()?;
            Node::HardBreak { marks: marks(obj, path)? }
        }
        "emoji" => {
            keys(obj, path, &["type", "attrs", "marks"])?;
            Node::Emoji { attrs: icon(obj, path)?, marks: marks(obj, path)? }
        }
        "text" => {
            keys(obj, path, &["type", "text", "marks"])?;
            let text = match obj.get("text").and_then(Value::as_str) {
                Some(t) if !t.is_empty() => t.to_string(),
                _ => return err(&format!("{path}.text"), "must be a non-empty string"),
            };
            Node::Text { text, marks: marks(obj, path)? }
        }
        other => return err(&format!("{path}.type"), format!("unknown node type \"{other}\"")),
    };
    Ok(node)
}

fn attrs(obj: &Map<String, Value>, path: &str, allowed: &[&str]) -> Res<Map<String, Value>> {
    match obj.get("attrs") {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(a)) => {
            keys(a, &format!("{path}.attrs"), allowed)?;
            Ok(a.clone())
        }
        Some(_) => err(&format!("{path}.attrs"), "must be an object"),
    }
}

fn empty_attrs(obj: &Map<String, Value>, path: &str) -> Res<()> {
    attrs(obj, path, &[]).map(|_| ())
}

fn icon(obj: &Map<String, Value>, path: &str) -> Res<IconAttrs> {
    let a = attrs(obj, path, &["icon"])?;
    match a.get("icon").and_then(Value::as_str).filter(|i| is_shortcode(i)) {
        Some(icon) => Ok(IconAttrs { icon: icon.to_string() }),
        None => err(&format!("{path}.attrs.icon"), "must be an emoji shortcode (a-z, 0-9, _, +, -)"),
    }
}

fn marks(obj: &Map<String, Value>, path: &str) -> Res<Vec<Mark>> {
    let items = match obj.get("marks") {
        None | Some(Value::Null) => return Ok(vec![]),
        Some(Value::Array(items)) => items,
        Some(_) => return err(&format!("{path}.marks"), "must be an array"),
    };
    let mut out: Vec<Mark> = Vec::new();
    for (i, m) in items.iter().enumerate() {
        let p = format!("{path}.marks[{i}]");
        let Some(mo) = m.as_object() else { return err(&p, "must be an object") };
        keys(mo, &p, &["type", "attrs"])?;
        let mark = match mo.get("type").and_then(Value::as_str) {
            Some("link") => {
                let a = attrs(mo, &p, &["href", "target", "rel", "class", "title"])?;
                let href = a.get("href").and_then(Value::as_str).and_then(checked_href);
                let Some(href) = href else {
                    return err(&format!("{p}.attrs.href"), "must be an absolute http, https or mailto URL");
                };
                Mark::Link { attrs: LinkAttrs { href } }
            }
            Some(simple @ ("bold" | "code" | "italic" | "strike" | "underline")) => {
                empty_attrs(mo, &p)?;
                match simple {
                    "bold" => Mark::Bold,
                    "code" => Mark::Code,
                    "italic" => Mark::Italic,
                    "strike" => Mark::Strike,
                    _ => Mark::Underline,
                }
            }
            Some(other) => return err(&format!("{p}.type"), format!("unknown mark \"{other}\"")),
            None => return err(&format!("{p}.type"), "must be a string"),
        };
        if out.iter().any(|o| o.rank() == mark.rank()) {
            return err(&p, "duplicate mark");
        }
        out.push(mark);
    }
    if out.len() > 1 && out.contains(&Mark::Code) {
        return err(&format!("{path}.marks"), "code cannot be combined with other marks");
    }
    out.sort_by_key(Mark::rank);
    Ok(out)
}

/// Nesting depth of a document (the doc itself is 1).
pub fn depth(doc: &Doc) -> usize {
    let mut max = 1;
    let mut stack: Vec<(&Node, usize)> = doc.content.iter().map(|n| (n, 2)).collect();
    while let Some((n, d)) = stack.pop() {
        max = max.max(d);
        stack.extend(node_content(n).iter().map(|c| (c, d + 1)));
    }
    max
}

fn node_content(n: &Node) -> &[Node] {
    match n {
        Node::Paragraph { content }
        | Node::Heading { content, .. }
        | Node::Blockquote { content }
        | Node::BulletList { content }
        | Node::OrderedList { content, .. }
        | Node::ListItem { content }
        | Node::Table { content }
        | Node::TableRow { content }
        | Node::TableHeader { content, .. }
        | Node::TableCell { content, .. }
        | Node::Callout { content, .. } => content,
        Node::HorizontalRule | Node::HardBreak { .. } | Node::Text { .. } | Node::Emoji { .. } => &[],
    }
}

/// Checks a document against the profile: node types, content rules, attributes, marks.
pub fn check(doc: &Doc, profile: Profile) -> Res<()> {
    check_content(Kind::Doc, &doc.content, "", profile)
}

fn check_content(parent: Kind, content: &[Node], path: &str, profile: Profile) -> Res<()> {
    let mut m = Match::start(parent, profile);
    for (i, child) in content.iter().enumerate() {
        let p = format!("{path}.content[{i}]");
        let kind = Kind::of(child);
        if !kind.allowed_in(profile) {
            return err(&format!("{p}.type"), format!("{} is not allowed in this field", name(kind)));
        }
        m = match m.match_type(kind) {
            Some(next) => next,
            None => return err(&p, format!("{} is not allowed here inside {}", name(kind), name(parent))),
        };
        check_node(child, &p, profile)?;
        if let (Node::Text { marks: a, .. }, Some(Node::Text { marks: b, .. })) = (child, content.get(i + 1))
            && a == b
        {
            return err(&p, "adjacent text nodes with the same marks must be merged");
        }
    }
    if !m.valid_end() {
        let what = if content.is_empty() { "must not be empty" } else { "is incomplete" };
        return err(path, format!("{} {what}", name(parent)));
    }
    Ok(())
}

fn check_node(node: &Node, path: &str, profile: Profile) -> Res<()> {
    match node {
        Node::Heading { attrs, .. } if !(1..=6).contains(&attrs.level) => {
            return err(&format!("{path}.attrs.level"), "must be an integer from 1 to 6");
        }
        Node::TableHeader { attrs, .. } | Node::TableCell { attrs, .. }
            if attrs.colspan == 0 || attrs.rowspan == 0 || attrs.colwidth.as_ref().is_some_and(|w| w.contains(&0)) =>
        {
            return err(&format!("{path}.attrs"), "spans and widths must be positive");
        }
        Node::Callout { attrs, .. } | Node::Emoji { attrs, .. } if !is_shortcode(&attrs.icon) => {
            return err(&format!("{path}.attrs.icon"), "must be an emoji shortcode (a-z, 0-9, _, +, -)");
        }
        Node::Text { text, .. } if text.is_empty() => return err(&format!("{path}.text"), "must not be empty"),
        _ => {}
    }
    if let Node::Text { marks, .. } | Node::HardBreak { marks } | Node::Emoji { marks, .. } = node {
        let canonical = marks.iter().cloned().fold(Vec::new(), |set, m| m.add_to_set(&set));
        if &canonical != marks {
            return err(&format!("{path}.marks"), "marks must be distinct, in canonical order, and code alone");
        }
        for (i, m) in marks.iter().enumerate() {
            if let Mark::Link { attrs } = m
                && checked_href(&attrs.href).as_deref() != Some(attrs.href.as_str())
            {
                return err(&format!("{path}.marks[{i}].attrs.href"), "must be an absolute http, https or mailto URL");
            }
        }
    }
    check_content(Kind::of(node), node_content(node), path, profile)
}

fn name(kind: Kind) -> &'static str {
    match kind {
        Kind::Doc => "doc",
        Kind::Paragraph => "paragraph",
        Kind::Heading => "heading",
        Kind::Blockquote => "blockquote",
        Kind::BulletList => "bulletList",
        Kind::OrderedList => "orderedList",
        Kind::ListItem => "listItem",
        Kind::HorizontalRule => "horizontalRule",
        Kind::HardBreak => "hardBreak",
        Kind::Text => "text",
        Kind::Table => "table",
        Kind::TableRow => "tableRow",
        Kind::TableHeader => "tableHeader",
        Kind::TableCell => "tableCell",
        Kind::Callout => "callout",
        Kind::Emoji => "emoji",
    }
}
