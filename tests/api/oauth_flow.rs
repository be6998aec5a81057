//! The OAuth 2.0 authorization server end to end (docs/oauth.md), black box over HTTP on both
//! store backends: registration → consent page → approval → code → tokens → API calls →
//! refresh, and the attack cases: PKCE (plain, missing, wrong, 42 and 129 characters), code
//! replay, codes of other clients, redirect-URI variants, client authentication, concurrent
//! and superseded refreshes, scope widening, deny, and the workspace's API feature.

use api_tests::document_server::{self, Body, Route, json_route, relaxed};
use api_tests::{TestApi, each_backend};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use oauth::password;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use sha2::Digest;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use workapi_domain::identity::{self, User, UserKind};
use workapi_domain::permissions::ROOT;
use workapi_kit::oauth::issuer::SiteUrl;
use workapi_store::keys::WsKeys;

const REGISTER: &str = "/api/oauth/register";
const AUTHORIZE: &str = "/api/oauth/authorize";
const TOKEN: &str = "/api/oauth/token";
const REVOKE: &str = "/api/oauth/revoke";
pub(crate) const PASSWORD: &str = "a long enough test password";
const REDIRECT: &str = "https://app.example/callback";
const LOOPBACK: &str = "http://127.0.0.1/cb";

/// An HTTP client that does not follow redirects: the tests read the `Location` themselves.
fn http() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

fn form(pairs: &[(&str, &str)]) -> String {
    let mut serializer = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        serializer.append_pair(name, value);
    }
    serializer.finish()
}

pub(crate) struct Registered {
    id: String,
    secret: Option<String>,
}

pub(crate) async fn register(api: &TestApi, name: &str, method: &str) -> Registered {
    let body =
        json!({"redirect_uris": [REDIRECT, LOOPBACK], "client_name": name, "token_endpoint_auth_method": method});
    let (status, _, client) = api.call(reqwest::Method::POST, REGISTER, None, Some(body)).await;
    assert_eq!(status, 201, "{client}");
    Registered {
        id: client["client_id"].as_str().unwrap().to_owned(),
        secret: client["client_secret"].as_str().map(str::to_owned),
    }
}

async fn public_client(api: &TestApi) -> Registered {
    register(api, &format!("App {}", uuid::Uuid::new_v4().simple()), "none").await
}

/// A Root user of the test workspace with a login password; returns the user and the e-mail.
pub(crate) async fn user(api: &TestApi) -> (User, String) {
    let (user, _) = api.user(ROOT, UserKind::Employee).await;
    password::set_password(api.store.as_ref(), api.workspace_id, user.id, PASSWORD).await.unwrap();
    let email = user.email.clone();
    (user, email)
}

/// A verifier and its S256 challenge.
fn pkce() -> (String, String) {
    let verifier = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple()); // 64 chars
    let challenge = s256(&verifier);
    (verifier, challenge)
}

fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
}

/// The parameters of an authorization request.
fn request<'a>(client_id: &'a str, redirect_uri: &'a str, challenge: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", redirect_uri),
        ("scope", "api:read api:write"),
        ("state", "st-123"),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
    ]
}

fn with<'a>(mut pairs: Vec<(&'a str, &'a str)>, name: &'a str, value: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    pairs.retain(|(n, _)| *n != name);
    if let Some(value) = value {
        pairs.push((name, value));
    }
    pairs
}

struct Answer {
    status: u16,
    headers: HeaderMap,
    text: String,
}

impl Answer {
    fn location(&self) -> Option<String> {
        self.headers.get("location").map(|l| l.to_str().unwrap().to_owned())
    }

    /// The query of the redirect, by name.
    fn redirect_params(&self) -> HashMap<String, String> {
        let location = self.location().unwrap_or_else(|| panic!("a redirect, got {} {}", self.status, self.text));
        url::Url::parse(&location).unwrap().query_pairs().into_owned().collect()
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }
}

async fn answer(response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    Answer { status, headers, text: response.text().await.unwrap() }
}

async fn authorize_page(api: &TestApi, pairs: &[(&str, &str)]) -> Answer {
    answer(http().get(format!("{}?{}", api.url(AUTHORIZE), form(pairs))).send().await.unwrap()).await
}

async fn post_form(api: &TestApi, path: &str, pairs: &[(&str, &str)], basic: Option<(&str, &str)>) -> Answer {
    let mut request =
        http().post(api.url(path)).header("content-type", "application/x-www-form-urlencoded").body(form(pairs));
    if let Some((id, secret)) = basic {
        let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let credentials = STANDARD.encode(format!("{}:{}", encode(id), encode(secret)));
        request = request.header("authorization", format!("Basic {credentials}"));
    }
    answer(request.send().await.unwrap()).await
}

/// Posts the consent form: the authorization request and the user's answer.
async fn decide(api: &TestApi, pairs: &[(&str, &str)], email: &str, password: &str, decision: &str) -> Answer {
    let mut body = pairs.to_vec();
    body.extend([("email", email), ("password", password), ("decision", decision)]);
    post_form(api, AUTHORIZE, &body, None).await
}

/// Approves a request and returns the code from the redirect.
async fn code_for(api: &TestApi, pairs: &[(&str, &str)], email: &str) -> String {
    let approved = decide(api, pairs, email, PASSWORD, "approve").await;
    assert_eq!(approved.status, 302, "{}", approved.text);
    let params = approved.redirect_params();
    assert_eq!(params.get("state").map(String::as_str), Some("st-123"));
    params["code"].clone()
}

fn auth_pairs<'a>(client: &'a Registered, mut pairs: Vec<(&'a str, &'a str)>) -> Vec<(&'a str, &'a str)> {
    pairs.push(("client_id", &client.id));
    pairs
}

async fn exchange(api: &TestApi, client: &Registered, code: &str, redirect: &str, verifier: &str) -> Answer {
    let pairs = vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect),
        ("code_verifier", verifier),
    ];
    token_call(api, client, pairs).await
}

async fn refresh(api: &TestApi, client: &Registered, refresh_token: &str, scope: Option<&str>) -> Answer {
    let mut pairs = vec![("grant_type", "refresh_token"), ("refresh_token", refresh_token)];
    if let Some(scope) = scope {
        pairs.push(("scope", scope));
    }
    token_call(api, client, pairs).await
}

/// A token request authenticated as the client registered (public: client_id only).
async fn token_call(api: &TestApi, client: &Registered, pairs: Vec<(&str, &str)>) -> Answer {
    match &client.secret {
        None => post_form(api, TOKEN, &auth_pairs(client, pairs), None).await,
        Some(secret) => {
            let mut pairs = auth_pairs(client, pairs);
            pairs.push(("client_secret", secret));
            post_form(api, TOKEN, &pairs, None).await
        }
    }
}

fn oauth_error(answer: &Answer, status: u16, error: &str) {
    assert_eq!(answer.status, status, "{}", answer.text);
    let body = answer.json();
    assert_eq!(body["error"], error, "{body}");
    assert!(body["error_description"].as_str().is_some_and(|d| !d.is_empty()), "{body}");
    assert!(body.get("statusCode").is_none(), "RFC 6749 body, not the API's: {body}");
    assert_eq!(answer.headers["cache-control"], "no-store");
}

