//! Login and session JWTs (docs/auth.md), black box over HTTP on both store backends: login,
//! its failures and limits, the session on real API routes, hand-made attack tokens, and the
//! key set in Secrets Manager (moto) with refresh on an unknown key id.

use api_tests::{Backend, TestApi, assert_error_body, backends, client_from_own_address, create_secret, moto};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use oauth::password;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use uuid::Uuid;
use workapi_domain::identity::{User, UserKind};
use workapi_domain::permissions::ROOT;
use workapi_kit::ratelimit::LoginLimits;
use workapi_kit::session::{AUDIENCE, ISSUER, RefreshPolicy, SessionKeySet, SessionKeySource};
use workapi_store::keys::WsKeys;
use workapi_store::{Condition, Update};

const LOGIN: &str = "/api/auth/login";
const PASSWORD: &str = "a long enough test password";

fn random_hex() -> String {
    format!("{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple())
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

fn b64(value: &Value) -> String {
    URL_SAFE_NO_PAD.encode(value.to_string())
}

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
}

#[derive(Clone, Copy)]
enum Mac256 {
    Hs256,
    Hs384,
    Hs512,
}

/// A JWT made by hand: base64url JSON header and claims, HMAC over them with `secret_hex`.
fn jwt(header: Value, claims: &Value, secret_hex: &str, mac: Mac256) -> String {
    let head = format!("{}.{}", b64(&header), b64(claims));
    let key = unhex(secret_hex);
    let signature = match mac {
        Mac256::Hs256 => {
            let mut m = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
            m.update(head.as_bytes());
            m.finalize().into_bytes().to_vec()
        }
        Mac256::Hs384 => {
            let mut m = Hmac::<sha2::Sha384>::new_from_slice(&key).unwrap();
            m.update(head.as_bytes());
            m.finalize().into_bytes().to_vec()
        }
        Mac256::Hs512 => {
            let mut m = Hmac::<sha2::Sha512>::new_from_slice(&key).unwrap();
            m.update(head.as_bytes());
            m.finalize().into_bytes().to_vec()
        }
    };
    format!("{head}.{}", URL_SAFE_NO_PAD.encode(signature))
}

fn hs256(kid: &str, claims: &Value, secret_hex: &str) -> String {
    jwt(json!({"alg": "HS256", "typ": "JWT", "kid": kid}), claims, secret_hex, Mac256::Hs256)
}

fn claims_for(user: &User) -> Value {
    let now = now();
    json!({
        "iss": ISSUER, "aud": AUDIENCE, "sub": user.id, "ws": user.workspace_id, "sid": Uuid::new_v4(),
        "scope": "api:read api:write", "iat": now, "nbf": now, "exp": now + 600
    })
}

fn key_set(active: &str, keys: &[(&str, &str)]) -> String {
    let mut object = serde_json::Map::new();
    object.insert("active".into(), active.into());
    for (kid, hex) in keys {
        object.insert((*kid).into(), (*hex).into());
    }
    Value::Object(object).to_string()
}

fn fixed(json: &str) -> SessionKeySource {
    SessionKeySource::fixed(SessionKeySet::parse(json).unwrap())
}

/// A user of the test workspace with a login password.
async fn user_with_password(api: &TestApi) -> User {
    let (user, _) = api.user(ROOT, UserKind::Employee).await;
    password::set_password(api.store.as_ref(), user.workspace_id, user.id, PASSWORD).await.unwrap();
    user
}

async fn login(api: &TestApi, body: Value) -> (u16, reqwest::header::HeaderMap, Value) {
    api.call(reqwest::Method::POST, LOGIN, None, Some(body)).await
}

async fn deactivate(api: &TestApi, user: &User) {
    let key = WsKeys::new(user.workspace_id).user(user.id);
    api.store.update(&key, Update::default().set("isActive", false), Condition::Exists).await.unwrap();
}

fn header_of(token: &str) -> Value {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(token.split('.').next().unwrap()).unwrap()).unwrap()
}

