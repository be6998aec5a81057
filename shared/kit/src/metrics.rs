//! One CloudWatch Embedded Metric Format document per request (docs/operations.md, "Metrics"),
//! written to stdout with the request's log lines ([`crate::telemetry`]): CloudWatch Logs turns
//! it into metrics, with no agent and no extra round trip. Hand-written: the document is one
//! `serde_json` object, which every function links already; a crate would add its own
//! aggregation and writer for the same one document per request.

use crate::AppState;
use axum::Router;
use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// The metrics' CloudWatch namespace: `LT_METRICS_NAMESPACE` (template.yaml sets
/// `workapi/<stack>`, so two stacks in one account keep theirs apart), else `workapi`.
pub fn namespace() -> &'static str {
    static NAMESPACE: OnceLock<String> = OnceLock::new();
    NAMESPACE.get_or_init(|| std::env::var("LT_METRICS_NAMESPACE").unwrap_or_else(|_| "workapi".into()))
}

/// The dimension naming the function that served the request (its registry name).
pub const FUNCTION_DIMENSION: &str = "function";
/// The dimension naming the operation (the document's `operationId`; `unrouted` when no route
/// matched).
pub const OPERATION_DIMENSION: &str = "operationId";

/// The operation of a request that matched no route (404, 405, a preflight, a 401 of an
/// unknown path).
pub const UNROUTED: &str = "unrouted";

/// The event field that carries the document to the log writer.
pub const DOCUMENT_FIELD: &str = "document";

/// Every metric of the document, with its unit: per operation (with both dimensions) and per
/// function (with `function` alone). The dashboard and the alarms (`workapi template`) name
/// these.
pub mod metric {
    pub const REQUESTS: &str = "Requests";
    pub const LATENCY: &str = "Latency";
    /// 4xx answers, 429s included.
    pub const CLIENT_ERRORS: &str = "ClientErrors";
    /// 5xx answers, 503s included.
    pub const SERVER_ERRORS: &str = "ServerErrors";
    /// 429 answers: a client over its rate limit.
    pub const THROTTLED: &str = "Throttled";
    /// 503 answers: a dependency (the table, Secrets Manager, S3) unavailable or too slow.
    pub const DEPENDENCY_UNAVAILABLE: &str = "DependencyUnavailable";
    /// 1 on the first request of an execution environment.
    pub const COLD_START: &str = "ColdStart";
    pub const ALL: [(&str, &str); 7] = [
        (REQUESTS, "Count"),
        (LATENCY, "Milliseconds"),
        (CLIENT_ERRORS, "Count"),
        (SERVER_ERRORS, "Count"),
        (THROTTLED, "Count"),
        (DEPENDENCY_UNAVAILABLE, "Count"),
        (COLD_START, "Count"),
    ];
}

/// What the routing learned about a request: the function and operation that served it. Filled
/// by [`tag_operations`] inside the router, read by the request layer outside it (a slot in the
/// request's extensions survives the answers rebuilt on the way out, and panics).
#[derive(Clone, Default)]
pub struct OperationSlot(Arc<OnceLock<Operation>>);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    pub function: &'static str,
    pub id: Arc<str>,
}

impl OperationSlot {
    pub fn get(&self) -> Option<&Operation> {
        self.0.get()
    }
}

/// The routes of `function` naming their operation in the request's [`OperationSlot`]: its
/// `operationId` in `document`, else (a route the document does not describe) `METHOD /path`.
pub fn tag_operations(
    routes: Router<AppState>,
    function: &'static str,
    document: &utoipa::openapi::OpenApi,
) -> Router<AppState> {
    if !routes.has_routes() {
        return routes;
    }
    let mut ids: HashMap<(String, String), Arc<str>> = HashMap::new();
    for (path, item) in &document.paths.paths {
        let operations = [
            ("GET", &item.get),
            ("PUT", &item.put),
            ("POST", &item.post),
            ("DELETE", &item.delete),
            ("OPTIONS", &item.options),
            ("HEAD", &item.head),
            ("PATCH", &item.patch),
            ("TRACE", &item.trace),
        ];
        for (method, operation) in operations {
            if let Some(id) = operation.as_ref().and_then(|o| o.operation_id.as_deref()) {
                ids.insert((method.to_owned(), path.clone()), Arc::from(id));
            }
        }
    }
    let ids = Arc::new(ids);
    routes.route_layer(axum::middleware::from_fn(move |request: Request, next: Next| {
        let ids = ids.clone();
        async move {
            if let (Some(slot), Some(path)) =
                (request.extensions().get::<OperationSlot>(), request.extensions().get::<MatchedPath>())
            {
                let method = request.method().as_str();
                let id = ids
                    .get(&(method.to_owned(), path.as_str().to_owned()))
                    .cloned()
                    .unwrap_or_else(|| Arc::from(format!("{method} {}", path.as_str())));
                let _ = slot.0.set(Operation { function, id });
            }
            next.run(request).await
        }
    }))
}

