//! Imposter mode (spec §5.5, DESIGN §3) over HTTP on every store backend: who may use it, whom
//! it may target, what it changes (the acting user) and what it never changes (the token
//! owner's permissions, scopes and rate-limit bucket; token expiry and rate windows).

use api_tests::{TestApi, assert_error_body, backends, each_backend};
use reqwest::Method;
use serde_json::json;
use uuid::Uuid;
use workapi_domain::identity::{self, NewToken, NewUser, UserKind};
use workapi_domain::permissions::{CEO, ROOT, STAFF};
use workapi_kit::ratelimit::RateLimits;

async fn german_user(api: &TestApi, workspace: Uuid, role: &str, kind: UserKind) -> identity::User {
    let email = format!("{}@test.example", Uuid::new_v4().simple());
    let new = NewUser { email: &email, name: "Grete", role_id: role, kind, language: "de" };
    identity::create_user(api.store.as_ref(), workspace, new).await.expect("user")
}

#[tokio::test]
async fn root_acts_as_another_user_with_its_own_permissions() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let target = german_user(api, api.workspace_id, STAFF, UserKind::Employee).await;
        let target_id = target.id.to_string();
        let header = [("LT_IMPOSTER_USER_ID", target_id.as_str())];

        // The request acts as the target: base roles come localized in the target's language.
        let (status, _, ceo) =
            api.send_with(Method::GET, &format!("/administration/roles/{CEO}"), &root, &header, None).await;
        assert_eq!(status, 200, "[{}] {ceo}", api.backend);
        assert_eq!(ceo["name"], "Geschäftsführung", "[{}] acting as the German user", api.backend);

        // ... with the token owner's permissions: Staff may not create roles, Root may.
        let body = json!({"name": "Via imposter", "icon": "fa-mask", "type": "normal"});
        let (status, _, role) =
            api.send_with(Method::POST, "/administration/roles?responseShape=full", &root, &header, Some(body)).await;
        assert_eq!(status, 201, "[{}] {role}", api.backend);
        assert_eq!(role["createdBy"], target_id, "[{}] the acting user is recorded", api.backend);

        // Header names are case-insensitive, and the hyphenated spelling works too.
        for name in ["lt_imposter_user_id", "Lt-Imposter-User-Id"] {
            let (status, _, ceo) = api
                .send_with(Method::GET, &format!("/administration/roles/{CEO}"), &root, &[(name, &target_id)], None)
                .await;
            assert_eq!((status, ceo["name"].clone()), (200, json!("Geschäftsführung")), "[{}] {name}", api.backend);
        }

        // Acting as a customer-organization member: what needs an employee is refused.
        let member = german_user(api, api.workspace_id, STAFF, UserKind::OrganizationMember).await;
        let (status, _, body) = api
            .send_with(
                Method::POST,
                "/tags/project/create",
                &root,
                &[("LT_IMPOSTER_USER_ID", &member.id.to_string())],
                Some(json!({"name": "P"})),
            )
            .await;
        assert_error_body(api.backend, status, &body, 403);
    })
    .await;
}

#[tokio::test]
async fn imposter_mode_needs_the_permission() {
    each_backend(async |_, api| {
        let (_, ceo) = api.user(CEO, UserKind::Employee).await;
        let (target, _) = api.user(STAFF, UserKind::Employee).await;
        for header in [("LT_IMPOSTER_USER_ID", target.id.to_string()), ("LT_CUSTOM_NOW", "2030-01-01T00:00:00Z".into())]
        {
            let (status, _, body) =
                api.send_with(Method::GET, "/tags/task", &ceo, &[(header.0, &header.1)], None).await;
            assert_error_body(api.backend, status, &body, 403);
            assert!(body["message"].as_str().unwrap().contains("PublicApi.allowImposterMode"), "{body}");
        }
        // A custom role that grants it enables it.
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let (_, role) = api
            .post(
                "/administration/roles?responseShape=full",
                &root,
                json!({"name": "Support", "icon": "fa-life-ring", "type": "normal", "parentId": STAFF,
                       "permissions": {"PublicApi.allowImposterMode": true}}),
            )
            .await;
        let (_, support) = api.user(role["id"].as_str().unwrap(), UserKind::Employee).await;
        let (status, _, body) = api
            .send_with(Method::GET, "/tags/task", &support, &[("LT_IMPOSTER_USER_ID", &target.id.to_string())], None)
            .await;
        assert_eq!(status, 200, "[{}] {body}", api.backend);
    })
    .await;
}

