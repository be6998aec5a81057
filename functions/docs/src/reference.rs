//! The reference page (docs/conventions.md#the-reference-page): `GET /docs` asked for HTML is
//! Swagger UI over this API's own document, and `GET /docs/assets/{asset}` serves its files.
//!
//! Everything the page loads comes from this origin, and its Content-Security-Policy allows
//! nothing else. Swagger UI's bundle and style sheet are vendored gzip-compressed in
//! `functions/docs/assets` (pinned in tools/swagger-ui, written and checked by
//! scripts/vendor-swagger-ui.sh) and served as they are stored, under URLs that name their
//! version, so browsers keep them for a year without asking again.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt::Write;
use std::sync::LazyLock;
use workapi_kit::ApiError;
use workapi_richtext::escape_attr as escape;

/// The vendored Swagger UI's version: part of its assets' URLs, so a new version is a new URL.
pub const SWAGGER_UI_VERSION: &str = "5.35.0";

/// `swagger-ui-bundle.js` of swagger-ui-dist, gzip-compressed (`gzip -9 -n`).
const SWAGGER_UI_BUNDLE_GZ: &[u8] = include_bytes!("../assets/swagger-ui-bundle.js.gz");
/// `swagger-ui.css` of swagger-ui-dist, gzip-compressed.
const SWAGGER_UI_CSS_GZ: &[u8] = include_bytes!("../assets/swagger-ui.css.gz");
/// The page's own script: starts Swagger UI with this API's settings. 2.2 kB, served as is.
const REFERENCE_JS: &str = include_str!("../assets/reference.js");

/// `Cache-Control` of a versioned asset: its URL changes whenever its bytes do.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// The page's policy: scripts, styles, images, fonts and calls from this origin only (inline
/// `style` attributes, which Swagger UI's components set, and `data:` images, which its style
/// sheet uses for icons, aside); no frames, no plugins, no form posting elsewhere.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
    img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; \
    frame-ancestors 'none'";

/// One file of the page, as served.
pub struct Asset {
    /// The last segment of its URL, which names its version or its content's hash.
    pub name: String,
    pub content_type: &'static str,
    pub bytes: &'static [u8],
    /// Stored gzip-compressed, and served with `Content-Encoding: gzip`.
    pub gzipped: bool,
}

/// The page's assets, named once per container.
pub static ASSETS: LazyLock<[Asset; 3]> = LazyLock::new(|| {
    let hash = Sha256::digest(REFERENCE_JS.as_bytes());
    let short: String = hash.iter().take(6).map(|byte| format!("{byte:02x}")).collect();
    [
        Asset {
            name: format!("swagger-ui-bundle-{SWAGGER_UI_VERSION}.js"),
            content_type: "text/javascript; charset=utf-8",
            bytes: SWAGGER_UI_BUNDLE_GZ,
            gzipped: true,
        },
        Asset {
            name: format!("swagger-ui-{SWAGGER_UI_VERSION}.css"),
            content_type: "text/css; charset=utf-8",
            bytes: SWAGGER_UI_CSS_GZ,
            gzipped: true,
        },
        Asset {
            name: format!("reference-{short}.js"),
            content_type: "text/javascript; charset=utf-8",
            bytes: REFERENCE_JS.as_bytes(),
            gzipped: false,
        },
    ]
});

/// Whether the request wants the page rather than the JSON index: the one negotiation of the
/// API's pages (`workapi_kit::negotiate`).
pub use workapi_kit::negotiate::wants_html;

