//! The all-in-one local server: every function's routes merged into one service, plus the
//! operator commands (workspaces, users, tokens, tables). Not deployed.

pub mod cli;
pub mod demo;
pub mod generate;
pub mod keep_alive;
pub mod monitoring;
pub mod reindex;
pub mod seed;
pub mod seed_agents;
pub mod seed_billing;
pub mod seed_lines;
pub mod template;

use axum::Router;
use workapi_kit::AppState;
use workapi_kit::function::Function;

/// Every deployed function: the registry's, and the MCP function, which the registry cannot
/// list because it depends on the registry (docs/mcp.md).
pub fn functions() -> impl Iterator<Item = &'static Function> {
    registry::FUNCTIONS.iter().copied().chain([&mcp::FUNCTION])
}

/// Every function's routes behind the shared HTTP conventions: exactly what API Gateway
/// serves, in one process; plus what API Gateway does for the connection: a body an early
/// answer left unread is discarded, so keep-alive connections survive it ([`keep_alive`]).
pub fn app(state: AppState) -> Router {
    let routes = functions().fold(Router::new(), |routes, function| routes.merge(function.routes()));
    workapi_kit::http::service(routes, state).layer(axum::middleware::from_fn(keep_alive::discard_unread_body))
}
