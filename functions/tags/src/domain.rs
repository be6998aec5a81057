//! Tag rules (spec §2.5, §4.6) as plain functions. The types, the palette and the record are
//! `workapi_domain::tag`, which other functions read too.

pub use workapi_domain::tag::{Color, TAG_TYPES, TagType};

/// Longest accepted tag name, in characters (the spec gives none; documented in docs/tags.md).
pub const MAX_NAME_CHARS: usize = 100;

/// The case-insensitive identity of a name: Unicode lowercase of the trimmed name, with inner
/// whitespace runs collapsed so "Very  urgent" and "very urgent" are one tag, in Unicode NFC so
/// that a precomposed "é" and "e" + combining acute (what some keyboards and macOS file names
/// produce) are one tag too.
pub fn fold_name(name: &str) -> String {
    let lowered = name.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    icu_normalizer::ComposingNormalizerBorrowed::new_nfc().normalize(&lowered).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fold_case_whitespace_and_canonical_equivalence() {
        for (a, b) in [
            ("Urgent", "urgent"),
            ("Very  urgent ", "very urgent"),
            ("Caf\u{e9}", "cafe\u{301}"),
            ("CAFE\u{301}", "caf\u{e9}"),
            ("\u{212B}ngstr\u{f6}m", "\u{c5}ngstro\u{308}m"),
        ] {
            assert_eq!(fold_name(a), fold_name(b), "{a:?} vs {b:?}");
        }
        assert_ne!(fold_name("cafe"), fold_name("caf\u{e9}"));
    }

    #[test]
    fn names_fold_case_insensitively() {
        assert_eq!(fold_name("  Urgent "), "urgent");
        assert_eq!(fold_name("ÄRGER"), fold_name("ärger"));
        assert_eq!(fold_name("Very \t Urgent"), "very urgent");
        assert_ne!(fold_name("urgent"), fold_name("urgent!"));
    }
}
