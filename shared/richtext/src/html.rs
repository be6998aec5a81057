//! HTML to IDoc: html5ever (through scraper) builds a standard HTML5 tree, then a port of
//! ProseMirror's `DOMParser` (prosemirror-model `from_dom`, which Tiptap's `generateJSON` runs)
//! turns it into nodes. Porting the algorithm rather than writing our own keeps the odd cases
//! (text at the top level, blocks inside paragraphs, lists inside list items, whitespace) equal
//! to Tiptap's; our intended differences are marked `DIFF:` and listed in docs/richtext.md.

use std::collections::HashMap;

use ego_tree::{NodeId, NodeRef, Tree};
use scraper::{Html, node::Element};

use super::colgroup;
use super::href::checked_href;
use super::model::{CellAttrs, HeadingAttrs, IconAttrs, LinkAttrs, Mark, Node, OrderedListAttrs, is_shortcode};
use super::schema::{Kind, Match};
use super::tags;
use super::text::{self, is_ws};
use super::{MAX_HTML_DEPTH, Profile, RichTextError};

/// Parses an HTML fragment (as if it were the content of `<body>`).
pub fn parse(input: &str, profile: Profile) -> Result<Vec<Node>, RichTextError> {
    let mut html = Html::parse_fragment(input);
    normalize_lists(&mut html.tree);
    let mut p = Parser::new(profile);
    // parse_fragment puts the fragment's nodes under a synthetic <html> element.
    p.add_all(*html.root_element(), &[], 0)?;
    let mut content = p.finish();
    text::normalize(&mut content, false); // add_text cleaned the text already
    Ok(content)
}

/// ProseMirror's `normalizeList`: a list directly inside a list, as Google Docs and Word paste
/// nested lists, is moved into the list item before it (`<ul><li>a</li><ul>…</ul></ul>` becomes
/// `<ul><li>a<ul>…</ul></li></ul>`). ProseMirror does this as it reaches each list; no list's
/// children depend on another list's move, so doing them all up front gives the same tree.
fn normalize_lists(tree: &mut Tree<scraper::Node>) {
    let is_list =
        |n: &NodeRef<'_, scraper::Node>| n.value().as_element().is_some_and(|e| matches!(e.name(), "ul" | "ol"));
    let lists: Vec<NodeId> = tree.nodes().filter(is_list).map(|n| n.id()).collect();
    for list in lists {
        let children: Vec<NodeId> = tree.get(list).map(|l| l.children().map(|c| c.id()).collect()).unwrap_or_default();
        let mut prev_item: Option<NodeId> = None;
        for child in children {
            let Some(node) = tree.get(child) else { continue };
            match node.value().as_element().map(|e| e.name()) {
                Some("ul" | "ol") => {
                    if let Some(mut item) = prev_item.and_then(|id| tree.get_mut(id)) {
                        item.append_id(child);
                    }
                }
                Some("li") => prev_item = Some(child),
                Some(_) => prev_item = None,
                None => {}
            }
        }
    }
}

/// What a parse rule makes of an element.
enum Rule {
    Block(Kind, Attrs),
    Leaf(Node),
    Mark(Mark),
}

#[derive(Clone)]
enum Attrs {
    None,
    Heading(u8),
    Start(i32),
    Cell(CellAttrs),
    Icon(String),
}

/// ProseMirror's `NodeContext`: a node being built.
struct Ctx {
    id: usize,
    kind: Kind,
    attrs: Attrs,
    content: Vec<Node>,
    solid: bool,
    preserve_ws: bool,
    m: Match,
}

impl Ctx {
    fn finish(mut self) -> Node {
        if !self.preserve_ws {
            // Strip trailing whitespace of the last text node.
            if let Some(Node::Text { text, .. }) = self.content.last_mut() {
                let kept = text.trim_end_matches(is_ws).len();
                if kept == 0 {
                    self.content.pop();
                } else {
                    text.truncate(kept);
                }
            }
        }
        let mut content = merge_text(self.content);
        if let Some(fill) = self.m.fill_end() {
            content.push(fill);
        }
        build(self.kind, self.attrs, content)
    }
}

