//! Password login: which user an e-mail and a password name (docs/auth.md).
//!
//! Every failure looks the same from outside: an unknown e-mail, a wrong password, a user with
//! no password and an inactive user all end as [`Outcome::Rejected`] after the same work (one
//! index query, one credential read and one Argon2id verification per account tried).

use crate::password;
use serde_json::Value;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use uuid::Uuid;
use workapi_domain::identity::{ENTITY_USER, User};
use workapi_kit::input::{At, Errors, Field, SchemaRef};
use workapi_store::keys::{self, WsKeys};
use workapi_store::{ENTITY, Query, Store, StoreResult, from_item, query_all};

pub const MAX_EMAIL_CHARS: usize = 254;
pub const MAX_PASSWORD_CHARS: usize = password::MAX_CHARS;
/// Without `workspaceId`, at most this many accounts of one e-mail are tried (bounded work).
pub const MAX_CANDIDATES: usize = 10;

/// An e-mail address as the login takes it: trimmed, at most [`MAX_EMAIL_CHARS`] characters,
/// shaped as [`is_email_shaped`] says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email(String);

impl Email {
    pub fn into_string(self) -> String {
        self.0
    }
}

impl Field for Email {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let name = at.name();
        let Some(raw) = value.as_str() else {
            errors.add(at, format!("{name} must be a string"));
            return None;
        };
        let email = raw.trim();
        if email.chars().count() > MAX_EMAIL_CHARS {
            errors.add(at, format!("{name} must be at most {MAX_EMAIL_CHARS} characters"));
            None
        } else if !is_email_shaped(email) {
            errors.add(at, format!("{name} must be an e-mail address"));
            None
        } else {
            Some(Email(email.to_owned()))
        }
    }

    fn schema() -> SchemaRef {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .max_length(Some(MAX_EMAIL_CHARS))
            .pattern(Some(EMAIL_PATTERN))
            .into()
    }
}

/// A password as sent: not trimmed (spaces count), 1 to [`MAX_PASSWORD_CHARS`] characters.
/// Debug hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(<redacted>)")
    }
}

impl Field for Password {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let name = at.name();
        match value.as_str() {
            None => errors.add(at, format!("{name} must be a string")),
            Some("") => errors.add(at, format!("{name} must not be empty")),
            Some(s) if s.chars().count() > MAX_PASSWORD_CHARS => {
                errors.add(at, format!("{name} must be at most {MAX_PASSWORD_CHARS} characters"))
            }
            Some(s) => return Some(Password(s.to_owned())),
        }
        None
    }

    fn schema() -> SchemaRef {
        ObjectBuilder::new().schema_type(Type::String).min_length(Some(1)).max_length(Some(MAX_PASSWORD_CHARS)).into()
    }
}

/// A login request, validated.
pub struct Credentials {
    /// Trimmed, as typed; matched case-insensitively.
    pub email: String,
    /// Exactly as sent (not trimmed).
    pub password: String,
    /// Needed only when the e-mail and password sign in to several workspaces.
    pub workspace_id: Option<Uuid>,
}

pub enum Outcome {
    Authenticated(User),
    /// Unknown e-mail, wrong password, no password set, inactive user: indistinguishable.
    Rejected,
    /// The e-mail and password are right in several workspaces (these accounts): the client
    /// must name one.
    Ambiguous(Vec<User>),
}

/// The shape the API accepts for an e-mail: something, `@`, something, no whitespace (the
/// OpenAPI pattern `^\S+@\S+$`). Whether such a user exists is the login's business.
pub fn is_email_shaped(email: &str) -> bool {
    // Some `@` with something before and after it (the pattern allows more `@`s, e.g. `@a@b`).
    !email.chars().any(is_excluded_from_email)
        && email.char_indices().any(|(i, c)| c == '@' && i > 0 && i + 1 < email.len())
}

/// The documented shape of [`is_email_shaped`]. Its class is the same set as
/// [`is_excluded_from_email`] in the regex dialects clients validate with (ECMAScript's `\s`
/// lacks U+0085, Python's lacks U+FEFF; both are listed), so a value the document calls valid
/// is never refused (schemathesis found `\u{85}` passing the old `^\S+@\S+$`).
pub const EMAIL_PATTERN: &str = r"^[^\s\u0000-\u001f\u007f-\u009f\ufeff]+@[^\s\u0000-\u001f\u007f-\u009f\ufeff]+$";

/// Whitespace (Unicode's, as Rust and ECMAScript count it), control characters and the byte
/// order mark: never part of an address.
fn is_excluded_from_email(c: char) -> bool {
    c.is_whitespace() || c.is_control() || c == '\u{feff}'
}

