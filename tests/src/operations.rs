//! The operation catalogue: one valid request per documented operation (`registry::document()`),
//! over a test workspace seeded with what each needs. The round-trip bench
//! (`tests/benches/roundtrips.rs`), the warm handler bench (`tests/benches/handlers.rs`) and the
//! black-box test `operations_catalogue` run it; that test fails for an operation without an entry.
//!
//! Requests that consume state (accept a quotation, delete a role, redeem a code, delete a
//! client, delete the uploaded file) come after every request that needs that state, and are
//! marked [`Request::once`]; the code's redemption comes first, as a code expires in a minute.
//! Names that must be unique carry [`UNIQUE`], replaced by a fresh value on every send, so every
//! other request can be sent again and again.

use crate::TestApi;
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use uuid::Uuid;
use workapi_domain::identity::{NewUser, UserKind};
use workapi_domain::permissions::ROOT;

/// In a body or a path: replaced by a fresh value on every send.
pub const UNIQUE: &str = "@unique@";
/// The business instant of the billing requests (their seeded world is dated 2026).
pub const BILLING_NOW: &str = "2026-04-02T12:00:00Z";

/// The demo seed's ids the catalogue uses (seed/demo.json).
const DEMO_PROJECT: &str = "01e53df4-07b4-4a44-8242-85272b83de6a";
const DEMO_CONTACT: &str = "feba6268-1a6d-44ce-bd62-936a18e5d37a";
const DEMO_TASK: &str = "7c0f3a52-9d4e-4b1a-8e6f-2a3b4c5d6e7f";
const DEMO_CATEGORY: &str = "dd1a60b7-9ef0-440d-a7b7-0812147e4225";
const DEMO_PRODUCT: &str = "0df8d341-3d46-44d0-b749-fb75cf4b6ca7";
const DEMO_MAIL_ACCOUNT: &str = "6c1f8a2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b";
/// seed/demo-agents.json.
const DEMO_AGENT: &str = "6b1f3c2a-4d5e-4f60-8a7b-9c0d1e2f3a4b";
const DEMO_SKILL: &str = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
const PASSWORD: &str = "a long enough catalogue password";
const REDIRECT: &str = "https://app.example/callback";

/// A request body.
#[derive(Debug, Clone)]
pub enum Body {
    Empty,
    Json(Value),
    Form(Vec<(String, String)>),
    /// A ready multipart body and its content type (with the boundary).
    Multipart {
        content_type: String,
        bytes: Vec<u8>,
    },
}

/// Which credential a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    None,
    /// The Root user's personal access token (the default).
    RootPat,
    /// The RFC 7592 registration access token of the catalogue's client.
    Registration,
}

/// One request of the catalogue.
#[derive(Debug, Clone)]
pub struct Request {
    /// The function serving it (`workapi_kit::function::Function::name`).
    pub function: &'static str,
    pub operation_id: String,
    pub method: Method,
    /// Path and query; may contain [`UNIQUE`].
    pub path: String,
    pub credential: Credential,
    pub headers: Vec<(String, String)>,
    /// May contain [`UNIQUE`].
    pub body: Body,
    /// It consumes the state it needs: it succeeds once per catalogue.
    pub once: bool,
}

/// A 2xx, or the 302 of the authorize decision (RFC 6749 §4.1.2).
pub fn success(request: &Request, status: u16) -> bool {
    (200..300).contains(&status) || (request.operation_id == "oauthAuthorizeDecision" && status == 302)
}

/// The requests, and the credentials they name.
pub struct Catalogue {
    pub requests: Vec<Request>,
    pub root_token: String,
    pub registration_token: String,
}

impl Catalogue {
    pub fn token(&self, credential: Credential) -> Option<&str> {
        match credential {
            Credential::None => None,
            Credential::RootPat => Some(&self.root_token),
            Credential::Registration => Some(&self.registration_token),
        }
    }