fn build(kind: Kind, attrs: Attrs, content: Vec<Node>) -> Node {
    match (kind, attrs) {
        (Kind::Paragraph, _) => Node::Paragraph { content },
        (Kind::Heading, Attrs::Heading(level)) => Node::Heading { attrs: HeadingAttrs { level }, content },
        (Kind::Heading, _) => Node::Heading { attrs: HeadingAttrs { level: 1 }, content },
        (Kind::Blockquote, _) => Node::Blockquote { content },
        (Kind::BulletList, _) => Node::BulletList { content },
        (Kind::OrderedList, Attrs::Start(start)) if start != 1 => {
            Node::OrderedList { attrs: Some(OrderedListAttrs { start }), content }
        }
        (Kind::OrderedList, _) => Node::OrderedList { attrs: None, content },
        (Kind::ListItem, _) => Node::ListItem { content },
        (Kind::Table, _) => Node::Table { content },
        (Kind::TableRow, _) => Node::TableRow { content },
        (Kind::TableHeader, Attrs::Cell(attrs)) => Node::TableHeader { attrs, content },
        (Kind::TableHeader, _) => Node::TableHeader { attrs: CellAttrs::default(), content },
        (Kind::TableCell, Attrs::Cell(attrs)) => Node::TableCell { attrs, content },
        (Kind::TableCell, _) => Node::TableCell { attrs: CellAttrs::default(), content },
        (Kind::Callout, Attrs::Icon(icon)) => Node::Callout { attrs: IconAttrs { icon }, content },
        (Kind::Callout, _) => Node::Callout { attrs: IconAttrs { icon: "bulb".into() }, content },
        (Kind::Doc, _) => unreachable!("the doc context is finished by Parser::finish"),
        (leaf, _) => unreachable!("{leaf:?} is never entered"),
    }
}

/// Joins adjacent text nodes with the same marks (ProseMirror's `Fragment.from`).
pub fn merge_text(nodes: Vec<Node>) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::with_capacity(nodes.len());
    for node in nodes {
        if let (Some(Node::Text { text: a, marks: ma }), Node::Text { text: b, marks: mb }) = (out.last_mut(), &node)
            && ma == mb
        {
            a.push_str(b);
            continue;
        }
        out.push(node);
    }
    out
}

struct Parser {
    profile: Profile,
    nodes: Vec<Ctx>,
    open: usize,
    next_id: usize,
    /// Inside `<pre>` or `white-space: pre*` (ProseMirror's `localPreserveWS`).
    local_pre: bool,
    /// Inside `<pre>`, where text without marks of its own is code.
    pre_code: bool,
    /// Depth of table cells being flattened (editor and agent profiles have no tables).
    flat: usize,
    /// `colwidth` from the `<colgroup>` of the tables seen so far, by cell (product profile).
    colwidths: HashMap<NodeId, Vec<u32>>,
}

impl Parser {
    fn new(profile: Profile) -> Parser {
        let doc = Ctx {
            id: 0,
            kind: Kind::Doc,
            attrs: Attrs::None,
            content: vec![],
            solid: true,
            preserve_ws: false,
            m: Match::start(Kind::Doc, profile),
        };
        Parser {
            profile,
            nodes: vec![doc],
            open: 0,
            next_id: 1,
            local_pre: false,
            pre_code: false,
            flat: 0,
            colwidths: HashMap::new(),
        }
    }

    fn top(&mut self) -> &mut Ctx {
        &mut self.nodes[self.open]
    }

    fn finish(mut self) -> Vec<Node> {
        self.open = 0;
        self.close_extra();
        let mut doc = self.nodes.pop().expect("doc context");
        doc.preserve_ws = true; // ProseMirror does not strip at the doc level (no text there)
        let mut content = merge_text(doc.content);
        if let Some(fill) = doc.m.fill_end() {
            content.push(fill);
        }
        content
    }

