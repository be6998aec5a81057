//! Uploaded files (docs/files.md): the record in the table, the bytes in the object store
//! ([`workapi_store::objects`]), and the URLs that hand them out.
//!
//! Shared so that any function can name an upload without depending on the `workspace`
//! function that accepts them: the product catalog validates `logoId` with [`find_image`] and
//! returns the logo's [`file_url`].
//!
//! URLs expire after [`URL_EXPIRY`]:
//! - on S3, a presigned GET URL of the object;
//! - on the directory backend (the local server's embedded default), a URL of the local route
//!   `GET /workspace/files/{id}/content` signed with a key derived from the token key
//!   (`workspace`, `expires`, `signature` query parameters), checked by [`verify_signed_url`].
//!
//! Neither kind of URL is ever logged: their signatures are bearer credentials for the bytes.

use crate::app::AppState;
use crate::entity::{self, Entity};
use crate::error::{ApiError, ApiResult};
use axum::http::HeaderMap;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use std::time::Duration;
use uuid::Uuid;
use workapi_store::clock;
use workapi_store::keys::WsKeys;
use workapi_store::objects::{ObjectBackend, ObjectKey, ObjectStore};
use workapi_store::{Condition, Key, Store, TxOp, Update};

/// How long a file URL stays valid. On S3 a presigned URL also dies with the temporary
/// credentials that signed it (a Lambda role's session), which may be sooner.
pub const URL_EXPIRY: Duration = Duration::from_secs(3600);

/// The local route that serves a file's bytes at a signed URL (directory backend only).
pub const CONTENT_PATH: &str = "/workspace/files/{id}/content";

/// The image formats an upload may have, recognised by content, never by a declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub enum ImageType {
    #[serde(rename = "image/png")]
    Png,
    #[serde(rename = "image/jpeg")]
    Jpeg,
    #[serde(rename = "image/webp")]
    Webp,
    #[serde(rename = "image/gif")]
    Gif,
}

impl ImageType {
    /// The media type the bytes are stored and served with.
    pub fn content_type(self) -> &'static str {
        match self {
            ImageType::Png => "image/png",
            ImageType::Jpeg => "image/jpeg",
            ImageType::Webp => "image/webp",
            ImageType::Gif => "image/gif",
        }
    }

    /// The file name extension of the format.
    pub fn extension(self) -> &'static str {
        match self {
            ImageType::Png => "png",
            ImageType::Jpeg => "jpg",
            ImageType::Webp => "webp",
            ImageType::Gif => "gif",
        }
    }
}

/// An uploaded file as stored in the table: `WS#<ws>` / `FILE#<fileId>` (docs/data-model.md).
/// Its bytes are the object `files/<ws>/<fileId>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileRecord {
    pub id: Uuid,
    pub workspace_id: Uuid,
    pub content_type: ImageType,
    /// Pixels, read from the image header.
    pub width: u32,
    pub height: u32,
    /// Bytes.
    pub size: u64,
    pub created_at: String,
    pub created_by: Uuid,
    /// How many catalog products name it as their logo: added in each product's create
    /// transaction ([`use_as_logo`]); a file in use cannot be deleted (docs/files.md).
    #[serde(default)]
    pub logo_uses: i64,
}

/// The attribute of [`FileRecord::logo_uses`].
pub const LOGO_USES: &str = "logoUses";

impl Entity for FileRecord {
    const TYPE: &'static str = "File";
    const PREFIX: &'static str = "FILE#";
    type Scope = WsKeys;

    fn key(&self, keys: WsKeys) -> Key {
        file_key(keys, self.id)
    }
}

impl FileRecord {
    /// The `Content-Disposition` the bytes are served with: shown in place (`inline`), and
    /// saved, if the user saves them, as `<fileId>.<extension of the recognised format>`. The
    /// uploaded file name is never used: it is the client's text (quotes, paths, control
    /// characters), and an id with a known extension needs no escaping.
    pub fn content_disposition(&self) -> String {
        format!("inline; filename=\"{}.{}\"", self.id, self.content_type.extension())
    }
}