/// Approves and redeems: the token response.
pub(crate) async fn tokens(api: &TestApi, client: &Registered, email: &str, scope: &str) -> Value {
    let (verifier, challenge) = pkce();
    let pairs = with(request(&client.id, REDIRECT, &challenge), "scope", Some(scope));
    let code = code_for(api, &pairs, email).await;
    let answer = exchange(api, client, &code, REDIRECT, &verifier).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    answer.json()
}

fn str_of<'a>(value: &'a Value, field: &str) -> &'a str {
    value[field].as_str().unwrap_or_else(|| panic!("{field} in {value}"))
}

async fn list_tags(api: &TestApi, token: &str) -> u16 {
    api.get("/tags/task", token).await.0
}

async fn create_tag(api: &TestApi, token: &str) -> u16 {
    api.post("/tags/task/create", token, json!({"name": format!("t{}", uuid::Uuid::new_v4().simple())})).await.0
}

#[tokio::test]
async fn full_flow_from_registration_to_refresh() {
    each_backend(async |backend, api| {
        let name = "Calendar <script>alert('x')</script> & Co";
        let client = register(api, name, "none").await;
        let (user, email) = user(api).await;
        let (verifier, challenge) = pkce();
        let pairs = request(&client.id, REDIRECT, &challenge);

        let page = authorize_page(api, &pairs).await;
        assert_eq!(page.status, 200, "[{}] {}", backend.name, page.text);
        assert!(page.headers["content-type"].to_str().unwrap().starts_with("text/html"));
        assert_eq!(page.headers["x-frame-options"], "DENY");
        assert_eq!(page.headers["cache-control"], "no-store");
        let csp = page.headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"), "{csp}");
        assert!(!csp.contains("http") && !csp.contains("unsafe-inline"), "{csp}");
        assert!(
            page.text.contains("Calendar &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; Co"),
            "{}",
            page.text
        );
        assert!(!page.text.contains("<script"), "the client name is escaped");
        for needle in [
            "<html lang=\"en\">",
            "<h1>",
            "<label for=\"email\">",
            "<label for=\"password\">",
            "value=\"approve\"",
            "value=\"deny\"",
            "api:read",
            "api:write",
            "name=\"code_challenge\"",
        ] {
            assert!(page.text.contains(needle), "{needle} missing from the page");
        }
        for asset in [" src=", "<link", "<script", "@import", "url("] {
            assert!(!page.text.contains(asset), "no external assets, no script: {asset}");
        }

        let approved = decide(api, &pairs, &email, PASSWORD, "approve").await;
        assert_eq!(approved.status, 302, "{}", approved.text);
        let location = approved.location().unwrap();
        assert!(location.starts_with(&format!("{REDIRECT}?")), "{location}");
        let params = approved.redirect_params();
        assert_eq!(params["state"], "st-123");
        assert_eq!(params["iss"], api.url("/api"), "RFC 9207: the issuer, byte-equal to the metadata's");
        let code = params["code"].clone();
        // The code is stored only hashed, bound to its request.
        let code_item = api.store.get(&oauth::code::key_of(&code)).await.unwrap().unwrap();
        assert!(!serde_json::to_string(&code_item).unwrap().contains(&code));
        assert!(code_item["ttl"].as_i64().unwrap() <= workapi_store::clock::now_epoch() + 60);
        // The client is installed in the workspace.
        let installed =
            oauth::install::get(api.store.as_ref(), WsKeys::new(api.workspace_id), &client.id).await.unwrap();
        assert_eq!(installed.unwrap().installed_by, user.id);

        let answer = exchange(api, &client, &code, REDIRECT, &verifier).await;
        assert_eq!(answer.status, 200, "{}", answer.text);
        assert_eq!(answer.headers["cache-control"], "no-store");
        let tokens = answer.json();
        assert_eq!(tokens["token_type"], "Bearer");
        assert_eq!(tokens["expires_in"], 3600);
        assert_eq!(tokens["scope"], "api:read api:write");
        let access = str_of(&tokens, "access_token").to_owned();
        let refresh_token = str_of(&tokens, "refresh_token").to_owned();
        assert!(access.starts_with("lt_oat_") && refresh_token.starts_with("lt_ort_"), "{tokens}");
        for token in [&access, &refresh_token] {
            let item = api
                .store
                .get(&workapi_store::keys::credential(&workapi_domain::token::token_hash(token)))
                .await
                .unwrap();
            assert!(!serde_json::to_string(&item.unwrap()).unwrap().contains(token.as_str()), "stored hashed only");
        }

        assert_eq!(list_tags(api, &access).await, 200);
        assert_eq!(create_tag(api, &access).await, 200);

        let rotated = refresh(api, &client, &refresh_token, None).await;
        assert_eq!(rotated.status, 200, "{}", rotated.text);
        let rotated = rotated.json();
        let access2 = str_of(&rotated, "access_token").to_owned();
        let refresh2 = str_of(&rotated, "refresh_token").to_owned();
        assert_ne!(refresh2, refresh_token, "refresh tokens rotate");
        assert_eq!(list_tags(api, &access2).await, 200);
        assert_eq!(list_tags(api, &access).await, 200, "the earlier access token lives until it expires");

        // The superseded refresh token is refused (and revokes the grant: see below).
        oauth_error(&refresh(api, &client, &refresh_token, None).await, 400, "invalid_grant");
    })
    .await;
}

#[tokio::test]
async fn scopes_of_the_token_are_enforced_and_never_widened() {
    each_backend(async |_, api| {
        let client = public_client(api).await;
        let (_, email) = user(api).await;
        let read_only = tokens(api, &client, &email, "api:read").await;
        assert_eq!(read_only["scope"], "api:read");
        let access = str_of(&read_only, "access_token");
        assert_eq!(list_tags(api, access).await, 200);
        assert_eq!(create_tag(api, access).await, 403, "api:read cannot write");

        let refresh_token = str_of(&read_only, "refresh_token");
        oauth_error(&refresh(api, &client, refresh_token, Some("api:read api:write")).await, 400, "invalid_scope");
        oauth_error(&refresh(api, &client, refresh_token, Some("api:admin")).await, 400, "invalid_scope");
        let same = refresh(api, &client, refresh_token, Some("api:read")).await;
        assert_eq!(same.status, 200, "{}", same.text);
        assert_eq!(same.json()["scope"], "api:read");

        // Narrowing on refresh: an api:read token from an api:read+api:write grant.
        let full = tokens(api, &client, &email, "api:read api:write").await;
        let narrowed = refresh(api, &client, str_of(&full, "refresh_token"), Some("api:read")).await;
        assert_eq!(narrowed.status, 200, "{}", narrowed.text);
        let narrowed = narrowed.json();
        assert_eq!(narrowed["scope"], "api:read");
        assert_eq!(create_tag(api, str_of(&narrowed, "access_token")).await, 403);
        // ... and the grant keeps its scopes for the next refresh.
        let again = refresh(api, &client, str_of(&narrowed, "refresh_token"), None).await;
        assert_eq!(again.json()["scope"], "api:read api:write", "{}", again.text);
    })
    .await;
}

