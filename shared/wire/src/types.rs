//! The field types with bounds: text, numbers, languages, dates, lists.

use super::{At, Errors, Field, SchemaRef, Schemas};
use crate::calendar;
use serde_json::Value;
use std::ops::Deref;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
use utoipa::openapi::{KnownFormat, SchemaFormat};

/// Characters a name or description may not hold although they are not control characters:
/// bidirectional overrides and isolates (they reorder what a reader sees), invisible spaces and
/// the byte-order mark, and the Unicode line and paragraph separators. The zero-width joiners
/// stay allowed: emoji sequences and several scripts need them.
pub fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
    )
}

/// The same set, as a regular-expression class body (ECMA-262 and Python syntax).
const INVISIBLE_CLASS: &str =
    r"\u00AD\u061C\u180E\u200B\u200E\u200F\u202A-\u202E\u2028\u2029\u2060-\u2064\u2066-\u206F\uFEFF";

/// Whether a schema `pattern` is the guard [`Text`] documents (no control or invisible format
/// characters, not blank): a rule every text field shares, which a reader of one field's schema
/// (a model writing a tool's arguments, `mcp`) needs no regular expression to follow.
pub fn is_text_guard(pattern: &str) -> bool {
    pattern.contains(INVISIBLE_CLASS)
}

/// Text, trimmed, of `MIN`..=`MAX` characters, without control characters (a line feed only
/// when `MULTILINE`) or invisible format characters. `MIN` ≥ 1 also refuses whitespace only.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Text<const MIN: usize, const MAX: usize, const MULTILINE: bool = false>(String);

/// [`Text`] that may hold line feeds.
pub type MultilineText<const MIN: usize, const MAX: usize> = Text<MIN, MAX, true>;

impl<const MIN: usize, const MAX: usize, const MULTILINE: bool> Text<MIN, MAX, MULTILINE> {
    pub fn into_string(self) -> String {
        self.0
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Checks a text against the bounds: the trimmed text, or the message naming what is wrong.
    pub fn check(raw: &str, name: &str) -> Result<Self, String> {
        let text = raw.trim();
        let chars = text.chars().count();
        if MIN > 0 && chars == 0 {
            Err(format!("{name} must not be empty"))
        } else if chars < MIN {
            Err(format!("{name} must be at least {MIN} characters"))
        } else if chars > MAX {
            Err(format!("{name} must be at most {MAX} characters"))
        } else if text.chars().any(|c| c.is_control() && !(MULTILINE && c == '\n')) {
            Err(format!("{name} must not contain control characters"))
        } else if text.chars().any(is_invisible_format) {
            Err(format!("{name} must not contain invisible or bidirectional formatting characters"))
        } else {
            Ok(Text(text.to_owned()))
        }
    }
}

impl<const MIN: usize, const MAX: usize, const MULTILINE: bool> Deref for Text<MIN, MAX, MULTILINE> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<const MIN: usize, const MAX: usize, const MULTILINE: bool> From<Text<MIN, MAX, MULTILINE>> for String {
    fn from(text: Text<MIN, MAX, MULTILINE>) -> String {
        text.0
    }
}

impl<const MIN: usize, const MAX: usize, const MULTILINE: bool> Field for Text<MIN, MAX, MULTILINE> {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let Some(raw) = value.as_str() else {
            errors.add(at, format!("{} must be a string", at.name()));
            return None;
        };
        Self::check(raw, at.name()).map_err(|message| errors.add(at, message)).ok()
    }

    fn schema() -> SchemaRef {
        let allowed = if MULTILINE {
            format!(r"[^\x00-\x09\x0B-\x1F\x7F-\x9F{INVISIBLE_CLASS}]")
        } else {
            format!(r"[^\x00-\x1F\x7F-\x9F{INVISIBLE_CLASS}]")
        };
        let pattern = if MIN > 0 {
            let visible = format!(r"[^\s\x00-\x1F\x7F-\x9F{INVISIBLE_CLASS}]");
            format!("^{allowed}*{visible}{allowed}*$")
        } else {
            format!("^{allowed}*$")
        };
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length((MIN > 0).then_some(MIN))
            .max_length(Some(MAX))
            .pattern(Some(pattern))
            .into()
    }
}

/// An integer in `MIN..=MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Integer<const MIN: i64, const MAX: i64>(pub i64);

