//! Response projection for [P] endpoints (spec §1.3): `fieldsToReturn`, `responseShape`,
//! and the `LT-Response-Shape: full` header.
//!
//! Decisions (docs/conventions.md): an invalid `responseShape` or header value is a 400 before
//! the operation runs; field names in `fieldsToReturn` that the response lacks are ignored;
//! error responses are never projected because only handlers' success bodies pass through here.

use crate::error::{ApiError, ApiResult};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::marker::PhantomData;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{RefOr, extensions::Extensions};
pub use workapi_wire::{COMPACT_EXTENSION, Compact};

/// A projected success body of type `T`: what a [P] handler returns.
pub struct Projected<T> {
    body: Value,
    kind: PhantomData<fn() -> T>,
}

/// The projected body as JSON (what a create's `workapi_kit::idempotency::Answer` is built from).
impl<T> serde::Serialize for Projected<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.body.serialize(serializer)
    }
}

impl<T> IntoResponse for Projected<T> {
    fn into_response(self) -> Response {
        axum::Json(self.body).into_response()
    }
}

/// `TProjection` in the document: `T`'s schema without required fields (a projection may omit
/// any), carrying `T`'s compact default for the document to turn into parameters.
impl<T: utoipa::ToSchema + Compact> utoipa::PartialSchema for Projected<T> {
    fn schema() -> RefOr<Schema> {
        let mut schema = flattened::<T>();
        if let RefOr::T(Schema::Object(object)) = &mut schema {
            object.required.clear();
            object.description = Some(format!("{}, possibly projected to a subset of its fields", T::name()));
            let compact = serde_json::json!(T::COMPACT);
            object.extensions.get_or_insert_with(Extensions::default).insert(COMPACT_EXTENSION.into(), compact);
        }
        schema
    }
}

/// `T`'s schema as one object: an `allOf` (a type with flattened fields) becomes the union of
/// its parts' properties, so that clearing `required` reaches the flattened fields too.
fn flattened<T: utoipa::ToSchema>() -> RefOr<Schema> {
    let schema = T::schema();
    let RefOr::T(Schema::AllOf(all_of)) = &schema else { return schema };
    let mut named = Vec::new();
    T::schemas(&mut named);
    let mut merged = utoipa::openapi::schema::Object::with_type(utoipa::openapi::schema::Type::Object);
    merged.examples = all_of.examples.clone();
    for item in &all_of.items {
        let part = match item {
            RefOr::T(part) => Some(part),
            RefOr::Ref(reference) => {
                let name = reference.ref_location.rsplit('/').next().unwrap_or_default();
                named.iter().find(|(n, _)| n == name).and_then(|(_, s)| match s {
                    RefOr::T(part) => Some(part),
                    RefOr::Ref(_) => None,
                })
            }
        };
        let Some(Schema::Object(part)) = part else { return schema };
        merged.properties.extend(part.properties.clone());
    }
    RefOr::T(Schema::Object(merged))
}

impl<T: utoipa::ToSchema + Compact> utoipa::ToSchema for Projected<T> {
    fn name() -> std::borrow::Cow<'static, str> {
        format!("{}Projection", T::name()).into()
    }

    fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
        out.push((T::name().into_owned(), T::schema()));
        T::schemas(out);
    }
}

pub const HEADER: &str = "lt-response-shape";

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Projection {
    full: bool,
    fields: Option<Vec<String>>,
}

impl Projection {
    /// Parses the raw query string and header value.
    pub fn parse(query: Option<&str>, header: Option<&str>) -> Result<Self, ApiError> {
        let mut projection = Projection::default();
        for (name, value) in form_pairs(query.unwrap_or("")) {
            match name.as_str() {
                "responseShape" => match value.as_str() {
                    "full" => projection.full = true,
                    "compact" => {}
                    _ => return Err(ApiError::field("responseShape", "responseShape must be compact or full")),
                },
                "fieldsToReturn" => {
                    let fields: Vec<String> =
                        value.split(',').map(str::trim).filter(|f| !f.is_empty()).map(str::to_owned).collect();
                    if !fields.is_empty() {
                        projection.fields = Some(fields);
                    }
                }
                _ => {}
            }
        }
        match header.map(str::trim) {
            None => {}
            Some(v) if v.eq_ignore_ascii_case("full") => projection.full = true,
            Some(_) => return Err(ApiError::field("LT-Response-Shape", "LT-Response-Shape must be full")),
        }
        Ok(projection)
    }

