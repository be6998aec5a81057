//! What every workapi function needs: the store, authentication, permissions, response
//! projection, rich-text conversion, the one error type and the HTTP glue.

pub mod app;
pub mod auth;
pub mod clock;
pub mod error;
pub mod http;
pub mod identity;
pub mod oauth;
pub mod openapi;
pub mod permissions;
pub mod projection;
pub mod ratelimit;
pub mod richtext;
pub mod store;
pub mod telemetry;
pub mod validate;

pub use app::AppState;
pub use auth::Caller;
pub use error::{ApiError, ApiResult};
