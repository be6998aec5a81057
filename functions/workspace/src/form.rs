//! The multipart counterpart of `workapi_kit::request::Body`: the request is taken by the extractor
//! and its form is parsed only with the `Permit` of the permission check, so the check order of
//! docs/conventions.md holds (authentication → permission → body) and a caller without the
//! permission never has its upload read.

use axum::extract::{FromRequest, Multipart, Request};
use axum::http::{StatusCode, header};
use workapi_kit::request::Permit;
use workapi_kit::{ApiError, ApiResult};

/// A `multipart/form-data` request body, unread.
pub struct Form(Request);

impl<S: Send + Sync> FromRequest<S> for Form {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Form(req))
    }
}

impl Form {
    /// The bytes of the one part named `name`, at most `max` bytes. Not multipart: 415; a
    /// malformed form, the part missing or repeated, or another part: 400 naming the part;
    /// a part or body over its limit: 413.
    pub async fn single_file(self, _permit: &Permit, name: &str, max: usize) -> ApiResult<Vec<u8>> {
        let essence = self
            .0
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase());
        if essence.as_deref() != Some("multipart/form-data") {
            return Err(ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Request body must be multipart/form-data"));
        }
        let mut form = Multipart::from_request(self.0, &())
            .await
            .map_err(|_| ApiError::field("body", "Malformed multipart/form-data body: no valid boundary"))?;
        let mut file: Option<Vec<u8>> = None;
        loop {
            let field = form.next_field().await.map_err(malformed)?;
            let Some(mut field) = field else { break };
            let part = field.name().unwrap_or_default().to_owned();
            if part != name {
                let label = if part.is_empty() { "(unnamed part)".to_owned() } else { part };
                return Err(ApiError::field(&label, format!("unexpected part; the form has one part, {name}")));
            }
            if file.is_some() {
                return Err(ApiError::field(name, format!("{name} must be given exactly once")));
            }
            let mut bytes = Vec::new();
            while let Some(chunk) = field.chunk().await.map_err(malformed)? {
                if bytes.len() + chunk.len() > max {
                    return Err(too_large(max));
                }
                bytes.extend_from_slice(&chunk);
            }
            file = Some(bytes);
        }
        file.ok_or_else(|| ApiError::field(name, format!("{name} is required")))
    }
}

fn too_large(max: usize) -> ApiError {
    ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, format!("The file is larger than {} MiB", max / (1024 * 1024)))
}

/// A form that does not parse is the client's fault (400), or over the body limit (413);
/// never a 500.
fn malformed(error: axum::extract::multipart::MultipartError) -> ApiError {
    if error.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large")
    } else {
        ApiError::field("body", format!("Malformed multipart/form-data body: {}", error.body_text()))
    }
}
