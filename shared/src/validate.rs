//! Field validation that collects every problem into the spec's `errors` map before failing.

use crate::error::{ApiError, FieldErrors};
use serde_json::{Map, Value};

pub struct Fields<'a> {
    body: &'a Map<String, Value>,
    errors: FieldErrors,
}

impl<'a> Fields<'a> {
    pub fn new(body: &'a Map<String, Value>) -> Self {
        Fields { body, errors: FieldErrors::new() }
    }

    pub fn error(&mut self, field: &str, message: impl Into<String>) {
        self.errors.entry(field.to_owned()).or_default().push(message.into());
    }

    /// A required string, trimmed, not empty, at most `max_chars` characters.
    pub fn required_text(&mut self, field: &str, max_chars: usize) -> Option<String> {
        match self.body.get(field) {
            None | Some(Value::Null) => self.error(field, format!("{field} is required")),
            Some(Value::String(s)) => {
                let s = s.trim();
                if s.is_empty() {
                    self.error(field, format!("{field} must not be empty"));
                } else if s.chars().count() > max_chars {
                    self.error(field, format!("{field} must be at most {max_chars} characters"));
                } else if s.chars().any(char::is_control) {
                    self.error(field, format!("{field} must not contain control characters"));
                } else {
                    return Some(s.to_owned());
                }
            }
            Some(_) => self.error(field, format!("{field} must be a string")),
        }
        None
    }

    /// A field that must be present and is either null or one of `allowed`.
    /// Returns `Some(None)` for null.
    pub fn required_nullable_choice(&mut self, field: &str, allowed: &[&str]) -> Option<Option<String>> {
        match self.body.get(field) {
            None => self.error(field, format!("{field} is required (null clears it)")),
            Some(Value::Null) => return Some(None),
            Some(Value::String(s)) if allowed.contains(&s.as_str()) => return Some(Some(s.clone())),
            Some(_) => self.error(field, format!("{field} must be null or one of: {}", allowed.join(", "))),
        }
        None
    }

    /// Whether the body has the field at all (a PATCH keeps what it omits).
    pub fn has(&self, field: &str) -> bool {
        self.body.contains_key(field)
    }

    /// An optional string (absent: None), trimmed, at most `max_chars` characters, may be empty.
    pub fn optional_text(&mut self, field: &str, max_chars: usize) -> Option<String> {
        match self.body.get(field) {
            None => None,
            Some(Value::String(s)) => {
                let s = s.trim();
                if s.chars().count() > max_chars {
                    self.error(field, format!("{field} must be at most {max_chars} characters"));
                } else if s.chars().any(|c| c.is_control() && c != '\n') {
                    self.error(field, format!("{field} must not contain control characters"));
                } else {
                    return Some(s.to_owned());
                }
                None
            }
            Some(_) => {
                self.error(field, format!("{field} must be a string"));
                None
            }
        }
    }

    /// An optional nullable string: absent → None, null → Some(None), else a non-empty string
    /// of at most `max_chars` characters.
    pub fn optional_nullable_text(&mut self, field: &str, max_chars: usize) -> Option<Option<String>> {
        match self.body.get(field) {
            None => None,
            Some(Value::Null) => Some(None),
            Some(_) => self.required_text(field, max_chars).map(Some),
        }
    }

    /// A required string that is one of `allowed`.
    pub fn required_choice(&mut self, field: &str, allowed: &[&str]) -> Option<String> {
        if !self.has(field) || self.body.get(field) == Some(&Value::Null) {
            self.error(field, format!("{field} is required (one of: {})", allowed.join(", ")));
            return None;
        }
        self.optional_choice(field, allowed)
    }

    /// An optional string that is one of `allowed` (absent: None).
    pub fn optional_choice(&mut self, field: &str, allowed: &[&str]) -> Option<String> {
        match self.body.get(field) {
            None => None,
            Some(Value::String(s)) if allowed.contains(&s.as_str()) => Some(s.clone()),
            Some(_) => {
                self.error(field, format!("{field} must be one of: {}", allowed.join(", ")));
                None
            }
        }
    }