impl<const MIN: i64, const MAX: i64> Field for Integer<MIN, MAX> {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        if errors.is_inexact(at) {
            errors.add(at, format!("{} cannot be read exactly: send an integer from {MIN} to {MAX}", at.name()));
            return None;
        }
        // 3.0 is an integer to JSON Schema too; doubles are exact integers up to 2^53.
        let integral = || value.as_f64().filter(|f| f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0);
        match value.as_i64().or_else(|| integral().map(|f| f as i64)) {
            Some(n) if (MIN..=MAX).contains(&n) => Some(Integer(n)),
            _ => {
                errors.add(at, format!("{} must be an integer from {MIN} to {MAX}", at.name()));
                None
            }
        }
    }

    fn schema() -> SchemaRef {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(MIN as f64))
            .maximum(Some(MAX as f64))
            .into()
    }
}

/// Significant digits a JSON number may carry: up to 15, every decimal survives the JSON
/// parser's binary double exactly (its shortest round-trip form is the text that was sent).
const MAX_SIGNIFICANT_DIGITS: usize = 15;

/// An exact decimal number in `MIN..=MAX` (above `MIN` when `ABOVE_MIN`: `exclusiveMinimum`)
/// with at most `SCALE` digits after the point, sent as a JSON number. Never used as a float:
/// the number's decimal text is recovered exactly (see [`MAX_SIGNIFICANT_DIGITS`]) and parsed by
/// `rust_decimal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Decimal<const MIN: i64, const MAX: i64, const SCALE: u32, const ABOVE_MIN: bool = false>(
    pub rust_decimal::Decimal,
);

/// A [`Decimal`] above 0, up to `MAX`.
pub type PositiveDecimal<const MAX: i64, const SCALE: u32> = Decimal<0, MAX, SCALE, true>;

impl<const MIN: i64, const MAX: i64, const SCALE: u32, const ABOVE_MIN: bool> Decimal<MIN, MAX, SCALE, ABOVE_MIN> {
    /// The decimal a JSON number denotes, or the reason it cannot be taken exactly.
    pub fn exact(number: &serde_json::Number) -> Result<rust_decimal::Decimal, String> {
        let text = number.to_string();
        let digits = text.split(['e', 'E']).next().unwrap_or_default();
        let significant = digits.chars().filter(char::is_ascii_digit).skip_while(|c| *c == '0').count();
        if significant > MAX_SIGNIFICANT_DIGITS {
            return Err(format!("at most {MAX_SIGNIFICANT_DIGITS} significant digits"));
        }
        rust_decimal::Decimal::from_scientific(&text)
            .or_else(|_| text.parse::<rust_decimal::Decimal>())
            .map(|d| d.normalize())
            .map_err(|_| "a decimal number".to_owned())
    }
}

impl<const MIN: i64, const MAX: i64, const SCALE: u32, const ABOVE_MIN: bool> Field
    for Decimal<MIN, MAX, SCALE, ABOVE_MIN>
{
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let name = at.name();
        let Value::Number(number) = value else {
            errors.add(at, format!("{name} must be a number"));
            return None;
        };
        if errors.is_inexact(at) {
            errors.add(
                at,
                format!("{name} cannot be read exactly: send at most {MAX_SIGNIFICANT_DIGITS} significant digits"),
            );
            return None;
        }
        let checked = Self::exact(number).and_then(|d| {
            if ABOVE_MIN && d <= rust_decimal::Decimal::from(MIN) {
                Err(format!("above {MIN}, at most {MAX}"))
            } else if d < rust_decimal::Decimal::from(MIN) || d > rust_decimal::Decimal::from(MAX) {
                Err(format!("from {MIN} to {MAX}"))
            } else if d.scale() > SCALE {
                Err(format!("with at most {SCALE} digits after the decimal point"))
            } else {
                Ok(d)
            }
        });
        checked.map(Decimal).map_err(|why| errors.add(at, format!("{name} must be a number {why}"))).ok()
    }

    fn schema() -> SchemaRef {
        let step = rust_decimal::Decimal::new(1, SCALE);
        let builder = ObjectBuilder::new().schema_type(Type::Number);
        let builder =
            if ABOVE_MIN { builder.exclusive_minimum(Some(MIN as f64)) } else { builder.minimum(Some(MIN as f64)) };
        builder.maximum(Some(MAX as f64)).multiple_of(step.to_string().parse::<f64>().ok()).into()
    }
}

