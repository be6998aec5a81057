//! The token key read from Secrets Manager (moto's server in the test command), as deployed
//! functions read it: on first use, once per container, never echoed.
//!
//! Needs `LT_MOTO_ENDPOINT` and `AWS_ENDPOINT_URL_SECRETS_MANAGER` pointing at moto (the test
//! command sets both); skipped loudly otherwise, and a failure under `LT_REQUIRE_SERVICES=1`.

use api_tests::{Backend, TestApi, assert_error_body, backends, create_secret, moto};
use std::sync::atomic::Ordering;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;
use workapi_domain::token::{self as pat, TokenKey};
use workapi_kit::app::TokenKeySource;

fn from_secret(secret_id: String) -> TokenKeySource {
    TokenKeySource::SecretsManager { secret_id, cached: Default::default() }
}

async fn embedded() -> Backend {
    backends().await.into_iter().next().expect("the embedded backend")
}

#[tokio::test]
async fn tokens_verify_against_the_key_in_secrets_manager() {
    let Some(client) = moto("the Secrets Manager suite").await else { return };
    let key = TokenKey::generate();
    let secret_id = create_secret(&client, "workapi-token-key", &key.to_hex()).await;
    let api = TestApi::builder(&embedded().await).token_key_source(from_secret(secret_id.clone()), key).start().await;
    let (_, token) = api.user(ROOT, UserKind::Employee).await;
    assert_eq!(api.get("/tags/task", &token).await.0, 200);

    // Cached for the container's life: deleting the secret changes nothing for this instance.
    client.delete_secret().secret_id(&secret_id).force_delete_without_recovery(true).send().await.unwrap();
    assert_eq!(api.get("/tags/task", &token).await.0, 200);

    // A token tagged with another key is forged, and rejected before any store read.
    let forged = pat::mint(&TokenKey::generate());
    let before = api.store_reads.load(Ordering::SeqCst);
    let (status, body) = api.get("/tags/task", &forged).await;
    assert_error_body(api.backend, status, &body, 401);
    assert_eq!(api.store_reads.load(Ordering::SeqCst), before);
}

#[tokio::test]
async fn a_missing_or_malformed_secret_is_a_generic_500_that_reveals_nothing() {
    let Some(client) = moto("the Secrets Manager suite").await else { return };
    let secret_value = "not-a-key-but-still-secret-value";
    let malformed = create_secret(&client, "workapi-token-key", secret_value).await;
    let missing = format!("workapi-missing-{}", uuid::Uuid::new_v4().simple());
    for secret_id in [malformed, missing] {
        let api = TestApi::builder(&embedded().await)
            .token_key_source(from_secret(secret_id.clone()), TokenKey::generate())
            .start()
            .await;
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let (status, body) = api.get("/tags/task", &token).await;
        assert_error_body(api.backend, status, &body, 500);
        assert_eq!(body["message"], "Internal server error");
        let text = body.to_string();
        assert!(!text.contains(secret_value) && !text.contains(&secret_id), "internals leaked: {text}");
    }
}
