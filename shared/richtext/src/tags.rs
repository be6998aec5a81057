//! The HTML elements the parser knows, in one place: what it drops, what ends a paragraph, what
//! it reads as inline, and table structure. Detection treats exactly these as tags (`is_known`),
//! so an element the parser handles is never shown to readers as literal text, and the lists
//! cannot drift apart.

use std::sync::LazyLock;

/// Dropped together with everything inside them. DIFF: Tiptap keeps the text of iframe, svg,
/// math, media fallback and form controls; none of it is content a reader wrote.
pub const DROPPED: &[&str] = &[
    "applet", "area", "audio", "base", "button", "canvas", "datalist", "dialog", "embed", "frame", "frameset", "head",
    "iframe", "input", "keygen", "link", "map", "math", "meta", "noembed", "noframes", "noscript", "object",
    "optgroup", "option", "param", "script", "select", "source", "style", "svg", "template", "textarea", "title",
    "track", "video",
];

/// Elements without a parse rule that still end the current paragraph: ProseMirror's
/// `blockTags` (less canvas and noscript, which are dropped), `body` and `html`, and (DIFF)
/// block elements ProseMirror misses, whose words Tiptap runs together (`<details><summary>s
/// </summary>d</details>` gives `sd` there): center, details, dir, dt, legend, main, menu, nav,
/// search, summary.
pub const BLOCK: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "center",
    "dd",
    "details",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "html",
    "legend",
    "li",
    "main",
    "menu",
    "nav",
    "ol",
    "output",
    "p",
    "pre",
    "search",
    "section",
    "summary",
    "table",
    "tfoot",
    "ul",
];

/// Read as inline: the elements with a mark or leaf rule (a, b, br, code, del, em, i, img, s,
/// span, strike, strong, u), and phrasing elements that are unwrapped keeping their text.
pub const INLINE: &[&str] = &[
    "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "br", "cite", "code", "data", "del", "dfn", "em", "font", "i",
    "img", "ins", "kbd", "label", "mark", "meter", "nobr", "picture", "progress", "q", "rb", "rp", "rt", "rtc", "ruby",
    "s", "samp", "slot", "small", "span", "strike", "strong", "sub", "sup", "time", "tt", "u", "var", "wbr",
];

/// Table structure (`table` and `tfoot` are in `BLOCK`): nodes in the product profile, one
/// paragraph per row elsewhere.
pub const TABLE: &[&str] = &["caption", "col", "colgroup", "tbody", "td", "th", "thead", "tr"];

/// Elements without content or end tag.
pub const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param", "source", "track",
    "wbr",
];

/// Which list an element is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dropped,
    Block,
    Inline,
    Table,
}

/// What the lists say about one element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag {
    /// Lower case, as the lists spell it.
    pub name: &'static str,
    pub kind: Kind,
    pub void: bool,
}

/// The longest name in the lists ("blockquote", "figcaption"); a test checks it.
const LONGEST: usize = 10;

/// A name of at most `LONGEST` ASCII characters, lower-cased and packed into an integer: the
/// lookup compares integers rather than strings (detection asks for every tag of the input).
fn pack(name: &str) -> Option<u128> {
    if name.len() > LONGEST {
        return None;
    }
    Some(name.bytes().fold(0u128, |key, b| key << 8 | u128::from(b.to_ascii_lowercase())))
}

/// The lists as one table sorted by packed name, built once.
static INDEX: LazyLock<Vec<(u128, Tag)>> = LazyLock::new(|| {
    let lists = [(DROPPED, Kind::Dropped), (BLOCK, Kind::Block), (INLINE, Kind::Inline), (TABLE, Kind::Table)];
    let mut index: Vec<(u128, Tag)> = lists
        .iter()
        .flat_map(|&(list, kind)| list.iter().map(move |&name| (name, kind)))
        .filter_map(|(name, kind)| Some((pack(name)?, Tag { name, kind, void: VOID.contains(&name) })))
        .collect();
    index.sort_by_key(|&(key, _)| key);
    index
});

/// The element `name` (any ASCII case), if the parser handles it.
pub fn lookup(name: &str) -> Option<Tag> {
    let key = pack(name)?;
    INDEX.binary_search_by_key(&key, |&(k, _)| k).ok().map(|i| INDEX[i].1)
}

/// Whether the parser has `name` (lower case) in the list of `kind`.
pub fn is(name: &str, kind: Kind) -> bool {
    lookup(name).is_some_and(|t| t.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_known(name: &str) -> bool {
        lookup(name).is_some_and(|t| t.name == name)
    }

    /// Every element of the HTML standard's index, and the obsolete ones browsers still parse.
    const HTML_ELEMENTS: &[&str] = &[
        "a",
        "abbr",
        "address",
        "area",
        "article",
        "aside",
        "audio",
        "b",
        "base",
        "bdi",
        "bdo",
        "blockquote",
        "body",
        "br",
        "button",
        "canvas",
        "caption",
        "cite",
        "code",
        "col",
        "colgroup",
        "data",
        "datalist",
        "dd",
        "del",
        "details",
        "dfn",
        "dialog",
        "div",
        "dl",
        "dt",
        "em",
        "embed",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "hgroup",
        "hr",
        "html",
        "i",
        "iframe",
        "img",
        "input",
        "ins",
        "kbd",
        "label",
        "legend",
        "li",
        "link",
        "main",
        "map",
        "mark",
        "math",
        "menu",
        "meta",
        "meter",
        "nav",
        "noscript",
        "object",
        "ol",
        "optgroup",
        "option",
        "output",
        "p",
        "param",
        "picture",
        "pre",
        "progress",
        "q",
        "rp",
        "rt",
        "ruby",
        "s",
        "samp",
        "script",
        "search",
        "section",
        "select",
        "slot",
        "small",
        "source",
        "span",
        "strong",
        "style",
        "sub",
        "summary",
        "sup",
        "svg",
        "table",
        "tbody",
        "td",
        "template",
        "textarea",
        "tfoot",
        "th",
        "thead",
        "time",
        "title",
        "tr",
        "track",
        "u",
        "ul",
        "var",
        "video",
        "wbr", // obsolete:
        "acronym",
        "applet",
        "big",
        "center",
        "dir",
        "font",
        "frame",
        "frameset",
        "keygen",
        "noembed",
        "noframes",
        "nobr",
        "rb",
        "rtc",
        "strike",
        "tt",
    ];

    #[test]
    fn every_html_element_is_known_and_in_one_list() {
        for name in HTML_ELEMENTS {
            let lists = [DROPPED, BLOCK, INLINE, TABLE].iter().filter(|l| l.contains(name)).count();
            assert_eq!(lists, 1, "{name} must be in exactly one of DROPPED, BLOCK, INLINE, TABLE");
        }
        for name in VOID {
            assert!(is_known(name), "{name}");
        }
        assert!(!is_known("u8") && !is_known("x") && !is_known("string"));
        assert_eq!(lookup("BLOCKQUOTE"), Some(Tag { name: "blockquote", kind: Kind::Block, void: false }));
        assert_eq!(lookup("Br").map(|t| (t.kind, t.void)), Some((Kind::Inline, true)));
        assert_eq!(lookup("blockquotes"), None);
    }

    #[test]
    fn every_name_fits_the_index() {
        for list in [DROPPED, BLOCK, INLINE, TABLE, VOID] {
            assert!(list.iter().all(|name| name.len() <= LONGEST), "{list:?}");
        }
        assert_eq!(INDEX.len(), DROPPED.len() + BLOCK.len() + INLINE.len() + TABLE.len());
    }
}
