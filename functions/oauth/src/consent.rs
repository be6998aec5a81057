//! The server-rendered sign-in and consent page of `/api/oauth/authorize`, and its error page.
//!
//! Plain HTML with one inline style sheet, no script, no image, nothing fetched from anywhere:
//! the Content-Security-Policy allows exactly that style sheet (by its hash) and nothing else,
//! and forbids framing (with `X-Frame-Options: DENY` for older browsers). Every value that
//! reaches the page is HTML-escaped; no secret (password, code, token) is ever written into it.

use crate::scope;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};
use std::fmt::Write;
use std::sync::LazyLock;
use uuid::Uuid;

const STYLE: &str = "\
*{box-sizing:border-box}\
body{margin:0;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1b1f24;background:#f3f4f6}\
main{max-width:30rem;margin:2rem auto;padding:1.5rem 1.75rem;background:#fff;border:1px solid #d0d7de;border-radius:.5rem}\
h1{font-size:1.4rem;line-height:1.3;margin:0 0 1rem}\
h2{font-size:1.05rem;margin:1.25rem 0 .5rem}\
.client{overflow-wrap:anywhere}\
ul{padding-left:1.25rem;margin:.25rem 0 1rem}\
li{margin:.25rem 0}\
code{font-size:.9em;overflow-wrap:anywhere;background:#f6f8fa;padding:0 .2em;border-radius:.2em}\
.note{color:#424a53;font-size:.92rem}\
.error{border:2px solid #b42318;background:#fef3f2;color:#7a271a;padding:.6rem .8rem;border-radius:.35rem;margin:1rem 0}\
label{display:block;font-weight:600;margin:.9rem 0 .3rem}\
input,select{width:100%;font:inherit;padding:.55rem .6rem;border:1px solid #6e7781;border-radius:.35rem;background:#fff;color:inherit}\
.actions{display:flex;gap:.75rem;margin-top:1.4rem}\
button{flex:1;font:inherit;font-weight:600;padding:.65rem 1rem;border-radius:.35rem;border:2px solid #1f4fd1;cursor:pointer}\
button.approve{background:#1f4fd1;color:#fff}\
button.deny{background:#fff;color:#1f4fd1}\
a:focus-visible,input:focus-visible,select:focus-visible,button:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}\
@media (prefers-color-scheme:dark){body{background:#0d1117;color:#e6edf3}main{background:#161b22;border-color:#30363d}\
code{background:#0d1117}.note{color:#9da7b3}input,select{background:#0d1117;border-color:#8b949e}button.deny{background:#161b22;color:#9ab6ff}\
button.approve{background:#2f5fe0;border-color:#2f5fe0}button.deny{border-color:#9ab6ff}.error{background:#3a1512;color:#ffd8d3;border-color:#f97066}}";

/// The Content-Security-Policy of every page: the one inline style sheet, nothing else.
static CSP: LazyLock<String> = LazyLock::new(|| {
    let hash = STANDARD.encode(Sha256::digest(STYLE.as_bytes()));
    format!("default-src 'none'; style-src 'sha256-{hash}'; base-uri 'none'; frame-ancestors 'none'")
});

/// Escapes text for HTML element content and quoted attribute values.
pub use workapi_richtext::escape_attr as escape;

/// A page response with the security headers every page carries.
fn page(status: StatusCode, title: &str, body: &str, extra: Vec<(header::HeaderName, HeaderValue)>) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n\
         <body>\n<main>\n{body}</main>\n</body>\n</html>\n",
        escape(title)
    );
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    if let Ok(csp) = HeaderValue::from_str(&CSP) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    for (name, value) in extra {
        headers.append(name, value);
    }
    response
}

/// An error page without a form: for requests that cannot be answered by a redirect (unknown
/// client, unverified redirect URI) and for refusals the user must see (API feature off).
pub fn error_page(status: StatusCode, heading: &str, message: &str) -> Response {
    let body = format!(
        "<h1>{}</h1>\n<p role=\"alert\" class=\"error\">{}</p>\n\
         <p class=\"note\">You can close this page. Nothing was shared with the application.</p>\n",
        escape(heading),
        escape(message)
    );
    page(status, heading, &body, Vec::new())
}