    /// `request` as an HTTP request (URI is the path only), with every [`UNIQUE`] replaced.
    pub fn http_request(&self, request: &Request) -> axum::http::Request<Vec<u8>> {
        let fresh = Uuid::new_v4().simple().to_string();
        let unique = |s: &str| s.replace(UNIQUE, &fresh[..12]);
        let mut builder = axum::http::Request::builder().method(request.method.clone()).uri(unique(&request.path));
        if let Some(token) = self.token(request.credential) {
            builder = builder.header("authorization", format!("Bearer {token}"));
        }
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        let bytes = match &request.body {
            Body::Empty => Vec::new(),
            Body::Json(value) => {
                builder = builder.header("content-type", "application/json");
                unique(&value.to_string()).into_bytes()
            }
            Body::Form(pairs) => {
                builder = builder.header("content-type", "application/x-www-form-urlencoded");
                unique(&encode_form(pairs)).into_bytes()
            }
            Body::Multipart { content_type, bytes } => {
                builder = builder.header("content-type", content_type);
                bytes.clone()
            }
        };
        builder.body(bytes).expect("a valid request")
    }

    /// Sends `request` to the server of `api` (redirects not followed): status and body bytes.
    pub async fn send(&self, api: &TestApi, request: &Request) -> (u16, Vec<u8>) {
        let (parts, body) = self.http_request(request).into_parts();
        let client = no_redirects();
        let mut builder = client.request(parts.method, api.url(&parts.uri.to_string())).body(body);
        for (name, value) in &parts.headers {
            builder = builder.header(name, value);
        }
        let response = builder.send().await.expect("the request reaches the server");
        let status = response.status().as_u16();
        (status, response.bytes().await.expect("a body").to_vec())
    }
}

fn no_redirects() -> &'static reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT.get_or_init(|| reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap())
}

/// Every operation of the document: operationId → (function, method, path template).
pub fn documented() -> BTreeMap<String, (&'static str, Method, String)> {
    let mut all = BTreeMap::new();
    for function in registry::FUNCTIONS {
        for (path, item) in function.document().paths.paths {
            let operations = [
                (Method::GET, &item.get),
                (Method::POST, &item.post),
                (Method::PUT, &item.put),
                (Method::PATCH, &item.patch),
                (Method::DELETE, &item.delete),
            ];
            for (method, operation) in operations {
                if let Some(id) = operation.as_ref().and_then(|o| o.operation_id.clone()) {
                    all.insert(id, (function.name, method, path.clone()));
                }
            }
        }
    }
    all
}

async fn load_seed(api: &TestApi, seed: &str) {
    let file = local::seed::parse(seed).expect("the seed parses");
    local::seed::load_with_secrets(api.store.as_ref(), api.secrets.as_ref(), api.workspace_id, &file)
        .await
        .expect("the seed loads");
}

/// `application/x-www-form-urlencoded`.
fn encode_form(pairs: &[(String, String)]) -> String {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        form.append_pair(name, value);
    }
    form.finish()
}

fn form(pairs: &[(&str, &str)]) -> Body {
    Body::Form(pairs.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect())
}

fn query(pairs: &[(&str, &str)]) -> String {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        form.append_pair(name, value);
    }
    form.finish()
}

/// A 3×2 PNG as a multipart upload.
fn png_upload() -> Body {
    let png = workspace::image::samples::bytes(workspace::image::samples::PNG);
    let boundary = "workapi-catalogue-boundary";
    let mut bytes = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"logo.png\"\r\n\
         Content-Type: image/png\r\n\r\n"
    )
    .into_bytes();
    bytes.extend_from_slice(&png);
    bytes.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    Body::Multipart { content_type: format!("multipart/form-data; boundary={boundary}"), bytes }
}

/// Seeds the test workspace of `api` and returns one request per documented operation.
/// The list operations of the served document: a GET with a `cursor` query parameter.
pub fn paged_operation_ids() -> std::collections::BTreeSet<String> {
    let document = serde_json::to_value(registry::document()).expect("the document serialises");
    let mut paged = std::collections::BTreeSet::new();
    for item in document["paths"].as_object().into_iter().flat_map(|paths| paths.values()) {
        let Some(get) = item.get("get") else { continue };
        let params = get["parameters"].as_array().cloned().unwrap_or_default();
        if params.iter().any(|p| p["name"] == "cursor" && p["in"] == "query") {
            paged.insert(get["operationId"].as_str().unwrap_or_default().to_owned());
        }
    }
    paged
}