/// An ISO 639-1 language code (any letter case on input, lowercase once read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Language(&'static str);

impl Language {
    /// Every ISO 639-1 code (the 184 two-letter codes), sorted.
    pub const CODES: &'static [&'static str] = &[
        "aa", "ab", "ae", "af", "ak", "am", "an", "ar", "as", "av", "ay", "az", "ba", "be", "bg", "bh", "bi", "bm",
        "bn", "bo", "br", "bs", "ca", "ce", "ch", "co", "cr", "cs", "cu", "cv", "cy", "da", "de", "dv", "dz", "ee",
        "el", "en", "eo", "es", "et", "eu", "fa", "ff", "fi", "fj", "fo", "fr", "fy", "ga", "gd", "gl", "gn", "gu",
        "gv", "ha", "he", "hi", "ho", "hr", "ht", "hu", "hy", "hz", "ia", "id", "ie", "ig", "ii", "ik", "io", "is",
        "it", "iu", "ja", "jv", "ka", "kg", "ki", "kj", "kk", "kl", "km", "kn", "ko", "kr", "ks", "ku", "kv", "kw",
        "ky", "la", "lb", "lg", "li", "ln", "lo", "lt", "lu", "lv", "mg", "mh", "mi", "mk", "ml", "mn", "mr", "ms",
        "mt", "my", "na", "nb", "nd", "ne", "ng", "nl", "nn", "no", "nr", "nv", "ny", "oc", "oj", "om", "or", "os",
        "pa", "pi", "pl", "ps", "pt", "qu", "rm", "rn", "ro", "ru", "rw", "sa", "sc", "sd", "se", "sg", "si", "sk",
        "sl", "sm", "sn", "so", "sq", "sr", "ss", "st", "su", "sv", "sw", "ta", "te", "tg", "th", "ti", "tk", "tl",
        "tn", "to", "tr", "ts", "tt", "tw", "ty", "ug", "uk", "ur", "uz", "ve", "vi", "vo", "wa", "wo", "xh", "yi",
        "yo", "za", "zh", "zu",
    ];

    /// A code in any letter case.
    pub fn parse(text: &str) -> Option<Language> {
        let lower = text.trim().to_ascii_lowercase();
        Self::CODES.binary_search(&lower.as_str()).ok().map(|i| Language(Self::CODES[i]))
    }

    pub fn code(self) -> &'static str {
        self.0
    }
}

impl Field for Language {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let parsed = value.as_str().and_then(Language::parse);
        if parsed.is_none() {
            let shown = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            errors.add(at, format!("{shown} is not an ISO 639-1 code"));
        }
        parsed
    }

    fn schema() -> SchemaRef {
        super::reference("Language")
    }

    fn schemas(out: &mut Schemas) {
        let schema = ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("An ISO 639-1 language code (two letters; any letter case is accepted)"))
            .enum_values(Some(Self::CODES.iter().copied()))
            .examples(["de"])
            .into();
        out.push(("Language".into(), schema));
    }
}

/// A list of `MIN`..=`MAX` items (`minItems`, `maxItems`); each item is read and reported by its
/// index.
#[derive(Debug, Clone, PartialEq)]
pub struct List<T, const MAX: usize, const MIN: usize = 0>(pub Vec<T>);

/// A [`List`] of at least one item.
pub type NonEmptyList<T, const MAX: usize> = List<T, MAX, 1>;

impl<T: Field, const MAX: usize, const MIN: usize> Field for List<T, MAX, MIN> {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let Some(items) = value.as_array() else {
            errors.add(at, format!("{} must be an array", at.name()));
            return None;
        };
        let counted = (MIN..=MAX).contains(&items.len());
        if items.len() > MAX {
            errors.add(at, format!("{} may hold at most {MAX} items", at.name()));
        } else if items.len() < MIN {
            let least = if MIN == 1 { "one item".to_owned() } else { format!("{MIN} items") };
            errors.add(at, format!("{} must hold at least {least}", at.name()));
        }
        let read: Vec<Option<T>> =
            items.iter().enumerate().map(|(i, item)| T::read(item, &at.index(i), errors)).collect();
        counted.then_some(())?;
        read.into_iter().collect::<Option<Vec<T>>>().map(List)
    }

    fn schema() -> SchemaRef {
        ArrayBuilder::new().items(T::schema()).min_items((MIN > 0).then_some(MIN)).max_items(Some(MAX)).into()
    }

    fn schemas(out: &mut Schemas) {
        T::schemas(out)
    }
}

