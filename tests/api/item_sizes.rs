//! Items that fit the store (docs/data-model.md#limits): a write whose item DynamoDB would
//! refuse (over 400 KB) is a 400 naming the body on every backend, never a 500 on DynamoDB and
//! a success on the embedded store, and nothing of it is kept.

use crate::projects_api::{product_body, seeded};
use api_tests::{assert_error_body, each_backend};
use serde_json::json;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;

#[tokio::test]
async fn a_catalog_product_too_large_to_store_is_a_400_on_every_backend_and_nothing_is_kept() {
    each_backend(async |_, api| {
        let world = seeded(api, None).await;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        // Six variants of about 100 KB each: every field within its documented bound, the
        // product about 600 KB stored.
        let mut body = product_body(world.catalog_category);
        let long = format!("<p>{}</p>", "lorem ipsum ".repeat(8_500));
        body["name"] = json!("Too large to store");
        body["variants"] =
            json!((0..6).map(|i| json!({"name": format!("V{i}"), "description": long})).collect::<Vec<_>>());
        let (status, error) = api.post("/administration/product-catalog", &root, body).await;
        assert_error_body(api.backend, status, &error, 400);
        // Six parts of a sixth each: the list is the part to shorten.
        let message = error["errors"]["variants"][0].as_str().unwrap_or_default();
        assert!(message.contains("too large to store") && message.contains("400 KB"), "[{}] {error}", api.backend);
        let listed = api.list_all("/administration/product-catalog", &root).await;
        assert!(listed.iter().all(|p| p["name"] != "Too large to store"), "[{}] nothing kept", api.backend);
    })
    .await;
}

#[tokio::test]
async fn one_description_too_large_to_store_is_a_400_naming_it() {
    each_backend(async |_, api| {
        let world = seeded(api, None).await;
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        // 240 KB of Markdown, within the 256 KB a rich-text field takes, stores as several MB of
        // IDoc (every one-letter list item is a node with a paragraph and a text inside).
        let mut body = product_body(world.catalog_category);
        body["name"] = json!("One huge description");
        body["variants"] = json!([{"name": "Small", "description": "- a\n".repeat(60_000)}]);
        let (status, error) = api.post("/administration/product-catalog", &root, body).await;
        assert_error_body(api.backend, status, &error, 400);
        let message = error["errors"]["variants[0].description"][0].as_str().unwrap_or_default();
        assert!(message.contains("shorten variants[0].description"), "[{}] {error}", api.backend);
        let listed = api.list_all("/administration/product-catalog", &root).await;
        assert!(listed.iter().all(|p| p["name"] != "One huge description"), "[{}] nothing kept", api.backend);
    })
    .await;
}
