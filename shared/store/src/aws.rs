//! How every AWS SDK client of the API talks to its service (docs/reliability.md): DynamoDB,
//! S3, Secrets Manager and the token/session-key fetches are all built from one
//! [`AwsSettings`], so a slow or failing dependency costs a bounded time everywhere.
//!
//! The production numbers ([`AwsSettings::PRODUCTION`]) fit inside the functions' `Timeout: 10`
//! (template.yaml) with room to answer: one store call gives up after
//! [`AwsSettings::operation`] (5 s), and a whole request after the kit's request deadline (`REQUEST_DEADLINE`)
//! (8 s), answering 503 with two seconds to spare. Tests pass smaller numbers through the same
//! type (the fault suite), and the local server reads overrides from `LT_AWS_*` variables (the
//! soak); a deployment sets none of them.

use aws_config::retry::RetryConfig;
// The same smithy types every SDK crate re-exports.
use aws_config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use std::time::Duration;

/// Retry and timeout settings of an AWS SDK client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AwsSettings {
    /// Opening a connection (TCP and TLS).
    pub connect: Duration,
    /// One attempt: sending the request and reading the whole response.
    pub attempt: Duration,
    /// The whole call, all attempts and the pauses between them.
    pub operation: Duration,
    /// Attempts in all, the first included (the SDK's standard retry mode).
    pub max_attempts: u32,
    /// The bound of the first back-off pause (full jitter, doubling each retry).
    pub initial_backoff: Duration,
}

impl AwsSettings {
    /// The deployed settings; docs/reliability.md gives the reason for each number.
    pub const PRODUCTION: AwsSettings = AwsSettings {
        connect: Duration::from_secs(1),
        attempt: Duration::from_secs(2),
        operation: Duration::from_secs(5),
        max_attempts: 3,
        initial_backoff: Duration::from_millis(100),
    };

    /// [`Self::PRODUCTION`], with any of `LT_AWS_CONNECT_TIMEOUT_MS`, `LT_AWS_ATTEMPT_TIMEOUT_MS`,
    /// `LT_AWS_OPERATION_TIMEOUT_MS`, `LT_AWS_MAX_ATTEMPTS`, `LT_AWS_INITIAL_BACKOFF_MS` in
    /// its place (the local server under a soak; never set in a deployment). An unreadable
    /// value is ignored with a warning, never a crash at start.
    pub fn from_env() -> AwsSettings {
        let millis = |name: &str, default: Duration| match std::env::var(name) {
            Ok(v) => v.parse::<u64>().map(Duration::from_millis).unwrap_or_else(|_| {
                tracing::warn!(variable = name, "not a number of milliseconds; using the default");
                default
            }),
            Err(_) => default,
        };
        let p = Self::PRODUCTION;
        AwsSettings {
            connect: millis("LT_AWS_CONNECT_TIMEOUT_MS", p.connect),
            attempt: millis("LT_AWS_ATTEMPT_TIMEOUT_MS", p.attempt),
            operation: millis("LT_AWS_OPERATION_TIMEOUT_MS", p.operation),
            max_attempts: std::env::var("LT_AWS_MAX_ATTEMPTS")
                .ok()
                .and_then(|v| v.parse().ok())
                .filter(|n| *n >= 1)
                .unwrap_or(p.max_attempts),
            initial_backoff: millis("LT_AWS_INITIAL_BACKOFF_MS", p.initial_backoff),
        }
    }

    pub fn timeouts(&self) -> TimeoutConfig {
        TimeoutConfig::builder()
            .connect_timeout(self.connect)
            .operation_attempt_timeout(self.attempt)
            .operation_timeout(self.operation)
            .build()
    }

    /// The SDK's standard mode: retries throttling, 5xx, timeouts and broken connections, with
    /// a client-side retry quota so that a failing service is not hammered.
    pub fn retries(&self) -> RetryConfig {
        RetryConfig::standard().with_max_attempts(self.max_attempts).with_initial_backoff(self.initial_backoff)
    }

    /// The SDK configuration from the environment (endpoint, region, credentials) with these
    /// settings.
    pub async fn load(&self) -> aws_config::SdkConfig {
        aws_config::from_env()
            .http_client(https_client())
            .timeout_config(self.timeouts())
            .retry_config(self.retries())
            .load()
            .await
    }
}

/// The HTTP client of every AWS call: the SDK's hyper client with rustls on ring, instead of the
/// SDK's default (rustls on aws-lc-rs, which links a large C crypto library into every
/// bootstrap; docs/performance.md). Same connection pool, system root certificates and cipher
/// suites as the default.
pub fn https_client() -> aws_sdk_dynamodb::config::SharedHttpClient {
    use aws_smithy_http_client::tls::{Provider, rustls_provider::CryptoMode};
    aws_smithy_http_client::Builder::new().tls_provider(Provider::Rustls(CryptoMode::Ring)).build_https()
}

/// The SDK configuration every client of this process is built from: [`AwsSettings::from_env`]
/// applied to the SDK's own environment, loaded once.
pub async fn sdk_config() -> &'static aws_config::SdkConfig {
    static CONFIG: tokio::sync::OnceCell<aws_config::SdkConfig> = tokio::sync::OnceCell::const_new();
    CONFIG.get_or_init(|| async { AwsSettings::from_env().load().await }).await
}

/// Error codes of a service saying "not now": throttling and the services' own 5xx codes.
/// The SDK retries these itself; what reaches [`is_transient`] is past the retries.
const TRANSIENT_CODES: &[&str] = &[
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "Throttling",
    "SlowDown",
    "RequestTimeout",
    "InternalServerError",
    "InternalFailure",
    "ServiceUnavailable",
    "TransactionInProgressException",
];

/// Whether an SDK call failed because the service could not answer (timed out, the connection
/// failed or was reset, the response was cut or unreadable, throttled, a 5xx), as opposed to
/// refusing our request (a 4xx we caused, a request we could not build). The one
/// classification every client's errors go through: the first kind answers 503, the second 500.
pub fn is_transient<E: ProvideErrorMetadata>(error: &SdkError<E, HttpResponse>) -> bool {
    match error {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => true,
        SdkError::ServiceError(service) => {
            service.raw().status().is_server_error()
                || service.err().code().is_some_and(|code| TRANSIENT_CODES.contains(&code))
        }
        _ => false,
    }
}
