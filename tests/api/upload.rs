//! `POST /workspace/upload` (docs/files.md) on both setups: the embedded store with files in a
//! directory (the local server's default), and DynamoDB Local with files in moto's S3. The
//! second needs `LT_DYNAMODB_ENDPOINT` and `LT_MOTO_ENDPOINT` (the test command sets both):
//! skipped loudly otherwise, a failure under `LT_REQUIRE_SERVICES=1`.

use api_tests::{TestApi, assert_error_body, backends, moto_s3};
use serde_json::Value;
use uuid::Uuid;
use workapi_domain::identity::{self, UserKind};
use workapi_domain::permissions::{GUEST, ROOT, STAFF};
use workapi_kit::files;
use workapi_store::Query;
use workapi_store::keys::WsKeys;
use workspace::image::{MAX_BODY_BYTES, MAX_FILE_BYTES, MAX_PIXELS, samples};
use workspace::quota::{self, StorageUsage};

/// The embedded store with a directory, then DynamoDB Local with moto's S3.
async fn each_setup(test: impl AsyncFn(&TestApi)) {
    for backend in backends().await {
        let api = if backend.name == "embedded" {
            TestApi::start(&backend).await
        } else {
            let Some((objects, _)) = moto_s3("the upload suite on S3").await else { continue };
            TestApi::builder(&backend).objects(objects).start().await
        };
        test(&api).await;
    }
}

/// One part of a form: name, file name, declared type, bytes.
pub(crate) type Part<'a> = (&'a str, Option<&'a str>, &'a str, &'a [u8]);

