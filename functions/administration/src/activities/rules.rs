//! Work-activity rules (spec §2.2, §4.2) as plain functions.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use shared::ApiResult;
use shared::validate::Fields;
use uuid::Uuid;

pub const MAX_NAME_CHARS: usize = 100;
/// More translations than languages exist is a mistake, not data.
pub const MAX_TRANSLATIONS: usize = ISO_639_1.len();

/// Every ISO 639-1 language code (the 184 two-letter codes), sorted.
pub const ISO_639_1: &[&str] = &[
    "aa", "ab", "ae", "af", "ak", "am", "an", "ar", "as", "av", "ay", "az", "ba", "be", "bg", "bh", "bi", "bm", "bn",
    "bo", "br", "bs", "ca", "ce", "ch", "co", "cr", "cs", "cu", "cv", "cy", "da", "de", "dv", "dz", "ee", "el", "en",
    "eo", "es", "et", "eu", "fa", "ff", "fi", "fj", "fo", "fr", "fy", "ga", "gd", "gl", "gn", "gu", "gv", "ha", "he",
    "hi", "ho", "hr", "ht", "hu", "hy", "hz", "ia", "id", "ie", "ig", "ii", "ik", "io", "is", "it", "iu", "ja", "jv",
    "ka", "kg", "ki", "kj", "kk", "kl", "km", "kn", "ko", "kr", "ks", "ku", "kv", "kw", "ky", "la", "lb", "lg", "li",
    "ln", "lo", "lt", "lu", "lv", "mg", "mh", "mi", "mk", "ml", "mn", "mr", "ms", "mt", "my", "na", "nb", "nd", "ne",
    "ng", "nl", "nn", "no", "nr", "nv", "ny", "oc", "oj", "om", "or", "os", "pa", "pi", "pl", "ps", "pt", "qu", "rm",
    "rn", "ro", "ru", "rw", "sa", "sc", "sd", "se", "sg", "si", "sk", "sl", "sm", "sn", "so", "sq", "sr", "ss", "st",
    "su", "sv", "sw", "ta", "te", "tg", "th", "ti", "tk", "tl", "tn", "to", "tr", "ts", "tt", "tw", "ty", "ug", "uk",
    "ur", "uz", "ve", "vi", "vo", "wa", "wo", "xh", "yi", "yo", "za", "zh", "zu",
];

/// A code in any letter case, normalised to lowercase when it is an ISO 639-1 code.
pub fn language_code(text: &str) -> Option<&'static str> {
    let lower = text.trim().to_ascii_lowercase();
    ISO_639_1.binary_search(&lower.as_str()).ok().map(|i| ISO_639_1[i])
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Translation {
    /// ISO 639-1 code, lowercase
    #[schema(pattern = "^[a-zA-Z]{2}$")]
    pub language: String,
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\x00-\x1F\x7F-\x9F]*[^\s\x00-\x1F\x7F-\x9F][^\x00-\x1F\x7F-\x9F]*$"
    )]
    pub name: String,
}

/// A work activity as the API returns it (spec §2.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Activity {
    pub id: Uuid,
    /// Default name, used when no translation matches the user's language
    pub name: String,
    /// Sort order, lower first
    pub sort: i64,
    pub translations: Vec<Translation>,
}

/// What a create or a full update stores.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub name: String,
    pub translations: Vec<Translation>,
}

/// Reads `{name, translations: [{language, name}]}`; `translations` is required on a full
/// update and defaults to none on create. Every problem is reported by its path
/// (`translations[1].language`); a language may appear once.
pub fn draft(body: &Map<String, Value>, translations_required: bool) -> ApiResult<Draft> {
    let mut fields = Fields::new(body);
    let name = fields.required_text("name", MAX_NAME_CHARS);
    let items = if translations_required || fields.has("translations") {
        fields.required_array("translations").cloned()
    } else {
        Some(Vec::new())
    };
    let mut translations = Vec::new();
    if let Some(items) = items {
        if items.len() > MAX_TRANSLATIONS {
            fields.error("translations", format!("at most {MAX_TRANSLATIONS} translations"));
        }
        for (i, item) in items.iter().enumerate() {
            let path = format!("translations[{i}]");
            let Value::Object(item) = item else {
                fields.error(&path, format!("{path} must be an object with language and name"));
                continue;
            };
            let mut inner = Fields::new(item);
            let language = inner.required_text("language", 2);
            let name = inner.required_text("name", MAX_NAME_CHARS);
            let (Some(language), Some(name)) = (language, name) else {
                for (field, messages) in inner.finish().err().and_then(|e| e.errors).unwrap_or_default() {
                    for message in messages {
                        fields.error(&format!("{path}.{field}"), message);
                    }
                }
                continue;
            };
            match language_code(&language) {
                None => fields.error(&format!("{path}.language"), format!("{language} is not an ISO 639-1 code")),
                Some(code) if translations.iter().any(|t: &Translation| t.language == code) => {
                    fields.error(&format!("{path}.language"), format!("{code} appears more than once"))
                }
                Some(code) => translations.push(Translation { language: code.to_owned(), name }),
            }
        }
    }
    fields.finish()?;
    Ok(Draft { name: name.expect("validated"), translations })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn the_code_list_is_sorted_unique_and_complete() {
        assert_eq!(ISO_639_1.len(), 184);
        assert!(ISO_639_1.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(language_code("DE"), Some("de"));
        assert_eq!(language_code("xx"), None);
        assert_eq!(language_code("deu"), None, "ISO 639-2 is not 639-1");
    }

    #[test]
    fn translations_are_validated_item_by_item() {
        let err = draft(
            &body(json!({"name": "Dev", "translations": [
                {"language": "de", "name": "Entwicklung"},
                {"language": "xx", "name": "?"},
                {"language": "DE", "name": "Nochmal"},
                {"name": "no language"},
                "text",
            ]})),
            true,
        )
        .unwrap_err();
        let errors = err.errors.unwrap();
        let keys: Vec<_> = errors.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["translations[1].language", "translations[2].language", "translations[3].language", "translations[4]"]
        );
        assert!(errors["translations[2].language"][0].contains("more than once"));
    }

    #[test]
    fn translations_are_required_on_a_full_update_only() {
        assert!(draft(&body(json!({"name": "Dev"})), true).is_err());
        let created = draft(&body(json!({"name": " Dev "})), false).unwrap();
        assert_eq!(created, Draft { name: "Dev".into(), translations: vec![] });
        let normalised =
            draft(&body(json!({"name": "Dev", "translations": [{"language": "FR", "name": "Dév"}]})), true).unwrap();
        assert_eq!(normalised.translations[0].language, "fr");
    }
}
