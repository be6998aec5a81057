//! The kit, the top floor (docs/functions.md, "The floors"): the HTTP side every function is
//! built on. The one error type and the statuses it gives the floors' typed errors, the caller,
//! request extractors, projection, idempotency, rate limits, sessions, OAuth verification,
//! secrets, files, telemetry, the function descriptor and the Lambda glue. The floors below
//! (`workapi_store`, `workapi_wire`, `workapi_domain`, `workapi_richtext`) are used by their own
//! names; two faces join a floor and the kit: [`entity`] and [`input`].

pub mod app;
pub mod auth;
pub mod conditional;
pub mod cors;
/// The store's entity layer (`workapi_store::entity`) and the kit's answers to lost races.
pub mod entity {
    pub use crate::conflict::*;
    pub use workapi_store::entity::*;
}
mod conflict;
pub mod error;
pub mod events;
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
pub mod metrics;
pub mod negotiate;
pub mod net;
pub mod oauth;
pub mod openapi;
pub mod outbound;
pub mod paging;
pub mod projection;
pub mod ratelimit;
pub mod request;
pub mod secrets;
pub mod session;
pub mod telemetry;
mod traced_store;

pub use app::AppState;
pub use auth::Caller;
pub use error::{ApiError, ApiResult};
