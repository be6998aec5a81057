//! One descriptor per function (docs/functions.md): its name, the path prefixes API Gateway
//! routes to it, its tags in the document, its routes with their documentation, and the
//! entities it owns. The registry (`registry::FUNCTIONS`) lists every descriptor; the document, the
//! local server and the tests iterate it, and a function's `main.rs` is one call to
//! [`run_on_lambda`].

use crate::AppState;
use crate::entity::EntityKind;
use crate::openapi::ApiTag;
use axum::Router;
use utoipa_axum::router::OpenApiRouter;

pub struct Function {
    /// The crate, the `events/<name>/` folder and the SAM resource `<Name>Function`.
    pub name: &'static str,
    /// Path prefixes routed to this function (`/tags` serves `/tags/…`).
    pub prefixes: &'static [&'static str],
    /// The document's top-level tags of its operations.
    pub tags: &'static [ApiTag],
    /// The routes with their OpenAPI declarations (`utoipa_axum::routes!`).
    pub api: fn() -> OpenApiRouter<AppState>,
    /// The entities whose items it writes.
    pub entities: &'static [EntityKind],
}

impl Function {
    /// The routes, without the shared layers (the local server merges several of these).
    pub fn routes(&self) -> Router<AppState> {
        (self.api)().split_for_parts().0
    }

    /// The finished service: the routes behind the shared HTTP conventions.
    pub fn router(&self, state: AppState) -> Router {
        crate::http::service(self.routes(), state)
    }

    /// This function's part of the OpenAPI document.
    pub fn document(&self) -> utoipa::openapi::OpenApi {
        (self.api)().split_for_parts().1
    }
}

/// The error a Lambda entry point returns.
pub type LambdaError = lambda_http::Error;

/// Runs a function on AWS Lambda (API Gateway REST proxy events): telemetry, the state from
/// the environment (`AppState::from_lambda_env`), then the function's router.
pub fn run_on_lambda(function: &'static Function) -> Result<(), LambdaError> {
    let runtime = crate::http::runtime()?;
    runtime.block_on(async {
        crate::telemetry::init_lambda();
        let state = AppState::from_lambda_env().await?;
        lambda_http::run(function.router(state)).await
    })
}