/// The table key of a file of the workspace.
pub fn file_key(keys: WsKeys, id: Uuid) -> Key {
    keys.root(format!("{}{id}", FileRecord::PREFIX))
}

/// The write that records one more product naming the file as its logo, for the product's
/// create transaction: it fails when the file is gone (deleted since it was checked), so no
/// product is ever created naming a deleted file, and no file named by a product is deleted.
pub fn use_as_logo(keys: WsKeys, id: Uuid) -> TxOp {
    TxOp::Update { key: file_key(keys, id), update: Update::default().add(LOGO_USES, 1), cond: Condition::Exists }
}

/// The object key of a file's bytes: `files/<ws>/<fileId>`, typed ids only.
pub fn object_key(workspace_id: Uuid, id: Uuid) -> ObjectKey {
    ObjectKey::new(format!("files/{workspace_id}/{id}")).expect("UUIDs make a valid object key")
}

fn objects(state: &AppState) -> ApiResult<&dyn ObjectStore> {
    state.objects().ok_or_else(|| ApiError::internal("this function has no object store for files (FILES_BUCKET)"))
}

/// The image `id` uploaded in the workspace of `keys`; None when there is none (another
/// workspace's file included: its key is not reachable from `keys`).
pub async fn find_image(store: &dyn Store, keys: WsKeys, id: Uuid) -> ApiResult<Option<FileRecord>> {
    let record: Option<FileRecord> = entity::get(store, &file_key(keys, id)).await?;
    Ok(record.filter(|r| r.workspace_id == keys.workspace_id()))
}

/// Stores a new file: the bytes first, then the record, so a record never names missing bytes.
/// The record's write carries the request's idempotency completion, if any (`entity::create`).
/// When the record cannot be written and is certainly absent, the bytes are deleted again (best
/// effort: when the store cannot even say, or S3 fails too, an unreferenced object may stay;
/// docs/reliability.md). Bytes whose record may exist are never deleted.
pub async fn save(
    state: &AppState,
    keys: WsKeys,
    record: &FileRecord,
    bytes: Vec<u8>,
    completion: Option<&entity::Completion>,
) -> ApiResult<()> {
    if record.workspace_id != keys.workspace_id() {
        return Err(ApiError::internal("a file record names another workspace"));
    }
    let key = object_key(record.workspace_id, record.id);
    let disposition = record.content_disposition();
    let objects = objects(state)?;
    objects.put(&key, bytes, record.content_type.content_type(), &disposition).await?;
    let created = entity::create(state.store(), record, keys, "A file with this id exists already", completion).await;
    if created.is_err()
        && let Ok(None) = state.store().get(&file_key(keys, record.id)).await
        && let Err(e) = objects.delete(&key).await
    {
        tracing::warn!(error = %e, file = %record.id, "could not delete the bytes of a file whose record failed");
    }
    Ok(created?)
}

/// Deletes the bytes of a file whose record was deleted. A failure is logged, not returned: the
/// record is gone, so the object is unreachable (no URL is issued for it, and the local route
/// answers 404) and no longer counted; it stays in the bucket until removed by hand
/// (docs/files.md#deleting-a-file). Presigned S3 URLs issued before work until the object is gone.
pub async fn delete_bytes(state: &AppState, file: &FileRecord) {
    let deleted = match objects(state) {
        Ok(objects) => objects.delete(&object_key(file.workspace_id, file.id)).await.map_err(|e| e.to_string()),
        Err(e) => Err(e.message),
    };
    if let Err(error) = deleted {
        tracing::warn!(%error, file = %file.id, workspace = %file.workspace_id, "the bytes of a deleted file stay in the object store");
    }
}

/// A URL that fetches a file's bytes without credentials, and when it stops working.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileUrl {
    pub url: String,
    /// RFC 3339.
    pub expires_at: String,
}

