//! Link targets: only absolute `http`, `https` and `mailto` URLs, decided by parsing the URL
//! the way a browser would (WHATWG, via the `url` crate), never by pattern matching, so
//! entity-, case-, whitespace- and control-character-obfuscated schemes fall out by construction.

/// The href to store, or `None` when the link must be dropped (its text is kept).
pub fn checked_href(raw: &str) -> Option<String> {
    // What a browser ignores when it parses an href: leading/trailing C0 controls and spaces,
    // and tabs and newlines anywhere. Storing the cleaned form means what we checked is exactly
    // what a browser will follow.
    let cleaned: String =
        raw.trim_matches(|c: char| c <= ' ').chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
    let cleaned = encode_controls(cleaned);
    if cleaned.is_empty() || cleaned.len() > 2048 {
        return None;
    }
    let url = url::Url::parse(&cleaned).ok()?;
    match url.scheme() {
        // The URL parser forgives `https:/host` and `https:\\host`; a stored href must read as
        // what it is, so http(s) must be written with `//` (found by fuzzing).
        "http" | "https"
            if url.host_str().is_some_and(|h| !h.is_empty()) && cleaned[url.scheme().len() + 1..].starts_with("//") =>
        {
            Some(cleaned)
        }
        "mailto" => Some(cleaned),
        _ => None,
    }
}

/// Control characters left inside an href (and U+2028/U+2029) percent-encoded, which is how the
/// URL parser reads them anyway (in a host or scheme they make it fail), so that no href carries
/// them raw into the HTML.
fn encode_controls(href: String) -> String {
    let odd = |c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
    if !href.contains(odd) {
        return href;
    }
    let mut out = String::with_capacity(href.len() + 8);
    for c in href.chars() {
        if odd(c) {
            for b in c.encode_utf8(&mut [0; 4]).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::checked_href;

    #[test]
    fn allows_only_absolute_http_https_mailto() {
        for ok in ["https://example.com", "http://a.b/c?d=e&f#g", "mailto:a@b.c", "HTTPS://X.COM", " https://x.com "] {
            assert!(checked_href(ok).is_some(), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "JaVaScRiPt:alert(1)",
            "java\tscript:alert(1)",
            "\u{1}javascript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:x",
            "/relative",
            "//evil.com/x",
            "relative/path",
            "ftp://x.com",
            "tel:123",
            "https://",
            "https:/host.example/x",
            "https:\\\\host.example",
            "",
        ] {
            assert_eq!(checked_href(bad), None, "{bad:?}");
        }
        assert_eq!(checked_href("java\nscript:x"), None);
        assert_eq!(checked_href(" https://x.com/a\tb ").as_deref(), Some("https://x.com/ab"));
        // control characters inside are percent-encoded, or fail in a host
        assert_eq!(checked_href("https://x.com/a\u{1}b\u{2028}").as_deref(), Some("https://x.com/a%01b%E2%80%A8"));
        assert_eq!(checked_href("mailto:a\u{7f}@b.c").as_deref(), Some("mailto:a%7F@b.c"));
        assert_eq!(checked_href("https://x\u{1}y.com/"), None);
    }
}
