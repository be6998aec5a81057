//! Which format a rich-text string is in. IDoc JSON only in the agent profile; HTML when a known
//! tag appears and the text does not read as Markdown; Markdown otherwise. A known tag is one of
//! the elements the HTML parser handles (`tags`); `a < b`, `Vec<u8>` and `Vec<Data>` contain
//! none, so they stay Markdown (text).

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
    if has_known_tag(input) && (trimmed.starts_with('<') || !reads_as_markdown(input)) {
        Format::Html
    } else {
        Format::Markdown
    }
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
/// the lower-case name and whether it is an end tag.
fn tag_at(s: &str, at: usize) -> Option<(String, bool)> {
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
    let one_case = !name.bytes().any(|c| c.is_ascii_uppercase()) || !name.bytes().any(|c| c.is_ascii_lowercase());
    let lower = name.to_ascii_lowercase();
    (delimited && one_case && tags::is_known(&lower)).then_some((lower, closing))
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
