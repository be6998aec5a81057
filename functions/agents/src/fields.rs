//! The agents' own body field types: secrets (whose messages never repeat the value), URLs,
//! repository names, identifiers, and agent instructions (the agent rich-text profile).

use serde_json::Value;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
use workapi_kit::input::{At, Errors, Field, SchemaRef};
use workapi_kit::secrets::SecretValue;
use workapi_richtext::{self as richtext, Doc, Profile};

fn string_schema(description: &str) -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String).description(Some(description))
}

/// A credential (API key, token, client secret): `MIN` to `MAX` printable ASCII characters
/// without spaces. Its errors name the field only, never the value, and it formats as
/// `<redacted>` (it holds a [`SecretValue`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Secret<const MIN: usize, const MAX: usize>(pub SecretValue);

impl<const MIN: usize, const MAX: usize> Field for Secret<MIN, MAX> {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        let ok = value.as_str().filter(|s| (MIN..=MAX).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_graphic()));
        match ok {
            Some(text) => Some(Secret(SecretValue::new(text))),
            None => {
                errors
                    .add(at, format!("{} must be {MIN} to {MAX} printable ASCII characters without spaces", at.name()));
                None
            }
        }
    }

    fn schema() -> SchemaRef {
        string_schema("A credential: write-only, never returned (responses say whether one is configured)")
            .min_length(Some(MIN))
            .max_length(Some(MAX))
            .pattern(Some("^[!-~]+$"))
            .format(Some(utoipa::openapi::SchemaFormat::Custom("password".into())))
            .into()
    }
}

/// Longest URL accepted.
pub const MAX_URL_CHARS: usize = 2048;

/// Why a URL is refused, or the URL. `loopback_http`: plain http is allowed on a loopback
/// host (a local MCP server during development). User information is refused: it would be a
/// credential stored and returned in the clear.
pub fn check_url(text: &str, loopback_http: bool) -> Result<url::Url, &'static str> {
    if text.len() > MAX_URL_CHARS {
        return Err("must be at most 2048 characters");
    }
    let url = url::Url::parse(text).map_err(|_| "must be an absolute URL")?;
    let host = url.host().ok_or("must name a host")?;
    match url.scheme() {
        "https" => {}
        "http" if loopback_http && is_loopback(&host) => {}
        "http" if loopback_http => return Err("must use https (http only on a loopback host)"),
        _ => return Err("must use https"),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry a user name or password (use the credential fields)");
    }
    if url.fragment().is_some() {
        return Err("must not have a fragment");
    }
    Ok(url)
}

fn is_loopback(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    }
}

fn read_url(value: &Value, at: &At, errors: &mut Errors, loopback_http: bool) -> Option<String> {
    let Some(text) = value.as_str() else {
        errors.add(at, format!("{} must be a string", at.name()));
        return None;
    };
    match check_url(text.trim(), loopback_http) {
        Ok(url) => Some(url.to_string()),
        Err(why) => {
            errors.add(at, format!("{} {why}", at.name()));
            None
        }
    }
}

/// An https URL (repository pages and clone URLs, token endpoints).
#[derive(Debug, Clone, PartialEq)]
pub struct HttpsUrl(pub String);

impl Field for HttpsUrl {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        read_url(value, at, errors, false).map(HttpsUrl)
    }

    fn schema() -> SchemaRef {
        string_schema("An https URL without user information")
            .format(Some(utoipa::openapi::SchemaFormat::Custom("uri".into())))
            .max_length(Some(MAX_URL_CHARS))
            .into()
    }
}

/// An MCP server's URL: https, or http on a loopback host.
#[derive(Debug, Clone, PartialEq)]
pub struct McpUrl(pub String);

impl Field for McpUrl {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        read_url(value, at, errors, true).map(McpUrl)
    }

    fn schema() -> SchemaRef {
        string_schema("https, or http on a loopback host (localhost, 127.0.0.0/8, ::1); no user information")
            .format(Some(utoipa::openapi::SchemaFormat::Custom("uri".into())))
            .max_length(Some(MAX_URL_CHARS))
            .into()
    }
}

/// A repository's `owner/repo`: GitHub's alphabet (owner: letters, digits and single inner
/// hyphens, at most 39; repository: letters, digits, `.`, `_`, `-`, at most 100, not `.`/`..`).
#[derive(Debug, Clone, PartialEq)]
pub struct FullName(pub String);

pub fn is_full_name(text: &str) -> bool {
    let Some((owner, repo)) = text.split_once('/') else { return false };
    let owner_ok = (1..=39).contains(&owner.len())
        && owner.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !owner.starts_with('-')
        && !owner.ends_with('-')
        && !owner.contains("--");
    let repo_ok = (1..=100).contains(&repo.len())
        && repo.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && repo != "."
        && repo != "..";
    owner_ok && repo_ok
}

impl Field for FullName {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        match value.as_str().filter(|s| is_full_name(s)) {
            Some(text) => Some(FullName(text.to_owned())),
            None => {
                errors.add(at, format!("{} must be owner/repo", at.name()));
                None
            }
        }
    }

    fn schema() -> SchemaRef {
        string_schema("owner/repo").pattern(Some("^[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}$")).into()
    }
}

