//! Which redirect URIs a client may register (docs/oauth.md, "Redirect URIs"): web URIs
//! (`https`, or `http` on a loopback host, RFC 8252 §7.3), and native apps' private-use schemes
//! (RFC 8252 §7.1): reverse-domain schemes such as `com.example.app:/callback`, plus a short
//! allow-list of schemes that well-known clients use although they are not reverse-domain names
//! (`cursor://…`, `vscode://…`), which the operator can extend with `LT_OAUTH_NATIVE_SCHEMES`.
//! Schemes that run code or read local data (`javascript:`, `data:`, `file:`…) are never
//! accepted, not even from the operator's list.

use std::sync::OnceLock;
use workapi_kit::oauth::issuer::is_loopback_host;

/// The longest redirect URI (and `client_uri`, `logo_uri`) accepted.
pub const MAX_URI_CHARS: usize = 2000;
/// Environment variable with more allowed native schemes, comma-separated.
pub const NATIVE_SCHEMES_ENV: &str = "LT_OAUTH_NATIVE_SCHEMES";
/// Schemes of well-known MCP clients that are not reverse-domain names.
pub const KNOWN_CLIENT_SCHEMES: &[&str] = &["cursor", "vscode", "vscode-insiders", "windsurf"];
/// Never redirect targets, whatever is configured: they run code, read local or browser data,
/// or are web schemes with their own rules.
const REFUSED_SCHEMES: &[&str] = &[
    "javascript",
    "vbscript",
    "data",
    "file",
    "blob",
    "filesystem",
    "about",
    "view-source",
    "chrome",
    "http",
    "https",
    "ws",
    "wss",
    "ftp",
    "mailto",
    "tel",
    "sms",
];

/// What the document admits as a web URI (`client_uri`, `logo_uri`, and the web form of a
/// redirect URI), as a regular expression without anchors: `https` with a host name, or `http`
/// on a loopback host, an optional port, a path and a query of URI characters. It is narrower
/// than what [`problem`] accepts (no IP literals but loopback, no percent-escapes), so that every
/// URI it admits is accepted: a property test generates URIs from it.
pub const WEB_URI_PATTERN: &str = concat!(
    r"(https://([A-Za-z0-9]([A-Za-z0-9-]{0,20}[A-Za-z0-9])?\.){0,3}[A-Za-z]([A-Za-z0-9-]{0,20}[A-Za-z0-9])?",
    r"|http://(localhost|127\.0\.0\.1|\[::1\]))",
    r"(:([1-9][0-9]{0,3}|[1-5][0-9]{4}))?(/[A-Za-z0-9._~!$&'()*+,;=:@-]*)*(\?[A-Za-z0-9._~!$&'()*+,;=:@/?-]*)?"
);
/// What the document admits as a native app's redirect URI, without anchors: a reverse-domain
/// scheme or a known client's, then a path (`:/callback`) or a host and a path (`://host/cb`).
/// Schemes the operator adds are accepted too but not in the document (it is the same for every
/// deployment).
pub const NATIVE_URI_PATTERN: &str = concat!(
    r"([A-Za-z]([A-Za-z0-9-]{0,20}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,20}[A-Za-z0-9])?){1,3}",
    r"|cursor|vscode|vscode-insiders|windsurf)",
    r":(/[A-Za-z0-9._~!$&'()*+,;=-]+(/[A-Za-z0-9._~!$&'()*+,;=-]*)*|//[A-Za-z0-9][A-Za-z0-9.-]{0,40}(/[A-Za-z0-9._~!$&'()*+,;=-]*)*)"
);

/// The documented pattern of a web URI, anchored.
pub fn web_uri_pattern() -> String {
    format!("^{WEB_URI_PATTERN}$")
}

/// The documented pattern of a redirect URI, anchored.
pub fn redirect_uri_pattern() -> String {
    format!("^({WEB_URI_PATTERN}|{NATIVE_URI_PATTERN})$")
}

/// The allowed non-reverse-domain schemes: the known clients' and the operator's, read once.
fn allowed_schemes() -> &'static [String] {
    static SCHEMES: OnceLock<Vec<String>> = OnceLock::new();
    SCHEMES.get_or_init(|| {
        let configured = std::env::var(NATIVE_SCHEMES_ENV).unwrap_or_default();
        allowed_from(&configured)
    })
}

fn allowed_from(configured: &str) -> Vec<String> {
    let mut schemes: Vec<String> = KNOWN_CLIENT_SCHEMES.iter().map(|s| (*s).to_owned()).collect();
    for scheme in configured.split(',').map(|s| s.trim().to_ascii_lowercase()).filter(|s| !s.is_empty()) {
        if REFUSED_SCHEMES.contains(&scheme.as_str()) || !is_scheme(&scheme) {
            tracing::warn!(env = NATIVE_SCHEMES_ENV, scheme, "ignoring a scheme that cannot be a native redirect");
        } else if !schemes.contains(&scheme) {
            schemes.push(scheme);
        }
    }
    schemes
}