#[tokio::test]
async fn a_login_session_works_on_the_api() {
    for backend in backends().await {
        let api = TestApi::start(&backend).await;
        let user = user_with_password(&api).await;
        // The e-mail matches case-insensitively, surrounding whitespace ignored.
        let typed = format!("  {}  ", user.email.to_uppercase());
        let (status, headers, body) = login(&api, json!({"email": typed, "password": PASSWORD})).await;
        assert_eq!(status, 200, "[{}] {body}", api.backend);
        assert_eq!(headers["cache-control"], "no-store");
        assert_eq!(body["tokenType"], "Bearer");
        assert_eq!(body["expiresIn"], 3600);
        assert_eq!(body["scope"], "api:read api:write");
        assert_eq!(body["userId"], json!(user.id));
        assert_eq!(body["workspaceId"], json!(user.workspace_id));
        let token = body["accessToken"].as_str().unwrap().to_owned();
        assert!(token.starts_with("eyJ"), "{token}");
        assert_eq!(header_of(&token)["alg"], "HS256");

        assert_eq!(api.get("/tags/task", &token).await.0, 200, "[{}] read with the session", api.backend);
        let (status, created) = api.post("/tags/task/create", &token, json!({"name": "From a session"})).await;
        assert_eq!(status, 200, "[{}] write with the session: {created}", api.backend);

        // Naming the workspace works; naming another one is a failed login like any other.
        let named = json!({"email": user.email, "password": PASSWORD, "workspaceId": user.workspace_id});
        assert_eq!(login(&api, named).await.0, 200);
        let other = json!({"email": user.email, "password": PASSWORD, "workspaceId": Uuid::new_v4()});
        assert_eq!(login(&api, other).await.0, 401);

        // A deactivated user's session stops working at once (the user is read per request).
        deactivate(&api, &user).await;
        let (status, body) = api.get("/tags/task", &token).await;
        assert_error_body(api.backend, status, &body, 401);
    }
}

#[tokio::test]
async fn failed_logins_are_indistinguishable() {
    for backend in backends().await {
        let api = TestApi::start(&backend).await;
        let user = user_with_password(&api).await;
        let inactive = user_with_password(&api).await;
        deactivate(&api, &inactive).await;
        let (no_password, _) = api.user(ROOT, UserKind::Employee).await;

        let attempts = [
            ("wrong password", json!({"email": user.email, "password": "not the password at all"})),
            ("unknown e-mail", json!({"email": "nobody@nowhere.example", "password": PASSWORD})),
            ("inactive user, right password", json!({"email": inactive.email, "password": PASSWORD})),
            ("user without a password", json!({"email": no_password.email, "password": PASSWORD})),
        ];
        let mut answers = Vec::new();
        for (what, body) in attempts {
            let (status, headers, body) = login(&api, body).await;
            assert_error_body(api.backend, status, &body, 401);
            // Every 401 names the protected-resource metadata (RFC 9728 §5.1; docs/oauth.md).
            let challenge = format!("Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource\"", api.base);
            assert_eq!(headers["www-authenticate"], challenge.as_str(), "[{}] {what}", api.backend);
            answers.push((what, body));
        }
        for (what, body) in &answers {
            assert_eq!(body, &answers[0].1, "[{}] {what} answers like a wrong password", api.backend);
        }
        assert_eq!(answers[0].1, json!({"statusCode": 401, "message": "Invalid e-mail or password"}));
    }
}

/// An unknown e-mail costs an Argon2id verification too (against a dummy hash), so its answer
/// takes about as long as a wrong password's. Medians of a few tries, and a generous bound:
/// without the dummy verification the unknown e-mail would answer tens of times faster.
#[tokio::test]
async fn an_unknown_email_takes_as_long_as_a_wrong_password() {
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let user = user_with_password(&api).await;
    let mut wrong = Vec::new();
    let mut unknown = Vec::new();
    for i in 0..5 {
        let started = Instant::now();
        assert_eq!(login(&api, json!({"email": user.email, "password": "wrong wrong wrong"})).await.0, 401);
        wrong.push(started.elapsed());
        let started = Instant::now();
        let body = json!({"email": format!("nobody{i}@nowhere.example"), "password": "wrong wrong wrong"});
        assert_eq!(login(&api, body).await.0, 401);
        unknown.push(started.elapsed());
    }
    wrong.sort();
    unknown.sort();
    let (wrong, unknown) = (wrong[2], unknown[2]);
    // A factor of 4 either way: loose enough for a loaded CI machine (other tests hash passwords
    // in parallel), tight enough to catch the missing dummy verification (~40 times faster).
    assert!(unknown * 4 >= wrong, "unknown e-mail {unknown:?} vs wrong password {wrong:?}");
    assert!(wrong * 4 >= unknown, "unknown e-mail {unknown:?} vs wrong password {wrong:?}");
}

