//! The `workspace` function: image uploads (spec §4.13, `POST /workspace/upload`; docs/files.md),
//! their deletion (`DELETE /workspace/files/{id}`, which frees their quota) and, on the embedded
//! default, the signed local URL that serves an upload's bytes.
//!
//! The records, object keys and URLs are `workapi_kit::files`, so other functions (the product
//! catalog's `logoId`) use uploads without depending on this crate.

mod delete;
mod form;
pub mod image;
pub mod quota;
mod structure;

use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use form::Form;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;
use workapi_domain::permissions::{Requirement, key};
use workapi_kit::entity::Entity;
use workapi_kit::events::{Emits, Event, types};
use workapi_kit::files::{self, FileRecord, ImageType};
use workapi_kit::function::{Function, Grant, Needs, Resource, Route, Variable};
use workapi_kit::idempotency::{Answer, Idempotency, idempotent};
use workapi_kit::openapi::ApiTag;
use workapi_kit::request::Path;
use workapi_kit::{ApiError, ApiResult, AppState, Caller};
use workapi_store::clock;
use workapi_store::objects::ObjectBackend;

pub const FUNCTION: Function = Function {
    name: "workspace",
    prefixes: &["/workspace"],
    tags: &[ApiTag {
        name: "workspace",
        description: "Workspace files: upload an image (PNG, JPEG, WebP or GIF) whose id serves as a logoId, \
                      and delete it",
    }],
    api,
    entities: &[FileRecord::KIND, quota::StorageUsage::KIND],
    emits: &[
        Emits { operation: "uploadFile", events: &[types::FILE_UPLOADED] },
        Emits { operation: "deleteFile", events: &[types::FILE_DELETED] },
    ],
    needs: Needs {
        summary: "image uploads",
        routes: &[Route::new("Workspace", "/workspace/{proxy+}")],
        grants: &[Grant {
            sid: "WriteAndPresignUploadedFiles",
            actions: &["s3:PutObject", "s3:GetObject", "s3:DeleteObject"],
            on: Resource::UploadedFiles,
            note: "Writes uploads, presigns their URLs and deletes deleted uploads' bytes; nothing\n\
                   else of the bucket (no list).",
        }],
        environment: &[Variable { name: quota::QUOTA_ENV, value: "!Ref FilesQuotaBytes" }],
        ..Needs::DATA
    },
};

/// The form part that carries the image.
pub const FILE_FIELD: &str = "file";

/// Who may upload: employees of the workspace (not guests, not customer contacts), whatever
/// their role otherwise allows (docs/files.md).
pub const UPLOAD_REQUIREMENT: Requirement = Requirement::Employee;

/// `idempotent(…)`: the upload creates (Idempotency-Key, docs/conventions.md); the layer reads
/// the body within the route's own limit below.
/// Schemas only events name (docs/events.md).
#[derive(utoipa::OpenApi)]
#[openapi(components(schemas(StoredFile)))]
struct EventSchemas;

fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(<EventSchemas as utoipa::OpenApi>::openapi())
        .routes(idempotent(routes!(upload)))
        // The upload's own body limit (the file plus framing), instead of the API's 1 MiB.
        .layer(DefaultBodyLimit::max(image::MAX_BODY_BYTES))
        .routes(routes!(file_content))
        .routes(routes!(delete_file))
}

/// The upload form (multipart/form-data)
#[derive(ToSchema)]
// The example is a real image, a 1×1 GIF whose bytes are all ASCII (no colour table), so that
// the JSON document carries them as they are and a client sending the example uploads an image.
#[schema(examples(json!({"file": "GIF89a\x01\x00\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"})))]
#[allow(dead_code)] // documents the form; the handler reads the parts itself
#[serde(deny_unknown_fields)] // `additionalProperties: false`: any part but `file` is a 400
struct UploadForm {
    /// The image, at most 4 MiB, 10,000 pixels a side and 25 megapixels: PNG, JPEG, WebP or GIF,
    /// recognised by its content (the part's declared type and file name are ignored). SVG is
    /// refused.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// An uploaded image
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(examples(json!({
    "id": "6d3b2f0e-1c4a-4e8b-9f2d-3a5b7c9d1e20",
    "contentType": "image/png",
    "width": 512,
    "height": 256,
    "size": 18342,
    "createdAt": "2026-11-24T02:00:00Z",
    "url": "https://workapi-files.s3.eu-central-1.amazonaws.com/files/…?X-Amz-Expires=3600&…",
    "urlExpiresAt": "2026-11-24T03:00:00Z"
})))]
pub struct UploadedFile {
    /// The file id: use it as `logoId`
    pub id: Uuid,
    /// The format recognised from the content
    pub content_type: ImageType,
    /// Pixels
    pub width: u32,
    /// Pixels
    pub height: u32,
    /// Bytes
    pub size: u64,
    #[schema(format = DateTime)]
    pub created_at: String,
    /// Fetches the bytes without credentials until `urlExpiresAt` (one hour): a presigned S3
    /// URL, or the signed local URL on the embedded default
    pub url: String,
    #[schema(format = DateTime)]
    pub url_expires_at: String,
}