/// RFC 3986 §3.1: a letter, then letters, digits, `+`, `-`, `.`.
fn is_scheme(scheme: &str) -> bool {
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// A reverse-domain scheme (RFC 8252 §7.1): at least two dot-separated labels of letters,
/// digits and hyphens, e.g. `com.example.app`.
fn is_reverse_domain(scheme: &str) -> bool {
    let labels: Vec<&str> = scheme.split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|label| {
            !label.is_empty()
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

/// Why a URI is not acceptable as a redirect URI; None when it is. Every message names the URI,
/// so a client that sent several can show which one failed.
pub fn problem(uri: &str) -> Option<String> {
    problem_with(uri, allowed_schemes())
}

fn problem_with(uri: &str, native: &[String]) -> Option<String> {
    if uri.chars().count() > MAX_URI_CHARS {
        return Some(format!("a redirect URI may have at most {MAX_URI_CHARS} characters"));
    }
    if uri.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Some(format!("{uri:?}: a redirect URI must not contain whitespace or control characters"));
    }
    let parsed = match url::Url::parse(uri) {
        Ok(parsed) => parsed,
        Err(_) => return Some(format!("{uri:?} is not an absolute URI")),
    };
    if parsed.fragment().is_some() {
        return Some(format!("{uri:?} must not have a fragment"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Some(format!("{uri:?} must not carry user information"));
    }
    let scheme = parsed.scheme();
    match scheme {
        "https" if parsed.host().is_some() => None,
        "http" if is_loopback_host(&parsed) => None,
        "http" => {
            Some(format!("{uri:?}: http is allowed only on loopback hosts (127.0.0.1, [::1], localhost); use https"))
        }
        _ if REFUSED_SCHEMES.contains(&scheme) => {
            Some(format!("{uri:?}: the scheme {scheme} cannot be a redirect URI"))
        }
        _ if is_reverse_domain(scheme) || native.iter().any(|s| s == scheme) => None,
        _ => Some(format!(
            "{uri:?}: use https, http on a loopback host, or a native app's reverse-domain scheme such as \
             com.example.app:/callback ({scheme} is not one; known client schemes: {})",
            native.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        // The document's patterns admit only URIs the API accepts (schema-valid bodies are not
        // refused; issue 38).
        #[test]
        fn every_web_uri_the_document_admits_is_accepted(uri in WEB_URI_PATTERN) {
            proptest::prop_assert_eq!(check(&uri), None);
            let parsed = url::Url::parse(&uri).unwrap();
            proptest::prop_assert!(parsed.scheme() == "https" && parsed.host().is_some() || is_loopback_host(&parsed));
        }

        #[test]
        fn every_native_uri_the_document_admits_is_accepted(uri in NATIVE_URI_PATTERN) {
            proptest::prop_assert_eq!(problem_with(&uri, &allowed_from("")), None);
        }
    }

    #[test]
    fn the_documented_patterns_refuse_what_the_api_refuses() {
        let redirect = regex_lite::Regex::new(&redirect_uri_pattern()).unwrap();
        let web = regex_lite::Regex::new(&web_uri_pattern()).unwrap();
        for refused in [
            "http://app.example/cb",
            "https://app.example/cb#frag",
            "https://user@app.example/cb",
            "javascript:alert(1)",
            "data:text/html,x",
            "ftp://files.example/",
            "myapp:/callback",
            "com.example.app://u@h/cb",
            "https://app.example/c b",
        ] {
            assert!(!redirect.is_match(refused), "{refused}");
            assert!(check(refused).is_some(), "{refused}");
        }
        for accepted in [
            "https://claude.ai/api/mcp/auth_callback",
            "http://127.0.0.1:33418/callback",
            "http://localhost/cb?x=1",
            "com.example.app:/callback",
            "cursor://anysphere.cursor-retrieval/oauth/callback",
        ] {
            assert!(redirect.is_match(accepted), "{accepted}");
            assert_eq!(check(accepted), None, "{accepted}");
        }
        assert!(web.is_match("https://app.example/home"));
        assert!(!web.is_match("com.example.app:/callback"));
    }

    fn check(uri: &str) -> Option<String> {
        problem_with(uri, &allowed_from("org-client, javascript, no way"))
    }

    #[test]
    fn web_loopback_and_native_uris_pass() {
        for good in [
            "https://app.example/callback",
            "https://app.example:8443/cb?x=1",
            "http://127.0.0.1/cb",
            "http://127.0.0.1:8080/cb",
            "http://[::1]:3000/cb",
            "http://localhost:1234/callback",
            "com.example.app:/callback",
            "com.example.app:/oauth2redirect/example-provider",
            "io.github.someone.tool://callback",
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "vscode://vscode.github-authentication/did-authenticate",
            "vscode-insiders://vscode.github-authentication/did-authenticate",
            "org-client://cb",
        ] {
            assert_eq!(check(good), None, "{good}");
        }
    }

    #[test]
    fn dangerous_and_malformed_uris_fail_naming_the_uri() {
        for bad in [
            "http://app.example/cb",
            "https://app.example/cb#frag",
            "https://app.example/cb#",
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "vbscript:msgbox",
            "blob:https://app.example/x",
            "about:blank",
            "ftp://app.example/cb",
            "/relative/cb",
            "app.example/cb",
            "",
            "https://user@app.example/cb",
            "https://user:pw@app.example/cb",
            "https://app.example/c b",
            "myapp:/callback",
            "com..example:/cb",
            "com.-example:/cb",
            "com.example.app://user@host/cb",
            "com.example.app:/cb#x",
        ] {
            let problem = check(bad).unwrap_or_else(|| panic!("{bad} must be refused"));
            assert!(
                bad.is_empty() || bad.len() > 200 || problem.contains(&format!("{bad:?}")) || problem.contains(bad),
                "{problem}"
            );
        }
        assert!(check(&format!("https://app.example/{}", "a".repeat(MAX_URI_CHARS))).is_some());
    }

    #[test]
    fn the_operator_list_cannot_admit_dangerous_schemes() {
        let allowed = allowed_from("javascript, data ,File, 1bad, ok.scheme, extra-client");
        assert!(allowed.contains(&"extra-client".to_owned()) && allowed.contains(&"ok.scheme".to_owned()));
        for refused in ["javascript", "data", "file", "1bad"] {
            assert!(!allowed.contains(&refused.to_owned()), "{refused}");
        }
        assert!(KNOWN_CLIENT_SCHEMES.iter().all(|s| allowed.contains(&(*s).to_owned())));
    }
}
