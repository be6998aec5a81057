//! Logging set-up: JSON lines on Lambda (CloudWatch), readable text locally.

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Structured JSON logs without timestamps (CloudWatch adds them); level from `RUST_LOG`.
pub fn init_lambda() {
    let _ = tracing_subscriber::fmt()
        .json()
        .without_time()
        .with_target(false)
        .with_current_span(false)
        .finish()
        .with(filter())
        .try_init();
}

/// Human-readable logs for the local server and CLI.
pub fn init_local() {
    let _ = tracing_subscriber::fmt().with_target(false).finish().with(filter()).try_init();
}

/// `RUST_LOG` as targets and levels (`info`, `warn,shared=debug`); default `info`. Not the full
/// `EnvFilter` syntax (span and field filters), which would link a regex engine into every
/// bootstrap.
fn filter() -> tracing_subscriber::filter::Targets {
    std::env::var("RUST_LOG")
        .ok()
        .and_then(|directives| directives.parse().ok())
        .unwrap_or_else(|| tracing_subscriber::filter::Targets::new().with_default(tracing::Level::INFO))
}