/// Whether the client takes a gzip-compressed body: yes without `Accept-Encoding` (any coding is
/// then acceptable, RFC 9110 §12.5.3), else when `gzip` (or `*`) has a non-zero quality.
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(header::ACCEPT_ENCODING).iter().filter_map(|value| value.to_str().ok()).peekable();
    if values.peek().is_none() {
        return true;
    }
    let mut gzip = None;
    let mut any = None;
    for coding in values.flat_map(|value| value.split(',')) {
        let mut parts = coding.split(';');
        let name = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|param| param.trim().strip_prefix("q=").and_then(|q| q.trim().parse::<f32>().ok()))
            .next()
            .unwrap_or(1.0);
        match name.as_str() {
            "gzip" | "x-gzip" => gzip = Some(q),
            "*" => any = Some(q),
            _ => {}
        }
    }
    gzip.or(any).is_some_and(|q| q > 0.0)
}

/// `GET /docs/assets/{asset}`: the asset by its versioned name, cached for a year. A client
/// that refuses gzip gets 406 for a compressed one: the function keeps one copy of each, the
/// compressed one (every browser takes gzip; docs/conventions.md#the-reference-page).
pub fn asset_response(name: &str, headers: &HeaderMap) -> Response {
    let Some(asset) = ASSETS.iter().find(|asset| asset.name == name) else {
        return ApiError::not_found(format!("no asset {name:?}: the reference page names its assets' current URLs"))
            .into_response();
    };
    if asset.gzipped && !accepts_gzip(headers) {
        return ApiError::new(
            StatusCode::NOT_ACCEPTABLE,
            "This asset is served gzip-compressed only: send Accept-Encoding: gzip",
        )
        .into_response();
    }
    let mut response = asset.bytes.into_response();
    let out = response.headers_mut();
    out.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static(IMMUTABLE));
    if asset.gzipped {
        out.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        out.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    }
    response
}

/// The reference page: Swagger UI over `{site}/docs/json`, and, for readers without
/// JavaScript, every operation listed by tag with its method, path and summary. The list is in
/// the page itself, not in a `<noscript>`: the start-up script removes it only once Swagger UI's
/// bundle has loaded, so a page whose scripts did not arrive still lists the operations.
pub fn page(site: &str, document: &Value) -> Response {
    let [bundle, css, script] = &*ASSETS;
    let title = escape(document["info"]["title"].as_str().unwrap_or("API"));
    let version = escape(document["info"]["version"].as_str().unwrap_or_default());
    let assets = format!("{site}/docs/assets");
    let html = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <link rel=\"icon\" href=\"data:,\">\n\
         <title>{title} {version} API reference</title>\n\
         <link rel=\"stylesheet\" href=\"{assets}/{css}\">\n</head>\n<body>\n\
         <div id=\"reference\" data-document=\"{site}/docs/json\"></div>\n\
         <main id=\"reference-fallback\">\n<h1>{title} {version} API reference</h1>\n\
         <p>The interactive reference needs JavaScript and its scripts from this origin. The OpenAPI document is at \
         <a href=\"{site}/docs/json\">{site}/docs/json</a> (and <a href=\"{site}/docs/yaml\">YAML</a>). \
         Its operations:</p>\n{operations}</main>\n\
         <script src=\"{assets}/{bundle}\"></script>\n<script src=\"{assets}/{script}\"></script>\n\
         </body>\n</html>\n",
        site = escape(site),
        css = css.name,
        bundle = bundle.name,
        script = script.name,
        operations = operation_list(document),
    );
    let mut response = html.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::VARY, HeaderValue::from_static("Accept"));
    response
}

const METHODS: [&str; 7] = ["get", "put", "post", "delete", "options", "head", "patch"];