#[tokio::test]
async fn login_validation() {
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let cases = [
        (json!({}), vec!["email", "password"]),
        (json!({"email": 5, "password": true}), vec!["email", "password"]),
        (json!({"email": "no-at-sign", "password": "x"}), vec!["email"]),
        (json!({"email": "a b@c.example", "password": "x"}), vec!["email"]),
        (json!({"email": format!("{}@x.example", "a".repeat(250)), "password": "x"}), vec!["email"]),
        (json!({"email": "a@b.example", "password": ""}), vec!["password"]),
        (json!({"email": "a@b.example", "password": "x".repeat(1025)}), vec!["password"]),
        (json!({"email": "a@b.example", "password": "x", "workspaceId": "acme"}), vec!["workspaceId"]),
        (json!({"email": "a@b.example", "password": "x", "workspaceId": 7}), vec!["workspaceId"]),
    ];
    for (body, fields) in cases {
        let (status, _, answer) = login(&api, body.clone()).await;
        assert_error_body(api.backend, status, &answer, 400);
        let named: Vec<&str> = answer["errors"].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(named, fields, "{body}");
    }
    for raw in ["[]", "not json", "\"email\""] {
        let response =
            api.http.post(api.url(LOGIN)).header("content-type", "application/json").body(raw).send().await.unwrap();
        assert_eq!(response.status(), 400, "{raw}");
    }
    // A null workspaceId means "not given".
    let (status, _, _) = login(&api, json!({"email": "a@b.example", "password": "x", "workspaceId": null})).await;
    assert_eq!(status, 401);
}

/// One e-mail with the same password in two workspaces: without `workspaceId` the login cannot
/// choose and says so (only to someone who knows the password); with it, it signs in there.
#[tokio::test]
async fn an_email_in_several_workspaces() {
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let email = format!("{}@shared.example", Uuid::new_v4().simple());
    let other_ws = workapi_domain::identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
    let mut users = Vec::new();
    for ws in [api.workspace_id, other_ws.id] {
        let new = workapi_domain::identity::NewUser {
            email: &email,
            name: "Twin",
            role_id: ROOT,
            kind: UserKind::Employee,
            language: "en",
        };
        let user = workapi_domain::identity::create_user(api.store.as_ref(), ws, new).await.unwrap();
        password::set_password(api.store.as_ref(), ws, user.id, PASSWORD).await.unwrap();
        users.push(user);
    }
    let (status, _, body) = login(&api, json!({"email": email, "password": PASSWORD})).await;
    assert_error_body(api.backend, status, &body, 400);
    assert!(body["errors"]["workspaceId"].is_array(), "{body}");
    // A wrong password learns nothing about the second account.
    assert_eq!(login(&api, json!({"email": email, "password": "wrong wrong wrong"})).await.0, 401);
    for user in &users {
        let body = json!({"email": email, "password": PASSWORD, "workspaceId": user.workspace_id});
        let (status, _, answer) = login(&api, body).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["userId"], json!(user.id));
    }
    // With one account deactivated, the other is the only match.
    deactivate(&api, &users[1]).await;
    let (status, _, answer) = login(&api, json!({"email": email, "password": PASSWORD})).await;
    assert_eq!((status, &answer["userId"]), (200, &json!(users[0].id)), "{answer}");
}

