//! Which format a rich-text string is in.
//!
//! 1. IDoc JSON, in the agent profile only, when the trimmed text parses as a JSON object.
//! 2. HTML when a known tag appears and nothing outside HTML blocks reads as Markdown.
//! 3. Markdown otherwise; CommonMark then parses the HTML inside it (`markdown`).
//!
//! A known tag is `<name` or `</name` followed by whitespace, `/` or `>`, for an element the
//! parser handles (`tags`), in lower or upper case: `a < b` and `Vec<u8>` have none, and
//! `Vec<Data>` or `Option<Map>` are type names, not tags.
//!
//! "Outside HTML blocks" is the text without its markup and without the content of block-level
//! elements (inline elements such as `<b>` keep their text; `<code>` does not, its text is
//! literal). It reads as Markdown when it has Markdown block syntax at the start of a line,
//! unambiguous inline syntax (`**`, `__`, `~~`, `` ` ``, `](`), or paragraphs separated by a
//! blank line, which HTML would run together. So `<p>a</p>\n\n<p>b</p>`, `Hello <b>world</b>`
//! and `<ul><li>**a**</li></ul>` are HTML; `first\n\n<b>second</b>`, `<b>x</b>\n\n*y*` and
//! `<p>intro</p>\n\n- item` are Markdown with inline HTML.

use super::Profile;
use super::tags;

#[derive(Debug, Clone, PartialEq)]
pub enum Format {
    IdocJson(serde_json::Value),
    Html,
    Markdown,
}

pub fn detect(input: &str, profile: Profile) -> Format {
    let trimmed = input.trim();
    if profile == Profile::Agent
        && trimmed.starts_with('{')
        && let Ok(value @ serde_json::Value::Object(_)) = serde_json::from_str(trimmed)
    {
        return Format::IdocJson(value);
    }
    if has_known_tag(input) && !reads_as_markdown(&outside_blocks(input)) { Format::Html } else { Format::Markdown }
}

/// Whether raw HTML that Markdown passed through starts with a known tag or a comment; other
/// "tags" such as `<u8>` in `Vec<u8>` are text.
pub fn starts_with_known_tag(s: &str) -> bool {
    s.starts_with("<!--") || tag_at(s, 0).is_some()
}

/// Whether a known tag appears anywhere in `s`.
pub fn has_known_tag(s: &str) -> bool {
    s.match_indices('<').any(|(i, _)| tag_at(s, i).is_some())
}