/// An uploaded file as its events carry it: without a URL, which expires within the hour (or
/// dies with a deleted file) while an event is kept 30 days; a read gives a fresh one.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredFile {
    pub id: Uuid,
    pub content_type: ImageType,
    /// Pixels
    pub width: u32,
    /// Pixels
    pub height: u32,
    /// Bytes
    pub size: u64,
    #[schema(format = DateTime)]
    pub created_at: String,
    /// The uploader
    pub created_by: Uuid,
}

impl From<&FileRecord> for StoredFile {
    fn from(record: &FileRecord) -> Self {
        StoredFile {
            id: record.id,
            content_type: record.content_type,
            width: record.width,
            height: record.height,
            size: record.size,
            created_at: record.created_at.clone(),
            created_by: record.created_by,
        }
    }
}

/// Upload an image
///
/// Stores one image, sent as the part `file` of a `multipart/form-data` body, and returns its
/// id (the `logoId` of catalog products) with a URL that fetches it for an hour. PNG, JPEG,
/// WebP and GIF are recognised by their content, whatever the declared type or file name; SVG,
/// anything else, a file cut short or without image data, and more than 10,000 pixels a side or
/// 25 megapixels are refused with 400. At most 4 MiB (413 above), within the workspace's storage
/// quota (1 GiB by default; 413 naming it when full). Needs an employee of the workspace.
#[utoipa::path(post, path = "/workspace/upload", operation_id = "uploadFile", tag = "workspace",
    request_body(content((UploadForm = "multipart/form-data",
            encoding(("file" = (content_type = "image/png, image/jpeg, image/webp, image/gif"))))),
        description = "One part, `file`, holding the image"),
    responses((status = 201, description = "The stored image", body = UploadedFile)))]
async fn upload(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    idempotency: Idempotency,
    form: Form,
) -> ApiResult<Answer> {
    let permit = caller.authorize(UPLOAD_REQUIREMENT)?;
    let bytes = form.single_file(&permit, FILE_FIELD, image::MAX_FILE_BYTES).await?;
    let image = image::recognise(&bytes).map_err(|refusal| ApiError::field(FILE_FIELD, refusal.to_string()))?;
    let record = FileRecord {
        id: Uuid::new_v4(),
        workspace_id: caller.workspace_id,
        content_type: image.format,
        width: image.width,
        height: image.height,
        size: bytes.len() as u64,
        created_at: clock::now_rfc3339(),
        created_by: caller.user.id,
        logo_uses: 0,
    };
    // The answer before anything is written (the URL is presigned or signed, it needs no
    // object), so the file record's put records it (the idempotency completion).
    let url = files::file_url(&state, &headers, &record).await?;
    let uploaded = UploadedFile {
        id: record.id,
        content_type: record.content_type,
        width: record.width,
        height: record.height,
        size: record.size,
        created_at: record.created_at.clone(),
        url: url.url,
        url_expires_at: url.expires_at,
    };
    let event = Event::new(&caller, types::FILE_UPLOADED, record.id).op(&StoredFile::from(&record))?;
    let answer = idempotency.answer(StatusCode::CREATED, None, &uploaded)?.with_event(event);
    // The quota's bytes are reserved before anything is written, and given back if the file is
    // not stored (docs/files.md#the-storage-quota).
    let quota = quota::configured_quota()?;
    quota::reserve(state.store(), caller.keys(), FILE_FIELD, record.size, quota).await?;
    if let Err(e) = files::save(&state, caller.keys(), &record, bytes, answer.completion()).await {
        quota::release(state.store(), caller.keys(), record.size).await;
        return Err(e);
    }
    Ok(answer)
}

/// Who may delete another user's upload, besides its uploader: the workspace's settings
/// managers (the storage quota is a workspace setting; docs/files.md#deleting-a-file).
pub const DELETE_OTHERS_REQUIREMENT: Requirement = Requirement::Permission(key::WS_SETTINGS_MANAGE_SETTINGS);

/// Delete an uploaded image
///
/// Deletes an upload and gives its bytes back to the workspace's storage quota. Its uploader
/// may delete it, and so may holders of `WsSettings.manageSettings`; guests and contacts may
/// not. A file that a catalog product names as its logo is refused with 409. Deleting it again
/// is 404: the bytes are given back once.
#[utoipa::path(delete, path = "/workspace/files/{id}", operation_id = "deleteFile", tag = "workspace",
    params(FilePath),
    responses((status = 200, description = "Deleted; its bytes no longer count against the quota",
        body = workapi_kit::http::Success, example = json!({"success": true}))))]