/// One request as measured by the request layer.
pub struct Measured<'a> {
    pub operation: Option<&'a Operation>,
    pub status: u16,
    pub latency: std::time::Duration,
    pub cold_start: bool,
    pub request_id: &'a str,
    pub trace_id: Option<&'a str>,
}

/// The request's EMF document at `timestamp_ms`: its metrics under two dimension sets
/// (function and operation; function alone), and the request id and status beside them so
/// that a metric's data points lead to the request's log lines.
pub fn document(measured: &Measured<'_>, timestamp_ms: i64) -> Value {
    let (function, operation) = match measured.operation {
        Some(o) => (o.function, &*o.id),
        None => (crate::telemetry::function_name(), UNROUTED),
    };
    let status = measured.status;
    let count = |yes: bool| u8::from(yes);
    let definitions: Vec<Value> =
        metric::ALL.iter().map(|(name, unit)| json!({ "Name": name, "Unit": unit })).collect();
    let mut document = json!({
        "_aws": {
            "Timestamp": timestamp_ms,
            "CloudWatchMetrics": [{
                "Namespace": namespace(),
                "Dimensions": [[FUNCTION_DIMENSION, OPERATION_DIMENSION], [FUNCTION_DIMENSION]],
                "Metrics": definitions,
            }],
        },
        FUNCTION_DIMENSION: function,
        OPERATION_DIMENSION: operation,
        metric::REQUESTS: 1,
        metric::LATENCY: (measured.latency.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0,
        metric::CLIENT_ERRORS: count((400..500).contains(&status)),
        metric::SERVER_ERRORS: count(status >= 500),
        metric::THROTTLED: count(status == 429),
        metric::DEPENDENCY_UNAVAILABLE: count(status == 503),
        metric::COLD_START: count(measured.cold_start),
        "requestId": measured.request_id,
        "statusCode": status,
    });
    if let Some(trace_id) = measured.trace_id {
        document["traceId"] = trace_id.into();
    }
    document
}

/// Writes the request's document with its log lines (when logs are JSON: on Lambda and with
/// `LT_LOG_FORMAT=json`; the readable local logs leave metrics out).
pub fn emit(measured: &Measured<'_>) {
    if !crate::telemetry::is_json() {
        return;
    }
    let now = time::OffsetDateTime::now_utc();
    let timestamp_ms = i64::try_from(now.unix_timestamp_nanos() / 1_000_000).unwrap_or_default();
    let document = document(measured, timestamp_ms).to_string();
    tracing::info!(target: crate::telemetry::METRICS_TARGET, document = document.as_str());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(status: u16, operation: Option<&Operation>) -> Value {
        let measured = Measured {
            operation,
            status,
            latency: std::time::Duration::from_micros(12_345),
            cold_start: false,
            request_id: "r-1",
            trace_id: None,
        };
        document(&measured, 1_700_000_000_000)
    }

    #[test]
    fn the_counts_follow_the_status() {
        let operation = Operation { function: "tags", id: Arc::from("listTags") };
        let ok = measured(200, Some(&operation));
        assert_eq!((ok["function"].as_str(), ok["operationId"].as_str()), (Some("tags"), Some("listTags")));
        assert_eq!(ok["Latency"], 12.345);
        let counts = |d: &Value| {
            ["Requests", "ClientErrors", "ServerErrors", "Throttled", "DependencyUnavailable"].map(|m| d[m].as_u64())
        };
        assert_eq!(counts(&ok), [1, 0, 0, 0, 0].map(Some));
        assert_eq!(counts(&measured(404, None)), [1, 1, 0, 0, 0].map(Some));
        assert_eq!(counts(&measured(429, None)), [1, 1, 0, 1, 0].map(Some));
        assert_eq!(counts(&measured(500, None)), [1, 0, 1, 0, 0].map(Some));
        assert_eq!(counts(&measured(503, None)), [1, 0, 1, 0, 1].map(Some));
        assert_eq!(measured(404, None)["operationId"], UNROUTED);
    }
}