/// The tag starting at byte `at` (a `<`), if it is one: `<name` or `</name` followed by
/// whitespace, `/` or `>`, for a name the parser knows, written in lower or upper case. Returns
/// the element and whether it is an end tag.
fn tag_at(s: &str, at: usize) -> Option<(tags::Tag, bool)> {
    let b = s.as_bytes();
    let mut j = at + 1;
    let closing = b.get(j) == Some(&b'/');
    if closing {
        j += 1;
    }
    let start = j;
    while j < b.len() && b[j].is_ascii_alphanumeric() {
        j += 1;
    }
    let name = &s[start..j];
    let delimited = matches!(b.get(j), Some(b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c'));
    // Mixed case is a type name in code (`Vec<Data>`, `Option<Map>`); HTML is written in one case.
    let (upper, lower) =
        name.bytes().fold((false, false), |(u, l), c| (u || c.is_ascii_uppercase(), l || c.is_ascii_lowercase()));
    if !delimited || (upper && lower) {
        return None;
    }
    tags::lookup(name).map(|tag| (tag, closing))
}

/// The markup starting at `at` (a `<`): a comment, `<!…>` or `<?…>`, or a known tag, whose
/// quoted attribute values may contain `>`. Returns where it ends (unterminated markup runs to
/// the end, as in HTML) and the tag, if it is one.
fn markup(s: &str, at: usize) -> Option<(usize, Option<(tags::Tag, bool)>)> {
    let rest = &s[at..];
    if let Some(body) = rest.strip_prefix("<!--") {
        return Some((body.find("-->").map_or(s.len(), |i| at + 4 + i + 3), None));
    }
    let tag = if rest.starts_with("<!") || rest.starts_with("<?") { None } else { Some(tag_at(s, at)?) };
    // Jump from one `>` or quote to the next; a quote opens a value only right after `=`.
    let b = s.as_bytes();
    let mut i = at + 1;
    while let Some(off) = s[i..].find(['>', '"', '\'']) {
        let j = i + off;
        if b[j] == b'>' {
            return Some((j + 1, tag));
        }
        let after_eq = s[..j].trim_end_matches(|c: char| c.is_ascii_whitespace()).ends_with('=');
        i = match (after_eq, s[j + 1..].find(char::from(b[j]))) {
            (true, Some(close)) => j + 1 + close + 1,
            (true, None) => return Some((s.len(), tag)),
            (false, _) => j + 1,
        };
    }
    Some((s.len(), tag))
}

/// Whether an element's content is HTML rather than Markdown prose: every element with content
/// except the inline ones, and code, whose text is literal.
fn holds_block(tag: tags::Tag) -> bool {
    !tag.void && (tag.kind != tags::Kind::Inline || matches!(tag.name, "code" | "kbd" | "samp" | "tt"))
}

/// Stands for a block element in the text outside blocks: it is what a blank line may follow.
const BLOCK: char = '\u{1}';

/// `s` without markup and without the content of block-level elements (see the module docs).
fn outside_blocks(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    let mut text_from = 0;
    let mut i = 0;
    while let Some(off) = s[i..].find('<') {
        let at = i + off;
        let Some((end, tag)) = markup(s, at) else {
            i = at + 1;
            continue;
        };
        if depth == 0 {
            out.push_str(&s[text_from..at]);
        }
        // `<div/>` opens a div in HTML: the slash means nothing there.
        if let Some((tag, closing)) = tag
            && holds_block(tag)
        {
            depth = if closing { depth.saturating_sub(1) } else { depth + 1 };
            if depth == 0 || (depth == 1 && !closing) {
                out.push(BLOCK);
            }
        }
        i = end;
        text_from = end;
    }
    if depth == 0 {
        out.push_str(&s[text_from..]);
    }
    out
}

/// Markdown block syntax at the start of a line, unambiguous inline syntax, or paragraphs.
fn reads_as_markdown(s: &str) -> bool {
    let block = s.lines().any(|line| {
        let l = line.trim_start_matches(|c: char| c.is_whitespace() || c == BLOCK);
        let hashes = l.bytes().take_while(|&c| c == b'#').count();
        (1..=6).contains(&hashes) && l[hashes..].starts_with(' ')
            || l.starts_with("- ")
            || l.starts_with("* ")
            || l.starts_with("+ ")
            || l.starts_with("> ")
            || l.starts_with("```")
            || l.starts_with("~~~")
            || ordered_marker(l)
            || (l.starts_with('|') && l.contains("---"))
    });
    block || ["**", "__", "](", "~~", "`"].iter().any(|m| s.contains(m)) || has_autolink(s) || has_paragraphs(s)
}

/// Text or a block element, a blank line (CommonMark's: only spaces and tabs), and text again:
/// paragraphs, which HTML would run together.
fn has_paragraphs(s: &str) -> bool {
    let mut text_before = false;
    let mut blank_after_text = false;
    for line in s.lines() {
        if line.trim_matches([' ', '\t']).is_empty() {
            blank_after_text = text_before;
        } else if blank_after_text && line.chars().any(|c| !matches!(c, ' ' | '\t' | BLOCK)) {
            return true;
        } else {
            text_before = true;
        }
    }
    false
}

/// A CommonMark autolink: `<scheme:…>` (scheme of 2–32 letters, digits, `+`, `.`, `-`, starting
/// with a letter; no spaces, `<` or `>` after it) or `<local@domain>`. Read as HTML it would be
/// an element and its text lost.
fn has_autolink(s: &str) -> bool {
    s.match_indices('<').any(|(at, _)| {
        let rest = &s[at + 1..];
        let Some(end) = rest.find(['>', '<', ' ', '\t', '\n', '\r']).filter(|&e| rest.as_bytes()[e] == b'>') else {
            return false;
        };
        let inner = &rest[..end];
        let uri = inner.split_once(':').is_some_and(|(scheme, _)| {
            (2..=32).contains(&scheme.len())
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-'))
        });
        let email = inner.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && local.bytes().all(|b| b.is_ascii_alphanumeric() || b".!#$%&'*+/=?^_`{|}~-".contains(&b))
                && !domain.is_empty()
                && domain.split('.').all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        });
        (uri || email) && !inner.bytes().any(|b| b.is_ascii_control())
    })
}