#[tokio::test]
async fn the_target_must_be_an_active_user_of_the_same_workspace() {
    each_backend(async |_, api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let other = identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let (foreigner, _) = api.user_in(other.id, STAFF, UserKind::Employee, &["api:read"]).await;
        for target in [foreigner.id.to_string(), Uuid::new_v4().to_string()] {
            let (status, _, body) =
                api.send_with(Method::GET, "/tags/task", &root, &[("LT_IMPOSTER_USER_ID", &target)], None).await;
            assert_error_body(api.backend, status, &body, 404);
        }
        let (status, _, body) =
            api.send_with(Method::GET, "/tags/task", &root, &[("LT_IMPOSTER_USER_ID", "someone")], None).await;
        assert_error_body(api.backend, status, &body, 400);
        assert!(body["errors"]["LT_IMPOSTER_USER_ID"].is_array(), "{body}");
        let (status, _, body) =
            api.send_with(Method::GET, "/tags/task", &root, &[("LT_CUSTOM_NOW", "next tuesday")], None).await;
        assert_error_body(api.backend, status, &body, 400);
        assert!(body["errors"]["LT_CUSTOM_NOW"].is_array(), "{body}");
    })
    .await;
}

#[tokio::test]
async fn imposter_mode_keeps_the_tokens_scopes() {
    each_backend(async |_, api| {
        let (_, read_only) = api.user_in(api.workspace_id, ROOT, UserKind::Employee, &["api:read"]).await;
        let (target, _) = api.user(ROOT, UserKind::Employee).await;
        let (status, _, body) = api
            .send_with(
                Method::POST,
                "/tags/task/create",
                &read_only,
                &[("LT_IMPOSTER_USER_ID", &target.id.to_string())],
                Some(json!({"name": "T"})),
            )
            .await;
        assert_error_body(api.backend, status, &body, 403);
        assert!(body["message"].as_str().unwrap().contains("api:write"), "{body}");
    })
    .await;
}

#[tokio::test]
async fn custom_now_never_revives_an_expired_token() {
    each_backend(async |_, api| {
        let (root, _) = api.user(ROOT, UserKind::Employee).await;
        let expired_at = workapi_store::clock::now_epoch() - 3600;
        let (token, _) = identity::create_token(
            api.store.as_ref(),
            &api.key,
            api.workspace_id,
            root.id,
            NewToken { name: "old", scopes: vec!["api:read".into()], expires_at: Some(expired_at) },
        )
        .await
        .unwrap();
        for now in ["2020-01-01T00:00:00Z", "2020-01-01"] {
            let (status, _, body) =
                api.send_with(Method::GET, "/tags/task", &token, &[("LT_CUSTOM_NOW", now)], None).await;
            assert_error_body(api.backend, status, &body, 401);
        }
    })
    .await;
}

#[tokio::test]
async fn imposter_requests_count_against_the_callers_bucket_and_real_window() {
    for backend in backends().await {
        let limits = RateLimits { per_token: 3, per_ip: 1_000_000, window_secs: 60 };
        let api = TestApi::builder(&backend).rate_limits(limits).start().await;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let (target, target_token) = api.user(STAFF, UserKind::Employee).await;
        let target_id = target.id.to_string();
        // A business clock far in the future does not open a new rate window either.
        let headers = [("LT_IMPOSTER_USER_ID", target_id.as_str()), ("LT_CUSTOM_NOW", "2099-01-01T00:00:00Z")];
        // Four requests inside one rate window: when a window turns among them (a slow machine
        // at a minute's end), the counts start over and the four are sent again in the new one.
        let window = || workapi_store::clock::now_epoch() / limits.window_secs;
        let remaining = loop {
            let started = window();
            let mut remaining = Vec::new();
            for _ in 0..4 {
                let (status, h, _) = api.send_with(Method::GET, "/tags/task", &root, &headers, None).await;
                remaining.push((status, h.get("x-ratelimit-remaining").map(|v| v.to_str().unwrap().to_owned())));
            }
            if window() == started {
                break remaining;
            }
        };
        assert_eq!(
            remaining,
            [(200, Some("2".into())), (200, Some("1".into())), (200, Some("0".into())), (429, Some("0".into()))],
            "[{}] charged to the imposter's token",
            api.backend
        );
        let (status, h, _) = api.send_with(Method::GET, "/tags/task", &target_token, &[], None).await;
        assert_eq!(status, 200, "[{}] the target's own bucket is untouched", api.backend);
        assert_eq!(h["x-ratelimit-remaining"], "2");
    }
}
