//! What every workapi function needs: the store, authentication, permissions, response
//! projection, rich-text conversion, the one error type and the HTTP glue.
//!
//! Its top-level modules use each other without cycles (`tests/module_cycles.rs`): `token`
//! (the bearer-token format) and `session` (session JWTs) are below `app` (the per-container
//! state), which is below `auth` (the `Caller`); `identity` and `oauth` (the issuer and
//! access-token verification) are below `auth` too, and `store` is below all of them.

pub mod app;
pub mod auth;
pub mod cors;
/// The store's entity layer (`workapi_store::entity`) and the kit's answers to lost races.
pub mod entity {
    pub use crate::conflict::*;
    pub use workapi_store::entity::*;
}
mod conflict;
pub mod error;
pub mod files;
pub mod function;
pub mod http;
pub mod idempotency;
/// Request input (`workapi_wire`), with the kit's `parse` that answers a 400.
pub mod input {
    pub use crate::request::{duplicate_keys, parse, read_json_body, read_json_object};
    pub use workapi_wire::*;
}
mod jwt_crypto;
pub mod oauth;
pub mod openapi;
pub mod projection;
pub mod ratelimit;
pub mod request;
/// The domain floor (`shared/domain`, crate `workapi-domain`).
pub use workapi_domain::{self as domain, identity, permissions, token};
/// The rich-text floor (`shared/richtext`, crate `workapi-richtext`).
pub use workapi_richtext as richtext;
/// The store floor (`shared/store`, crate `workapi-store`).
pub use workapi_store::{self as store, aws, clock};
/// The wire floor (`shared/wire`, crate `workapi-wire`): request input, dates, the compact contract.
pub use workapi_wire::{calendar, closed_enum};
pub mod secrets;
pub mod session;
pub mod telemetry;

pub use app::AppState;
pub use auth::Caller;
pub use error::{ApiError, ApiResult};
