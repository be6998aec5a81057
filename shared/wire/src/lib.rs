//! Typed request input (docs/conventions.md, "Request bodies"): a request body is one struct
//! deriving [`Input`], whose field types carry their bounds. The same declaration parses the
//! JSON and produces the OpenAPI schema, so what is documented is what is enforced.
//!
//! A field's type says how it is read ([`Field`]) and whether it may be absent or null
//! ([`Slot`]): `T` is required and not null, `Option<T>` may be absent (not null),
//! [`Nullable<T>`] must be present and may be null, [`Patch<T>`] tells absent, null and a value
//! apart. Every failing field is reported, by its path (`translations[1].language`), in one 400.
//!
//! Rules: a rule across fields (a unit name required when a per-unit price is set) is declared
//! on the struct, `#[input(rules = my_rules)]`, and reads the struct's generated `…Fields`, where
//! a field that failed to parse is None and is skipped by the rules that need it. Rules that need
//! the store (does the category exist?) run in the handler on a [`Checked`] body before
//! [`Checked::finish`]. Either way type errors, presence, bounds and rules come back in one 400.

pub mod calendar;
mod compact;
pub mod order;
mod types;

pub use compact::{COMPACT_EXTENSION, Compact};
pub use types::{
    DateOnly, DateTime, Decimal, EditorProfile, EditorText, Integer, Language, List, MultilineText, NonEmptyList,
    PositiveDecimal, ProductProfile, ProductText, RichText, RichTextProfile, Text, is_text_guard,
};
pub use workapi_wire_derive::Input;

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{Ref, RefOr};

// The derive names `::workapi_wire::…`, also from inside this crate (its tests).
extern crate self as workapi_wire;

/// Field name → messages, as in the spec's validation error body.
pub type FieldErrors = BTreeMap<String, Vec<String>>;

/// A body that does not read: every failing field by its path (`body` for the body as a whole).
/// The kit answers it with the spec's 400 validation body.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("Validation failed")]
pub struct Invalid {
    pub errors: FieldErrors,
}

impl Invalid {
    /// A problem of one field (or `body`).
    pub fn field(field: &str, message: impl Into<String>) -> Invalid {
        Invalid { errors: FieldErrors::from([(field.to_owned(), vec![message.into()])]) }
    }
}

pub type SchemaRef = RefOr<Schema>;
/// Named schemas a type needs in the document's components.
pub type Schemas = Vec<(String, SchemaRef)>;

/// Where a value sits in the body: its path for the `errors` map, its name for messages.
#[derive(Debug, Clone)]
pub struct At {
    path: String,
    name: String,
}

impl At {
    pub fn root() -> At {
        At { path: String::new(), name: "body".into() }
    }

    pub fn child(&self, name: &str) -> At {
        let path = if self.path.is_empty() { name.to_owned() } else { format!("{}.{name}", self.path) };
        At { path, name: name.to_owned() }
    }