    fn add_all(
        &mut self,
        parent: NodeRef<'_, scraper::Node>,
        marks: &[Mark],
        depth: usize,
    ) -> Result<(), RichTextError> {
        if depth > MAX_HTML_DEPTH {
            return Err(RichTextError::TooDeep { max: MAX_HTML_DEPTH });
        }
        for child in parent.children() {
            match child.value() {
                scraper::Node::Text(t) => {
                    let after_br = child
                        .prev_sibling()
                        .and_then(|s| s.value().as_element().map(|e| e.name() == "br"))
                        .unwrap_or(false);
                    self.add_text(&t.text, after_br, marks);
                }
                scraper::Node::Element(el) => self.add_element(child, el, marks, depth + 1)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// ProseMirror's `addTextNode`.
    fn add_text(&mut self, value: &str, after_br: bool, marks: &[Mark]) {
        // Control characters go before whitespace handling: U+2028 is a line break in <pre>.
        let value = &*text::clean(value);
        let top = &self.nodes[self.open];
        let preserve = self.local_pre || top.preserve_ws;
        if !(top.kind.is_textblock() || value.chars().any(|c| !is_ws(c))) {
            return;
        }
        let mut value = value.to_string();
        if !preserve {
            value = collapse_ws(&value);
            if value.starts_with(' ') && self.open == self.nodes.len() - 1 {
                let strip = match top.content.last() {
                    None => true,
                    Some(Node::Text { text, .. }) => after_br || text.ends_with(is_ws),
                    Some(_) => after_br,
                };
                if strip {
                    value.remove(0);
                }
            }
        } else if value.contains(['\r', '\n']) && self.nodes[self.open].m.find_wrapping(Kind::HardBreak).is_some() {
            // Line breaks inside <pre> become hardBreak nodes (Tiptap's linebreakReplacement).
            let normalized = value.replace("\r\n", "\n").replace('\r', "\n");
            for (i, line) in normalized.split('\n').enumerate() {
                if i > 0 {
                    self.insert_node(Node::HardBreak { marks: vec![] }, marks, true);
                }
                if !line.is_empty() {
                    let cautious = !line.chars().any(|c| !c.is_whitespace());
                    self.insert_node(Node::Text { text: line.to_string(), marks: vec![] }, marks, cautious);
                }
            }
            return;
        } else {
            value = value.replace("\r\n", " ").replace(['\r', '\n'], " ");
        }
        if !value.is_empty() {
            let cautious = !value.chars().any(|c| !c.is_whitespace());
            self.insert_node(Node::Text { text: value, marks: vec![] }, marks, cautious);
        }
    }

    /// ProseMirror's `addElement`.
    fn add_element(
        &mut self,
        dom: NodeRef<'_, scraper::Node>,
        el: &Element,
        marks: &[Mark],
        depth: usize,
    ) -> Result<(), RichTextError> {
        let name = el.name();
        if tags::is(name, tags::Kind::Dropped) {
            return Ok(());
        }
        let style = Style::parse(el.attr("style"));
        let (outer_pre, outer_code) = (self.local_pre, self.pre_code);
        if name == "pre" || style.get("white-space").is_some_and(|v| v.contains("pre")) {
            self.local_pre = true;
        }
        self.pre_code |= name == "pre";
        let result = self.add_element_inner(dom, el, name, &style, marks, depth);
        (self.local_pre, self.pre_code) = (outer_pre, outer_code);
        result
    }

    fn add_element_inner(
        &mut self,
        dom: NodeRef<'_, scraper::Node>,
        el: &Element,
        name: &str,
        style: &Style,
        marks: &[Mark],
        depth: usize,
    ) -> Result<(), RichTextError> {
        if name == "img" {
            // DIFF: an image becomes its alt text (Tiptap without an image node drops it).
            if let Some(alt) = el.attr("alt") {
                self.add_text(alt, false, marks);
            }
            return Ok(());
        }
        if name == "table" && self.profile == Profile::Product {
            self.colwidths.extend(colgroup::cell_widths(dom));
        }
        let mut rule = self.rule(name, el, style, dom.id());
        if self.flat > 0 && matches!(rule, Some(Rule::Block(..) | Rule::Leaf(Node::HorizontalRule))) {
            // Inside a flattened table cell only marks and inline leaves apply.
            rule = None;
        }
        match rule {
            Some(rule) => {
                let marks = style.apply(marks);
                self.add_by_rule(dom, rule, marks, depth)
            }
            None => {
                let mut top_id = self.nodes[self.open].id;
                let mut sync = false;
                let flat_cell = self.profile != Profile::Product && matches!(name, "td" | "th");
                if tags::is(name, tags::Kind::Block) && self.flat == 0 {
                    let top = &self.nodes[self.open];
                    if top.content.first().is_some_and(|n| Kind::of(n).is_inline()) && self.open > 0 {
                        self.open -= 1;
                    }
                    top_id = self.nodes[self.open].id;
                    sync = true;
                } else if self.flat > 0 && tags::is(name, tags::Kind::Block) {
                    // DIFF: blocks inside a flattened table cell are joined with a space.
                    self.separate(" ");
                } else if dom.first_child().is_none() {
                    return Ok(());
                }
                if flat_cell {
                    // DIFF: editor profile tables become one paragraph per row, cells " | ".
                    let first = dom
                        .prev_siblings()
                        .filter_map(|s| s.value().as_element().map(|e| e.name()))
                        .all(|n| !matches!(n, "td" | "th"));
                    if !first {
                        self.separate(" | ");
                    }
                    self.flat += 1;
                }
                let marks = style.apply(marks);
                let r = self.add_all(dom, &marks, depth);
                if flat_cell {
                    self.flat -= 1;
                }
                r?;
                if sync {
                    self.sync(top_id);
                }
                Ok(())
            }
        }
    }

    /// Inserts a separator into a flattened row, not doubling whitespace.
    fn separate(&mut self, sep: &str) {
        let top = &self.nodes[self.open];
        if !top.kind.is_textblock() || self.open != self.nodes.len() - 1 {
            return;
        }
        match top.content.last() {
            None => {}
            Some(Node::Text { text, .. }) if text.ends_with(is_ws) => {
                let sep = sep.trim_start().to_string();
                if !sep.trim().is_empty() {
                    self.insert_node(Node::Text { text: sep, marks: vec![] }, &[], false);
                }
            }
            Some(_) => {
                self.insert_node(Node::Text { text: sep.to_string(), marks: vec![] }, &[], false);
            }
        }
    }

    /// The parse rules of the Tiptap extensions in use (StarterKit, tables, our callout/emoji).
    fn rule(&self, name: &str, el: &Element, style: &Style, id: NodeId) -> Option<Rule> {
        let product = self.profile == Profile::Product;
        Some(match name {
            "p" => Rule::Block(Kind::Paragraph, Attrs::None),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                Rule::Block(Kind::Heading, Attrs::Heading(name.as_bytes()[1] - b'0'))
            }
            "blockquote" => Rule::Block(Kind::Blockquote, Attrs::None),
            "ul" => Rule::Block(Kind::BulletList, Attrs::None),
            // DIFF: a start that is not a number is 1 (Tiptap stores NaN, renders "NaN").
            "ol" => Rule::Block(Kind::OrderedList, Attrs::Start(el.attr("start").and_then(parse_int).unwrap_or(1))),
            "li" => Rule::Block(Kind::ListItem, Attrs::None),
            "hr" => Rule::Leaf(Node::HorizontalRule),
            "br" => Rule::Leaf(Node::HardBreak { marks: vec![] }),
            "table" if product => Rule::Block(Kind::Table, Attrs::None),
            "tr" if product => Rule::Block(Kind::TableRow, Attrs::None),
            "th" if product => Rule::Block(Kind::TableHeader, Attrs::Cell(cell_attrs(el, self.colwidths.get(&id)))),
            "td" if product => Rule::Block(Kind::TableCell, Attrs::Cell(cell_attrs(el, self.colwidths.get(&id)))),
            "tr" => Rule::Block(Kind::Paragraph, Attrs::None),
            "div" if product && el.attr("data-type") == Some("callout") => {
                // DIFF: an icon that is not a shortcode falls back to the default.
                let icon = el.attr("data-icon").filter(|i| is_shortcode(i)).unwrap_or("bulb");
                Rule::Block(Kind::Callout, Attrs::Icon(icon.to_string()))
            }
            "span" if product && el.attr("data-type") == Some("emoji") => {
                let icon = el.attr("data-icon").filter(|i| is_shortcode(i))?;
                Rule::Leaf(Node::Emoji { attrs: IconAttrs { icon: icon.to_string() }, marks: vec![] })
            }
            "b" if style.get("font-weight") == Some("normal") => return None,
            "strong" | "b" => Rule::Mark(Mark::Bold),
            "i" if style.get("font-style") == Some("normal") => return None,
            "em" | "i" => Rule::Mark(Mark::Italic),
            "s" | "del" | "strike" => Rule::Mark(Mark::Strike),
            "u" => Rule::Mark(Mark::Underline),
            "code" => Rule::Mark(Mark::Code),
            // DIFF: only http, https and mailto links survive (Tiptap also keeps relative ones).
            "a" => Rule::Mark(Mark::Link { attrs: LinkAttrs { href: checked_href(el.attr("href")?)? } }),
            _ => return None,
        })
    }

    /// ProseMirror's `addElementByRule`.
    fn add_by_rule(
        &mut self,
        dom: NodeRef<'_, scraper::Node>,
        rule: Rule,
        mut marks: Vec<Mark>,
        depth: usize,
    ) -> Result<(), RichTextError> {
        let mut sync = false;
        match rule {
            Rule::Leaf(node) => {
                let cautious = matches!(node, Node::HardBreak { .. });
                if !self.insert_node(node, &marks, cautious) && cautious && self.nodes[self.open].kind.is_textblock() {
                    self.add_text("\n", false, &marks);
                }
                return Ok(());
            }
            Rule::Block(kind, attrs) => {
                if let Some(inner) = self.enter(kind, attrs, &marks) {
                    sync = true;
                    marks = inner;
                }
            }
            Rule::Mark(mark) => marks.push(mark),
        }
        let start_in = self.nodes[self.open].id;
        self.add_all(dom, &marks, depth)?;
        if sync && self.sync(start_in) {
            self.open -= 1;
        }
        Ok(())
    }

    /// ProseMirror's `findPlace`: closes non-solid contexts and opens wrappers until `kind` fits.
    fn find_place(&mut self, kind: Kind, marks: &[Mark], cautious: bool) -> Option<Vec<Mark>> {
        let mut route: Option<(Vec<Kind>, usize)> = None;
        let mut penalty = 0;
        for depth in (0..=self.open).rev() {
            let cx = &self.nodes[depth];
            if let Some(found) = cx.m.find_wrapping(kind)
                && route.as_ref().is_none_or(|(r, _)| r.len() > found.len() + penalty)
            {
                let direct = found.is_empty();
                route = Some((found, cx.id));
                if direct {
                    break;
                }
            }
            if cx.solid {
                if cautious {
                    break;
                }
                penalty += 2;
            }
        }
        let (route, id) = route?;
        self.sync(id);
        for wrapper in route {
            self.enter_inner(wrapper, Attrs::None, false);
        }
        // Block parents take no marks, so all pending marks stay pending.
        Some(marks.to_vec())
    }

    /// ProseMirror's `insertNode`.
    fn insert_node(&mut self, node: Node, marks: &[Mark], cautious: bool) -> bool {
        let kind = Kind::of(&node);
        let Some(inner) = self.find_place(kind, marks, cautious) else {
            return false;
        };
        self.close_extra();
        let node = if kind.is_inline() { with_marks(node, &inner, self.pre_code) } else { node };
        let top = self.top();
        if let Some(m) = top.m.match_type(kind) {
            top.m = m;
        }
        top.content.push(node);
        true
    }

    fn enter(&mut self, kind: Kind, attrs: Attrs, marks: &[Mark]) -> Option<Vec<Mark>> {
        let inner = self.find_place(kind, marks, false)?;
        self.enter_inner(kind, attrs, true);
        Some(inner)
    }

    fn enter_inner(&mut self, kind: Kind, attrs: Attrs, solid: bool) {
        self.close_extra();
        let top = self.top();
        if let Some(m) = top.m.match_type(kind) {
            top.m = m;
        }
        let preserve_ws = top.preserve_ws;
        let id = self.next_id;
        self.next_id += 1;
        let m = Match::start(kind, self.profile);
        self.nodes.push(Ctx { id, kind, attrs, content: vec![], solid, preserve_ws, m });
        self.open += 1;
    }

    fn close_extra(&mut self) {
        while self.nodes.len() > self.open + 1 {
            let done = self.nodes.pop().expect("checked").finish();
            self.nodes.last_mut().expect("doc").content.push(done);
        }
    }

    fn sync(&mut self, id: usize) -> bool {
        for i in (0..=self.open).rev() {
            if self.nodes[i].id == id {
                self.open = i;
                return true;
            } else if self.local_pre {
                self.nodes[i].preserve_ws = true;
            }
        }
        false
    }
}

/// The node with the pending marks as a set. DIFF: in `<pre>`, text without marks of its own is
/// code (there is no codeBlock node); marks inside it, a link or bold, win over that code, since
/// code excludes them and they carry more (Tiptap keeps them too).
fn with_marks(node: Node, pending: &[Mark], in_pre: bool) -> Node {
    let mut set = pending.iter().cloned().fold(Vec::new(), |set, m| m.add_to_set(&set));
    if in_pre && set.is_empty() {
        set.push(Mark::Code);
    }
    match node {
        Node::Text { text, .. } => Node::Text { text, marks: set },
        Node::HardBreak { .. } => Node::HardBreak { marks: set },
        Node::Emoji { attrs, .. } => Node::Emoji { attrs, marks: set },
        other => other,
    }
}

/// HTML whitespace collapsing (space, tab, CR, LF, form feed; not NBSP).
fn collapse_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_ws = false;
    for c in s.chars() {
        if is_ws(c) {
            if !in_ws {
                out.push(' ');
            }
            in_ws = true;
        } else {
            out.push(c);
            in_ws = false;
        }
    }
    out
}

/// JavaScript's `parseInt(s, 10)` where the result fits an i32: optional sign, leading digits.
pub fn parse_int(s: &str) -> Option<i32> {
    let s = s.trim_start();
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let n: i64 = rest[..digits].parse().ok()?;
    i32::try_from(if neg { -n } else { n }).ok()
}

/// Table cell attributes; anything that is not a sensible number falls back to the default. The
/// cell's own `colwidth` wins over its table's `<colgroup>` (as in Tiptap).
fn cell_attrs(el: &Element, colgroup: Option<&Vec<u32>>) -> CellAttrs {
    let span = |name| el.attr(name).and_then(parse_int).filter(|n| (1..=1000).contains(n)).map_or(1, |n| n as u32);
    let colwidth = match el.attr("colwidth") {
        Some(w) => w.split(',').map(|p| parse_int(p).filter(|n| (1..=100_000).contains(n)).map(|n| n as u32)).collect(),
        None => colgroup.cloned(),
    };
    CellAttrs { colspan: span("colspan"), rowspan: span("rowspan"), colwidth }
}

/// The inline style properties that map to marks, as ProseMirror's style rules read them.
struct Style(Vec<(String, String)>);

impl Style {
    fn parse(attr: Option<&str>) -> Style {
        let mut out = Vec::new();
        for decl in attr.unwrap_or("").split(';') {
            if let Some((k, v)) = decl.split_once(':') {
                let v = v.trim().trim_end_matches("!important").trim().to_ascii_lowercase();
                out.push((k.trim().to_ascii_lowercase(), v));
            }
        }
        Style(out)
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// ProseMirror's `readStyles` with Tiptap's bold, italic, strike and underline style rules.
    fn apply(&self, marks: &[Mark]) -> Vec<Mark> {
        let mut marks = marks.to_vec();
        if self.0.is_empty() {
            return marks;
        }
        if let Some(w) = self.get("font-weight") {
            if w == "400" {
                marks.retain(|m| *m != Mark::Bold);
            } else if is_bold_weight(w) {
                marks.push(Mark::Bold);
            }
        }
        match self.get("font-style") {
            Some("normal") => marks.retain(|m| *m != Mark::Italic),
            Some("italic") => marks.push(Mark::Italic),
            _ => {}
        }
        if let Some(d) = self.get("text-decoration") {
            if d.contains("line-through") {
                marks.push(Mark::Strike);
            }
            if d.contains("underline") {
                marks.push(Mark::Underline);
            }
        }
        marks
    }
}

/// `/^(bold(er)?|[5-9]\d{2,})$/`
fn is_bold_weight(w: &str) -> bool {
    w == "bold"
        || w == "bolder"
        || (w.len() >= 3 && matches!(w.as_bytes()[0], b'5'..=b'9') && w.bytes().all(|b| b.is_ascii_digit()))
}
