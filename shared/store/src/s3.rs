//! Objects in an S3 bucket (cargo feature `s3`): the deployed backend of uploaded files.
//!
//! The client is built on first use and kept for the container's life, so a function that
//! never touches a file never loads the S3 configuration (cold starts stay as they are). The
//! endpoint, region and credentials follow the SDK's own settings (`AWS_ENDPOINT_URL_S3` for
//! moto); `LT_S3_PATH_STYLE=true` selects path-style addressing, which moto and other local
//! S3 servers need. Presigned URLs carry a signature: they are returned, never logged, and
//! errors never contain one.

use super::objects::{ObjectBackend, ObjectError, ObjectKey, ObjectResult, ObjectStore};
use async_trait::async_trait;
use aws_sdk_s3::Client;
use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;
use std::time::Duration;
use tokio::sync::OnceCell;

pub struct S3Objects {
    bucket: String,
    client: OnceCell<Client>,
}

impl S3Objects {
    /// The bucket through a client given now (tests: moto with path-style addressing).
    pub fn new(client: Client, bucket: impl Into<String>) -> Self {
        S3Objects { bucket: bucket.into(), client: OnceCell::new_with(Some(client)) }
    }

    /// The bucket through a client built from the environment on first use.
    pub fn from_env(bucket: impl Into<String>) -> Self {
        S3Objects { bucket: bucket.into(), client: OnceCell::new() }
    }

    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    async fn client(&self) -> &Client {
        self.client
            .get_or_init(|| async {
                let config = crate::aws::sdk_config().await;
                let path_style = std::env::var("LT_S3_PATH_STYLE").is_ok_and(|v| v == "true" || v == "1");
                Client::from_conf(aws_sdk_s3::config::Builder::from(config).force_path_style(path_style).build())
            })
            .await
    }
}

fn backend_error(what: &str, e: impl std::error::Error) -> ObjectError {
    ObjectError::Backend(format!("{what}: {}", DisplayErrorContext(e)))
}

/// A failed call: unavailable when S3 could not answer ([`crate::aws::is_transient`]: 503),
/// else a backend error (500).
fn call_error<E: ProvideErrorMetadata + std::error::Error + 'static>(
    what: &str,
    e: SdkError<E, HttpResponse>,
) -> ObjectError {
    if crate::aws::is_transient(&e) {
        ObjectError::Unavailable(format!("{what}: {}", DisplayErrorContext(e)))
    } else {
        backend_error(what, e)
    }
}

#[async_trait]
impl ObjectStore for S3Objects {
    fn backend(&self) -> ObjectBackend {
        ObjectBackend::S3
    }

    async fn put(
        &self,
        key: &ObjectKey,
        bytes: Vec<u8>,
        content_type: &str,
        content_disposition: &str,
    ) -> ObjectResult<()> {
        self.client()
            .await
            .put_object()
            .bucket(&self.bucket)
            .key(key.as_str())
            .content_type(content_type)
            .content_disposition(content_disposition)
            .body(ByteStream::from(bytes))
            .send()
            .await
            .map_err(|e| call_error("S3 PutObject", e))?;
        Ok(())
    }

    async fn get(&self, key: &ObjectKey) -> ObjectResult<Option<Vec<u8>>> {
        let sent = self.client().await.get_object().bucket(&self.bucket).key(key.as_str()).send().await;
        let output = match sent {
            Ok(output) => output,
            Err(e) if e.as_service_error().is_some_and(|s| s.is_no_such_key()) => return Ok(None),
            Err(e) => return Err(call_error("S3 GetObject", e)),
        };
        // A body cut or reset mid-way is the service failing, not our request.
        let bytes = output
            .body
            .collect()
            .await
            .map_err(|e| ObjectError::Unavailable(format!("S3 GetObject body: {}", DisplayErrorContext(e))))?;
        Ok(Some(bytes.into_bytes().to_vec()))
    }

    async fn delete(&self, key: &ObjectKey) -> ObjectResult<()> {
        let sent = self.client().await.delete_object().bucket(&self.bucket).key(key.as_str()).send().await;
        sent.map(|_| ()).map_err(|e| call_error("S3 DeleteObject", e))
    }

    async fn presigned_get(&self, key: &ObjectKey, expires_in: Duration) -> ObjectResult<Option<String>> {
        let config = PresigningConfig::expires_in(expires_in).map_err(|e| backend_error("presigning", e))?;
        let request = self
            .client()
            .await
            .get_object()
            .bucket(&self.bucket)
            .key(key.as_str())
            .presigned(config)
            .await
            .map_err(|e| backend_error("presigning S3 GetObject", e))?;
        Ok(Some(request.uri().to_owned()))
    }
}
