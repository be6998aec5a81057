//! The registry: [`FUNCTIONS`], the one list of every function of the API, and [`document`], the
//! OpenAPI 3.1 document generated from their route declarations. The local server
//! (`functions/local`) and the tests (`tests/`) iterate it; adding a function is one line here
//! (docs/functions.md).
//!
//! Not deployed. The `docs` function serves the document without linking every function: it
//! embeds `functions/docs/openapi.json`, which the test `openapi::the_document_matches_its_snapshot`
//! keeps equal to [`document`].

use std::sync::OnceLock;
use utoipa::openapi::OpenApi;
use workapi_kit::function::Function;
use workapi_kit::openapi::ApiTag;

/// Every function of the API.
pub const FUNCTIONS: &[&Function] = &[
    &tags::FUNCTION,
    &administration::FUNCTION,
    &projects::FUNCTION,
    &contacts::FUNCTION,
    &tasks::FUNCTION,
    &workspace::FUNCTION,
    &oauth::FUNCTION,
    &helpdesk::FUNCTION,
    &account::FUNCTION,
    &billing::FUNCTION,
    &agents::FUNCTION,
    &events::FUNCTION,
    &docs::FUNCTION,
];

/// The functions with operations that take a bearer token: every function but `oauth` (its
/// endpoints are the OAuth server's, public or with credentials of their own) and `docs` (public
/// documents). The MCP function runs their routes, and only theirs, so that its bootstrap links
/// neither the OAuth server nor the embedded document and reference page (docs/mcp.md, "The
/// registry and this function"). The test `bearer_operations_are_served_by_bearer_functions`
/// keeps the list whole.
pub const BEARER_FUNCTIONS: &[&Function] = &[
    &tags::FUNCTION,
    &administration::FUNCTION,
    &projects::FUNCTION,
    &contacts::FUNCTION,
    &tasks::FUNCTION,
    &workspace::FUNCTION,
    &helpdesk::FUNCTION,
    &account::FUNCTION,
    &billing::FUNCTION,
    &agents::FUNCTION,
    &events::FUNCTION,
];

/// The document generated from every function's declarations, built once on first use.
pub fn document() -> &'static OpenApi {
    static DOCUMENT: OnceLock<OpenApi> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let mut api = OpenApi::default();
        for function in FUNCTIONS {
            api.merge(function.document());
        }
        let tags: Vec<ApiTag> = FUNCTIONS.iter().flat_map(|f| f.tags.iter().copied()).collect();
        let mut api = workapi_kit::openapi::finish(api, &tags);
        workapi_kit::openapi::add_webhooks(&mut api, workapi_domain::event::types::ALL);
        api
    })
}

#[cfg(test)]
mod tests;
