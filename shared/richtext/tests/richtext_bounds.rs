//! Bounded work (issue 26 item 5, DESIGN §5): the inputs that made the parsers work hardest, at
//! the size limit, are refused as too deep by the scans before parsing, or accepted. What is
//! asserted is the outcome; the time each takes is measured by `benches/richtext.rs` (published
//! in docs/richtext.md).

use workapi_richtext::{MAX_DEPTH, MAX_HTML_DEPTH, MAX_INPUT_BYTES, Profile, RichTextError, to_idoc};

/// `unit` repeated up to the size limit (what follows `prefix`), then `suffix`.
fn at_limit(prefix: &str, unit: &str, suffix: &str) -> String {
    let room = MAX_INPUT_BYTES - prefix.len() - suffix.len();
    format!("{prefix}{}{suffix}", unit.repeat(room / unit.len()))
}

fn too_deep(input: &str) -> bool {
    [Profile::Editor, Profile::Product, Profile::Agent].into_iter().all(|profile| {
        let result = to_idoc(input, profile);
        assert!(input.len() <= MAX_INPUT_BYTES);
        match result {
            Err(e @ RichTextError::TooDeep { .. }) => {
                assert!(e.to_string().starts_with("rich text is nested too deeply"), "{e}");
                true
            }
            Err(e) => panic!("{}…: {e}", &input[..40]),
            Ok(_) => false,
        }
    })
}

#[test]
fn deep_markdown_containers_are_refused() {
    let indented_lists: String = {
        let mut s = String::new();
        let mut level = 0;
        while s.len() + 2 * level + 4 < MAX_INPUT_BYTES {
            s.push_str(&format!("{}- a\n", "  ".repeat(level)));
            level += 1;
        }
        s
    };
    for input in [
        at_limit("", ">", ""),
        at_limit("", "> ", "x"),
        at_limit("", "- ", "x"),
        at_limit("", "* ", "x"),
        at_limit("", "1. ", "x"),
        at_limit("", "> - ", "x"),
        at_limit("", "\t> ", "x"),
        indented_lists,
    ] {
        assert!(too_deep(&input), "{:?}…", &input[..40]);
    }
}

#[test]
fn deep_html_is_refused() {
    let ids: String = (0..20_000).map(|i| format!("<p><b id={i}>x")).collect();
    for input in [
        at_limit("", "<ul><li>", ""),
        at_limit("", "<ol><li>", ""),
        at_limit("", "<div>", ""),
        at_limit("", "<blockquote>", ""),
        at_limit("", "<b><i>", ""),
        at_limit("", "<span>", ""),
        at_limit("", "<table><tr><td>", ""),
        at_limit("<svg>", "<g>", ""),
        at_limit("", "<DIV CLASS=\"a>b\">", ""),
        format!("{}{}", "<div>".repeat(MAX_INPUT_BYTES / 11), "</div>".repeat(MAX_INPUT_BYTES / 11)),
        // distinct formatting elements that every new paragraph reopens
        ids[..MAX_INPUT_BYTES.min(ids.len())].to_string(),
    ] {
        assert!(too_deep(&input), "{:?}…", &input[..40]);
    }
}

#[test]
fn deep_html_inside_markdown_is_refused() {
    // Markdown (a heading), with deep inline HTML and deep emphasis.
    for input in [
        at_limit("# t\n\n", "<span>", ""),
        at_limit("# t\n\n", "<b>", ""),
        at_limit("# t\n\n<div>\n", "<div>", ""),
        format!("{}a{}", "*".repeat(MAX_INPUT_BYTES / 2 - 1), "*".repeat(MAX_INPUT_BYTES / 2 - 1)),
    ] {
        assert!(too_deep(&input), "{:?}…", &input[..40]);
    }
}

#[test]
fn long_flat_input_is_accepted() {
    for input in [
        at_limit("", "[", ""),
        at_limit("", "*", ""),
        at_limit("", "*a", ""),
        at_limit("", "**a ", ""),
        at_limit("", "_a", ""),
        at_limit("", "`", ""),
        at_limit("", "a`", ""),
        at_limit("", "~~a", ""),
        at_limit("", "[a](", ""),
        at_limit("", "![", ""),
        at_limit("", "<", ""),
        at_limit("", "<a ", ""),
        at_limit("", "<x>", ""),
        at_limit("", "- - ", ""),
        at_limit("", "- a\n", ""),
        at_limit("", "> a\n", ""),
        at_limit("", "<p>a", ""),
        at_limit("", "<li>a", ""),
        at_limit("<table>", "<tr><td>a", "</table>"),
        at_limit("", "<b>a</b>", ""),
        at_limit("", "<p><b>a", ""),
    ] {
        assert!(!too_deep(&input), "{:?}…", &input[..40]);
    }
}

#[test]
fn depth_at_the_limit() {
    // doc, blockquotes, paragraph, text: MAX_DEPTH levels in all is accepted, one more refused.
    let quotes = |n: usize| format!("{}x", "> ".repeat(n));
    assert!(to_idoc(&quotes(MAX_DEPTH - 3), Profile::Editor).is_ok());
    assert_eq!(to_idoc(&quotes(MAX_DEPTH - 2), Profile::Editor), Err(RichTextError::TooDeep { max: MAX_DEPTH }));
    let html_quotes = |n: usize| format!("{}x", "<blockquote>".repeat(n));
    assert!(to_idoc(&html_quotes(MAX_DEPTH - 3), Profile::Editor).is_ok());
    assert_eq!(to_idoc(&html_quotes(MAX_DEPTH - 2), Profile::Editor), Err(RichTextError::TooDeep { max: MAX_DEPTH }));
    // Elements that make no IDoc level count only against the HTML limit.
    let spans = |n: usize| format!("{}x", "<span>".repeat(n));
    assert!(to_idoc(&spans(MAX_HTML_DEPTH), Profile::Editor).is_ok());
    assert_eq!(
        to_idoc(&spans(MAX_HTML_DEPTH + 1), Profile::Editor),
        Err(RichTextError::TooDeep { max: MAX_HTML_DEPTH })
    );
}