/// A client on its own loopback address, so its login-IP counter is its own.
#[tokio::test]
async fn login_attempts_are_limited_per_ip_and_per_email() {
    for backend in backends().await {
        // An hour-long window: the test never straddles two windows.
        let limits = LoginLimits { per_ip: 3, per_email: 100, window_secs: 3600, ..TestApi::GENEROUS_LOGIN };
        let sessions = SessionKeySource::fixed(SessionKeySet::generate("k1"));
        let mut api = TestApi::builder(&backend).session_keys(sessions).login_limits(limits).start().await;
        api.http = client_from_own_address();
        let user = user_with_password(&api).await;
        for _ in 0..3 {
            let (status, headers, _) = login(&api, json!({"email": "x@y.example", "password": "wrong"})).await;
            assert_eq!(status, 401, "[{}]", api.backend);
            assert_eq!(headers["x-ratelimit-limit"], "3", "[{}] the tightest limit is reported", api.backend);
        }
        // Even the right password is refused now, before it is checked.
        let (status, headers, body) = login(&api, json!({"email": user.email, "password": PASSWORD})).await;
        assert_error_body(api.backend, status, &body, 429);
        let retry: i64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=3600).contains(&retry), "Retry-After {retry}");
        assert_eq!(headers["x-ratelimit-remaining"], "0");
        // Validation errors are not login attempts and still answer 400.
        assert_eq!(login(&api, json!({"email": "x"})).await.0, 400);
        // The API's own limits are separate: a token still works from this address.
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let (status, _, _) = api.call(reqwest::Method::GET, "/tags/task", Some(&token), None).await;
        assert_eq!(status, 200);

        // Per e-mail, whatever the address (and the case) it comes from.
        let limits = LoginLimits { per_ip: 100, per_email: 2, window_secs: 3600, ..TestApi::GENEROUS_LOGIN };
        let sessions = SessionKeySource::fixed(SessionKeySet::generate("k1"));
        let mut api = TestApi::builder(&backend).session_keys(sessions).login_limits(limits).start().await;
        let user = user_with_password(&api).await;
        for _ in 0..2 {
            api.http = client_from_own_address();
            assert_eq!(login(&api, json!({"email": user.email, "password": "wrong guess"})).await.0, 401);
        }
        api.http = client_from_own_address();
        let shouted = user.email.to_uppercase();
        let (status, _, body) = login(&api, json!({"email": shouted, "password": PASSWORD})).await;
        assert_error_body(api.backend, status, &body, 429);
        let other = user_with_password(&api).await;
        assert_eq!(login(&api, json!({"email": other.email, "password": PASSWORD})).await.0, 200);
    }
}