pub async fn authenticate(store: &dyn Store, credentials: &Credentials) -> StoreResult<Outcome> {
    let folded = credentials.email.to_lowercase();
    let mut candidates = Vec::new();
    for item in query_all(store, Query::gsi1(keys::user_email_gsi1pk(&folded))).await? {
        if item.get(ENTITY).and_then(|v| v.as_str()) == Some(ENTITY_USER) {
            let user: User = from_item(item)?;
            if credentials.workspace_id.is_none_or(|ws| ws == user.workspace_id) {
                candidates.push(user);
            }
        }
    }
    candidates.truncate(MAX_CANDIDATES);

    if candidates.is_empty() {
        // The same work as for a real account: a credential read (of a key that cannot exist)
        // and a verification against the dummy hash.
        password::stored_hash(store, WsKeys::new(Uuid::nil()), Uuid::new_v4()).await?;
        password::verify(&credentials.password, None).await;
        return Ok(Outcome::Rejected);
    }
    let mut matched = Vec::new();
    for user in candidates {
        let phc = password::stored_hash(store, WsKeys::new(user.workspace_id), user.id).await?;
        // Inactive users are verified too, so their answer takes the same time.
        if password::verify(&credentials.password, phc).await && user.is_active {
            matched.push(user);
        }
    }
    Ok(match matched.len() {
        0 => Outcome::Rejected,
        1 => Outcome::Authenticated(matched.remove(0)),
        _ => Outcome::Ambiguous(matched),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read<T: Field>(value: Value) -> (Option<T>, Errors) {
        let mut errors = Errors::default();
        let read = T::read(&value, &At::root().child("email"), &mut errors);
        (read, errors)
    }

    #[test]
    fn emails_are_trimmed_bounded_and_shaped() {
        let (email, errors) = read::<Email>(Value::from("  Ann@acme.example "));
        assert_eq!((email.map(Email::into_string).as_deref(), errors.is_empty()), (Some("Ann@acme.example"), true));
        let longest = format!("{}@x.example", "a".repeat(MAX_EMAIL_CHARS - 10));
        assert!(read::<Email>(Value::from(longest.clone())).0.is_some());
        for bad in [Value::from(format!("a{longest}")), Value::from("no-at-sign"), Value::from(" "), Value::from(5)] {
            let (email, errors) = read::<Email>(bad.clone());
            assert!(email.is_none() && !errors.is_empty(), "{bad}");
        }
    }

    #[test]
    fn passwords_are_taken_as_sent() {
        let (password, _) = read::<Password>(Value::from("  spaced  "));
        assert_eq!(password.map(Password::into_string).as_deref(), Some("  spaced  "));
        assert!(read::<Password>(Value::from("x".repeat(MAX_PASSWORD_CHARS))).0.is_some());
        for bad in [Value::from(""), Value::from("x".repeat(MAX_PASSWORD_CHARS + 1)), Value::Bool(true)] {
            assert!(read::<Password>(bad).0.is_none());
        }
        assert!(!format!("{:?}", Password("secret".into())).contains("secret"));
    }

    #[test]
    fn email_shape() {
        for good in ["a@b", "Ann.Lee+x@acme.example", "é@ü.example", "@a@b", "a@b@"] {
            assert!(is_email_shaped(good), "{good}");
        }
        let refused =
            ["", "@", "a@", "@b", "ab", "a b@c", "a@b c", "a@b\n", "\u{ce}\u{85}\u{18}\u{fe}@\u{c6}", "a\u{18}@b"];
        for bad in refused.into_iter().chain(["a\u{feff}@b", "a@\u{a0}b", "a@b\u{3000}", "a\u{7f}@b"]) {
            assert!(!is_email_shaped(bad), "{bad:?}");
        }
    }

    /// The documented pattern excludes exactly what the rule excludes, in the dialects clients
    /// validate with: every character the rule refuses is in the class, spelled out or by `\s`.
    #[test]
    fn the_documented_email_pattern_names_the_excluded_characters() {
        let ecmascript_space = |c: char| {
            matches!(
                c,
                '\t' | '\n'
                    | '\u{b}'
                    | '\u{c}'
                    | '\r'
                    | ' '
                    | '\u{a0}'
                    | '\u{1680}'
                    | '\u{2028}'
                    | '\u{2029}'
                    | '\u{202f}'
                    | '\u{205f}'
                    | '\u{3000}'
                    | '\u{feff}'
                    | '\u{2000}'..='\u{200a}'
            )
        };
        let spelled_out = |c: char| c <= '\u{1f}' || ('\u{7f}'..='\u{9f}').contains(&c) || c == '\u{feff}';
        assert!(EMAIL_PATTERN.contains(r"[^\s\u0000-\u001f\u007f-\u009f\ufeff]"));
        for c in (0..=0x3000u32).chain([0xfeff]).filter_map(char::from_u32) {
            assert_eq!(is_excluded_from_email(c), ecmascript_space(c) || spelled_out(c), "{c:?}");
        }
    }
}