/// An identifier chosen by a client or a vendor: 1 to `MAX` of letters, digits, `.`, `_`, `-`,
/// `:`, `@` (model ids such as `claude-sonnet-4@2025`, vault and environment ids).
#[derive(Debug, Clone, PartialEq)]
pub struct Ident<const MAX: usize>(pub String);

pub fn is_ident(text: &str, max: usize) -> bool {
    (1..=max).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':' | b'@'))
}

impl<const MAX: usize> Field for Ident<MAX> {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        match value.as_str().filter(|s| is_ident(s, MAX)) {
            Some(text) => Some(Ident(text.to_owned())),
            None => {
                errors.add(at, format!("{} must be 1 to {MAX} letters, digits, '.', '_', '-', ':' or '@'", at.name()));
                None
            }
        }
    }

    fn schema() -> SchemaRef {
        string_schema("An identifier")
            .min_length(Some(1))
            .max_length(Some(MAX))
            .pattern(Some("^[A-Za-z0-9._:@-]+$"))
            .into()
    }
}

/// Agent instructions: Markdown, HTML or IDoc JSON (an object or a JSON string), stored as
/// IDoc and returned as HTML (spec §1.4).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentInstructions(pub Doc);

impl Field for AgentInstructions {
    fn read(value: &Value, at: &At, errors: &mut Errors) -> Option<Self> {
        match richtext::to_idoc_json(value, Profile::Agent) {
            Ok(doc) => Some(AgentInstructions(doc)),
            Err(e) => {
                errors.add(at, format!("{}: {e}", at.name()));
                None
            }
        }
    }

    fn schema() -> SchemaRef {
        OneOfBuilder::new()
            .item(
                string_schema("Markdown, HTML or IDoc JSON as a string (detected)")
                    .max_length(Some(richtext::MAX_INPUT_BYTES)),
            )
            .item(ObjectBuilder::new().schema_type(Type::Object).description(Some("An IDoc (ProseMirror) document")))
            .description(Some(
                "Rich text in the agent profile: the editor nodes and marks; Markdown, HTML or IDoc JSON. Returned as HTML.",
            ))
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read<T: Field>(value: Value) -> Result<T, String> {
        let mut errors = Errors::default();
        let read = T::read(&value, &At::root().child("f"), &mut errors);
        errors.finish(read).map_err(|e| format!("{:?}", e.errors))
    }

    #[test]
    fn secrets_are_bounded_and_never_echoed() {
        assert!(read::<Secret<8, 64>>(json!("sk-ant-12345678")).is_ok());
        for bad in [json!("short"), json!("has space inside"), json!("tab\there1"), json!(42), json!("ä2345678")] {
            let error = read::<Secret<8, 64>>(bad.clone()).unwrap_err();
            if let Some(text) = bad.as_str() {
                assert!(!error.contains(text), "{error}");
            }
        }
        let long = "k".repeat(65);
        let error = read::<Secret<8, 64>>(json!(long)).unwrap_err();
        assert!(!error.contains(&long));
    }

    #[test]
    fn urls() {
        assert!(check_url("https://mcp.example.com/sse", false).is_ok());
        assert!(check_url("http://mcp.example.com/", true).is_err());
        for loopback in ["http://localhost:8080/mcp", "http://127.0.0.1:3000", "http://[::1]/"] {
            assert!(check_url(loopback, true).is_ok(), "{loopback}");
            assert!(check_url(loopback, false).is_err(), "{loopback}");
        }
        for bad in [
            "ftp://x.example",
            "https://user:pw@x.example/",
            "https://token@x.example/",
            "https://x.example/#frag",
            "/relative",
            "javascript:alert(1)",
            "http://127.0.0.1.example.com/",
        ] {
            assert!(check_url(bad, true).is_err(), "{bad}");
        }
    }

    #[test]
    fn full_names() {
        for good in ["octo-org/hello.world", "a/b", "A1/x_y-z"] {
            assert!(is_full_name(good), "{good}");
        }
        for bad in ["nobody", "a/b/c", "/repo", "owner/", "-a/b", "a-/b", "a--b/c", "a/..", "a b/c", "o/r e"] {
            assert!(!is_full_name(bad), "{bad}");
        }
    }

    #[test]
    fn instructions_take_markdown_html_and_idoc() {
        let md = read::<AgentInstructions>(json!("**Be brief**")).unwrap();
        assert_eq!(richtext::to_html(&md.0), "<p><strong>Be brief</strong></p>");
        let doc =
            json!({"type": "doc", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "Hi"}]}]});
        assert_eq!(richtext::to_html(&read::<AgentInstructions>(doc.clone()).unwrap().0), "<p>Hi</p>");
        assert_eq!(richtext::to_html(&read::<AgentInstructions>(json!(doc.to_string())).unwrap().0), "<p>Hi</p>");
        assert!(read::<AgentInstructions>(json!(5)).is_err());
    }
}