/// Every forged, altered or out-of-date token is a 401 before any store read.
#[tokio::test]
async fn attack_tokens_are_rejected_without_a_store_read() {
    for backend in backends().await {
        let (k1, k0) = (random_hex(), random_hex());
        let api =
            TestApi::builder(&backend).session_keys(fixed(&key_set("k1", &[("k1", &k1), ("k0", &k0)]))).start().await;
        let (user, _) = api.user(ROOT, UserKind::Employee).await;
        let good = claims_for(&user);

        // The control: the same construction with nothing wrong is accepted, with either key.
        assert_eq!(api.get("/tags/task", &hs256("k1", &good, &k1)).await.0, 200, "[{}]", api.backend);
        assert_eq!(api.get("/tags/task", &hs256("k0", &good, &k0)).await.0, 200, "[{}]", api.backend);

        let with = |name: &str, value: Value| {
            let mut claims = good.clone();
            claims[name] = value;
            claims
        };
        let without = |name: &str| {
            let mut claims = good.clone();
            claims.as_object_mut().unwrap().remove(name);
            claims
        };
        let valid = hs256("k1", &good, &k1);
        let signature = valid.rsplit('.').next().unwrap();
        let mut tampered_claims = good.clone();
        tampered_claims["sub"] = json!(Uuid::new_v4());
        let tampered = format!(
            "{}.{}.{signature}",
            b64(&json!({"alg": "HS256", "typ": "JWT", "kid": "k1"})),
            b64(&tampered_claims)
        );
        let now = now();

        let attacks: Vec<(&str, String)> = vec![
            ("alg none, no signature", format!("{}.{}.", b64(&json!({"alg": "none", "kid": "k1"})), b64(&good))),
            (
                "alg none, a signature",
                format!("{}.{}.{signature}", b64(&json!({"alg": "none", "kid": "k1"})), b64(&good)),
            ),
            ("HS384 with the key", jwt(json!({"alg": "HS384", "kid": "k1"}), &good, &k1, Mac256::Hs384)),
            ("HS512 with the key", jwt(json!({"alg": "HS512", "kid": "k1"}), &good, &k1, Mac256::Hs512)),
            ("RS256 header, HMAC signature", jwt(json!({"alg": "RS256", "kid": "k1"}), &good, &k1, Mac256::Hs256)),
            ("tampered payload", tampered),
            ("wrong iss", hs256("k1", &with("iss", json!("https://evil.example")), &k1)),
            ("wrong aud", hs256("k1", &with("aud", json!("another-api")), &k1)),
            ("expired", hs256("k1", &with("exp", json!(now - 120)), &k1)),
            ("nbf in the future", hs256("k1", &with("nbf", json!(now + 600)), &k1)),
            ("unknown kid", hs256("k9", &good, &k1)),
            ("no kid", jwt(json!({"alg": "HS256"}), &good, &k1, Mac256::Hs256)),
            ("missing exp", hs256("k1", &without("exp"), &k1)),
            ("missing sub", hs256("k1", &without("sub"), &k1)),
            ("missing iss", hs256("k1", &without("iss"), &k1)),
            ("missing aud", hs256("k1", &without("aud"), &k1)),
            ("another key", hs256("k1", &good, &random_hex())),
            ("k0's key named as k1", hs256("k1", &good, &k0)),
            ("an unknown scope", hs256("k1", &with("scope", json!("admin")), &k1)),
            ("garbage", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi.AAAA".to_owned()),
        ];
        for (what, token) in attacks {
            let before = api.store_reads.load(Ordering::SeqCst);
            let (status, body) = api.get("/tags/task", &token).await;
            assert_error_body(api.backend, status, &body, 401);
            assert_eq!(api.store_reads.load(Ordering::SeqCst), before, "[{}] {what}: no store read", api.backend);
        }

        // Scopes are the token's: a read-only session reads but cannot write.
        let read_only = hs256("k1", &with("scope", json!("api:read")), &k1);
        assert_eq!(api.get("/tags/task", &read_only).await.0, 200);
        let (status, body) = api.post("/tags/task/create", &read_only, json!({"name": "x"})).await;
        assert_error_body(api.backend, status, &body, 403);
        // An expired session says so.
        let (_, body) = api.get("/tags/task", &hs256("k1", &with("exp", json!(now - 120)), &k1)).await;
        assert_eq!(body["message"], "Session has expired; log in again");
    }
}

#[tokio::test]
async fn the_demo_admin_logs_in_with_the_documented_password() {
    let backend = backends().await.into_iter().next().unwrap();
    let key = workapi_domain::token::TokenKey::generate();
    let demo = local::demo::ensure_demo(backend.store.as_ref(), &key).await.unwrap().expect("an empty store");
    let api = TestApi::start(&backend).await;
    let body = json!({"email": local::demo::DEMO_EMAIL, "password": local::demo::DEMO_PASSWORD});
    let (status, _, answer) = login(&api, body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["userId"], json!(demo.user_id));
    let token = answer["accessToken"].as_str().unwrap();
    assert_eq!(api.get("/tags/task", token).await.0, 200);
}

// ---------------------------------------------------------------- Secrets Manager (moto)

async fn put_secret(client: &aws_sdk_secretsmanager::Client, name: &str, value: &str) {
    client.put_secret_value().secret_id(name).secret_string(value).send().await.expect("update the secret");
}

async fn embedded() -> Backend {
    backends().await.into_iter().next().expect("the embedded backend")
}

/// Rotation as docs/auth.md describes it: a key added later is picked up when a token names it,
/// becomes the signing key, and the old key stops working once removed and refreshed.
#[tokio::test]
async fn session_keys_rotate_through_secrets_manager() {
    let Some(client) = moto("the session keys in Secrets Manager").await else { return };
    let (k1, k2, k3) = (random_hex(), random_hex(), random_hex());
    let secret = create_secret(&client, "workapi-session-keys", &key_set("k1", &[("k1", &k1)])).await;
    // Refresh on every unknown kid (no minimum interval) and never merely by age.
    let policy = RefreshPolicy { min_interval: Duration::ZERO, max_age: Duration::from_secs(3600) };
    let api = TestApi::builder(&embedded().await)
        .session_keys(SessionKeySource::secrets_manager_with(secret.clone(), policy))
        .start()
        .await;
    let user = user_with_password(&api).await;

    // First use loads the set: login signs with k1.
    let (status, _, body) = login(&api, json!({"email": user.email, "password": PASSWORD})).await;
    assert_eq!(status, 200, "{body}");
    let first = body["accessToken"].as_str().unwrap().to_owned();
    assert_eq!(header_of(&first)["kid"], "k1");
    assert_eq!(api.get("/tags/task", &first).await.0, 200);

    // k2 is added and made active after the first load: a token naming it makes the set refresh.
    put_secret(&client, &secret, &key_set("k2", &[("k1", &k1), ("k2", &k2)])).await;
    let by_k2 = hs256("k2", &claims_for(&user), &k2);
    assert_eq!(api.get("/tags/task", &by_k2).await.0, 200, "a key added after the first load");
    let (_, _, body) = login(&api, json!({"email": user.email, "password": PASSWORD})).await;
    assert_eq!(header_of(body["accessToken"].as_str().unwrap())["kid"], "k2", "the new active key signs");
    assert_eq!(api.get("/tags/task", &first).await.0, 200, "old sessions stay valid while k1 is kept");

    // k1 is removed. The next unknown kid refreshes the set, and k1's sessions end.
    put_secret(&client, &secret, &key_set("k2", &[("k2", &k2)])).await;
    assert_eq!(api.get("/tags/task", &hs256("k3", &claims_for(&user), &k3)).await.0, 401);
    let (status, body) = api.get("/tags/task", &first).await;
    assert_error_body(api.backend, status, &body, 401);
    assert_eq!(api.get("/tags/task", &by_k2).await.0, 200);
}

/// The default policy refreshes on an unknown kid at most once a minute per container, so a
/// stream of forged key ids cannot hammer Secrets Manager.
#[tokio::test]
async fn unknown_kids_refresh_at_most_once_per_interval() {
    let Some(client) = moto("the session keys in Secrets Manager").await else { return };
    let (k1, k2) = (random_hex(), random_hex());
    let secret = create_secret(&client, "workapi-session-keys", &key_set("k1", &[("k1", &k1)])).await;
    let api = TestApi::builder(&embedded().await)
        .session_keys(SessionKeySource::secrets_manager(secret.clone()))
        .start()
        .await;
    let (user, _) = api.user(ROOT, UserKind::Employee).await;
    assert_eq!(api.get("/tags/task", &hs256("k1", &claims_for(&user), &k1)).await.0, 200, "first load");
    put_secret(&client, &secret, &key_set("k1", &[("k1", &k1), ("k2", &k2)])).await;
    // Within the minute after the load: no refresh, so k2 is not known here yet.
    assert_eq!(api.get("/tags/task", &hs256("k2", &claims_for(&user), &k2)).await.0, 401);
}

#[tokio::test]
async fn a_broken_session_key_secret_is_a_generic_500() {
    let Some(client) = moto("the session keys in Secrets Manager").await else { return };
    let value = format!("{{\"active\": \"k1\", \"k1\": \"{}\"", random_hex());
    let malformed = create_secret(&client, "workapi-session-keys", &value).await;
    let missing = format!("workapi-missing-{}", Uuid::new_v4().simple());
    for secret in [malformed, missing] {
        let api = TestApi::builder(&embedded().await)
            .session_keys(SessionKeySource::secrets_manager(secret.clone()))
            .start()
            .await;
        let user = user_with_password(&api).await;
        let (status, _, body) = login(&api, json!({"email": user.email, "password": PASSWORD})).await;
        assert_error_body(api.backend, status, &body, 500);
        let token = hs256("k1", &claims_for(&user), &random_hex());
        let (status, answer) = api.get("/tags/task", &token).await;
        assert_error_body(api.backend, status, &answer, 500);
        for text in [body.to_string(), answer.to_string()] {
            assert!(!text.contains(&value[20..40]) && !text.contains(&secret), "internals leaked: {text}");
            assert!(text.contains("Internal server error"));
        }
    }
}