/// What the consent page shows and carries.
pub struct Consent<'a> {
    /// Where the form posts (the authorization endpoint).
    pub action: &'a str,
    pub client_name: &'a str,
    pub client_uri: Option<&'a str>,
    /// For a metadata document client: the host its document (its `client_id`) is published
    /// on, shown beside the name, which the client chose itself.
    pub client_host: Option<String>,
    pub redirect_uri: &'a str,
    pub scopes: &'a [String],
    /// The authorization request, carried in hidden fields and validated again on POST.
    pub hidden: &'a [(&'static str, String)],
    /// The e-mail to prefill after a failed attempt (never the password).
    pub email: &'a str,
    /// Workspaces to choose from, when the e-mail and password fit several.
    pub workspaces: &'a [(Uuid, String)],
    /// A message about the previous attempt.
    pub error: Option<&'a str>,
}

/// The sign-in and consent page.
pub fn consent_page(
    status: StatusCode,
    consent: &Consent<'_>,
    extra: Vec<(header::HeaderName, HeaderValue)>,
) -> Response {
    let name = escape(consent.client_name);
    let mut body = String::new();
    let host = consent.client_host.as_deref().map(escape);
    match &host {
        Some(host) => {
            let _ = writeln!(
                body,
                "<h1>Authorize <span class=\"client\">{name}</span> from <strong class=\"host\">{host}</strong></h1>"
            );
        }
        None => {
            let _ = writeln!(body, "<h1>Authorize <span class=\"client\">{name}</span></h1>");
        }
    }
    let _ = writeln!(
        body,
        "<p><strong class=\"client\">{name}</strong> asks for access to your workapi account. \
         Sign in to approve or deny.</p>"
    );
    if let Some(error) = consent.error {
        let _ = writeln!(body, "<p role=\"alert\" class=\"error\" id=\"form-error\">{}</p>", escape(error));
    }
    let _ = writeln!(body, "<h2 id=\"scopes\">It will be able to</h2>\n<ul aria-labelledby=\"scopes\">");
    for s in consent.scopes {
        let _ = writeln!(body, "<li>{} (<code>{}</code>)</li>", escape(scope::describe(s)), escape(s));
    }
    body.push_str("</ul>\n");
    let _ = write!(
        body,
        "<p class=\"note\">After your decision you return to <code>{}</code>.",
        escape(consent.redirect_uri)
    );
    if let Some(host) = &host {
        let _ = write!(
            body,
            " This application is identified by a document published on <strong class=\"host\">{host}</strong>: \
             its name is what that site says."
        );
    }
    if let Some(uri) = consent.client_uri {
        let _ = write!(body, " The application's homepage: <code>{}</code>.", escape(uri));
    }
    body.push_str(" Only approve applications you trust.</p>\n");

    let described = if consent.error.is_some() { " aria-describedby=\"form-error\"" } else { "" };
    let _ = writeln!(body, "<form method=\"post\" action=\"{}\"{described}>", escape(consent.action));
    for (field, value) in consent.hidden {
        let _ = writeln!(body, "<input type=\"hidden\" name=\"{field}\" value=\"{}\">", escape(value));
    }
    let _ = write!(
        body,
        "<label for=\"email\">E-mail</label>\n\
         <input id=\"email\" name=\"email\" type=\"email\" autocomplete=\"username\" required maxlength=\"254\" value=\"{}\">\n\
         <label for=\"password\">Password</label>\n\
         <input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\" required maxlength=\"1024\">\n",
        escape(consent.email)
    );
    if !consent.workspaces.is_empty() {
        body.push_str(
            "<label for=\"workspace\">Workspace</label>\n<select id=\"workspace\" name=\"workspace_id\" required>\n",
        );
        for (id, workspace_name) in consent.workspaces {
            let _ = writeln!(body, "<option value=\"{id}\">{}</option>", escape(workspace_name));
        }
        body.push_str("</select>\n");
    }
    body.push_str(
        "<div class=\"actions\">\n\
         <button type=\"submit\" class=\"approve\" name=\"decision\" value=\"approve\">Approve</button>\n\
         <button type=\"submit\" class=\"deny\" name=\"decision\" value=\"deny\" formnovalidate>Deny</button>\n\
         </div>\n</form>\n",
    );
    page(status, &format!("Authorize {}", consent.client_name), &body, extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            escape(r#"<script>alert("x&'y")</script>"#),
            "&lt;script&gt;alert(&quot;x&amp;&#39;y&quot;)&lt;/script&gt;"
        );
    }

    #[test]
    fn the_policy_names_the_style_hash_and_nothing_external() {
        assert!(CSP.starts_with("default-src 'none'; style-src 'sha256-"));
        assert!(!CSP.contains("http") && !CSP.contains("unsafe"));
    }
}