    /// A required array.
    pub fn required_array(&mut self, field: &str) -> Option<&'a Vec<Value>> {
        match self.body.get(field) {
            Some(Value::Array(items)) => Some(items),
            None | Some(Value::Null) => {
                self.error(field, format!("{field} is required"));
                None
            }
            Some(_) => {
                self.error(field, format!("{field} must be an array"));
                None
            }
        }
    }

    /// An optional object whose values are all booleans (absent: None).
    pub fn optional_bool_map(&mut self, field: &str) -> Option<std::collections::BTreeMap<String, bool>> {
        match self.body.get(field) {
            None => None,
            Some(Value::Object(map)) => {
                let mut out = std::collections::BTreeMap::new();
                for (key, value) in map {
                    match value {
                        Value::Bool(b) => {
                            out.insert(key.clone(), *b);
                        }
                        _ => self.error(field, format!("{field}.{key} must be true or false")),
                    }
                }
                Some(out)
            }
            Some(_) => {
                self.error(field, format!("{field} must be an object of permission key to true or false"));
                None
            }
        }
    }

    /// Ok when no field failed.
    pub fn finish(self) -> Result<(), ApiError> {
        if self.errors.is_empty() { Ok(()) } else { Err(ApiError::validation(self.errors)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn collects_every_failing_field() {
        let b = body(json!({"name": "  ", "color": "teal"}));
        let mut f = Fields::new(&b);
        assert_eq!(f.required_text("name", 10), None);
        assert_eq!(f.required_nullable_choice("color", &["red"]), None);
        let err = f.finish().unwrap_err();
        let errors = err.errors.unwrap();
        assert_eq!(errors["name"], vec!["name must not be empty"]);
        assert!(errors["color"][0].contains("red"));
    }

    #[test]
    fn text_is_trimmed_and_bounded_in_characters() {
        let b = body(json!({"a": " ok ", "b": "ééé", "c": 5, "d": "x\u{0}y"}));
        let mut f = Fields::new(&b);
        assert_eq!(f.required_text("a", 2).as_deref(), Some("ok"));
        assert_eq!(f.required_text("b", 3).as_deref(), Some("ééé"));
        assert_eq!(f.required_text("c", 3), None);
        assert_eq!(f.required_text("d", 3), None);
        assert_eq!(f.required_text("missing", 3), None);
        assert_eq!(f.finish().unwrap_err().errors.unwrap().len(), 3);
    }

    #[test]
    fn optional_fields_distinguish_absent_null_and_invalid() {
        let b = body(json!({"d": "", "p": null, "t": "guest", "m": {"a": true, "b": "yes"}, "long": "xxxx"}));
        let mut f = Fields::new(&b);
        assert_eq!(f.optional_text("d", 5).as_deref(), Some(""));
        assert_eq!(f.optional_text("absent", 5), None);
        assert_eq!(f.optional_text("long", 3), None);
        assert_eq!(f.optional_nullable_text("p", 5), Some(None));
        assert_eq!(f.optional_nullable_text("absent", 5), None);
        assert_eq!(f.required_choice("t", &["normal", "guest"]).as_deref(), Some("guest"));
        assert_eq!(f.required_choice("absent", &["normal"]), None);
        assert_eq!(f.optional_bool_map("m").unwrap().len(), 1);
        let errors = f.finish().unwrap_err().errors.unwrap();
        assert_eq!(errors.keys().collect::<Vec<_>>(), ["absent", "long", "m"]);
    }

    #[test]
    fn nullable_choice_accepts_null() {
        let b = body(json!({"color": null}));
        let mut f = Fields::new(&b);
        assert_eq!(f.required_nullable_choice("color", &["red"]), Some(None));
        assert!(f.finish().is_ok());
    }
}