    pub fn index(&self, index: usize) -> At {
        let path = format!("{}[{index}]", self.path);
        At { name: path.clone(), path }
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Every problem found while reading a body, by field path; and the paths of the body's numbers
/// that the JSON parser could not read exactly (`json::read_json_body`), which number fields
/// refuse.
#[derive(Debug, Default)]
pub struct Errors(FieldErrors, BTreeSet<String>);

impl Errors {
    pub fn add(&mut self, at: &At, message: impl Into<String>) {
        let path = if at.path.is_empty() { "body".to_owned() } else { at.path.clone() };
        self.0.entry(path).or_default().push(message.into());
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the number at `at` was not read exactly from the JSON text.
    pub fn is_inexact(&self, at: &At) -> bool {
        self.1.contains(if at.path.is_empty() { "body" } else { &at.path })
    }

    /// Records a problem of the top-level field `field` (a rule's finding).
    pub fn fail(&mut self, field: &str, message: impl Into<String>) {
        self.add(&At::root().child(field), message)
    }

    /// The value when nothing failed, else the 400 naming every failing field.
    pub fn finish<T>(self, value: Option<T>) -> Result<T, Invalid> {
        match value {
            Some(value) if self.0.is_empty() => Ok(value),
            _ if self.0.is_empty() => Err(Invalid::field("body", "Invalid request body")),
            _ => Err(Invalid { errors: self.0 }),
        }
    }
}

/// A value of some JSON type with its bounds: reads a present, non-null value.
pub trait Field: Sized {
    /// Reads the value, recording every problem in `errors` (then None).
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self>;
    /// The schema of a value (a reference for named schemas).
    fn schema() -> SchemaRef;
    /// Named schemas this one needs, itself included when [`Field::schema`] is a reference.
    fn schemas(_out: &mut Schemas) {}
}

/// How a struct field treats absence and null (see the module documentation).
pub trait Slot: Sized {
    const REQUIRED: bool;
    fn read_slot(value: Option<&Value>, at: &At, errors: &mut Errors) -> Option<Self>;
    fn slot_schema() -> SchemaRef;
    fn schemas(out: &mut Schemas);
}

impl<T: Field> Slot for T {
    const REQUIRED: bool = true;

    fn read_slot(value: Option<&Value>, at: &At, errors: &mut Errors) -> Option<Self> {
        match value {
            None | Some(Value::Null) => {
                errors.add(at, format!("{} is required", at.name()));
                None
            }
            Some(value) => T::read(value, at, errors),
        }
    }

    fn slot_schema() -> SchemaRef {
        T::schema()
    }

    fn schemas(out: &mut Schemas) {
        T::schemas(out)
    }
}

/// May be absent; null is refused (send nothing to leave the field out).
impl<T: Field> Slot for Option<T> {
    const REQUIRED: bool = false;

    fn read_slot(value: Option<&Value>, at: &At, errors: &mut Errors) -> Option<Self> {
        match value {
            None => Some(None),
            Some(Value::Null) => {
                errors.add(at, format!("{} must not be null (leave it out instead)", at.name()));
                None
            }
            Some(value) => T::read(value, at, errors).map(Some),
        }
    }

    fn slot_schema() -> SchemaRef {
        T::schema()
    }

    fn schemas(out: &mut Schemas) {
        T::schemas(out)
    }
}

/// A field that must be present and may be null (null clears it).
#[derive(Debug, Clone, PartialEq)]
pub struct Nullable<T>(pub Option<T>);

impl<T: Field> Slot for Nullable<T> {
    const REQUIRED: bool = true;

    fn read_slot(value: Option<&Value>, at: &At, errors: &mut Errors) -> Option<Self> {
        match value {
            None => {
                errors.add(at, format!("{} is required (null clears it)", at.name()));
                None
            }
            Some(Value::Null) => Some(Nullable(None)),
            Some(value) => T::read(value, at, errors).map(|v| Nullable(Some(v))),
        }
    }

    fn slot_schema() -> SchemaRef {
        nullable(T::schema())
    }

    fn schemas(out: &mut Schemas) {
        T::schemas(out)
    }
}

/// A field of a partial update: absent keeps, null clears, a value replaces.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Patch<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<T> Patch<T> {
    /// The new value given the current one.
    pub fn apply(self, current: Option<T>) -> Option<T> {
        match self {
            Patch::Absent => current,
            Patch::Null => None,
            Patch::Value(value) => Some(value),
        }
    }

    /// Absent and null both mean "none" (e.g. an optional parent on create).
    pub fn into_option(self) -> Option<T> {
        match self {
            Patch::Value(value) => Some(value),
            Patch::Absent | Patch::Null => None,
        }
    }
}

impl<T: Field> Slot for Patch<T> {
    const REQUIRED: bool = false;

    fn read_slot(value: Option<&Value>, at: &At, errors: &mut Errors) -> Option<Self> {
        match value {
            None => Some(Patch::Absent),
            Some(Value::Null) => Some(Patch::Null),
            Some(value) => T::read(value, at, errors).map(Patch::Value),
        }
    }

    fn slot_schema() -> SchemaRef {
        nullable(T::schema())
    }

    fn schemas(out: &mut Schemas) {
        T::schemas(out)
    }
}

/// A request body type (derive it: `#[derive(Input)]`).
pub trait Input: Field + utoipa::ToSchema {
    /// Every field as an `Option`: None when it failed to parse.
    type Fields;
    /// Reads every field of an object, recording each problem, then runs the struct's rules.
    fn read_fields(map: &Map<String, Value>, at: &At, errors: &mut Errors) -> Self::Fields;
    /// The value, when every field parsed.
    fn complete(fields: Self::Fields) -> Option<Self>;
    /// The object schema its fields declare (before a `#[input(schema = …)]` function adds the
    /// rules across fields).
    fn generated_object() -> ObjectBuilder;
}

/// A body read field by field whose verdict is still open: rules that need the store look at
/// [`Checked::fields`] and add their findings with [`Checked::fail`]; [`Checked::finish`] then
/// gives the value or one 400 naming every problem found, parse and rules alike.
pub struct Checked<T: Input> {
    pub fields: T::Fields,
    errors: Errors,
}

impl<T: Input> Checked<T> {
    /// Reads a JSON object (any other value: a 400 naming `body`).
    pub fn read(value: &Value) -> Result<Checked<T>, Invalid> {
        Self::read_json(value, BTreeSet::new())
    }

    /// Reads a JSON object whose numbers at the `inexact` paths did not read exactly.
    pub fn read_json(value: &Value, inexact: BTreeSet<String>) -> Result<Checked<T>, Invalid> {
        let Value::Object(map) = value else {
            return Err(Invalid::field("body", "body must be a JSON object"));
        };
        let mut errors = Errors(FieldErrors::new(), inexact);
        let fields = T::read_fields(map, &At::root(), &mut errors);
        Ok(Checked { fields, errors })
    }

    /// Records a problem of the top-level field `field`.
    pub fn fail(&mut self, field: &str, message: impl Into<String>) {
        self.errors.fail(field, message)
    }

    /// Whether nothing failed so far.
    pub fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }

    /// The value, or the 400 naming every failing field.
    pub fn finish(self) -> Result<T, Invalid> {
        let Checked { fields, errors } = self;
        if !errors.is_empty() {
            return errors.finish(None);
        }
        errors.finish(T::complete(fields))
    }
}

/// Reads a whole body.
pub fn parse<T: Input>(value: &Value) -> Result<T, Invalid> {
    Checked::<T>::read(value)?.finish()
}

/// The object at `at`, or an error naming it.
pub fn object<'v>(value: &'v Value, at: &At, errors: &mut Errors) -> Option<&'v Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map),
        _ => {
            errors.add(at, format!("{} must be an object", at.name()));
            None
        }
    }
}