#[tokio::test]
async fn pkce_is_required_and_s256_only() {
    each_backend(async |_, api| {
        let client = public_client(api).await;
        let (_, email) = user(api).await;
        let (verifier, challenge) = pkce();
        let base = request(&client.id, REDIRECT, &challenge);
        let plain_challenge = "a".repeat(43);
        let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
            (
                with(with(base.clone(), "code_challenge_method", Some("plain")), "code_challenge", Some(&verifier)),
                "invalid_request",
            ),
            (with(base.clone(), "code_challenge_method", None), "invalid_request"),
            (with(base.clone(), "code_challenge", None), "invalid_request"),
            (with(base.clone(), "code_challenge", Some(&plain_challenge)), "invalid_request"),
            (with(base.clone(), "code_challenge", Some("tooShort")), "invalid_request"),
            (with(base.clone(), "response_type", Some("token")), "unsupported_response_type"),
            (with(base.clone(), "response_type", None), "invalid_request"),
            (with(base.clone(), "scope", Some("api:read api:admin")), "invalid_scope"),
        ];
        for (pairs, error) in &cases {
            for answer in [authorize_page(api, pairs).await, decide(api, pairs, &email, PASSWORD, "approve").await] {
                assert_eq!(answer.status, 302, "{pairs:?}: {}", answer.text);
                let params = answer.redirect_params();
                assert_eq!(params.get("error").map(String::as_str), Some(*error), "{pairs:?}");
                assert_eq!(params["state"], "st-123");
                assert_eq!(params["iss"], api.url("/api"), "{pairs:?}: error redirects name the issuer too");
                assert!(!params.contains_key("code"), "no code for {pairs:?}");
            }
        }

        // Token requests: missing, malformed and wrong verifiers; the code survives them.
        let code = code_for(api, &base, &email).await;
        let missing = token_call(
            api,
            &client,
            vec![("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", REDIRECT)],
        )
        .await;
        oauth_error(&missing, 400, "invalid_request");
        oauth_error(&exchange(api, &client, &code, REDIRECT, &pkce().0).await, 400, "invalid_grant");
        oauth_error(&exchange(api, &client, &code, REDIRECT, &challenge).await, 400, "invalid_grant");
        oauth_error(&exchange(api, &client, &code, REDIRECT, &format!("{verifier}!")).await, 400, "invalid_request");
        let ok = exchange(api, &client, &code, REDIRECT, &verifier).await;
        assert_eq!(ok.status, 200, "{}", ok.text);

        // Verifiers of 42 and 129 characters are refused, even with their own challenge.
        for length in [42, 129] {
            let verifier = "v".repeat(length);
            let challenge = s256(&verifier);
            let pairs = request(&client.id, REDIRECT, &challenge);
            let code = code_for(api, &pairs, &email).await;
            oauth_error(&exchange(api, &client, &code, REDIRECT, &verifier).await, 400, "invalid_request");
        }
        // 43 and 128 are the bounds that work.
        for length in [43, 128] {
            let verifier = "w".repeat(length);
            let challenge = s256(&verifier);
            let pairs = request(&client.id, REDIRECT, &challenge);
            let code = code_for(api, &pairs, &email).await;
            assert_eq!(exchange(api, &client, &code, REDIRECT, &verifier).await.status, 200, "{length}");
        }
    })
    .await;
}

#[tokio::test]
async fn a_replayed_code_is_refused_and_revokes_its_tokens() {
    each_backend(async |_, api| {
        let client = public_client(api).await;
        let (_, email) = user(api).await;
        let (verifier, challenge) = pkce();
        let code = code_for(api, &request(&client.id, REDIRECT, &challenge), &email).await;
        let first = exchange(api, &client, &code, REDIRECT, &verifier).await;
        assert_eq!(first.status, 200, "{}", first.text);
        let first = first.json();
        let access = str_of(&first, "access_token");
        assert_eq!(list_tags(api, access).await, 200);

        // Someone who only saw the used code (no verifier) gets nothing and revokes nothing.
        let (other_verifier, _) = pkce();
        oauth_error(&exchange(api, &client, &code, REDIRECT, &other_verifier).await, 400, "invalid_grant");
        assert_eq!(list_tags(api, access).await, 200, "a replay without the verifier does not revoke");

        oauth_error(&exchange(api, &client, &code, REDIRECT, &verifier).await, 400, "invalid_grant");
        let (status, body) = api.get("/tags/task", access).await;
        assert_eq!(status, 401, "the access token of a replayed code is revoked: {body}");
        oauth_error(&refresh(api, &client, str_of(&first, "refresh_token"), None).await, 400, "invalid_grant");
        // Still refused later on.
        oauth_error(&exchange(api, &client, &code, REDIRECT, &verifier).await, 400, "invalid_grant");
    })
    .await;
}

#[tokio::test]
async fn a_code_works_only_for_its_client_and_its_redirect_uri() {
    each_backend(async |_, api| {
        let client = public_client(api).await;
        let other = public_client(api).await;
        let (_, email) = user(api).await;
        let (verifier, challenge) = pkce();
        let redirect = "http://127.0.0.1:5000/cb";
        let code = code_for(api, &request(&client.id, redirect, &challenge), &email).await;

        oauth_error(&exchange(api, &other, &code, redirect, &verifier).await, 400, "invalid_grant");
        for wrong in ["http://127.0.0.1:5001/cb", LOOPBACK, "http://127.0.0.1:5000/cb/", REDIRECT] {
            oauth_error(&exchange(api, &client, &code, wrong, &verifier).await, 400, "invalid_grant");
        }
        let no_redirect = token_call(
            api,
            &client,
            vec![("grant_type", "authorization_code"), ("code", &code), ("code_verifier", &verifier)],
        )
        .await;
        oauth_error(&no_redirect, 400, "invalid_grant");
        let ok = exchange(api, &client, &code, redirect, &verifier).await;
        assert_eq!(ok.status, 200, "none of the refusals used up the code: {}", ok.text);
        oauth_error(&exchange(api, &client, "not-a-code", redirect, &verifier).await, 400, "invalid_grant");
    })
    .await;
}

