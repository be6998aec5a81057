//! OAuth scopes: `api:read` and `api:write` (spec §5), as a space-separated `scope` parameter.

use workapi_domain::identity::{SCOPE_READ, SCOPE_WRITE};

/// Every scope the authorization server knows, in canonical order.
pub const SUPPORTED: [&str; 2] = [SCOPE_READ, SCOPE_WRITE];

/// What a scope allows, in words (the consent page).
pub fn describe(scope: &str) -> &'static str {
    match scope {
        SCOPE_READ => "Read the data of your workspace that your role lets you see",
        SCOPE_WRITE => "Create, change and delete data in your workspace, as far as your role allows",
        _ => "An unknown permission",
    }
}

/// A `scope` parameter naming an unknown scope (`invalid_scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidScope;

/// Parses a `scope` parameter: scope tokens separated by single spaces (RFC 6749 §3.3).
/// Absent or empty means every supported scope. The result is deduplicated and in canonical
/// order; any unknown token (or other whitespace) is [`InvalidScope`].
pub fn parse(scope: Option<&str>) -> Result<Vec<String>, InvalidScope> {
    let Some(scope) = scope.filter(|s| !s.is_empty()) else {
        return Ok(SUPPORTED.iter().map(|s| (*s).to_owned()).collect());
    };
    let mut wanted = [false; SUPPORTED.len()];
    for token in scope.split(' ').filter(|t| !t.is_empty()) {
        let index = SUPPORTED.iter().position(|s| *s == token).ok_or(InvalidScope)?;
        wanted[index] = true;
    }
    let scopes: Vec<String> = SUPPORTED.iter().zip(wanted).filter(|(_, w)| *w).map(|(s, _)| (*s).to_owned()).collect();
    if scopes.is_empty() { Err(InvalidScope) } else { Ok(scopes) }
}

/// The `scope` parameter of a response: space-separated.
pub fn join(scopes: &[String]) -> String {
    scopes.join(" ")
}

/// True when every scope of `requested` is in `granted`.
pub fn is_subset(requested: &[String], granted: &[String]) -> bool {
    requested.iter().all(|s| granted.contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing() {
        assert_eq!(parse(None).unwrap(), ["api:read", "api:write"]);
        assert_eq!(parse(Some("")).unwrap(), ["api:read", "api:write"]);
        assert_eq!(parse(Some("api:write api:read")).unwrap(), ["api:read", "api:write"]);
        assert_eq!(parse(Some("api:read")).unwrap(), ["api:read"]);
        assert_eq!(parse(Some("api:read  api:read")).unwrap(), ["api:read"]);
        for bad in ["api:admin", "api:read api:admin", "API:READ", "api:read\tapi:write", " "] {
            assert!(parse(Some(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn subsets() {
        let all = parse(None).unwrap();
        let read = parse(Some("api:read")).unwrap();
        assert!(is_subset(&read, &all));
        assert!(!is_subset(&all, &read));
    }
}