/// A reference to a named schema of the document's components.
pub fn reference(name: &str) -> SchemaRef {
    RefOr::Ref(Ref::from_schema_name(name))
}

/// Adds a description (a doc comment) to a field's schema.
pub fn describe(schema: SchemaRef, doc: &str) -> SchemaRef {
    if doc.is_empty() {
        return schema;
    }
    match schema {
        RefOr::Ref(mut reference) => {
            reference.description = doc.to_owned();
            RefOr::Ref(reference)
        }
        RefOr::T(Schema::Object(mut object)) => {
            object.description = Some(doc.to_owned());
            RefOr::T(Schema::Object(object))
        }
        RefOr::T(Schema::Array(mut array)) => {
            array.description = Some(doc.to_owned());
            RefOr::T(Schema::Array(array))
        }
        RefOr::T(Schema::OneOf(mut one_of)) => {
            one_of.description = Some(doc.to_owned());
            RefOr::T(Schema::OneOf(one_of))
        }
        other => other,
    }
}

/// A schema that also admits null: `type: [X, "null"]` inline, `oneOf [ref, null]` for a
/// reference.
pub fn nullable(schema: SchemaRef) -> SchemaRef {
    match schema {
        RefOr::T(Schema::Object(mut object)) => {
            object.schema_type = match object.schema_type {
                SchemaType::Type(t) => SchemaType::Array(vec![t, Type::Null]),
                SchemaType::Array(mut types) => {
                    types.push(Type::Null);
                    SchemaType::Array(types)
                }
                SchemaType::AnyValue => SchemaType::AnyValue,
            };
            // An enum must list null to admit it.
            if let Some(values) = object.enum_values.as_mut() {
                values.push(Value::Null);
            }
            RefOr::T(Schema::Object(object))
        }
        other => OneOfBuilder::new().item(other).item(ObjectBuilder::new().schema_type(Type::Null)).into(),
    }
}

