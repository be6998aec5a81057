//! The black-box suites as one test binary, a module per area: one link of the whole API instead
//! of one per suite. Shared helpers live in the harness crate (`api_tests`, `tests/src/lib.rs`).
//!
//! Run one area with a filter: `cargo test -p api-tests --test api -- sessions::`.
//! The environment the suites need comes from the test command (`scripts/test.sh`) or the
//! repository's `.cargo/config.toml`; no test sets or removes a variable: the tests of every
//! area share this process and run on parallel threads.

mod account_api;
mod administration_api;
mod agents_api;
mod base_url;
mod billing_api;
mod check_order;
mod conditional;
mod cors;
mod events_api;
mod faults;
mod hardening;
mod helpdesk_api;
mod idempotency;
mod imposter;
mod invoice_page;
mod invoices_api;
mod item_sizes;
mod keep_alive;
mod lambda_events;
mod large_workspace;
mod largest_bodies;
mod mcp_api;
mod notifications_from_events;
mod oauth_flow;
mod oauth_registration;
mod openapi;
mod operations_catalogue;
mod paging;
mod projects_api;
mod rate_limits;
mod registry;
mod round_trip_depth;
mod secrets;
mod sessions;
mod store_conformance;
mod tags_api;
mod tasks_api;
mod upload;
mod validation;
mod watch_events;
mod webhook_delivery;
mod webhooks_api;