    /// Projects a success body by its type's compact default.
    pub fn project<T: serde::Serialize + Compact>(&self, body: &T) -> ApiResult<Projected<T>> {
        let value = serde_json::to_value(body).map_err(ApiError::internal)?;
        Ok(Projected { body: self.apply(value, Some(T::COMPACT)), kind: PhantomData })
    }

    /// Projects a success body. `compact` is the endpoint's declared compact default.
    pub fn apply(&self, body: Value, compact: Option<&[&str]>) -> Value {
        if self.full {
            return body;
        }
        let Value::Object(map) = body else { return body };
        let keep: Vec<&str> = match (&self.fields, compact) {
            (Some(fields), _) => fields.iter().map(String::as_str).collect(),
            (None, Some(compact)) => compact.to_vec(),
            (None, None) => return Value::Object(map),
        };
        Value::Object(map.into_iter().filter(|(k, _)| keep.contains(&k.as_str())).collect())
    }
}

fn form_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned()))
}

impl<S: Send + Sync> FromRequestParts<S> for Projection {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let header = match parts.headers.get(HEADER) {
            Some(v) => {
                Some(v.to_str().map_err(|_| ApiError::field("LT-Response-Shape", "LT-Response-Shape must be full"))?)
            }
            None => None,
        };
        Projection::parse(parts.uri.query(), header)
    }
}

/// `{success: true}` responses of [P] operations that return no resource: the whole body is
/// its compact default.
impl Compact for crate::http::Success {
    const COMPACT: &'static [&'static str] = &["success"];
}

/// The response of a [P] operation answering `{success: true}`.
pub type SuccessProjection = Projected<crate::http::Success>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const COMPACT: &[&str] = &["id", "name"];

    fn tag() -> Value {
        json!({"id": "1", "name": "a", "color": null, "isDeleted": false})
    }

    #[test]
    fn compact_default_applies_without_parameters() {
        let p = Projection::parse(None, None).unwrap();
        assert_eq!(p.apply(tag(), Some(COMPACT)), json!({"id": "1", "name": "a"}));
        assert_eq!(p.apply(tag(), None), tag());
    }

    #[test]
    fn fields_to_return_overrides_compact_and_ignores_unknown_names() {
        let p = Projection::parse(Some("fieldsToReturn=color,%20isDeleted,nope"), None).unwrap();
        assert_eq!(p.apply(tag(), Some(COMPACT)), json!({"color": null, "isDeleted": false}));
    }

    #[test]
    fn full_wins_by_parameter_or_header() {
        let p = Projection::parse(Some("fieldsToReturn=id&responseShape=full"), None).unwrap();
        assert_eq!(p.apply(tag(), Some(COMPACT)), tag());
        let p = Projection::parse(None, Some("FULL")).unwrap();
        assert_eq!(p.apply(tag(), Some(COMPACT)), tag());
    }

    #[test]
    fn invalid_shape_values_are_rejected() {
        assert!(Projection::parse(Some("responseShape=tiny"), None).is_err());
        assert!(Projection::parse(None, Some("compact")).is_err());
        assert_eq!(Projection::parse(Some("responseShape=compact"), None).unwrap(), Projection::default());
    }

    #[test]
    fn parameters_are_form_decoded() {
        let p = Projection::parse(Some("fieldsToReturn=id%2Cname+&responseShape=compact"), None).unwrap();
        assert_eq!(p.apply(tag(), None), json!({"id": "1", "name": "a"}));
    }
}
