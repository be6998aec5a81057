//! Object storage for uploaded files' bytes (docs/files.md): one trait, two backends, chosen
//! like the table store by a spec string (`dir:<directory>` or `s3:<bucket>`).
//!
//! - [`DirectoryObjects`]: a directory on disk, the embedded default of the local server
//!   (`<data dir>/files`). It cannot presign; the local server serves its objects itself at a
//!   signed URL (`workapi_kit::files`).
//! - `S3Objects` ([`super::s3`], cargo feature `s3`): an S3 bucket; reads are handed out as
//!   presigned GET URLs. Its client is built on first use, so a function that never touches a
//!   file never loads it.
//!
//! Object keys are built by `workapi_kit::files` from typed ids only (`files/<workspace>/<file>`);
//! [`ObjectKey`] refuses anything else, so no key can climb out of the directory.

use async_trait::async_trait;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The key of an object: `/`-separated segments of ASCII letters, digits and `-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectKey(String);

impl ObjectKey {
    /// None unless every segment is non-empty and made of `[A-Za-z0-9-]`.
    pub fn new(key: impl Into<String>) -> Option<ObjectKey> {
        let key = key.into();
        let valid = !key.is_empty()
            && key.split('/').all(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
        valid.then_some(ObjectKey(key))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    /// The backend failed; the message never contains credentials or presigned URLs.
    #[error("object store: {0}")]
    Backend(String),
    /// The backend could not answer beyond the client's retries (timeout, reset, 5xx,
    /// throttling): a dependency outage, 503.
    #[error("object store unavailable: {0}")]
    Unavailable(String),
}

pub type ObjectResult<T> = Result<T, ObjectError>;

/// Which kind of backend holds the objects: decides how a file's URL is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectBackend {
    Directory,
    S3,
}

#[async_trait]
pub trait ObjectStore: Send + Sync {
    fn backend(&self) -> ObjectBackend;

    /// Stores the object, replacing any object of the same key. On S3 the type and the
    /// `Content-Disposition` are the object's metadata, served with it at presigned URLs; the
    /// directory keeps bytes only (its route serves the headers from the file's record).
    async fn put(
        &self,
        key: &ObjectKey,
        bytes: Vec<u8>,
        content_type: &str,
        content_disposition: &str,
    ) -> ObjectResult<()>;

    /// The object's bytes, None when absent.
    async fn get(&self, key: &ObjectKey) -> ObjectResult<Option<Vec<u8>>>;

    /// Removes the object; an absent object is no error.
    async fn delete(&self, key: &ObjectKey) -> ObjectResult<()>;

    /// A URL that GETs the object without other credentials until `expires_in` has passed;
    /// None when the backend cannot presign (the directory: the local server signs its own).
    async fn presigned_get(&self, key: &ObjectKey, expires_in: Duration) -> ObjectResult<Option<String>>;
}

/// Objects as files under a directory (created on first write), one file per key.
pub struct DirectoryObjects {
    root: PathBuf,
}

impl DirectoryObjects {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DirectoryObjects { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, key: &ObjectKey) -> PathBuf {
        // Segments are `[A-Za-z0-9-]+` (ObjectKey): never `..`, never absolute.
        key.as_str().split('/').fold(self.root.clone(), |path, segment| path.join(segment))
    }
}

#[async_trait]
impl ObjectStore for DirectoryObjects {
    fn backend(&self) -> ObjectBackend {
        ObjectBackend::Directory
    }

    async fn put(&self, key: &ObjectKey, bytes: Vec<u8>, _content_type: &str, _disposition: &str) -> ObjectResult<()> {
        let path = self.path(key);
        tokio::task::spawn_blocking(move || write_atomically(&path, &bytes))
            .await
            .map_err(|e| ObjectError::Backend(e.to_string()))?
            .map_err(|e| ObjectError::Backend(format!("writing an object: {e}")))
    }

    async fn get(&self, key: &ObjectKey) -> ObjectResult<Option<Vec<u8>>> {
        let path = self.path(key);
        let read = tokio::task::spawn_blocking(move || std::fs::read(path))
            .await
            .map_err(|e| ObjectError::Backend(e.to_string()))?;
        match read {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ObjectError::Backend(format!("reading an object: {e}"))),
        }
    }

    async fn presigned_get(&self, _key: &ObjectKey, _expires_in: Duration) -> ObjectResult<Option<String>> {
        Ok(None)
    }

    async fn delete(&self, key: &ObjectKey) -> ObjectResult<()> {
        let path = self.path(key);
        let removed = tokio::task::spawn_blocking(move || std::fs::remove_file(path))
            .await
            .map_err(|e| ObjectError::Backend(e.to_string()))?;
        match removed {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(ObjectError::Backend(format!("deleting an object: {e}"))),
        }
    }
}

/// Writes to a temporary file beside the target, then renames it: a reader sees the whole
/// object or none.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().ok_or_else(|| std::io::Error::other("an object path has a parent"))?;
    std::fs::create_dir_all(dir)?;
    let temporary = dir.join(format!(".{}.tmp", uuid::Uuid::new_v4().simple()));
    let mut file = std::fs::File::create(&temporary)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    match written.and_then(|()| std::fs::rename(&temporary, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&temporary);
            Err(e)
        }
    }
}

/// Opens an object store from its spec: `dir:<directory>` or `s3:<bucket>` (needs the cargo
/// feature `s3`; endpoint, region and credentials from the AWS SDK's usual settings, the
/// client built on first use).
pub fn open_objects(spec: &str) -> Result<Arc<dyn ObjectStore>, String> {
    match spec.split_once(':') {
        Some(("dir", path)) if !path.is_empty() => Ok(Arc::new(DirectoryObjects::new(path))),
        #[cfg(feature = "s3")]
        Some(("s3", bucket)) if !bucket.is_empty() => Ok(Arc::new(super::s3::S3Objects::from_env(bucket))),
        #[cfg(not(feature = "s3"))]
        Some(("s3", _)) => Err("an s3: object store needs the `s3` feature of the shared crate".into()),
        _ => Err(format!("an object store is dir:<directory> or s3:<bucket>, not {spec:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_keys_are_plain_segments() {
        for good in ["files/ws/1", "a", "a-b/C9"] {
            assert!(ObjectKey::new(good).is_some(), "{good}");
        }
        for bad in ["", "/a", "a/", "a//b", "../a", "a/../b", "a/.", "a b", "a\\b", "a/ü", "a.png"] {
            assert!(ObjectKey::new(bad).is_none(), "{bad}");
        }
    }

    #[tokio::test]
    async fn the_directory_round_trips_and_misses_cleanly() {
        let root = std::env::temp_dir().join(format!("workapi-objects-{}", uuid::Uuid::new_v4().simple()));
        let objects = DirectoryObjects::new(&root);
        let key = ObjectKey::new("files/ws/one").unwrap();
        assert_eq!(objects.get(&key).await.unwrap(), None);
        objects.put(&key, b"first".to_vec(), "image/png", "inline").await.unwrap();
        objects.put(&key, b"second".to_vec(), "image/png", "inline").await.unwrap();
        assert_eq!(objects.get(&key).await.unwrap().as_deref(), Some(&b"second"[..]));
        assert_eq!(objects.presigned_get(&key, Duration::from_secs(60)).await.unwrap(), None);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn specs_name_a_backend() {
        assert_eq!(open_objects("dir:/tmp/x").unwrap().backend(), ObjectBackend::Directory);
        assert!(open_objects("dir:").is_err());
        assert!(open_objects("ftp:x").is_err());
        assert!(open_objects("s3:").is_err());
    }
}