fn form(parts: &[Part]) -> (String, Vec<u8>) {
    let boundary = format!("workapi-{}", Uuid::new_v4().simple());
    let mut body = Vec::new();
    for (name, file_name, content_type, bytes) in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        let file_name = file_name.map(|f| format!("; filename=\"{f}\"")).unwrap_or_default();
        body.extend_from_slice(format!("Content-Disposition: form-data; name=\"{name}\"{file_name}\r\n").as_bytes());
        body.extend_from_slice(format!("Content-Type: {content_type}\r\n\r\n").as_bytes());
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

async fn send(api: &TestApi, token: Option<&str>, content_type: &str, body: Vec<u8>) -> (u16, Value) {
    let mut request = api.http.post(api.url("/workspace/upload")).header("content-type", content_type).body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let bytes = response.bytes().await.unwrap();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

pub(crate) async fn upload(api: &TestApi, token: &str, parts: &[Part<'_>]) -> (u16, Value) {
    let (content_type, body) = form(parts);
    send(api, Some(token), &content_type, body).await
}

pub(crate) fn image_part<'a>(bytes: &'a [u8], name: &'a str) -> Part<'a> {
    ("file", Some(name), "application/octet-stream", bytes)
}

/// GETs a URL without credentials: status, content type, bytes.
async fn fetch(api: &TestApi, url: &str) -> (u16, String, Vec<u8>) {
    let (status, headers, bytes) = fetch_with_headers(api, url).await;
    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    (status, content_type, bytes)
}

async fn fetch_with_headers(api: &TestApi, url: &str) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let response = api.http.get(url).send().await.expect("the URL answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn each_format_is_stored_with_its_dimensions_and_its_url_serves_the_same_bytes() {
    each_setup(async |api| {
        let (user, token) = api.user(STAFF, UserKind::Employee).await;
        let cases = [
            (samples::PNG, "image/png", 3, 2),
            (samples::JPEG, "image/jpeg", 4, 3),
            (samples::WEBP, "image/webp", 5, 4),
            (samples::GIF, "image/gif", 6, 5),
        ];
        for (hex, content_type, width, height) in cases {
            let bytes = samples::bytes(hex);
            // The declared type and name say nothing true: the content decides.
            let (status, body) = upload(api, &token, &[image_part(&bytes, "upload.bin")]).await;
            assert_eq!(status, 201, "[{}] {content_type}: {body}", api.backend);
            assert_eq!(body["contentType"], content_type, "{body}");
            assert_eq!((body["width"].as_u64(), body["height"].as_u64()), (Some(width), Some(height)), "{body}");
            assert_eq!(body["size"].as_u64(), Some(bytes.len() as u64));
            assert!(body["createdAt"].as_str().is_some_and(|t| t.contains('T')), "{body}");
            assert!(body["urlExpiresAt"].as_str().is_some_and(|t| t.contains('T')), "{body}");
            let id: Uuid = body["id"].as_str().unwrap().parse().unwrap();

            // The record, through the interface the catalog uses.
            let record = files::find_image(api.store.as_ref(), WsKeys::new(api.workspace_id), id).await.unwrap();
            let record = record.expect("the upload's record");
            assert_eq!((record.width, record.height, record.created_by), (width as u32, height as u32, user.id));
            assert_eq!(record.content_type.content_type(), content_type);

            // The URL serves the very bytes, without credentials.
            let url = body["url"].as_str().unwrap();
            let (status, headers, served) = fetch_with_headers(api, url).await;
            assert_eq!(status, 200, "[{}] GET the file URL", api.backend);
            assert_eq!(served, bytes, "[{}] the URL serves the uploaded bytes", api.backend);
            assert_eq!(headers["content-type"], content_type);
            if api.backend == "embedded" {
                // The local route serves plain bytes to a client that asks only for those.
                let response = api.http.get(url).header("Accept", "application/octet-stream").send().await.unwrap();
                assert_eq!(response.headers()["content-type"], "application/octet-stream");
                assert_eq!(response.bytes().await.unwrap().to_vec(), bytes);
            }
            // Shown in place, saved under the id with the recognised format's extension,
            // whatever name the upload claimed.
            let extension = content_type.trim_start_matches("image/").replace("jpeg", "jpg");
            assert_eq!(
                headers.get("content-disposition").and_then(|v| v.to_str().ok()),
                Some(format!("inline; filename=\"{id}.{extension}\"").as_str()),
                "[{}] {content_type}",
                api.backend
            );
        }
    })
    .await;
}

#[tokio::test]
async fn another_workspace_never_finds_the_file() {
    each_setup(async |api| {
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let png = samples::bytes(samples::PNG);
        let (status, body) = upload(api, &token, &[image_part(&png, "logo.png")]).await;
        assert_eq!(status, 201, "{body}");
        let id: Uuid = body["id"].as_str().unwrap().parse().unwrap();
        let other = identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        assert_eq!(files::find_image(api.store.as_ref(), WsKeys::new(other.id), id).await.unwrap(), None);
        let unknown = files::find_image(api.store.as_ref(), WsKeys::new(api.workspace_id), Uuid::new_v4()).await;
        assert_eq!(unknown.unwrap(), None);
        // The same file id signed for another workspace is refused; so is a tampered signature.
        let url = body["url"].as_str().unwrap();
        if url.contains("/workspace/files/") {
            let moved = url.replace(&api.workspace_id.to_string(), &other.id.to_string());
            assert_eq!(fetch(api, &moved).await.0, 403);
            let (head, signature) = url.rsplit_once("signature=").unwrap();
            let flipped = if signature.starts_with('0') { "1" } else { "0" };
            assert_eq!(fetch(api, &format!("{head}signature={flipped}{}", &signature[1..])).await.0, 403);
            let later = url.replace("expires=", "expires=9");
            assert_eq!(fetch(api, &later).await.0, 403, "the expiry is signed");
        } else {
            // On S3 the local route does not serve files.
            let local = format!("/workspace/files/{id}/content?workspace={}&expires=1&signature=00", api.workspace_id);
            assert_eq!(fetch(api, &api.url(&local)).await.0, 404);
        }
    })
    .await;
}

#[tokio::test]
async fn anything_but_a_raster_image_is_a_400_naming_the_file() {
    each_setup(async |api| {
        let (_, token) = api.user(STAFF, UserKind::Employee).await;
        let svg = br#"<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>"#;
        let png = samples::bytes(samples::PNG);
        let header_only = &png[..33]; // signature and IHDR: no IDAT, no IEND
        let cut_jpeg = samples::bytes(samples::JPEG);
        let cut_jpeg = &cut_jpeg[..cut_jpeg.len() - 4];
        let cases: [(&str, &str, &[u8], &str); 7] = [
            ("logo.png", "image/png", b"just some text, renamed to logo.png", "PNG, JPEG, WebP or GIF"),
            ("logo.svg", "image/svg+xml", svg, "SVG"),
            ("logo.png", "image/png", svg, "SVG"),
            ("empty.png", "image/png", b"", "empty"),
            ("broken.png", "image/png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "header"),
            ("header.png", "image/png", header_only, "cut short"),
            ("cut.jpg", "image/jpeg", cut_jpeg, "cut short"),
        ];
        for (name, declared, bytes, why) in cases {
            let (status, body) = upload(api, &token, &[("file", Some(name), declared, bytes)]).await;
            assert_error_body(api.backend, status, &body, 400);
            let message = body["errors"]["file"][0].as_str().unwrap_or_default();
            assert!(message.contains(why), "[{}] {name}: {body}", api.backend);
        }
    })
    .await;
}

#[tokio::test]
async fn the_form_must_hold_exactly_one_file_and_parse() {
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let (_, token) = api.user(STAFF, UserKind::Employee).await;
    let png = samples::bytes(samples::PNG);

    let (status, body) = upload(&api, &token, &[]).await;
    assert_error_body(api.backend, status, &body, 400);
    assert!(body["errors"]["file"].is_array(), "no file: {body}");

    let (status, body) = upload(&api, &token, &[image_part(&png, "a.png"), image_part(&png, "b.png")]).await;
    assert_error_body(api.backend, status, &body, 400);
    assert!(body["errors"]["file"].is_array(), "two files: {body}");

    let (status, body) = upload(&api, &token, &[("logo", Some("a.png"), "image/png", &png)]).await;
    assert_error_body(api.backend, status, &body, 400);
    assert!(body["errors"]["logo"].is_array(), "another part: {body}");

    let malformed = [
        ("multipart/form-data; boundary=xyz", b"this is not a multipart body".to_vec()),
        (
            "multipart/form-data; boundary=xyz",
            b"--xyz\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc".to_vec(),
        ),
        ("multipart/form-data", form(&[image_part(&png, "a.png")]).1),
        ("multipart/form-data; boundary=xyz", Vec::new()),
    ];
    for (content_type, body) in malformed {
        let (status, answer) = send(&api, Some(&token), content_type, body).await;
        assert_error_body(api.backend, status, &answer, 400);
    }

    let (status, body) = send(&api, Some(&token), "application/json", b"{\"file\": \"x\"}".to_vec()).await;
    assert_error_body(api.backend, status, &body, 415);
}

#[tokio::test]
async fn files_over_the_limit_are_413() {
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let (_, token) = api.user(STAFF, UserKind::Employee).await;
    // One byte over the file limit, inside the body limit: refused while reading the part.
    let mut big = samples::bytes(samples::PNG);
    big.resize(MAX_FILE_BYTES + 1, 0);
    let (status, body) = upload(&api, &token, &[image_part(&big, "big.png")]).await;
    assert_error_body(api.backend, status, &body, 413);
    // A body over the body limit.
    big.resize(MAX_BODY_BYTES + 1, 0);
    let (status, body) = upload(&api, &token, &[image_part(&big, "big.png")]).await;
    assert_error_body(api.backend, status, &body, 413);
    // Exactly at the limit it is only a matter of content: a valid PNG padded to 4 MiB.
    big.truncate(MAX_FILE_BYTES);
    let (status, body) = upload(&api, &token, &[image_part(&big, "limit.png")]).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["size"].as_u64(), Some(MAX_FILE_BYTES as u64));
}

#[tokio::test]
async fn only_employees_upload_and_the_body_is_read_after_the_check() {
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let png = samples::bytes(samples::PNG);
    let (content_type, body) = form(&[image_part(&png, "a.png")]);

    let (status, answer) = send(&api, None, &content_type, body.clone()).await;
    assert_error_body(api.backend, status, &answer, 401);

    for (role, kind) in [(GUEST, UserKind::Employee), (STAFF, UserKind::OrganizationMember)] {
        let (_, token) = api.user(role, kind).await;
        let (status, answer) = send(&api, Some(&token), &content_type, body.clone()).await;
        assert_error_body(api.backend, status, &answer, 403);
        // Not even a malformed body is looked at.
        let (status, answer) = send(&api, Some(&token), "multipart/form-data; boundary=x", b"junk".to_vec()).await;
        assert_error_body(api.backend, status, &answer, 403);
    }

    let (_, token) = api.user_in(api.workspace_id, STAFF, UserKind::Employee, &["api:read"]).await;
    let (status, answer) = send(&api, Some(&token), &content_type, body).await;
    assert_error_body(api.backend, status, &answer, 403);
}

/// A catalog product's logo (spec §4.4): `logoId` names an image uploaded to this workspace;
/// the product carries a URL that serves the image's bytes; anything else is a 400 naming the
/// field.
#[tokio::test]
async fn a_catalog_product_takes_an_uploaded_logo_and_serves_its_url() {
    each_setup(async |api| {
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let category = Uuid::new_v4();
        let seed = serde_json::json!({"version": 1, "catalogCategories": [{"id": category, "name": "Hosting"}]});
        let file = local::seed::parse(&seed.to_string()).unwrap();
        local::seed::load(api.store.as_ref(), api.workspace_id, &file).await.unwrap();
        let png = samples::bytes(samples::PNG);
        let (status, uploaded) = upload(api, &root, &[image_part(&png, "logo.png")]).await;
        assert_eq!(status, 201, "[{}] {uploaded}", api.backend);
        let body = |logo: Value| {
            serde_json::json!({"name": "Hosting", "categoryId": category, "description": "Managed hosting",
                "variants": [{"name": "S", "description": null}], "options": [], "logoId": logo})
        };

        let (status, product) =
            api.post("/administration/product-catalog?responseShape=full", &root, body(uploaded["id"].clone())).await;
        assert_eq!(status, 200, "[{}] {product}", api.backend);
        assert_eq!(product["logoId"], uploaded["id"]);
        let (status, content_type, bytes) = fetch(api, product["logoUrl"].as_str().unwrap()).await;
        assert_eq!((status, content_type.as_str(), bytes == png), (200, "image/png", true), "[{}]", api.backend);
        let (_, read) =
            api.get(&format!("/administration/product-catalog/{}", product["id"].as_str().unwrap()), &root).await;
        assert_eq!(read["logoId"], uploaded["id"]);
        assert!(read["logoUrl"].is_string(), "[{}] {read}", api.backend);

        for wrong in [serde_json::json!(Uuid::new_v4()), serde_json::json!("not-a-uuid")] {
            let (status, answer) = api.post("/administration/product-catalog", &root, body(wrong)).await;
            assert_error_body(api.backend, status, &answer, 400);
            assert!(answer["errors"]["logoId"].is_array(), "[{}] {answer}", api.backend);
        }
        let (status, plain) =
            api.post("/administration/product-catalog?responseShape=full", &root, body(Value::Null)).await;
        assert_eq!((status, &plain["logoUrl"]), (200, &Value::Null), "[{}] {plain}", api.backend);
    })
    .await;
}

/// The signed file URL is public (its signature is the credential): an anonymous wrong method
/// gets 405 like any public path, not the protected paths' 401.
#[tokio::test]
async fn the_signed_file_route_is_public_for_the_check_order() {
    let backend = backends().await.remove(0);
    let api = TestApi::start(&backend).await;
    let path = format!("/workspace/files/{}/content", Uuid::new_v4());
    let (status, _, _) = api.call(reqwest::Method::DELETE, &path, None, None).await;
    assert_eq!(status, 405);
}

/// The upload is declared idempotent (docs/conventions.md#idempotency) within its own 4 MiB body
/// limit: the same key with the same 2+ MiB form (a new multipart boundary, as a client's retry
/// draws) replays the first 201 and stores one file; another form with the key is 422.
#[tokio::test]
async fn an_idempotent_upload_of_megabytes_replays_and_stores_once() {
    each_setup(async |api| {
        let (_, token) = api.user(STAFF, UserKind::Employee).await;
        let mut big = samples::bytes(samples::PNG);
        big.resize(MAX_FILE_BYTES / 2 + 1, 0); // a valid PNG padded past 2 MiB
        let key = Uuid::new_v4().to_string();
        let send_keyed = async |bytes: &[u8]| {
            let (content_type, body) = form(&[image_part(bytes, "big.png")]);
            let response = api
                .http
                .post(api.url("/workspace/upload"))
                .bearer_auth(&token)
                .header("content-type", content_type)
                .header("idempotency-key", &key)
                .body(body)
                .send()
                .await
                .expect("the server answers");
            let status = response.status().as_u16();
            let replayed = response.headers().get("idempotent-replayed").map(|v| v.to_str().unwrap().to_owned());
            let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap_or(Value::Null);
            (status, replayed, body)
        };
        let (status, replayed, first) = send_keyed(&big).await;
        assert_eq!((status, replayed.as_deref()), (201, None), "[{}] {first}", api.backend);
        assert_eq!(first["size"].as_u64(), Some(big.len() as u64));
        let (status, replayed, again) = send_keyed(&big).await;
        assert_eq!((status, replayed.as_deref()), (201, Some("true")), "[{}] {again}", api.backend);
        assert_eq!(again, first, "[{}] the first response, byte for byte", api.backend);

        let mut other = big.clone();
        *other.last_mut().unwrap() = 1;
        let (status, _, body) = send_keyed(&other).await;
        assert_error_body(api.backend, status, &body, 422);

        // A caller without the permission still gets 403 with a key, whatever the body.
        let (_, guest) = api.user(GUEST, UserKind::Employee).await;
        let response = api
            .http
            .post(api.url("/workspace/upload"))
            .bearer_auth(&guest)
            .header("content-type", "multipart/form-data; boundary=x")
            .header("idempotency-key", &key)
            .body(b"junk".to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 403, "[{}]", api.backend);

        let keys = WsKeys::new(api.workspace_id);
        let page = api.store.query(Query::table(keys.root_pk()).begins_with("FILE#")).await.unwrap();
        assert_eq!(page.items.len(), 1, "[{}] one file stored", api.backend);
    })
    .await;
}

/// A PNG: signature, IHDR declaring `width` × `height`, then `idat` (the sample's IDAT, or none)
/// and IEND. Without IDAT it is the report's 74-byte-or-so header.
fn declared_png(width: u32, height: u32, with_idat: bool) -> Vec<u8> {
    let sample = samples::bytes(samples::PNG);
    let mut bytes = sample[..33].to_vec(); // signature and IHDR
    bytes[16..20].copy_from_slice(&width.to_be_bytes());
    bytes[20..24].copy_from_slice(&height.to_be_bytes());
    if with_idat {
        bytes.extend_from_slice(&sample[33..sample.len() - 12]);
    }
    bytes.extend_from_slice(&sample[sample.len() - 12..]); // IEND
    bytes
}

/// The pixel limits (docs/files.md): at most 10,000 a side and 25 megapixels, as the header
/// declares them; and a header without image data is refused whatever it declares.
#[tokio::test]
async fn images_over_the_pixel_limit_or_without_data_are_400() {
    let backend = backends().await.remove(0);
    let api = TestApi::start(&backend).await;
    let (_, token) = api.user(STAFF, UserKind::Employee).await;
    for (width, height) in [(10_000, 10_000), (5001, 5000), (10_001, 1)] {
        let png = declared_png(width, height, true);
        let (status, body) = upload(&api, &token, &[image_part(&png, "huge.png")]).await;
        assert_error_body(api.backend, status, &body, 400);
        let message = body["errors"]["file"][0].as_str().unwrap_or_default();
        assert!(message.contains(&format!("{width}×{height}")) && message.contains(&MAX_PIXELS.to_string()), "{body}");
    }
    let bare = declared_png(3, 2, false);
    let (status, body) = upload(&api, &token, &[image_part(&bare, "bare.png")]).await;
    assert_error_body(api.backend, status, &body, 400);
    assert!(body["errors"]["file"][0].as_str().unwrap_or_default().contains("no image data"), "{body}");
    // At the limit: 5000 × 5000 declared (the data is the sample's; it is not decoded).
    let (status, body) = upload(&api, &token, &[image_part(&declared_png(5000, 5000, true), "big.png")]).await;
    assert_eq!((status, body["width"].as_u64()), (201, Some(5000)), "{body}");
}

/// Presets the workspace's stored bytes (the counter the uploads reserve on).
async fn set_stored(api: &TestApi, bytes: u64) {
    let usage = StorageUsage { bytes: bytes as i64 };
    let key = quota::usage_key(WsKeys::new(api.workspace_id));
    api.store.delete(&key, workapi_store::Condition::None).await.unwrap();
    workapi_kit::entity::create(api.store.as_ref(), &usage, WsKeys::new(api.workspace_id), "exists", None)
        .await
        .unwrap();
}

/// The storage quota (docs/files.md#the-storage-quota) holds under concurrent uploads: with
/// room for exactly two files, of six sent at once two are stored and four get 413 naming the
/// quota; the count of stored bytes ends at the quota exactly.
#[tokio::test]
async fn concurrent_uploads_never_exceed_the_storage_quota() {
    each_setup(async |api| {
        let (_, token) = api.user(STAFF, UserKind::Employee).await;
        let quota = quota::configured_quota().unwrap();
        let png = samples::bytes(samples::PNG);
        let size = png.len() as u64;
        set_stored(api, quota - 2 * size - (size - 1)).await; // room for two, not three
        let parts = [image_part(&png, "logo.png")];
        let uploads = (0..6).map(|_| upload(api, &token, &parts));
        let answers = futures::future::join_all(uploads).await;
        let stored: Vec<_> = answers.iter().filter(|(status, _)| *status == 201).collect();
        assert_eq!(stored.len(), 2, "[{}] {answers:?}", api.backend);
        for (status, body) in answers.iter().filter(|(status, _)| *status != 201) {
            assert_error_body(api.backend, *status, body, 413);
            let why = body["errors"]["file"][0].as_str().unwrap_or_default();
            assert!(why.contains("quota of 1 GiB") || why.contains(&format!("quota of {quota}")), "{body}");
            assert!(body["message"].as_str().unwrap().contains("quota"), "{body}");
        }
        let keys = WsKeys::new(api.workspace_id);
        assert_eq!(quota::stored(api.store.as_ref(), keys).await.unwrap(), quota - (size - 1));
        let page = api.store.query(Query::table(keys.root_pk()).begins_with("FILE#")).await.unwrap();
        assert_eq!(page.items.len(), 2, "[{}] two files stored", api.backend);

        // A file larger than the room left is refused even with the counter below the quota;
        // a smaller one still fits.
        let other = identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let (_, other_token) = api.user_in(other.id, STAFF, UserKind::Employee, &["api:read", "api:write"]).await;
        let (status, body) = upload(api, &other_token, &[image_part(&png, "logo.png")]).await;
        assert_eq!(status, 201, "[{}] another workspace has its own quota: {body}", api.backend);
    })
    .await;
}

/// A reservation whose file is not stored is given back: an object store that fails leaves the
/// count as it was.
#[tokio::test]
async fn a_failed_upload_gives_its_quota_back() {
    let backend = backends().await.remove(0);
    let failing = std::sync::Arc::new(workapi_store::objects::DirectoryObjects::new("/dev/null/no-such-directory"));
    let api = TestApi::builder(&backend).objects(failing).start().await;
    let (_, token) = api.user(STAFF, UserKind::Employee).await;
    set_stored(&api, 1000).await;
    let (status, body) = upload(&api, &token, &[image_part(&samples::bytes(samples::PNG), "logo.png")]).await;
    assert_error_body(api.backend, status, &body, 500);
    assert_eq!(quota::stored(api.store.as_ref(), WsKeys::new(api.workspace_id)).await.unwrap(), 1000);
}

async fn delete_file(api: &TestApi, token: &str, id: &Value) -> (u16, Value) {
    let path = format!("/workspace/files/{}", id.as_str().expect("a file id"));
    let (status, _, body) = api.call(reqwest::Method::DELETE, &path, Some(token), None).await;
    (status, body)
}

/// Deleting an upload (docs/files.md#deleting-a-file) gives exactly its bytes back to the
/// quota, once: a second delete, and all but one of concurrent deletes, are 404 and give
/// nothing back. The bytes are gone from the object store (the URL is 404).
#[tokio::test]
async fn a_deleted_file_gives_its_bytes_back_exactly_once() {
    each_setup(async |api| {
        let b = api.backend;
        let keys = WsKeys::new(api.workspace_id);
        let stored = || quota::stored(api.store.as_ref(), keys);
        let (_, token) = api.user(STAFF, UserKind::Employee).await;
        let (png, gif) = (samples::bytes(samples::PNG), samples::bytes(samples::GIF));
        let (_, kept) = upload(api, &token, &[image_part(&png, "kept.png")]).await;
        let (status, doomed) = upload(api, &token, &[image_part(&gif, "doomed.gif")]).await;
        assert_eq!(status, 201, "[{b}] {doomed}");
        let (png_size, gif_size) = (png.len() as u64, gif.len() as u64);
        assert_ne!(png_size, gif_size, "sizes that tell the files apart");
        assert_eq!(stored().await.unwrap(), png_size + gif_size, "[{b}]");

        let (status, body) = delete_file(api, &token, &doomed["id"]).await;
        assert_eq!((status, body), (200, serde_json::json!({"success": true})), "[{b}]");
        assert_eq!(stored().await.unwrap(), png_size, "[{b}] exactly the file's bytes given back");
        let (status, _, _) = fetch(api, doomed["url"].as_str().unwrap()).await;
        assert_eq!(status, 404, "[{b}] the bytes are gone");
        let (status, _, _) = fetch(api, kept["url"].as_str().unwrap()).await;
        assert_eq!(status, 200, "[{b}] the other file stays");

        // Again (a retried delete): 404, nothing given back twice.
        let (status, body) = delete_file(api, &token, &doomed["id"]).await;
        assert_error_body(b, status, &body, 404);
        assert_eq!(stored().await.unwrap(), png_size, "[{b}]");

        // Eight deletes of one file at once: one 200, seven 404, its bytes given back once.
        let (status, raced) = upload(api, &token, &[image_part(&gif, "raced.gif")]).await;
        assert_eq!(status, 201, "[{b}] {raced}");
        let deletes = (0..8).map(|_| delete_file(api, &token, &raced["id"]));
        let mut statuses: Vec<u16> = futures::future::join_all(deletes).await.into_iter().map(|(s, _)| s).collect();
        statuses.sort();
        assert_eq!(statuses, [200, 404, 404, 404, 404, 404, 404, 404], "[{b}]");
        assert_eq!(stored().await.unwrap(), png_size, "[{b}] given back once");
        let page = api.store.query(Query::table(keys.root_pk()).begins_with("FILE#")).await.unwrap();
        assert_eq!(page.items.len(), 1, "[{b}] one record left");

        // The bytes given back are room again: a quota too full for one more file frees by
        // deleting one (the count preset to one byte short of room for it).
        let quota = quota::configured_quota().unwrap();
        set_stored(api, quota - png_size + 1).await;
        let (status, body) = upload(api, &token, &[image_part(&png, "full.png")]).await;
        assert_error_body(b, status, &body, 413);
        assert_eq!(delete_file(api, &token, &kept["id"]).await.0, 200, "[{b}]");
        let (status, body) = upload(api, &token, &[image_part(&png, "fits.png")]).await;
        assert_eq!(status, 201, "[{b}] room again: {body}");
        assert_eq!(stored().await.unwrap(), quota - png_size + 1, "[{b}] exact to the byte");
    })
    .await;
}

/// Who may delete an upload: its uploader, or a holder of `WsSettings.manageSettings` (Root);
/// no credential is 401, another staff member, a guest, a contact and a read-only token get
/// 403, another workspace's user 404; none of them changes anything.
#[tokio::test]
async fn uploads_are_deleted_by_their_uploader_or_a_settings_manager() {
    each_setup(async |api| {
        let b = api.backend;
        let keys = WsKeys::new(api.workspace_id);
        let (_, uploader) = api.user(STAFF, UserKind::Employee).await;
        let png = samples::bytes(samples::PNG);
        let (_, file) = upload(api, &uploader, &[image_part(&png, "a.png")]).await;
        let before = quota::stored(api.store.as_ref(), keys).await.unwrap();

        // Unlike its signed content URL, the file takes a bearer credential.
        let path = format!("/workspace/files/{}", file["id"].as_str().unwrap());
        let (status, _, body) = api.call(reqwest::Method::DELETE, &path, None, None).await;
        assert_error_body(b, status, &body, 401);
        let other = identity::create_workspace(api.store.as_ref(), "Other", "en").await.unwrap();
        let (_, foreign) = api.user_in(other.id, ROOT, UserKind::Employee, &["api:read", "api:write"]).await;
        let (status, body) = delete_file(api, &foreign, &file["id"]).await;
        assert_error_body(b, status, &body, 404);
        let (_, colleague) = api.user(STAFF, UserKind::Employee).await;
        let (_, guest) = api.user(GUEST, UserKind::Employee).await;
        let (_, contact) = api.user(STAFF, UserKind::OrganizationMember).await;
        let (_, read_only) = api.user_in(api.workspace_id, ROOT, UserKind::Employee, &["api:read"]).await;
        for token in [&colleague, &guest, &contact, &read_only] {
            let (status, body) = delete_file(api, token, &file["id"]).await;
            assert_error_body(b, status, &body, 403);
        }
        let (status, body) = delete_file(api, &uploader, &serde_json::json!(Uuid::new_v4())).await;
        assert_error_body(b, status, &body, 404);
        let (status, _, _) =
            api.call(reqwest::Method::DELETE, "/workspace/files/not-a-uuid", Some(&uploader), None).await;
        assert_eq!(status, 400, "[{b}]");
        let (status, _, _) = fetch(api, file["url"].as_str().unwrap()).await;
        assert_eq!(status, 200, "[{b}] still there");
        assert_eq!(quota::stored(api.store.as_ref(), keys).await.unwrap(), before, "[{b}]");

        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        assert_eq!(delete_file(api, &root, &file["id"]).await.0, 200, "[{b}] a settings manager may");
        assert_eq!(quota::stored(api.store.as_ref(), keys).await.unwrap(), before - png.len() as u64, "[{b}]");
    })
    .await;
}

/// A file that a catalog product names as its logo is not deleted (409, nothing changed); a
/// product naming a deleted file is refused (400 `logoId`).
#[tokio::test]
async fn a_logo_in_use_is_not_deleted() {
    each_setup(async |api| {
        let b = api.backend;
        let keys = WsKeys::new(api.workspace_id);
        let (_, root) = api.user(ROOT, UserKind::Employee).await;
        let category = Uuid::new_v4();
        let seed = serde_json::json!({"version": 1, "catalogCategories": [{"id": category, "name": "Hosting"}]});
        local::seed::load(api.store.as_ref(), api.workspace_id, &local::seed::parse(&seed.to_string()).unwrap())
            .await
            .unwrap();
        let product = |logo: &Value| {
            serde_json::json!({"name": format!("Hosting {}", Uuid::new_v4()), "categoryId": category,
                "description": "Managed hosting", "variants": [{"name": "S", "description": null}], "options": [],
                "logoId": logo})
        };
        let png = samples::bytes(samples::PNG);
        let (_, logo) = upload(api, &root, &[image_part(&png, "logo.png")]).await;
        for _ in 0..2 {
            let (status, created) = api.post("/administration/product-catalog", &root, product(&logo["id"])).await;
            assert_eq!(status, 200, "[{b}] {created}");
        }
        let before = quota::stored(api.store.as_ref(), keys).await.unwrap();
        let (status, body) = delete_file(api, &root, &logo["id"]).await;
        assert_error_body(b, status, &body, 409);
        assert!(body["message"].as_str().unwrap().contains("logo of 2 catalog products"), "[{b}] {body}");
        let (status, _, _) = fetch(api, logo["url"].as_str().unwrap()).await;
        assert_eq!(status, 200, "[{b}] kept");
        assert_eq!(quota::stored(api.store.as_ref(), keys).await.unwrap(), before, "[{b}]");

        // Deleted, it can no longer become a logo.
        let (_, unused) = upload(api, &root, &[image_part(&png, "unused.png")]).await;
        assert_eq!(delete_file(api, &root, &unused["id"]).await.0, 200, "[{b}]");
        let (status, body) = api.post("/administration/product-catalog", &root, product(&unused["id"])).await;
        assert_error_body(b, status, &body, 400);
        assert!(body["errors"]["logoId"].is_array(), "[{b}] {body}");
    })
    .await;
}