#[tokio::test]
async fn redirect_uri_variants_get_an_error_page_never_a_redirect() {
    each_backend(async |_, api| {
        let client = public_client(api).await;
        let (_, email) = user(api).await;
        let (_, challenge) = pkce();
        for variant in [
            "https://app.example/call",
            "https://app.example/callback/x",
            "https://app.example/callbackx",
            "https://app.example/callback?x=1",
            "https://APP.example/callback",
            "https://app.example/Callback",
            "https://app.example/callback#frag",
            "http://app.example/callback",
            "https://app.example:8443/callback",
            "https://evil.example/callback",
            "https://127.0.0.1/cb",
            "http://127.0.0.1:4711/cb2",
            "http://127.0.0.2:4711/cb",
            "http://LOCALHOST:4711/cb",
        ] {
            let pairs = request(&client.id, variant, &challenge);
            for answer in [authorize_page(api, &pairs).await, decide(api, &pairs, &email, PASSWORD, "approve").await] {
                assert_eq!(answer.status, 400, "{variant}: {}", answer.text);
                assert!(answer.location().is_none(), "{variant} must not be redirected to");
                assert!(answer.headers["content-type"].to_str().unwrap().starts_with("text/html"));
                assert!(!answer.text.contains("name=\"password\""), "no sign-in form for {variant}");
            }
        }
        // Loopback: any port.
        for port in ["1", "4711", "65535"] {
            let uri = format!("http://127.0.0.1:{port}/cb");
            let pairs = request(&client.id, &uri, &challenge);
            assert_eq!(authorize_page(api, &pairs).await.status, 200, "{uri}");
            let approved = decide(api, &pairs, &email, PASSWORD, "approve").await;
            assert!(approved.location().unwrap().starts_with(&format!("{uri}?code=")), "{:?}", approved.location());
        }
        // Unknown or missing client: an error page.
        let unknown = format!("dcr_{}", uuid::Uuid::new_v4());
        for client_id in [unknown.as_str(), "nonsense", ""] {
            let answer = authorize_page(api, &request(client_id, REDIRECT, &challenge)).await;
            assert_eq!(answer.status, 400, "{client_id}");
            assert!(answer.location().is_none());
        }
        // A repeated client_id or redirect_uri: an error page (no verified place to answer).
        for (name, value) in [("redirect_uri", "https://evil.example/callback"), ("redirect_uri", REDIRECT)] {
            let mut repeated = request(&client.id, REDIRECT, &challenge);
            repeated.push((name, value));
            for answer in
                [authorize_page(api, &repeated).await, decide(api, &repeated, &email, PASSWORD, "approve").await]
            {
                assert_eq!(answer.status, 400, "{name}: {}", answer.text);
                assert!(answer.location().is_none(), "{name}");
            }
        }
        let mut repeated = request(&client.id, REDIRECT, &challenge);
        repeated.push(("client_id", &client.id));
        assert_eq!(authorize_page(api, &repeated).await.status, 400);
    })
    .await;
}

/// Any other parameter repeated, once the client and its redirect URI are verified, goes back
/// to the client as `invalid_request` (RFC 6749 §3.1, §4.1.2.1) with `iss` and `state`: the
/// page is never shown and no code is issued. A repeated `state` is not echoed.
#[tokio::test]
async fn a_repeated_parameter_redirects_with_invalid_request() {
    each_backend(async |_, api| {
        let client = public_client(api).await;
        let (_, email) = user(api).await;
        let (_, challenge) = pkce();
        let this_api = api.base.clone();
        let base = request(&client.id, REDIRECT, &challenge);
        let repeats: [(&str, &str); 5] = [
            ("resource", &this_api),
            ("resource", "https://other.example"),
            ("scope", "api:read"),
            ("code_challenge", &challenge),
            ("response_type", "code"),
        ];
        for (name, value) in repeats {
            let mut pairs = with(base.clone(), "resource", Some(&this_api));
            pairs.push((name, value));
            for answer in [authorize_page(api, &pairs).await, decide(api, &pairs, &email, PASSWORD, "approve").await] {
                assert_eq!(answer.status, 302, "{name}: {}", answer.text);
                assert!(answer.location().unwrap().starts_with(&format!("{REDIRECT}?")));
                let params = answer.redirect_params();
                assert_eq!(params["error"], "invalid_request", "{name}");
                assert!(params["error_description"].contains(name), "{params:?}");
                assert_eq!(params["state"], "st-123", "{name}");
                assert_eq!(params["iss"], api.url("/api"));
                assert!(!params.contains_key("code"));
            }
        }
        let mut pairs = base.clone();
        pairs.push(("state", "other"));
        let params = authorize_page(api, &pairs).await.redirect_params();
        assert_eq!(params["error"], "invalid_request");
        assert!(!params.contains_key("state"), "which state? none: {params:?}");
    })
    .await;
}

/// Client authentication in the body, and Basic credentials.
type Attempt<'a> = (Vec<(&'a str, &'a str)>, Option<(&'a str, &'a str)>);

#[tokio::test]
async fn confidential_clients_must_authenticate_with_their_method() {
    each_backend(async |_, api| {
        let (_, email) = user(api).await;
        let post = register(api, "Post client", "client_secret_post").await;
        let basic = register(api, "Basic client", "client_secret_basic").await;
        let public = public_client(api).await;
        let post_secret = post.secret.clone().unwrap();
        let basic_secret = basic.secret.clone().unwrap();

        for client in [&post, &basic, &public] {
            let (verifier, challenge) = pkce();
            let code = code_for(api, &request(&client.id, REDIRECT, &challenge), &email).await;
            let grant = [
                ("grant_type", "authorization_code"),
                ("code", code.as_str()),
                ("redirect_uri", REDIRECT),
                ("code_verifier", verifier.as_str()),
            ];
            let id = ("client_id", client.id.as_str());
            let attempts: Vec<Attempt> = match client.secret.as_deref() {
                Some(secret) if client.id == post.id => vec![
                    (vec![id], None),                                   // no secret
                    (vec![id, ("client_secret", "wrong")], None),       // wrong secret
                    (vec![], Some((&post.id, secret))),                 // right secret, wrong method
                    (vec![id, ("client_secret", &basic_secret)], None), // another client's secret
                ],
                Some(secret) => vec![
                    (vec![id], None),                            // no secret
                    (vec![], Some((&basic.id, "wrong"))),        // wrong secret
                    (vec![id, ("client_secret", secret)], None), // right secret, wrong method
                    (vec![], Some((&basic.id, &post_secret))),   // another client's secret
                ],
                None => vec![
                    (vec![id, ("client_secret", "anything")], None), // a public client with a secret
                    (vec![], Some((&public.id, "anything"))),
                    (vec![("client_id", "dcr_00000000-0000-4000-8000-000000000000")], None), // unknown client
                    (vec![], None),                                                          // no client at all
                ],
            };
            for (auth, basic_auth) in attempts {
                let mut pairs = grant.to_vec();
                pairs.extend(auth.iter().copied());
                let answer = post_form(api, TOKEN, &pairs, basic_auth).await;
                oauth_error(&answer, 401, "invalid_client");
                let challenge = answer.headers["www-authenticate"].to_str().unwrap();
                assert!(challenge.starts_with("Basic realm="), "{challenge}");
            }
            // The code survived the failed authentications.
            let ok = match client.secret.as_deref() {
                Some(secret) if client.id == basic.id => post_form(api, TOKEN, &grant, Some((&basic.id, secret))).await,
                _ => token_call(api, client, grant.to_vec()).await,
            };
            assert_eq!(ok.status, 200, "{}", ok.text);
        }
        // Malformed Basic credentials.
        let mut request = http().post(api.url(TOKEN)).header("content-type", "application/x-www-form-urlencoded");
        request = request.header("authorization", "Basic !!!").body("grant_type=refresh_token&refresh_token=x");
        let answer = answer(request.send().await.unwrap()).await;
        oauth_error(&answer, 401, "invalid_client");
        // Not a form body; an unknown grant type.
        let json_body =
            api.call(reqwest::Method::POST, TOKEN, None, Some(json!({"grant_type": "authorization_code"}))).await;
        assert_eq!(json_body.0, 400);
        assert_eq!(json_body.2["error"], "invalid_request");
        let password_grant =
            post_form(api, TOKEN, &[("grant_type", "password"), ("client_id", &public.id)], None).await;
        oauth_error(&password_grant, 400, "unsupported_grant_type");
    })
    .await;
}

