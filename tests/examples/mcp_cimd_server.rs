//! Test-only server for the MCP SDK's Client ID Metadata Document run (scripts/test.sh,
//! tests/mcp_client/cimd_flow.mjs): the whole API, built by the test harness exactly as the
//! black-box suites build it (the local server's router, embedded store), on a real port, plus a
//! self-signed https host serving the client's metadata document on 127.0.0.1.
//!
//! The local server (`workapi serve`) fetches documents from public addresses only and has no
//! way to relax that; this harness server admits loopback and the test certificate through
//! `AppStateBuilder::metadata_fetch_for_tests`, which only code can call. It lives in the tests
//! crate, which no deployed or local binary links.
//!
//! Prints one JSON line (`base`, `clientMetadataUrl`, `redirectUri`, `email`, `password`) and
//! serves until killed.

use api_tests::document_server::{self, json_route, relaxed};
use api_tests::{Backend, TestApi};
use serde_json::json;
use std::io::Write;
use std::sync::Arc;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;
use workapi_store::sqlite::SqliteStore;

const PATH: &str = "/mcp-client/client-metadata.json";
/// The MCP client's callback: it never listens there, it reads the code from the redirect.
const REDIRECT: &str = "http://127.0.0.1:8977/callback";
const PASSWORD: &str = "a long enough test password";

#[tokio::main]
async fn main() {
    // The document names its own URL as client_id, as a published one does.
    let documents = document_server::start(|base, path| {
        if path != PATH {
            return (404, Vec::new(), document_server::Body::Sized(Vec::new()));
        }
        let document = json!({
            "client_id": format!("{base}{PATH}"),
            "client_name": "MCP SDK metadata document client",
            "client_uri": "https://modelcontextprotocol.io",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none"
        });
        json_route(document, "max-age=60")
    })
    .await;
    let backend =
        Backend { name: "embedded", store: Arc::new(SqliteStore::in_memory().expect("open the embedded store")) };
    let api = TestApi::builder(&backend).metadata_fetch(relaxed()).start().await;
    let (user, _) = api.user(ROOT, UserKind::Employee).await;
    oauth::password::set_password(api.store.as_ref(), api.workspace_id, user.id, PASSWORD)
        .await
        .expect("set the user's password");
    let ready = json!({
        "base": api.base,
        "clientMetadataUrl": documents.url(PATH),
        "redirectUri": REDIRECT,
        "email": user.email,
        "password": PASSWORD,
    });
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{ready}").and_then(|()| stdout.flush()).expect("print the ready line");
    std::future::pending::<()>().await;
}
