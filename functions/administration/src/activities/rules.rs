//! Work-activity rules (spec §2.2, §4.2) as plain functions and the request types they read.

use serde::{Deserialize, Serialize};
use uuid::Uuid;
use workapi_kit::input::{At, Errors, Field, Input, Language, SchemaRef, Schemas, Text};

pub const MAX_NAME_CHARS: usize = 100;
/// More translations than languages exist is a mistake, not data.
pub const MAX_TRANSLATIONS: usize = Language::CODES.len();

/// A translated name, as stored and returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Translation {
    /// ISO 639-1 code, lowercase
    #[schema(example = "de")]
    pub language: String,
    #[schema(example = "Entwicklung")]
    pub name: String,
}

/// A work activity as the API returns it (spec §2.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(examples(json!({"id": "0b7f3f0e-2a4b-4f5e-9d1c-5e6f7a8b9c0d", "name": "Development", "sort": 3, "translations": [{"language": "de", "name": "Entwicklung"}]})))]
pub struct Activity {
    pub id: Uuid,
    /// Default name, used when no translation matches the user's language
    pub name: String,
    /// Sort order, lower first
    pub sort: i64,
    pub translations: Vec<Translation>,
}

impl workapi_kit::projection::Compact for Activity {
    const COMPACT: &'static [&'static str] = &["id", "name"];
}

/// The response of the [P] activity endpoints (named, so the document can reference it).
pub type ActivityProjection = workapi_kit::projection::Projected<Activity>;

/// A translated name in a request.
#[derive(Input)]
pub struct TranslationInput {
    language: Language,
    name: Text<1, MAX_NAME_CHARS>,
}

/// Translated names, each language at most once.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Translations(pub Vec<Translation>);

impl Field for Translations {
    fn read(value: &serde_json::Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let Some(items) = value.as_array() else {
            errors.add(at, format!("{} must be an array", at.name()));
            return None;
        };
        if items.len() > MAX_TRANSLATIONS {
            errors.add(at, format!("at most {MAX_TRANSLATIONS} translations"));
        }
        let mut translations = Vec::new();
        let mut valid = items.len() <= MAX_TRANSLATIONS;
        for (i, item) in items.iter().enumerate() {
            let item_at = at.index(i);
            match TranslationInput::read(item, &item_at, errors) {
                Some(t) if translations.iter().any(|seen: &Translation| seen.language == t.language.code()) => {
                    errors.add(&item_at.child("language"), format!("{} appears more than once", t.language.code()));
                    valid = false;
                }
                Some(t) => {
                    translations.push(Translation { language: t.language.code().to_owned(), name: t.name.into() })
                }
                None => valid = false,
            }
        }
        valid.then_some(Translations(translations))
    }

    fn schema() -> SchemaRef {
        utoipa::openapi::schema::ArrayBuilder::new()
            .items(TranslationInput::schema())
            .max_items(Some(MAX_TRANSLATIONS))
            .description(Some("A language may appear once"))
            .into()
    }

    fn schemas(out: &mut Schemas) {
        TranslationInput::schemas(out)
    }
}

/// A new work activity.
#[derive(Input)]
#[input(example = serde_json::json!({"name": "Development", "translations": [{"language": "de", "name": "Entwicklung"}]}))]
pub struct NewActivityBody {
    name: Text<1, MAX_NAME_CHARS>,
    /// Omitted means none
    translations: Option<Translations>,
}

/// A work activity's full update.
#[derive(Input)]
#[input(example = serde_json::json!({"name": "Development", "translations": [{"language": "fr", "name": "Développement"}]}))]
pub struct ActivityBody {
    name: Text<1, MAX_NAME_CHARS>,
    translations: Translations,
}

/// What a create or a full update stores.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub name: String,
    pub translations: Vec<Translation>,
}

impl From<NewActivityBody> for Draft {
    fn from(body: NewActivityBody) -> Draft {
        Draft { name: body.name.into(), translations: body.translations.unwrap_or_default().0 }
    }
}

impl From<ActivityBody> for Draft {
    fn from(body: ActivityBody) -> Draft {
        Draft { name: body.name.into(), translations: body.translations.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use workapi_kit::ApiResult;

    fn full(v: serde_json::Value) -> ApiResult<Draft> {
        workapi_kit::input::parse::<ActivityBody>(&v).map(Draft::from)
    }

    #[test]
    fn translations_are_validated_item_by_item() {
        let err = full(json!({"name": "Dev", "translations": [
            {"language": "de", "name": "Entwicklung"},
            {"language": "xx", "name": "?"},
            {"language": "DE", "name": "Nochmal"},
            {"name": "no language"},
            "text",
        ]}))
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
        assert!(full(json!({"name": "Dev"})).is_err());
        let created = workapi_kit::input::parse::<NewActivityBody>(&json!({"name": " Dev "})).map(Draft::from).unwrap();
        assert_eq!(created, Draft { name: "Dev".into(), translations: vec![] });
        let normalised = full(json!({"name": "Dev", "translations": [{"language": "FR", "name": "Dév"}]})).unwrap();
        assert_eq!(normalised.translations[0].language, "fr");
    }
}
