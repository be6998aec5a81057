//! Logging set-up: JSON lines on Lambda (CloudWatch), readable text locally.

/// Structured JSON logs without timestamps (CloudWatch adds them); level from `RUST_LOG`.
pub fn init_lambda() {
    let _ = tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter())
        .without_time()
        .with_target(false)
        .with_current_span(false)
        .try_init();
}

/// Human-readable logs for the local server and CLI.
pub fn init_local() {
    let _ = tracing_subscriber::fmt().with_env_filter(filter()).with_target(false).try_init();
}

fn filter() -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"))
}