#[tokio::test]
async fn concurrent_refreshes_of_one_token_exactly_one_wins() {
    each_backend(async |backend, api| {
        let client = public_client(api).await;
        let (_, email) = user(api).await;
        for round in 0..3 {
            let issued = tokens(api, &client, &email, "api:read api:write").await;
            let refresh_token = str_of(&issued, "refresh_token");
            let (a, b) =
                tokio::join!(refresh(api, &client, refresh_token, None), refresh(api, &client, refresh_token, None));
            let statuses = [a.status, b.status];
            assert!(
                statuses.contains(&200) && statuses.contains(&400),
                "[{}] round {round}: {statuses:?} {} {}",
                backend.name,
                a.text,
                b.text
            );
            let (winner, loser) = if a.status == 200 { (a, b) } else { (b, a) };
            oauth_error(&loser, 400, "invalid_grant");
            // The loser revoked nothing: the winner's tokens work.
            let won = winner.json();
            assert_eq!(list_tags(api, str_of(&won, "access_token")).await, 200);
            assert_eq!(list_tags(api, str_of(&issued, "access_token")).await, 200);
            let next = refresh(api, &client, str_of(&won, "refresh_token"), None).await;
            assert_eq!(next.status, 200, "{}", next.text);
        }
    })
    .await;
}

#[tokio::test]
async fn a_superseded_refresh_token_revokes_the_grant() {
    each_backend(async |_, api| {
        let client = public_client(api).await;
        let (_, email) = user(api).await;
        let first = tokens(api, &client, &email, "api:read api:write").await;
        let second = refresh(api, &client, str_of(&first, "refresh_token"), None).await.json();
        let third = refresh(api, &client, str_of(&second, "refresh_token"), None).await.json();
        let access = str_of(&third, "access_token");
        assert_eq!(list_tags(api, access).await, 200);

        // An attacker replays the first refresh token: refused, and the whole grant is revoked.
        oauth_error(&refresh(api, &client, str_of(&first, "refresh_token"), None).await, 400, "invalid_grant");
        let (status, body) = api.get("/tags/task", access).await;
        assert_eq!(status, 401, "{body}");
        oauth_error(&refresh(api, &client, str_of(&third, "refresh_token"), None).await, 400, "invalid_grant");
        // The token just before the current one, replayed after the concurrency grace period,
        // revokes too.
        let fresh = tokens(api, &client, &email, "api:read").await;
        let rotated = refresh(api, &client, str_of(&fresh, "refresh_token"), None).await.json();
        tokio::time::sleep(std::time::Duration::from_secs(oauth::grant::CONCURRENT_REFRESH_GRACE_SECS as u64 + 1))
            .await;
        oauth_error(&refresh(api, &client, str_of(&fresh, "refresh_token"), None).await, 400, "invalid_grant");
        assert_eq!(list_tags(api, str_of(&rotated, "access_token")).await, 401);
        // Another grant of the same user and client is untouched.
        let other = tokens(api, &client, &email, "api:read").await;
        assert_eq!(list_tags(api, str_of(&other, "access_token")).await, 200);
        // A refresh token of another client is refused without revoking.
        let stranger = public_client(api).await;
        oauth_error(&refresh(api, &stranger, str_of(&other, "refresh_token"), None).await, 400, "invalid_grant");
        assert_eq!(list_tags(api, str_of(&other, "access_token")).await, 200);
    })
    .await;
}

#[tokio::test]
async fn deny_wrong_password_and_the_api_feature() {
    each_backend(async |_, api| {
        let client = public_client(api).await;
        let (_, email) = user(api).await;
        let (_, challenge) = pkce();
        let pairs = request(&client.id, REDIRECT, &challenge);

        let denied = decide(api, &pairs, "", "", "deny").await;
        assert_eq!(denied.status, 302, "{}", denied.text);
        let params = denied.redirect_params();
        assert_eq!(params["error"], "access_denied");
        assert_eq!(params["state"], "st-123");
        assert_eq!(params["iss"], api.url("/api"));
        assert!(!params.contains_key("code"));

        let wrong = decide(api, &pairs, &email, "the wrong password!", "approve").await;
        assert_eq!(wrong.status, 401);
        assert!(wrong.location().is_none());
        assert!(wrong.text.contains("Invalid e-mail or password"), "{}", wrong.text);
        assert!(!wrong.text.contains("the wrong password!"), "the password never comes back");
        assert!(wrong.text.contains("name=\"password\""), "the form again");
        let unknown = decide(api, &pairs, "nobody@nowhere.example", PASSWORD, "approve").await;
        assert_eq!((unknown.status, unknown.text.contains("Invalid e-mail or password")), (401, true));

        // The workspace's API feature off: an error page, no code, no installation.
        identity::set_api_enabled(api.store.as_ref(), api.workspace_id, false).await.unwrap();
        let off = decide(api, &pairs, &email, PASSWORD, "approve").await;
        assert_eq!(off.status, 403, "{}", off.text);
        assert!(off.location().is_none());
        assert!(off.text.contains("API access is turned off"), "{}", off.text);
        let installed =
            oauth::install::get(api.store.as_ref(), WsKeys::new(api.workspace_id), &client.id).await.unwrap();
        assert!(installed.is_none());
        identity::set_api_enabled(api.store.as_ref(), api.workspace_id, true).await.unwrap();
        let issued = tokens(api, &client, &email, "api:read").await;
        // Refreshing stops while the feature is off.
        identity::set_api_enabled(api.store.as_ref(), api.workspace_id, false).await.unwrap();
        oauth_error(&refresh(api, &client, str_of(&issued, "refresh_token"), None).await, 400, "invalid_grant");
        identity::set_api_enabled(api.store.as_ref(), api.workspace_id, true).await.unwrap();
        assert!(
            oauth::install::get(api.store.as_ref(), WsKeys::new(api.workspace_id), &client.id).await.unwrap().is_some()
        );
    })
    .await;
}