fn ordered_marker(l: &str) -> bool {
    let digits = l.bytes().take_while(u8::is_ascii_digit).count();
    (1..=9).contains(&digits) && (l[digits..].starts_with(". ") || l[digits..].starts_with(") "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(s: &str) -> Format {
        detect(s, Profile::Editor)
    }

    #[test]
    fn html_markdown_and_json() {
        assert_eq!(f("<p>Hello</p>"), Format::Html);
        assert_eq!(f("Hello <b>world</b>"), Format::Html);
        assert_eq!(f("line one<br>line two"), Format::Html);
        assert_eq!(f("<P CLASS=x>Hi</P>"), Format::Html);
        assert_eq!(f("a < b and c > d"), Format::Markdown);
        assert_eq!(f("Use Vec<u8> here"), Format::Markdown);
        assert_eq!(f("x <= y"), Format::Markdown);
        assert_eq!(f("# Title\n\nSome <b>bold</b> text"), Format::Markdown);
        assert_eq!(f("**bold** and <u>under</u>"), Format::Markdown);
        assert_eq!(f("<p>starts as html</p>\n\n- then a list"), Format::Markdown);
        assert_eq!(f("plain text"), Format::Markdown);
        assert_eq!(f(r#"{"type":"doc","content":[]}"#), Format::Markdown, "JSON is text outside the agent profile");
        assert!(matches!(detect(r#" {"type":"doc"} "#, Profile::Agent), Format::IdocJson(_)));
        assert_eq!(detect("{not json}", Profile::Agent), Format::Markdown);
    }

    #[test]
    fn markdown_outside_html_blocks_makes_markdown() {
        // Paragraphs separated by a blank line, or Markdown syntax, outside block elements.
        assert_eq!(f("first\n\n<b>second</b>"), Format::Markdown);
        assert_eq!(f("<b>x</b>\n\n*y*"), Format::Markdown);
        assert_eq!(f("<b>x</b>\n\n<i>y</i>"), Format::Markdown);
        assert_eq!(f("Hello <b>world</b>\n- item"), Format::Markdown);
        assert_eq!(f("<span>**a**</span>"), Format::Markdown);
        // The same inside block elements, code, comments or attribute values is HTML.
        assert_eq!(f("<p>a</p>\n\n<p>b</p>"), Format::Html);
        assert_eq!(f("<p>**a**</p>\n\n<ul>\n- b\n</ul>"), Format::Html);
        assert_eq!(f("<pre>a\n\n**b**</pre>"), Format::Html);
        assert_eq!(f("see <code>**x**</code> and <code>a\n\nb</code>"), Format::Html);
        assert_eq!(f("<!-- **x**\n\ny --><p>a</p>"), Format::Html);
        assert_eq!(f("<p title=\"a > **b**\">x</p>"), Format::Html);
        assert_eq!(f("<p>unclosed\n\n<p>paragraphs"), Format::Html);
        assert_eq!(f("a<br>\n\nb<hr>"), Format::Markdown, "void elements have no content");
        // A block element, a blank line and text: Markdown paragraphs (emphasis kept).
        assert_eq!(f("<div>x</div>\n\n*y*"), Format::Markdown);
        assert_eq!(f("<div>x</div>\n\n<p>y</p>"), Format::Html);
        // Autolinks are Markdown (read as HTML they would be elements).
        assert_eq!(f("See <https://example.com> and <b>x</b>"), Format::Markdown);
        assert_eq!(f("Mail <me@example.com> or <b>x</b>"), Format::Markdown);
        assert_eq!(f("<b>x</b> <p title=\"<https://x.y>\">y</p>"), Format::Html);
        assert_eq!(f("a <b>x</b> <c:d e> f"), Format::Html, "a space ends an autolink");
        let word = "<html><head><style>p { x: 1 }</style></head>\r\n<body>\r\n\r\n<div class=WordSection1>\r\n\r\n\
                    <p class=MsoNormal>one\r\ntwo</p>\r\n\r\n<p class=MsoNormal>three</p>\r\n\r\n</div>\r\n</body></html>";
        assert_eq!(f(word), Format::Html, "Word's clipboard HTML has blank lines, inside <body>");
    }

    #[test]
    fn every_element_the_parser_handles_is_a_tag() {
        for input in [
            "<video>fallback</video>",
            "<audio>x</audio>",
            "<canvas>x</canvas>",
            "<fieldset><legend>l</legend>x</fieldset>",
            "<details open ontoggle=\"alert(1)\"><summary>s</summary>d</details>",
            "<nav>x</nav>",
            "<textarea>x</textarea>",
            "<noscript>x</noscript>",
            "<DIV>upper case</DIV>",
        ] {
            assert_eq!(f(input), Format::Html, "{input}");
        }
        // type names in code are not tags, in any position
        assert_eq!(f("returns Vec<Data> or Option<Map>"), Format::Markdown);
        assert!(!starts_with_known_tag("<Option>"));
        assert!(starts_with_known_tag("<option>"));
    }
}
