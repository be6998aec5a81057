//! Fuzzes detection, the HTML and Markdown parsers and the renderer with arbitrary text in every
//! profile. Invariants: no panic; the result is valid IDoc; the rendered HTML contains no script
//! and only checked hrefs; the round-trip promise `parse(render(doc)) == doc` holds, and so
//! rendered HTML is a fixed point (rendering what it parses to gives it back).
#![no_main]

use libfuzzer_sys::fuzz_target;
use workapi_richtext::{Profile, to_html, to_idoc, validate};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let profile = [Profile::Editor, Profile::Product, Profile::Agent][usize::from(selector % 3)];
    let input = String::from_utf8_lossy(rest);
    let Ok(doc) = to_idoc(&input, profile) else { return };
    validate(&doc, profile).expect("parser output is valid IDoc");
    let html = to_html(&doc);
    assert!(!html.to_ascii_lowercase().contains("<script"), "script in {html}");
    // Text cannot contain "<a " (it is escaped), so this finds every link the renderer wrote.
    const A: &str = "<a target=\"_blank\" rel=\"noopener noreferrer nofollow\" href=\"";
    assert_eq!(html.matches("<a ").count(), html.matches(A).count(), "{html}");
    for (i, _) in html.match_indices(A) {
        let href = &html[i + A.len()..];
        let lower = href.to_ascii_lowercase();
        assert!(lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("mailto:"), "{html}");
    }
    let again = to_idoc(&html, profile).expect("rendered HTML parses");
    assert_eq!(again, doc, "parse(render(doc)) != doc for {html}");
    assert_eq!(to_html(&again), html, "rendered HTML is not a fixed point");
});