#[tokio::test]
async fn revocation_and_forged_tokens() {
    each_backend(async |_, api| {
        let client = public_client(api).await;
        let other = public_client(api).await;
        let (_, email) = user(api).await;
        let id = client.id.as_str();

        // An access token revoked alone.
        let issued = tokens(api, &client, &email, "api:read api:write").await;
        let access = str_of(&issued, "access_token");
        let answer =
            post_form(api, REVOKE, &[("token", access), ("token_type_hint", "access_token"), ("client_id", id)], None)
                .await;
        assert_eq!(answer.status, 200, "{}", answer.text);
        assert_eq!(list_tags(api, access).await, 401);
        let next = refresh(api, &client, str_of(&issued, "refresh_token"), None).await;
        assert_eq!(next.status, 200, "the grant lives on: {}", next.text);

        // A refresh token revokes its grant.
        let next = next.json();
        let refresh_token = str_of(&next, "refresh_token");
        // ... but not when another client asks.
        let foreign = post_form(api, REVOKE, &[("token", refresh_token), ("client_id", &other.id)], None).await;
        assert_eq!(foreign.status, 200);
        assert_eq!(list_tags(api, str_of(&next, "access_token")).await, 200);
        let answer = post_form(api, REVOKE, &[("token", refresh_token), ("client_id", id)], None).await;
        assert_eq!(answer.status, 200);
        assert_eq!(list_tags(api, str_of(&next, "access_token")).await, 401);
        oauth_error(&refresh(api, &client, refresh_token, None).await, 400, "invalid_grant");

        // Unknown tokens: 200. Missing token: invalid_request. No client: invalid_client.
        for token in [
            "lt_oat_unknown",
            "garbage",
            &workapi_domain::token::mint_kind(&api.key, workapi_domain::token::Kind::OAuthRefresh),
        ] {
            assert_eq!(post_form(api, REVOKE, &[("token", token), ("client_id", id)], None).await.status, 200);
        }
        oauth_error(&post_form(api, REVOKE, &[("client_id", id)], None).await, 400, "invalid_request");
        oauth_error(&post_form(api, REVOKE, &[("token", access)], None).await, 401, "invalid_client");

        // Forged access tokens are refused before any store read.
        let forged = workapi_domain::token::mint_kind(
            &workapi_domain::token::TokenKey::generate(),
            workapi_domain::token::Kind::OAuthAccess,
        );
        let refresh_as_access = str_of(&next, "refresh_token");
        for token in [forged.as_str(), "lt_oat_short", refresh_as_access] {
            let before = api.store_reads.load(Ordering::SeqCst);
            let (status, _, _) = api.call(reqwest::Method::GET, "/tags/task", Some(token), None).await;
            assert_eq!(status, 401, "{token}");
            if token != refresh_as_access {
                assert_eq!(api.store_reads.load(Ordering::SeqCst), before, "no store read for {token}");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn an_account_in_several_workspaces_chooses_one_on_the_page() {
    each_backend(async |_, api| {
        let client = public_client(api).await;
        let (first, email) = user(api).await;
        let other = identity::create_workspace(api.store.as_ref(), "Second <workspace>", "en").await.unwrap();
        let new =
            identity::NewUser { email: &email, name: "Same", role_id: ROOT, kind: UserKind::Employee, language: "en" };
        let second = identity::create_user(api.store.as_ref(), other.id, new).await.unwrap();
        password::set_password(api.store.as_ref(), other.id, second.id, PASSWORD).await.unwrap();
        let (verifier, challenge) = pkce();
        let pairs = request(&client.id, REDIRECT, &challenge);

        let choice = decide(api, &pairs, &email, PASSWORD, "approve").await;
        assert_eq!(choice.status, 200, "{}", choice.text);
        assert!(choice.location().is_none());
        assert!(choice.text.contains("<select id=\"workspace\" name=\"workspace_id\""), "{}", choice.text);
        assert!(choice.text.contains(&format!("<option value=\"{}\">Second &lt;workspace&gt;</option>", other.id)));
        assert!(choice.text.contains(&format!("<option value=\"{}\">", first.workspace_id)));

        let mut chosen = pairs.clone();
        let workspace = other.id.to_string();
        chosen.push(("workspace_id", &workspace));
        let approved = decide(api, &chosen, &email, PASSWORD, "approve").await;
        assert_eq!(approved.status, 302, "{}", approved.text);
        let code = approved.redirect_params()["code"].clone();
        let tokens = exchange(api, &client, &code, REDIRECT, &verifier).await.json();
        // The token acts in the chosen workspace: the client is installed there, not in the first.
        assert_eq!(list_tags(api, str_of(&tokens, "access_token")).await, 200);
        let keys = WsKeys::new(other.id);
        assert!(oauth::install::get(api.store.as_ref(), keys, &client.id).await.unwrap().is_some());
        let first_keys = WsKeys::new(first.workspace_id);
        assert!(oauth::install::get(api.store.as_ref(), first_keys, &client.id).await.unwrap().is_none());
    })
    .await;
}

#[tokio::test]
async fn deleting_a_client_revokes_its_tokens() {
    each_backend(async |backend, api| {
        let body =
            json!({"redirect_uris": [REDIRECT], "client_name": format!("Doomed {}", uuid::Uuid::new_v4().simple())});
        let (status, _, registration) = api.call(reqwest::Method::POST, REGISTER, None, Some(body)).await;
        assert_eq!(status, 201, "{registration}");
        let client = Registered { id: str_of(&registration, "client_id").to_owned(), secret: None };
        let (_, email) = user(api).await;
        let issued = tokens(api, &client, &email, "api:read").await;
        let access = str_of(&issued, "access_token");
        assert_eq!(list_tags(api, access).await, 200, "[{}]", backend.name);

        let deleted = http()
            .delete(api.url(&format!("{REGISTER}/{}", client.id)))
            .bearer_auth(str_of(&registration, "registration_access_token"))
            .send()
            .await
            .unwrap();
        assert_eq!(deleted.status().as_u16(), 204, "[{}]", backend.name);
        assert_eq!(list_tags(api, access).await, 401, "[{}] the access token died with its client", backend.name);
        let refreshed = refresh(api, &client, str_of(&issued, "refresh_token"), None).await;
        assert!(matches!(refreshed.status, 400 | 401), "[{}] {}", backend.name, refreshed.text);
    })
    .await;
}

/// RFC 8707: a client may name the API its tokens are for, at authorization, at the exchange
/// and at refresh; only this API's identifier is accepted (`invalid_target` otherwise), the
/// tokens are bound to it, and a server under another site URL refuses them.
#[tokio::test]
async fn resource_indicators_bind_tokens_to_this_api() {
    each_backend(async |backend, api| {
        let client = public_client(api).await;
        let (_, email) = user(api).await;
        let this_api = api.base.clone();
        let (verifier, challenge) = pkce();
        let base = request(&client.id, REDIRECT, &challenge);

        for other in
            ["https://other.example/", "https://other.example", &format!("{this_api}//"), &format!("{this_api}/mcp/")]
        {
            let pairs = with(base.clone(), "resource", Some(other));
            for answer in [authorize_page(api, &pairs).await, decide(api, &pairs, &email, PASSWORD, "approve").await] {
                assert_eq!(answer.status, 302, "{other}: {}", answer.text);
                let params = answer.redirect_params();
                assert_eq!(params["error"], "invalid_target", "{other}");
                assert_eq!(params["iss"], api.url("/api"));
                assert!(!params.contains_key("code"));
            }
        }

        // Named at authorization: the consent form carries it, the code and the tokens keep it.
        // With the root slash (as the MCP SDK sends it) it is the same resource, carried without.
        let slash = format!("{this_api}/");
        let page = authorize_page(api, &with(base.clone(), "resource", Some(&slash))).await;
        assert_eq!(page.status, 200, "{}", page.text);
        assert!(page.text.contains(&format!("name=\"resource\" value=\"{this_api}\"")), "hidden field: {}", page.text);
        let pairs = with(base.clone(), "resource", Some(&this_api));
        let page = authorize_page(api, &pairs).await;
        assert_eq!(page.status, 200);
        assert!(page.text.contains(&format!("name=\"resource\" value=\"{this_api}\"")), "hidden field: {}", page.text);
        let code = code_for(api, &pairs, &email).await;
        let wrong = token_call(
            api,
            &client,
            vec![
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", &verifier),
                ("resource", "https://other.example"),
            ],
        )
        .await;
        oauth_error(&wrong, 400, "invalid_target");
        let issued = exchange(api, &client, &code, REDIRECT, &verifier).await;
        assert_eq!(issued.status, 200, "{}", issued.text);
        let issued = issued.json();
        let access = str_of(&issued, "access_token").to_owned();
        assert_eq!(list_tags(api, &access).await, 200, "[{}] on this API", backend.name);
        let refresh_token = str_of(&issued, "refresh_token");
        let wrong = token_call(
            api,
            &client,
            vec![
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh_token),
                ("resource", "https://other.example"),
            ],
        )
        .await;
        oauth_error(&wrong, 400, "invalid_target");

        // The same store and keys served under another site URL: the bound token is refused
        // there with the usual challenge.
        let elsewhere = TestApi::builder(backend)
            .token_key(api.key.clone())
            .site_url(SiteUrl::configured("https://elsewhere.example").unwrap())
            .start()
            .await;
        let (status, headers, body) = elsewhere.call(reqwest::Method::GET, "/tags/task", Some(&access), None).await;
        assert_eq!(status, 401, "[{}] {body}", backend.name);
        assert!(headers["www-authenticate"].to_str().unwrap().contains("resource_metadata="), "{headers:?}");

        // Without `resource` nothing changes: the token works wherever this store's tokens do.
        let unbound = tokens(api, &client, &email, "api:read").await;
        let (status, _, _) =
            elsewhere.call(reqwest::Method::GET, "/tags/task", Some(str_of(&unbound, "access_token")), None).await;
        assert_eq!(status, 200, "[{}] an unbound token", backend.name);
    })
    .await;
}

/// The MCP endpoint is the second resource (docs/mcp.md, "Which token works where"): a token
/// bound to `{site_url}/mcp` works at `/mcp` (and in its tool calls) and nowhere else, one
/// bound to `{site_url}` works on the REST API and not at `/mcp`, an unbound one works on both;
/// a code or grant bound to one resource cannot be exchanged or refreshed for the other.
#[tokio::test]
async fn the_mcp_endpoint_is_a_resource_of_its_own() {
    each_backend(async |backend, api| {
        let b = backend.name;
        let client = public_client(api).await;
        let (_, email) = user(api).await;
        let this_api = api.base.clone();
        let mcp = format!("{this_api}/mcp");
        let mcp_call = async |token: &str| {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "listTags", "arguments": {"type": "task"}}});
            let response = http().post(api.url("/mcp")).bearer_auth(token).json(&body).send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap_or(Value::Null))
        };
        let (verifier, challenge) = pkce();
        let base = request(&client.id, REDIRECT, &challenge);

        let pairs = with(base.clone(), "resource", Some(&mcp));
        let page = authorize_page(api, &pairs).await;
        assert_eq!(page.status, 200, "[{b}] {}", page.text);
        assert!(page.text.contains(&format!("name=\"resource\" value=\"{mcp}\"")), "[{b}] {}", page.text);
        let code = code_for(api, &pairs, &email).await;
        let wrong = token_call(
            api,
            &client,
            vec![
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", &verifier),
                ("resource", &this_api),
            ],
        )
        .await;
        oauth_error(&wrong, 400, "invalid_target");
        let issued = exchange(api, &client, &code, REDIRECT, &verifier).await;
        assert_eq!(issued.status, 200, "[{b}] {}", issued.text);
        let issued = issued.json();
        let for_mcp = str_of(&issued, "access_token").to_owned();
        let (status, answer) = mcp_call(&for_mcp).await;
        assert_eq!((status, &answer["result"]["isError"]), (200, &json!(false)), "[{b}] {answer}");
        assert_eq!(list_tags(api, &for_mcp).await, 401, "[{b}] an MCP token on the REST API");
        // The same store and keys under another site URL: a foreign resource there, at /mcp too.
        let elsewhere = TestApi::builder(backend)
            .token_key(api.key.clone())
            .site_url(SiteUrl::configured("https://elsewhere.example").unwrap())
            .start()
            .await;
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        let refused = http().post(elsewhere.url("/mcp")).bearer_auth(&for_mcp).json(&body).send().await.unwrap();
        assert_eq!(refused.status().as_u16(), 401, "[{b}] an MCP token of another site");
        let wrong = token_call(
            api,
            &client,
            vec![
                ("grant_type", "refresh_token"),
                ("refresh_token", str_of(&issued, "refresh_token")),
                ("resource", &this_api),
            ],
        )
        .await;
        oauth_error(&wrong, 400, "invalid_target");

        // Bound to the REST API: not accepted at /mcp, whose 401 names the MCP metadata.
        let (verifier, challenge) = pkce();
        let pairs = with(request(&client.id, REDIRECT, &challenge), "resource", Some(&this_api));
        let code = code_for(api, &pairs, &email).await;
        let issued = exchange(api, &client, &code, REDIRECT, &verifier).await.json();
        let for_api = str_of(&issued, "access_token").to_owned();
        assert_eq!(list_tags(api, &for_api).await, 200, "[{b}]");
        let (status, answer) = mcp_call(&for_api).await;
        assert_eq!(status, 401, "[{b}] a REST API token at /mcp: {answer}");

        // Unbound: both.
        let unbound = tokens(api, &client, &email, "api:read").await;
        let unbound = str_of(&unbound, "access_token");
        assert_eq!(list_tags(api, unbound).await, 200, "[{b}]");
        assert_eq!(mcp_call(unbound).await.0, 200, "[{b}]");
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Client ID Metadata Documents (docs/oauth.md#client-id-metadata-documents), fetched from a local
// https server under the test-only relaxation (loopback and the fixture's self-signed root).

/// The documents the tests fetch, by path.
fn documents(base: &str, path: &str) -> Route {
    let url = format!("{base}{path}");
    let good = json!({
        "client_id": url, "client_name": "Metadata App", "redirect_uris": [REDIRECT, LOOPBACK],
        "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"], "client_uri": "https://app.example"
    });
    let mut doc = good.clone();
    match path.split('/').nth(1).unwrap_or_default() {
        "good" => json_route(good, "max-age=600"),
        "uncached" => json_route(good, ""),
        "mismatch" => {
            doc["client_id"] = json!(format!("{base}/other"));
            json_route(doc, "")
        }
        "no-redirects" => {
            doc.as_object_mut().unwrap().remove("redirect_uris");
            json_route(doc, "")
        }
        "html" => (200, vec![("content-type", "text/html".to_owned())], Body::Sized(b"<html></html>".to_vec())),
        "not-json" => (200, vec![("content-type", "application/json".to_owned())], Body::Sized(b"{not json".to_vec())),
        "huge" => {
            doc["client_uri"] = json!(format!("https://app.example/{}", "x".repeat(6000)));
            json_route(doc, "")
        }
        // Over the cap without a Content-Length: refused once the cap is passed, never buffered
        // wholesale (this stream has no end).
        "endless" => (200, vec![("content-type", "application/json".to_owned())], Body::EndlessChunks),
        // A Content-Length over the cap: refused before the body is read (it never arrives).
        "overstated" => {
            (200, vec![("content-type", "application/json".to_owned())], Body::Declared(1 << 20, b"{}".to_vec()))
        }
        "moved" => (302, vec![("location", format!("{base}/good/x"))], Body::Sized(Vec::new())),
        _ => (404, Vec::new(), Body::Sized(Vec::new())),
    }
}

#[tokio::test]
async fn metadata_document_clients_authorize_exchange_and_refresh() {
    let server = document_server::start(documents).await;
    for backend in api_tests::backends().await {
        let api = TestApi::builder(&backend).metadata_fetch(relaxed()).start().await;
        let (_, email) = user(&api).await;
        let path = format!("/good/{}", uuid::Uuid::new_v4().simple());
        let client = Registered { id: server.url(&path), secret: None };
        let (verifier, challenge) = pkce();
        let pairs = request(&client.id, REDIRECT, &challenge);
        let page = authorize_page(&api, &pairs).await;
        assert_eq!(page.status, 200, "{}", page.text);
        assert!(page.text.contains("Metadata App"), "{}", page.text);
        assert!(page.text.contains("<strong class=\"host\">127.0.0.1</strong>"), "{}", page.text);
        let code = code_for(&api, &pairs, &email).await;
        let answer = exchange(&api, &client, &code, REDIRECT, &verifier).await;
        assert_eq!(answer.status, 200, "{}", answer.text);
        let tokens = answer.json();
        assert_eq!(list_tags(&api, str_of(&tokens, "access_token")).await, 200);
        let refreshed = refresh(&api, &client, str_of(&tokens, "refresh_token"), None).await;
        assert_eq!(refreshed.status, 200, "{}", refreshed.text);
        // Cached by max-age: the page, the consent and both token requests fetched it once.
        assert_eq!(server.hits(&path), 1, "{}", backend.name);
        // A secret is no authentication for a public document client.
        let with_secret = Registered { id: client.id.clone(), secret: Some("s".into()) };
        let refused = refresh(&api, &with_secret, str_of(&refreshed.json(), "refresh_token"), None).await;
        oauth_error(&refused, 401, "invalid_client");
        // A redirect URI the document does not list is an error page.
        let (_, challenge) = pkce();
        let other = authorize_page(&api, &request(&client.id, "https://evil.example/cb", &challenge)).await;
        assert_eq!(other.status, 400, "{}", other.text);
        assert!(other.location().is_none());
        // Without max-age nothing is cached: each use fetches again.
        let uncached = server.url(&format!("/uncached/{}", uuid::Uuid::new_v4().simple()));
        let (_, challenge) = pkce();
        for _ in 0..2 {
            assert_eq!(authorize_page(&api, &request(&uncached, REDIRECT, &challenge)).await.status, 200);
        }
        assert_eq!(server.hits(uncached.strip_prefix(&server.base).unwrap()), 2);
        // The metadata advertises the documents.
        let metadata: Value = http()
            .get(api.url("/api/.well-known/oauth-authorization-server"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(metadata["client_id_metadata_document_supported"], true);
        assert!(metadata["token_endpoint_auth_methods_supported"].as_array().unwrap().contains(&json!("none")));
    }
}

#[tokio::test]
async fn invalid_or_unsafe_metadata_documents_get_an_error_page() {
    let server = document_server::start(documents).await;
    let backend = api_tests::backends().await.into_iter().next().unwrap();
    let api = TestApi::builder(&backend).metadata_fetch(relaxed()).start().await;
    let (_, challenge) = pkce();
    let cases = [
        (server.url("/mismatch/1"), "client_id is not the URL"),
        (server.url("/no-redirects/1"), "redirect_uris is required"),
        (server.url("/html/1"), "application/json"),
        (server.url("/not-json/1"), "not JSON"),
        (server.url("/huge/1"), "larger than"),
        (server.url("/endless/1"), "larger than 5120 bytes"),
        (server.url("/overstated/1"), "larger than 5120 bytes"),
        (server.url("/moved/1"), "redirect"),
        (server.url("/missing/1"), "404"),
        (server.url("/").replace("https:", "http:") + "x.json", "must use https"),
        (server.url("/"), "must have a path"),
    ];
    for (client_id, why) in &cases {
        let page = authorize_page(&api, &request(client_id, REDIRECT, &challenge)).await;
        assert_eq!(page.status, 400, "{client_id}: {}", page.text);
        assert!(page.location().is_none(), "{client_id}");
        assert!(page.text.contains(why), "{client_id} should say {why:?}: {}", page.text);
    }
    // Failures are never cached: the mismatch is fetched again.
    let _ = authorize_page(&api, &request(&server.url("/mismatch/1"), REDIRECT, &challenge)).await;
    assert_eq!(server.hits("/mismatch/1"), 2);
    assert_eq!(server.hits("/good/x"), 0, "redirects are not followed");
    // The token endpoint refuses such a client as invalid_client.
    let client = Registered { id: server.url("/mismatch/1"), secret: None };
    oauth_error(&refresh(&api, &client, "lt_ort_x", None).await, 401, "invalid_client");

    // Without the test relaxation, loopback (and every non-public address) is refused before
    // any connection.
    let strict = TestApi::builder(&backend).start().await;
    let before = server.hits("/good/strict");
    let page = authorize_page(&strict, &request(&server.url("/good/strict"), REDIRECT, &challenge)).await;
    assert_eq!(page.status, 400, "{}", page.text);
    assert!(page.text.contains("non-public address (127.0.0.1)"), "{}", page.text);
    assert_eq!(server.hits("/good/strict"), before);
    for loopback in
        ["https://localhost/client.json", "https://[::ffff:7f00:1]/c.json", "https://[64:ff9b::7f00:1]/c.json"]
    {
        let page = authorize_page(&strict, &request(loopback, REDIRECT, &challenge)).await;
        assert!(page.text.contains("non-public address"), "{loopback}: {}", page.text);
    }
    // Nor is a document the relaxed server cached (max-age) served to the strict one: the cache
    // is per process.
    let cached = server.url("/good/cached-when-relaxed");
    assert_eq!(authorize_page(&api, &request(&cached, REDIRECT, &challenge)).await.status, 200);
    let page = authorize_page(&strict, &request(&cached, REDIRECT, &challenge)).await;
    assert_eq!(page.status, 400, "{}", page.text);
    assert!(page.text.contains("non-public address (127.0.0.1)"), "{}", page.text);
    assert_eq!(server.hits("/good/cached-when-relaxed"), 1);
}