pub async fn catalogue(api: &TestApi) -> Catalogue {
    // The Root user, with a password (login, the consent form), named by the admin seed.
    let email = format!("root-{}@catalogue.example", Uuid::new_v4().simple());
    let user =
        NewUser { email: &email, name: "Catalogue Root", role_id: ROOT, kind: UserKind::Employee, language: "en" };
    let root =
        workapi_domain::identity::create_user(api.store.as_ref(), api.workspace_id, user).await.expect("the Root user");
    oauth::password::set_password(api.store.as_ref(), api.workspace_id, root.id, PASSWORD).await.expect("password");
    let scopes =
        vec![workapi_domain::identity::SCOPE_READ.to_owned(), workapi_domain::identity::SCOPE_WRITE.to_owned()];
    let new = workapi_domain::identity::NewToken { name: "catalogue", scopes, expires_at: None };
    let (root_token, _) =
        workapi_domain::identity::create_token(api.store.as_ref(), &api.key, api.workspace_id, root.id, new)
            .await
            .expect("the Root token");
    load_seed(api, local::demo::DEMO_SEED).await;
    load_seed(api, &local::demo::DEMO_ADMIN_SEED.replace(local::demo::DEMO_EMAIL, &email)).await;
    load_seed(api, local::demo::DEMO_AGENTS_SEED).await;
    let notification = "1c8d2b63-5b5f-4a1f-8b68-3a2e3c4d5e6f"; // unread, seed/demo-admin.json

    let mut catalogue = Catalogue { requests: Vec::new(), root_token, registration_token: String::new() };
    let setup = |method: Method, path: &str, body: Value| {
        let token = catalogue.root_token.clone();
        let path = path.to_owned();
        async move {
            let headers = [("LT_CUSTOM_NOW", BILLING_NOW)];
            let (status, _, answer) = api.send_with(method, &path, &token, &headers, Some(body)).await;
            assert!((200..300).contains(&status), "[{}] setup {path}: {status} {answer}", api.backend);
            answer
        }
    };
    // State the requests name: a role, an activity, a tag, quotations, a subscription billing
    // (and its potential invoice), an uploaded file.
    let role = setup(
        Method::POST,
        "/administration/roles",
        json!({"name": "Catalogue role", "icon": "fa-eye", "type": "normal", "parentId": "_staff"}),
    )
    .await;
    let role = format!("/administration/roles/{}", role["id"].as_str().expect("a role id"));
    let activity = setup(Method::POST, "/administration/task-settings/activities", json!({"name": "Catalogue"})).await;
    let activity = activity["id"].as_str().expect("an activity id").to_owned();
    let tag = setup(Method::POST, "/tags/task/create", json!({"name": "Catalogue tag"})).await;
    let tag = tag["id"].as_str().expect("a tag id").to_owned();
    let quotations = format!("/tasks/{DEMO_TASK}/express-quotations");
    let quotation = json!({"contactUserId": DEMO_CONTACT, "includeEstimate": true});
    let accepted = setup(Method::POST, &quotations, quotation.clone()).await["id"].as_str().unwrap().to_owned();
    let rejected = setup(Method::POST, &quotations, quotation.clone()).await["id"].as_str().unwrap().to_owned();
    let billings = format!("/projects/{DEMO_PROJECT}/subscription-billings");
    let billing = json!({"manualTitle": "Hosting", "fromDate": "2026-01-01", "toDate": "2026-12-31",
                         "frequency": 1, "payment": "perUnit", "price": 10});
    setup(Method::POST, &billings, billing.clone()).await;
    let invoice = format!(
        "/billing/potential-invoices/{}",
        format!("subscription::{DEMO_PROJECT}::2026-03-01::2026-03-31").replace(':', "%3A")
    );
    let read = api.send_with(Method::GET, &invoice, &catalogue.root_token, &[("LT_CUSTOM_NOW", BILLING_NOW)], None);
    let (status, _, read) = read.await;
    assert_eq!(status, 200, "[{}] the potential invoice: {read}", api.backend);
    let row = read["subscriptions"][0]["billingId"].as_str().expect("a subscription row").to_owned();
    // February's potential invoice, issued: the invoice the reads and the cancellation name
    // (January is settled by the seed's invoice); March's is issued by the catalogue's own
    // request, after every request that reads it.
    let month = |month: &str, last: &str| {
        let id = format!("subscription::{DEMO_PROJECT}::2026-{month}-01::2026-{month}-{last}");
        format!("/billing/potential-invoices/{}", id.replace(':', "%3A"))
    };
    let webhook = setup(
        Method::POST,
        "/webhooks",
        json!({"url": "https://93.184.215.14/workapi", "eventTypes": ["tag.created"]}),
    )
    .await;
    let webhook_id: Uuid = webhook["id"].as_str().and_then(|id| id.parse().ok()).expect("a webhook endpoint id");
    let webhook = format!("/webhooks/{webhook_id}");
    // A delivery as the dispatcher records it: this server runs no dispatcher.
    let delivery = {
        let now = workapi_store::clock::now();
        let event_id = workapi_domain::event::new_id((now.unix_timestamp_nanos() / 1_000_000) as i64);
        let record = events::deliveries::DeliveryRecord::new(webhook_id, &event_id, "tag.created", now);
        let keys = workapi_store::keys::WsKeys::new(api.workspace_id);
        let item = workapi_store::entity::to_item(&record, keys).expect("a delivery item");
        api.store.put(item, workapi_store::Condition::NotExists).await.expect("the delivery");
        format!("{webhook}/deliveries/{event_id}")
    };
    let issued = setup(Method::POST, &format!("{}/issue", month("02", "28")), json!({})).await;
    let issued = format!("/billing/invoices/{}", issued["id"].as_str().expect("an invoice id"));
    let issue_march = format!("{}/issue", month("03", "31"));
    let (status, upload) = {
        let Body::Multipart { content_type, bytes } = png_upload() else { unreachable!() };
        let response = api
            .http
            .post(api.url("/workspace/upload"))
            .bearer_auth(&catalogue.root_token)
            .header("content-type", content_type)
            .body(bytes)
            .send()
            .await
            .expect("the upload");
        (response.status().as_u16(), response.json::<Value>().await.unwrap_or(Value::Null))
    };
    assert_eq!(status, 201, "[{}] the upload: {upload}", api.backend);
    let file_url = upload["url"].as_str().expect("the file's URL");
    let file_path = file_url.strip_prefix(&api.base).unwrap_or(file_url).to_owned();
    let deleted_file = format!("/workspace/files/{}", upload["id"].as_str().expect("the file's id"));

    // OAuth: a public client, its registration access token; a code for the token request and
    // a refresh token to revoke, each from an approved authorization. Clients are not per
    // workspace: a name of its own keeps two catalogues built at once on one table (the REST walk
    // and the MCP walk) from being an identical registration, which gets no token.
    let client_name = format!("Catalogue app {}", Uuid::new_v4().simple());
    let registration = json!({"redirect_uris": [REDIRECT], "client_name": client_name,
                              "token_endpoint_auth_method": "none"});
    let (status, _, client) = api.call(Method::POST, "/api/oauth/register", None, Some(registration.clone())).await;
    assert_eq!(status, 201, "[{}] registration: {client}", api.backend);
    let client_id = client["client_id"].as_str().expect("client_id").to_owned();
    catalogue.registration_token = client["registration_access_token"].as_str().expect("the RAT").to_owned();
    let verifier = format!("{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple());
    let challenge = {
        use base64::Engine;
        use sha2::Digest;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
    };
    let authorization = [
        ("response_type", "code"),
        ("client_id", client_id.as_str()),
        ("redirect_uri", REDIRECT),
        ("scope", "api:read api:write"),
        ("state", "catalogue"),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
    ];
    let mut decision = authorization.to_vec();
    decision.extend([("email", email.as_str()), ("password", PASSWORD), ("decision", "approve")]);
    let post_form = |path: &'static str, pairs: Vec<(String, String)>| async move {
        no_redirects()
            .post(api.url(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(encode_form(&pairs))
            .send()
            .await
            .expect("the OAuth request reaches the server")
    };
    let owned = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect()
    };
    let code = async || {
        let response = post_form("/api/oauth/authorize", owned(&decision)).await;
        assert_eq!(response.status().as_u16(), 302, "[{}] the consent", api.backend);
        let location = response.headers()["location"].to_str().unwrap().to_owned();
        let url = url::Url::parse(&location).expect("a redirect URL");
        url.query_pairs().find(|(n, _)| n == "code").expect("a code").1.into_owned()
    };
    let exchange = |code: String| {
        vec![
            ("grant_type".to_owned(), "authorization_code".to_owned()),
            ("code".to_owned(), code),
            ("redirect_uri".to_owned(), REDIRECT.to_owned()),
            ("code_verifier".to_owned(), verifier.clone()),
            ("client_id".to_owned(), client_id.clone()),
        ]
    };
    let redeemed = code().await;
    let first = code().await;
    let tokens: Value = post_form("/api/oauth/token", exchange(first)).await.json().await.expect("tokens");
    let refresh = tokens["refresh_token"].as_str().expect("a refresh token").to_owned();

    let project = |tail: &str| format!("/projects/{DEMO_PROJECT}{tail}");
    let skill = format!("/agents/skills/{DEMO_SKILL}");
    let managed = format!("/agents/{DEMO_AGENT}/managed-provider");
    let account = |tail: &str| format!("/helpdesk/email-accounts/{DEMO_MAIL_ACCOUNT}{tail}");
    let registered = format!("/api/oauth/register/{client_id}");
    let j = |v: Value| Body::Json(v);
    use Credential::{None as Public, Registration, RootPat};
    #[rustfmt::skip]
    let entries: Vec<(&str, Method, String, Credential, Body, bool)> = vec![
        // docs and discovery
        ("apiIndex", Method::GET, "/".into(), Public, Body::Empty, false),
        ("docsIndex", Method::GET, "/docs".into(), Public, Body::Empty, false),
        ("openApiJson", Method::GET, "/docs/json".into(), Public, Body::Empty, false),
        ("openApiYaml", Method::GET, "/docs/yaml".into(), Public, Body::Empty, false),
        ("referenceAsset", Method::GET, format!("/docs/assets/{}", docs::reference::ASSETS[1].name), Public, Body::Empty, false),
        ("oauthAuthorizationServerMetadataOrigin", Method::GET, "/.well-known/oauth-authorization-server".into(), Public, Body::Empty, false),
        ("oauthAuthorizationServerMetadataRfc8414", Method::GET, "/.well-known/oauth-authorization-server/api".into(), Public, Body::Empty, false),
        ("oauthAuthorizationServerMetadata", Method::GET, "/api/.well-known/oauth-authorization-server".into(), Public, Body::Empty, false),
        ("oauthProtectedResourceMetadata", Method::GET, "/.well-known/oauth-protected-resource".into(), Public, Body::Empty, false),
        ("oauthProtectedResourceMetadataApi", Method::GET, "/api/.well-known/oauth-protected-resource".into(), Public, Body::Empty, false),
        ("oauthProtectedResourceMetadataMcp", Method::GET, "/.well-known/oauth-protected-resource/mcp".into(), Public, Body::Empty, false),
        // authentication
        ("login", Method::POST, "/api/auth/login".into(), Public, j(json!({"email": email, "password": PASSWORD})), false),
        ("registerOAuthClient", Method::POST, "/api/oauth/register".into(), Public, j(registration.clone()), false),
        ("readOAuthClient", Method::GET, registered.clone(), Registration, Body::Empty, false),
        ("updateOAuthClient", Method::PUT, registered.clone(), Registration, j(registration.clone()), false),
        ("oauthAuthorize", Method::GET, format!("/api/oauth/authorize?{}", query(&authorization)), Public, Body::Empty, false),
        ("oauthAuthorizeDecision", Method::POST, "/api/oauth/authorize".into(), Public, form(&decision), false),
        // An authorization code lives 60 s (CODE_TTL_SECS): redeemed at once, not after the walk,
        // which outlasts it under load. Nothing else needs this code.
        ("oauthToken", Method::POST, "/api/oauth/token".into(), Public, Body::Form(exchange(redeemed)), true),
        ("oauthRevoke", Method::POST, "/api/oauth/revoke".into(), Public, form(&[("token", &refresh), ("client_id", &client_id)]), false),
        // tags
        ("listTags", Method::GET, "/tags/task".into(), RootPat, Body::Empty, false),
        ("createTag", Method::POST, "/tags/task/create".into(), RootPat, j(json!({"name": format!("Tag {UNIQUE}")})), false),
        ("saveTagColor", Method::PUT, format!("/tags/task/{tag}/color"), RootPat, j(json!({"color": "red"})), false),
        // administration
        ("listRoles", Method::GET, "/administration/roles".into(), RootPat, Body::Empty, false),
        ("createRole", Method::POST, "/administration/roles".into(), RootPat,
            j(json!({"name": format!("Role {UNIQUE}"), "icon": "fa-eye", "type": "normal", "parentId": "_staff"})), false),
        ("getRole", Method::GET, role.clone(), RootPat, Body::Empty, false),
        ("updateRole", Method::PATCH, role.clone(), RootPat, j(json!({"name": format!("Role {UNIQUE}")})), false),
        ("replaceRole", Method::PUT, role.clone(), RootPat,
            j(json!({"name": format!("Role {UNIQUE}"), "icon": ":eyes:", "type": "normal", "description": "Reviews"})), false),
        ("replaceRolePermissions", Method::PUT, format!("{role}/permissions"), RootPat,
            j(json!({"Projects.edit": true, "Tasks.createTags": false})), false),
        // A change after the replacement above (which denies it): a request that changes nothing records no event.
        ("setRolePermission", Method::PATCH, format!("{role}/permissions/Tasks.createTags"), RootPat, j(json!({"allow": true})), false),
        ("listWorkActivities", Method::GET, "/administration/task-settings/activities".into(), RootPat, Body::Empty, false),
        ("createWorkActivity", Method::POST, "/administration/task-settings/activities".into(), RootPat,
            j(json!({"name": format!("Activity {UNIQUE}")})), false),
        ("replaceWorkActivity", Method::PUT, format!("/administration/task-settings/activities/{activity}"), RootPat,
            j(json!({"name": format!("Activity {UNIQUE}"), "translations": [{"language": "de", "name": "Entwicklung"}]})), false),
        ("listCatalogProducts", Method::GET, "/administration/product-catalog".into(), RootPat, Body::Empty, false),
        ("listCatalogCategories", Method::GET, "/administration/product-catalog/categories".into(), RootPat, Body::Empty, false),
        ("getCatalogProduct", Method::GET, format!("/administration/product-catalog/{DEMO_PRODUCT}"), RootPat, Body::Empty, false),
        ("createCatalogProduct", Method::POST, "/administration/product-catalog".into(), RootPat,
            j(json!({"name": "Support", "categoryId": DEMO_CATEGORY, "description": "<p>Hours</p>",
                     "pricePerUnit": 95, "priceUnitName": "hour", "priceFrequency": 3, "priceFixed": 10.5,
                     "variants": [{"name": "Standard", "description": null}], "options": []})), false),
        // projects, contacts
        ("listProjects", Method::GET, "/projects".into(), RootPat, Body::Empty, false),
        ("getProject", Method::GET, project(""), RootPat, Body::Empty, false),
        ("listProjectTasks", Method::GET, project("/tasks"), RootPat, Body::Empty, false),
        ("listManualPositionCategories", Method::GET, project("/manual-position-categories"), RootPat, Body::Empty, false),
        ("listManualPositions", Method::GET, project("/manual-positions"), RootPat, Body::Empty, false),
        ("createManualPosition", Method::POST, project("/manual-positions"), RootPat, j(json!({"name": "Domain", "price": 24.9})), false),
        ("listProjectProducts", Method::GET, project("/products"), RootPat, Body::Empty, false),
        ("importProjectProduct", Method::POST, project("/products"), RootPat, j(json!({"productId": DEMO_PRODUCT, "quantity": 3, "options": [], "customPrices": {}})), false),
        ("listContacts", Method::GET, "/contacts".into(), RootPat, Body::Empty, false),
        // tasks
        ("getTask", Method::GET, format!("/tasks/{DEMO_TASK}"), RootPat, Body::Empty, false),
        ("listExpressQuotations", Method::GET, quotations.clone(), RootPat, Body::Empty, false),
        ("createExpressQuotation", Method::POST, quotations.clone(), RootPat, j(quotation.clone()), false),
        ("getExpressQuotation", Method::GET, format!("{quotations}/{accepted}"), RootPat, Body::Empty, false),
        // billing
        ("listSubscriptionBillings", Method::GET, billings.clone(), RootPat, Body::Empty, false),
        ("createSubscriptionBilling", Method::POST, billings.clone(), RootPat, j(billing.clone()), false),
        ("listSupportContingents", Method::GET, project("/support-contingents"), RootPat, Body::Empty, false),
        ("listPotentialInvoices", Method::GET, format!("/billing/potential-invoices?projectId={DEMO_PROJECT}"), RootPat, Body::Empty, false),
        ("getPotentialInvoice", Method::GET, invoice.clone(), RootPat, Body::Empty, false),
        ("updatePotentialInvoice", Method::PATCH, invoice.clone(), RootPat, j(json!({"contactId": DEMO_CONTACT})), false),
        ("setPotentialInvoiceQuantity", Method::POST, format!("{invoice}/subscriptions/{row}/quantity"), RootPat, j(json!({"value": 3})), false),
        ("listInvoices", Method::GET, format!("/billing/invoices?projectId={DEMO_PROJECT}"), RootPat, Body::Empty, false),
        ("getInvoice", Method::GET, issued.clone(), RootPat, Body::Empty, false),
        // workspace files
        ("uploadFile", Method::POST, "/workspace/upload".into(), RootPat, png_upload(), false),
        ("getFileContent", Method::GET, file_path, Public, Body::Empty, false),
        // helpdesk
        ("listEmailAccounts", Method::GET, "/helpdesk/email-accounts".into(), RootPat, Body::Empty, false),
        ("getEmailAccount", Method::GET, account(""), RootPat, Body::Empty, false),
        ("updateHelpdeskSettings", Method::PATCH, account("/settings"), RootPat, j(json!({"taskPriority": "Low"})), false),
        // account
        ("listNotifications", Method::GET, "/account/notifications".into(), RootPat, Body::Empty, false),
        // events
        ("listEvents", Method::GET, "/events?limit=10".into(), RootPat, Body::Empty, false),
        ("listWebhookEndpoints", Method::GET, "/webhooks".into(), RootPat, Body::Empty, false),
        // At most 20 endpoints a workspace: created once.
        ("createWebhookEndpoint", Method::POST, "/webhooks".into(), RootPat,
            j(json!({"url": "https://93.184.215.14/catalogue", "eventTypes": ["tag.created", "tag.deleted"], "description": "Catalogue"})), true),
        ("getWebhookEndpoint", Method::GET, webhook.clone(), RootPat, Body::Empty, false),
        ("updateWebhookEndpoint", Method::PATCH, webhook.clone(), RootPat, j(json!({"description": format!("Catalogue {UNIQUE}")})), false),
        ("rotateWebhookSecret", Method::POST, format!("{webhook}/secret/rotate"), RootPat, Body::Empty, false),
        ("listWebhookDeliveries", Method::GET, format!("{webhook}/deliveries"), RootPat, Body::Empty, false),
        ("redeliverWebhookDelivery", Method::POST, format!("{delivery}/redeliver"), RootPat, Body::Empty, false),
        ("countUnreadNotifications", Method::GET, "/account/notifications/unread-count".into(), RootPat, Body::Empty, false),
        ("markNotificationRead", Method::POST, format!("/account/notifications/{notification}/read"), RootPat, j(json!({})), false),
        // agents
        ("listAgents", Method::GET, "/agents".into(), RootPat, Body::Empty, false),
        ("listProviderApiKeys", Method::GET, "/agents/provider-api-keys".into(), RootPat, Body::Empty, false),
        ("listAgentSkills", Method::GET, "/agents/skills".into(), RootPat, Body::Empty, false),
        ("createAgentSkill", Method::POST, "/agents/skills".into(), RootPat,
            j(json!({"name": format!("Skill {UNIQUE}"), "instructions": "Be brief."})), false),
        ("getAgentSkill", Method::GET, skill.clone(), RootPat, Body::Empty, false),
        ("updateAgentSkill", Method::PATCH, skill.clone(), RootPat, j(json!({"enabled": false})), false),
        ("saveAgentManagedProvider", Method::POST, managed.clone(), RootPat,
            j(json!({"enabled": true, "vendorApiKey": "sk-catalogue-not-real-Q9xz",
                     "config": {"agentSource": "serviceManaged", "toolMode": "full",
                                "managedAgent": {"modelId": "claude-sonnet-4-5"}}})), false),
        ("getAgentManagedProvider", Method::GET, managed.clone(), RootPat, Body::Empty, false),
        ("saveProjectAgentProviderSettings", Method::POST, "/agents/project-agent-provider-settings".into(), RootPat,
            j(json!({"projectId": DEMO_PROJECT, "agentId": DEMO_AGENT, "toolMode": "full"})), false),
        ("listProjectAgentProviderSettings", Method::GET, format!("/agents/project-agent-provider-settings?projectId={DEMO_PROJECT}"), RootPat, Body::Empty, false),
        // State consumed, after every request that needs it.
        ("acceptExpressQuotation", Method::POST, format!("{quotations}/{accepted}/accept"), RootPat, Body::Empty, true),
        ("rejectExpressQuotation", Method::POST, format!("{quotations}/{rejected}/reject"), RootPat, Body::Empty, true),
        ("deleteTag", Method::DELETE, format!("/tags/task/{tag}"), RootPat, Body::Empty, true),
        ("deleteRole", Method::DELETE, role.clone(), RootPat, Body::Empty, true),
        ("disableHelpdesk", Method::DELETE, account("/disable"), RootPat, Body::Empty, true),
        ("enableHelpdesk", Method::POST, account("/enable"), RootPat, j(json!({})), true),
        ("deleteOAuthClient", Method::DELETE, registered.clone(), Registration, Body::Empty, true),
        ("deleteFile", Method::DELETE, deleted_file, RootPat, Body::Empty, true),
        ("issuePotentialInvoice", Method::POST, issue_march, RootPat, Body::Empty, true),
        ("cancelInvoice", Method::POST, format!("{issued}/cancel"), RootPat, Body::Empty, true),
        ("deleteWebhookEndpoint", Method::DELETE, webhook.clone(), RootPat, Body::Empty, true),
    ];
    let documented = documented();
    for (id, method, path, credential, body, once) in entries {
        let function = documented.get(id).map(|(f, _, _)| *f).unwrap_or("unknown");
        // The billing requests run at the business instant their world is dated in.
        let headers = match function {
            "billing" => vec![("LT_CUSTOM_NOW".to_owned(), BILLING_NOW.to_owned())],
            _ => Vec::new(),
        };
        catalogue.requests.push(Request {
            function,
            operation_id: id.to_owned(),
            method,
            path,
            credential,
            headers,
            body,
            once,
        });
    }
    catalogue
}
