//! Which format a rich-text string is in. IDoc JSON only in the agent profile; HTML when a known
//! tag appears and the text does not read as Markdown; Markdown otherwise. `a < b` and
//! `Vec<u8>` contain no known tag, so they stay Markdown (text).

use super::Profile;

#[derive(Debug, Clone, PartialEq)]
pub enum Format {
    IdocJson(serde_json::Value),
    Html,
    Markdown,
}

/// Tags whose presence makes a text HTML. Dangerous ones are listed too so that hostile HTML is
/// treated as HTML; safety does not depend on this (Markdown's raw HTML goes through the same
/// parser).
const KNOWN_TAGS: &[&str] = &[
    "a",
    "abbr",
    "address",
    "article",
    "aside",
    "b",
    "blockquote",
    "body",
    "br",
    "caption",
    "cite",
    "code",
    "col",
    "colgroup",
    "dd",
    "del",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "figcaption",
    "figure",
    "font",
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
    "hr",
    "html",
    "i",
    "iframe",
    "img",
    "input",
    "ins",
    "kbd",
    "li",
    "link",
    "mark",
    "math",
    "meta",
    "object",
    "ol",
    "p",
    "pre",
    "q",
    "s",
    "script",
    "section",
    "small",
    "span",
    "strike",
    "strong",
    "style",
    "sub",
    "sup",
    "svg",
    "table",
    "tbody",
    "td",
    "template",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "u",
    "ul",
];

pub fn detect(input: &str, profile: Profile) -> Format {
    let trimmed = input.trim();
    if profile == Profile::Agent
        && trimmed.starts_with('{')
        && let Ok(value @ serde_json::Value::Object(_)) = serde_json::from_str(trimmed)
    {
        return Format::IdocJson(value);
    }
    if has_known_tag(input) && (trimmed.starts_with('<') || !reads_as_markdown(input)) {
        Format::Html
    } else {
        Format::Markdown
    }
}

/// Whether raw HTML that Markdown passed through starts with a known tag or a comment; other
/// "tags" such as `<u8>` in `Vec<u8>` are text.
pub fn starts_with_known_tag(s: &str) -> bool {
    s.starts_with("<!--") || (s.starts_with('<') && has_known_tag(s) && known_tag_at(s, 0))
}

fn known_tag_at(s: &str, at: usize) -> bool {
    let b = s.as_bytes();
    let mut j = at + 1;
    if b.get(j) == Some(&b'/') {
        j += 1;
    }
    let start = j;
    while j < b.len() && b[j].is_ascii_alphanumeric() {
        j += 1;
    }
    let delimited = matches!(b.get(j), Some(b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r'));
    delimited && KNOWN_TAGS.contains(&s[start..j].to_ascii_lowercase().as_str())
}

/// `<tag` or `</tag` followed by whitespace, `>` or `/`, for a known tag (ASCII case-insensitive).
pub fn has_known_tag(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(off) = b[i..].iter().position(|&c| c == b'<') {
        let mut j = i + off + 1;
        if b.get(j) == Some(&b'/') {
            j += 1;
        }
        let start = j;
        while j < b.len() && b[j].is_ascii_alphanumeric() {
            j += 1;
        }
        let name = s[start..j].to_ascii_lowercase();
        let delimited = matches!(b.get(j), Some(b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r'));
        if delimited && KNOWN_TAGS.contains(&name.as_str()) {
            return true;
        }
        i = start.max(i + off + 1);
    }
    false
}

/// Markdown block syntax at the start of a line, or unambiguous inline syntax.
fn reads_as_markdown(s: &str) -> bool {
    let block = s.lines().any(|line| {
        let l = line.trim_start();
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
    block || ["**", "__", "](", "~~", "`"].iter().any(|m| s.contains(m))
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
        assert_eq!(f("<p>starts as html</p>\n\n- even with a dash"), Format::Html);
        assert_eq!(f("plain text"), Format::Markdown);
        assert_eq!(f(r#"{"type":"doc","content":[]}"#), Format::Markdown, "JSON is text outside the agent profile");
        assert!(matches!(detect(r#" {"type":"doc"} "#, Profile::Agent), Format::IdocJson(_)));
        assert_eq!(detect("{not json}", Profile::Agent), Format::Markdown);
    }
}