/// None for an empty text (an absent description).
pub fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

/// A closed set of values: a `serde` enum that derives `utoipa::ToSchema` becomes a field type,
/// read by its serde names and documented as its schema's `enum`.
#[macro_export]
macro_rules! closed_enum {
    ($ty:ty) => {
        impl $crate::Field for $ty {
            fn read(
                value: &::serde_json::Value,
                at: &$crate::At,
                errors: &mut $crate::Errors,
            ) -> ::core::option::Option<Self> {
                match ::serde_json::from_value::<$ty>(value.clone()) {
                    Ok(parsed) => Some(parsed),
                    Err(_) => {
                        let allowed = $crate::enum_names(&<$ty as ::utoipa::PartialSchema>::schema());
                        errors.add(at, format!("{} must be one of: {}", at.name(), allowed.join(", ")));
                        None
                    }
                }
            }

            fn schema() -> $crate::SchemaRef {
                $crate::reference(&<$ty as ::utoipa::ToSchema>::name())
            }

            fn schemas(out: &mut $crate::Schemas) {
                out.push((
                    <$ty as ::utoipa::ToSchema>::name().into_owned(),
                    <$ty as ::utoipa::PartialSchema>::schema(),
                ));
            }
        }
    };
}

/// The values of an enum schema (for the message that lists them).
pub fn enum_names(schema: &SchemaRef) -> Vec<String> {
    match schema {
        RefOr::T(Schema::Object(object)) => {
            object.enum_values.iter().flatten().filter_map(|v| v.as_str().map(str::to_owned)).collect()
        }
        _ => Vec::new(),
    }
}

impl Field for bool {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let parsed = value.as_bool();
        if parsed.is_none() {
            errors.add(at, format!("{} must be true or false", at.name()));
        }
        parsed
    }

    fn schema() -> SchemaRef {
        ObjectBuilder::new().schema_type(Type::Boolean).into()
    }
}

impl Field for uuid::Uuid {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let parsed = value.as_str().and_then(|s| uuid::Uuid::try_parse(s).ok());
        if parsed.is_none() {
            errors.add(at, format!("{} must be a UUID", at.name()));
        }
        parsed
    }

    fn schema() -> SchemaRef {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(utoipa::openapi::KnownFormat::Uuid)))
            .into()
    }
}

#[cfg(test)]
mod tests;

/// Deserializes a string through `parse` for types read from paths (enums, ids): a value that
/// does not parse fails with "must be {expected}" from inside the string visitor, where the
/// path extractor still knows the parameter's name, so the 400 names it.
pub fn deserialize_str<'de, D, T, F>(deserializer: D, expected: &'static str, parse: F) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    F: FnOnce(&str) -> Option<T>,
{
    struct Visit<F>(&'static str, F);

    impl<'de, T, F: FnOnce(&str) -> Option<T>> serde::de::Visitor<'de> for Visit<F> {
        type Value = T;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str(self.0)
        }

        fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<T, E> {
            let expected = self.0;
            (self.1)(value).ok_or_else(|| E::custom(format!("must be {expected}, not {value:?}")))
        }
    }

    deserializer.deserialize_str(Visit(expected, parse))
}