/// The file's URL, valid for [`URL_EXPIRY`]: presigned on S3; on the directory backend the
/// signed local route, absolute under the site URL (`AppState::site_url`: configured, else the
/// request's `Host`).
pub async fn file_url(state: &AppState, headers: &HeaderMap, file: &FileRecord) -> ApiResult<FileUrl> {
    let now = clock::now_epoch();
    let expires = now + URL_EXPIRY.as_secs() as i64;
    let expires_at = clock::rfc3339(
        time::OffsetDateTime::from_unix_timestamp(expires).map_err(|e| ApiError::internal(format!("expiry: {e}")))?,
    );
    let objects = objects(state)?;
    let url = match objects.backend() {
        ObjectBackend::S3 => objects
            .presigned_get(&object_key(file.workspace_id, file.id), URL_EXPIRY)
            .await?
            .ok_or_else(|| ApiError::internal("the S3 object store did not presign"))?,
        ObjectBackend::Directory => {
            let signature = sign(state, file.workspace_id, file.id, expires).await?;
            format!(
                "{}{}?workspace={}&expires={expires}&signature={signature}",
                state.site_url().of(headers),
                CONTENT_PATH.replace("{id}", &file.id.to_string()),
                file.workspace_id
            )
        }
    };
    Ok(FileUrl { url, expires_at })
}

async fn mac(state: &AppState, workspace_id: Uuid, id: Uuid, expires: i64) -> ApiResult<Hmac<Sha256>> {
    let key = state.token_key().await?.derive("file-url");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("HMAC takes any key length");
    mac.update(format!("{workspace_id}/{id}/{expires}").as_bytes());
    Ok(mac)
}

async fn sign(state: &AppState, workspace_id: Uuid, id: Uuid, expires: i64) -> ApiResult<String> {
    let tag = mac(state, workspace_id, id, expires).await?.finalize().into_bytes();
    Ok(tag.iter().map(|b| format!("{b:02x}")).collect())
}

/// Checks a signed local URL's parameters (constant-time); a wrong signature or a past expiry
/// is 403, told apart only in the message.
pub async fn verify_signed_url(
    state: &AppState,
    workspace_id: Uuid,
    id: Uuid,
    expires: i64,
    signature: &str,
) -> ApiResult<()> {
    let forbidden = || ApiError::forbidden("Invalid file URL signature");
    let bytes = decode_hex(signature).ok_or_else(forbidden)?;
    mac(state, workspace_id, id, expires).await?.verify_slice(&bytes).map_err(|_| forbidden())?;
    if expires < clock::now_epoch() {
        return Err(ApiError::forbidden("The file URL has expired"));
    }
    Ok(())
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

/// A file of the workspace with its bytes, for the local content route.
pub async fn read(state: &AppState, keys: WsKeys, id: Uuid) -> ApiResult<Option<(FileRecord, Vec<u8>)>> {
    let Some(record) = find_image(state.store(), keys, id).await? else { return Ok(None) };
    let bytes = objects(state)?.get(&object_key(record.workspace_id, record.id)).await?;
    Ok(bytes.map(|bytes| (record, bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_signatures_are_64_hex_characters() {
        assert_eq!(decode_hex(&"ab".repeat(32)).map(|b| b.len()), Some(32));
        assert_eq!(decode_hex(&"ab".repeat(31)), None);
        assert_eq!(decode_hex(&"zz".repeat(32)), None);
        assert_eq!(decode_hex(&"é".repeat(32)), None);
    }

    #[test]
    fn object_keys_name_workspace_and_file() {
        let (ws, id) = (Uuid::new_v4(), Uuid::new_v4());
        assert_eq!(object_key(ws, id).as_str(), format!("files/{ws}/{id}"));
    }

    #[test]
    fn image_types_serialise_as_media_types() {
        for t in [ImageType::Png, ImageType::Jpeg, ImageType::Webp, ImageType::Gif] {
            assert_eq!(serde_json::to_value(t).unwrap(), t.content_type());
        }
    }
}