/// Every operation of the document, grouped by its first tag in the document's tag order:
/// `<h2>` per tag, then `<li><code>METHOD /path</code> summary</li>`.
fn operation_list(document: &Value) -> String {
    let mut tags: Vec<(String, Vec<String>)> = document["tags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tag| tag["name"].as_str())
        .map(|name| (name.to_owned(), Vec::new()))
        .collect();
    for (path, item) in document["paths"].as_object().into_iter().flatten() {
        for method in METHODS {
            let Some(operation) = item.get(method) else { continue };
            let tag = operation["tags"][0].as_str().unwrap_or("other");
            let entry = format!(
                "<li><code>{} {}</code> {}</li>",
                method.to_ascii_uppercase(),
                escape(path),
                escape(operation["summary"].as_str().unwrap_or_default())
            );
            match tags.iter_mut().find(|(name, _)| name == tag) {
                Some((_, entries)) => entries.push(entry),
                None => tags.push((tag.to_owned(), vec![entry])),
            }
        }
    }
    let mut html = String::new();
    for (tag, entries) in tags.iter().filter(|(_, entries)| !entries.is_empty()) {
        let _ = writeln!(html, "<h2>{}</h2>\n<ul>\n{}\n</ul>", escape(tag), entries.join("\n"));
    }
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: header::HeaderName, values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(name.clone(), value.parse().unwrap());
        }
        headers
    }

    #[test]
    fn gzip_is_taken_unless_refused() {
        let gzip = |accept: &[&str]| accepts_gzip(&headers(header::ACCEPT_ENCODING, accept));
        assert!(gzip(&[]));
        assert!(gzip(&["gzip, deflate, br, zstd"]));
        assert!(gzip(&["br;q=1, GZIP;q=0.5"]));
        assert!(gzip(&["*"]));
        assert!(!gzip(&["identity"]));
        assert!(!gzip(&["br"]));
        assert!(!gzip(&["gzip;q=0, *"]));
    }

    /// The committed files are the ones scripts/vendor-swagger-ui.sh wrote from the pinned
    /// package (its `--check` holds their content to the npm tarball; this holds the bytes).
    #[test]
    fn the_vendored_assets_are_the_pinned_ones() {
        let sums = include_str!("../assets/SHA256SUMS");
        for (file, bytes) in
            [("swagger-ui-bundle.js.gz", SWAGGER_UI_BUNDLE_GZ), ("swagger-ui.css.gz", SWAGGER_UI_CSS_GZ)]
        {
            let hex: String = Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect();
            assert!(sums.lines().any(|line| line == format!("{hex}  {file}")), "{file} ({hex}) is not in SHA256SUMS");
            assert_eq!(&bytes[..2], [0x1f, 0x8b], "{file} is gzip");
        }
        assert!(include_str!("../assets/swagger-ui.NOTICE").contains("swagger-ui"));
        assert!(ASSETS.iter().all(|asset| !asset.name.contains('/')));
    }

    #[test]
    fn the_page_loads_its_assets_from_the_site_and_lists_every_operation_without_javascript() {
        let document = serde_json::json!({
            "info": {"title": "workapi", "version": "1.0"},
            "tags": [{"name": "tags"}, {"name": "docs"}],
            "paths": {
                "/docs": {"get": {"tags": ["docs"], "summary": "The document's URLs"}},
                "/tags": {"get": {"tags": ["tags"], "summary": "List <tags>"}, "post": {"tags": ["tags"], "summary": "Create a tag"}},
            }
        });
        let response = page("https://work.example.com", &document);
        assert_eq!(response.headers()[header::CONTENT_SECURITY_POLICY], CSP);
        let body = body_text(response);
        for asset in ASSETS.iter() {
            assert!(body.contains(&format!("https://work.example.com/docs/assets/{}\"", asset.name)), "{body}");
        }
        let tags = body.find("<h2>tags</h2>").unwrap();
        let docs = body.find("<h2>docs</h2>").unwrap();
        assert!(tags < docs, "in the document's tag order: {body}");
        assert!(body.contains("<li><code>GET /tags</code> List &lt;tags&gt;</li>"), "{body}");
        assert!(body.contains("<li><code>POST /tags</code> Create a tag</li>"), "{body}");
        assert!(body.contains("<li><code>GET /docs</code> The document&#39;s URLs</li>"), "{body}");
        assert!(!CSP.contains("http") && !CSP.contains("unsafe-eval"));
    }

    fn body_text(response: Response) -> String {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let bytes = runtime.block_on(axum::body::to_bytes(response.into_body(), usize::MAX)).unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }
}