async fn delete_file(
    State(state): State<AppState>,
    caller: Caller,
    Path(path): Path<FilePath>,
) -> ApiResult<axum::Json<workapi_kit::http::Success>> {
    caller.authorize(UPLOAD_REQUIREMENT)?;
    let file = files::find_image(state.store(), caller.keys(), path.id)
        .await?
        .ok_or_else(|| ApiError::not_found("File not found"))?;
    if file.created_by != caller.user.id {
        caller.authorize(DELETE_OTHERS_REQUIREMENT)?;
    }
    let event = Event::new(&caller, types::FILE_DELETED, file.id).op(&StoredFile::from(&file))?;
    delete::delete(&state, caller.keys(), &file, event).await?;
    Ok(axum::Json(workapi_kit::http::Success { success: true }))
}

/// An image's bytes
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)] // documents the response body
struct ImageBytes(Vec<u8>);

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct FilePath {
    /// File id
    #[param(example = "6d3b2f0e-1c4a-4e8b-9f2d-3a5b7c9d1e20")]
    id: Uuid,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct Signed {
    /// The file's workspace
    #[param(example = "0b7e4c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d")]
    workspace: Uuid,
    /// Expiry, epoch seconds
    #[param(example = 1795000000)]
    expires: i64,
    /// HMAC-SHA256 of the other parameters, hex
    #[param(example = "3f1c0a9e8d7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a19")]
    signature: String,
}

/// The type a file is served as: its own, unless `Accept` names `application/octet-stream` and
/// not the file's type (nor `image/*`).
fn served_type(accept: Option<&HeaderValue>, own: &'static str) -> &'static str {
    const BYTES: &str = "application/octet-stream";
    let ranges: Vec<String> = accept
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .split(',')
        .map(|r| r.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
        .collect();
    let names = |wanted: &str| ranges.iter().any(|r| r == wanted);
    if names(BYTES) && !names(own) && !names("image/*") { BYTES } else { own }
}

/// Fetch an uploaded image (local URL)
///
/// Serves the bytes of an upload at the signed, expiring URL that the upload (and the catalog's
/// logo) returns on the embedded default store. Deployments keep files in S3 and hand out
/// presigned S3 URLs instead; there this route answers 404. The bytes come with the image's
/// own type, or as `application/octet-stream` when `Accept` names that and not the image's type
/// (for clients that download any file the same way).
#[utoipa::path(get, path = "/workspace/files/{id}/content", operation_id = "getFileContent", tag = "workspace",
    params(FilePath, Signed),
    responses(
        (status = 200, description = "The image's bytes", content(
            (ImageBytes = "image/png", example = json!("(PNG bytes)")),
            (ImageBytes = "image/jpeg", example = json!("(JPEG bytes)")),
            (ImageBytes = "image/webp", example = json!("(WebP bytes)")),
            (ImageBytes = "image/gif", example = json!("(GIF bytes)")),
            (ImageBytes = "application/octet-stream", example = json!("(the image's bytes)"))),
            headers(("Content-Disposition" = String,
                description = "`inline; filename=\"<id>.<png|jpg|webp|gif>\"`: shown in place, saved under the file's id")))),
    // No bearer credential: the signature is the credential (403 when wrong or expired).
    security(()))]
async fn file_content(
    State(state): State<AppState>,
    request_headers: axum::http::HeaderMap,
    Path(path): Path<FilePath>,
    query: Result<Query<Signed>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Response> {
    let Query(signed) = query.map_err(|e| ApiError::field("query", format!("Invalid query: {}", e.body_text())))?;
    if state.objects().map(|o| o.backend()) != Some(ObjectBackend::Directory) {
        return Err(ApiError::not_found("Files are served at presigned S3 URLs here"));
    }
    files::verify_signed_url(&state, signed.workspace, path.id, signed.expires, &signed.signature).await?;
    let keys = workapi_store::keys::WsKeys::new(signed.workspace);
    let (record, bytes) =
        files::read(&state, keys, path.id).await?.ok_or_else(|| ApiError::not_found("File not found"))?;
    let max_age = (signed.expires - clock::now_epoch()).max(0);
    let mut response = bytes.into_response();
    let headers = response.headers_mut();
    let served_as = served_type(request_headers.get(header::ACCEPT), record.content_type.content_type());
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(served_as));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if let Ok(disposition) = HeaderValue::from_str(&record.content_disposition()) {
        headers.insert(header::CONTENT_DISPOSITION, disposition);
    }
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("default-src 'none'; sandbox"));
    if let Ok(cache) = HeaderValue::from_str(&format!("private, max-age={max_age}")) {
        headers.insert(header::CACHE_CONTROL, cache);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octet_stream_only_when_asked_for_and_the_image_type_is_not() {
        let accept = |v: &'static str| HeaderValue::from_static(v);
        assert_eq!(served_type(None, "image/png"), "image/png");
        assert_eq!(served_type(Some(&accept("*/*")), "image/png"), "image/png");
        assert_eq!(served_type(Some(&accept("application/octet-stream")), "image/png"), "application/octet-stream");
        assert_eq!(served_type(Some(&accept("application/octet-stream, image/png")), "image/png"), "image/png");
        assert_eq!(served_type(Some(&accept("image/*, application/octet-stream;q=0.5")), "image/gif"), "image/gif");
    }
}