/// A calendar date, `YYYY-MM-DD` in the accepted range (`crate::calendar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DateOnly(pub time::Date);

impl Field for DateOnly {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let parsed = value.as_str().and_then(calendar::parse_date).map(DateOnly);
        if parsed.is_none() {
            errors.add(at, format!("{} must be {}", at.name(), calendar::DATE_RANGE_TEXT));
        }
        parsed
    }

    fn schema() -> SchemaRef {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date)))
            .pattern(Some(calendar::DATE_PATTERN))
            .into()
    }
}

/// An instant, RFC 3339 (`2026-11-23T10:00:00Z`, an offset is kept), in the accepted range
/// (`crate::calendar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DateTime(pub time::OffsetDateTime);

impl Field for DateTime {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        // A date alone is not an instant here: the field asks for a time too.
        let parsed = value
            .as_str()
            .filter(|s| calendar::parse_date(s).is_none())
            .and_then(calendar::parse_instant)
            .map(DateTime);
        if parsed.is_none() {
            errors.add(
                at,
                format!(
                    "{} must be a date-time (RFC 3339, e.g. 2026-11-23T10:00:00Z) from {} to {}",
                    at.name(),
                    calendar::FIRST_DAY,
                    calendar::LAST_DAY
                ),
            );
        }
        parsed
    }

    fn schema() -> SchemaRef {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .into()
    }
}

/// Rich text (spec §1.4) in the profile `P`: HTML or Markdown, detected, parsed and validated
/// into the IDoc that is stored; rendered back as HTML in responses. An empty string is one
/// empty paragraph.
#[derive(Debug, Clone, PartialEq)]
pub struct RichText<P: RichTextProfile>(pub workapi_richtext::Doc, std::marker::PhantomData<P>);

impl<P: RichTextProfile> RichText<P> {
    pub fn into_doc(self) -> workapi_richtext::Doc {
        self.0
    }
}

/// The profile of a [`RichText`] field, as a type.
pub trait RichTextProfile: std::fmt::Debug + Clone + PartialEq {
    const PROFILE: workapi_richtext::Profile;
    const DESCRIPTION: &'static str;
}

/// Descriptions and comments: paragraphs, headings, lists, breaks, rules, quotes.
#[derive(Debug, Clone, PartialEq)]
pub struct EditorProfile;

impl RichTextProfile for EditorProfile {
    const PROFILE: workapi_richtext::Profile = workapi_richtext::Profile::Editor;
    const DESCRIPTION: &'static str = "Rich text, HTML or Markdown (detected): paragraph, heading, lists, hardBreak, horizontalRule, \
         blockquote; marks link, bold, code, italic, strike, underline. Returned as HTML.";
}

/// Product and variant descriptions: the editor profile plus tables, callouts and emoji.
#[derive(Debug, Clone, PartialEq)]
pub struct ProductProfile;

impl RichTextProfile for ProductProfile {
    const PROFILE: workapi_richtext::Profile = workapi_richtext::Profile::Product;
    const DESCRIPTION: &'static str = "Rich text, HTML or Markdown (detected): the editor nodes plus table, tableRow, tableHeader, \
         tableCell, callout (icon) and emoji (icon). Returned as HTML.";
}

/// Rich text in the editor profile.
pub type EditorText = RichText<EditorProfile>;
/// Rich text in the product profile.
pub type ProductText = RichText<ProductProfile>;

impl<P: RichTextProfile> Field for RichText<P> {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        match workapi_richtext::to_idoc_json(value, P::PROFILE) {
            Ok(doc) => Some(RichText(doc, std::marker::PhantomData)),
            Err(e) => {
                errors.add(at, format!("{}: {e}", at.name()));
                None
            }
        }
    }

    fn schema() -> SchemaRef {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .max_length(Some(workapi_richtext::MAX_INPUT_BYTES))
            .description(Some(P::DESCRIPTION))
            .into()
    }
}
