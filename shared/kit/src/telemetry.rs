//! Logs and metrics (docs/operations.md). On Lambda, and on the local server with
//! `LT_LOG_FORMAT=json`, every log event is one JSON line on stdout carrying the fields of the
//! spans it happened in (the request's `requestId`, `traceId`…), and every request writes one
//! CloudWatch Embedded Metric Format document ([`crate::metrics`]); the same code writes both, so
//! an operator sees locally the lines CloudWatch gets. Otherwise, readable text.

use serde_json::{Map, Value};
use std::io::Write as _;
use std::sync::OnceLock;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

/// The target of the metric documents: written whatever the log level (they are metrics, not
/// logs), and never as text.
pub const METRICS_TARGET: &str = "workapi_metrics";

/// The environment variable that makes the local server log as a function does on Lambda.
pub const LOG_FORMAT_ENV: &str = "LT_LOG_FORMAT";

static JSON: OnceLock<bool> = OnceLock::new();
static FUNCTION: OnceLock<&'static str> = OnceLock::new();

/// The function this process serves (the metrics' `function` dimension): the registry name on
/// Lambda, `local` for the local server, which serves them all and names each request's own
/// function when its route is known.
pub fn function_name() -> &'static str {
    FUNCTION.get().copied().unwrap_or("local")
}

/// Whether log events and metric documents are JSON lines (Lambda, `LT_LOG_FORMAT=json`).
pub fn is_json() -> bool {
    JSON.get().copied().unwrap_or(false)
}

/// JSON lines on stdout for the function `function`, at the level `RUST_LOG` or the
/// function's `ApplicationLogLevel` (`AWS_LAMBDA_LOG_LEVEL`) says.
pub fn init_lambda(function: &'static str) {
    let _ = FUNCTION.set(function);
    init_json();
}

/// The local server and CLI: readable text, or with `LT_LOG_FORMAT=json` the lines a function
/// writes on Lambda.
pub fn init_local() {
    if std::env::var(LOG_FORMAT_ENV).is_ok_and(|format| format.eq_ignore_ascii_case("json")) {
        return init_json();
    }
    let filter = filter(&crate::app::process_env).with_target(METRICS_TARGET, tracing::level_filters::LevelFilter::OFF);
    let _ = tracing_subscriber::fmt().with_target(false).finish().with(filter).try_init();
}

fn init_json() {
    let _ = JSON.set(true);
    let filter = filter(&crate::app::process_env).with_target(METRICS_TARGET, tracing::Level::INFO);
    let _ = tracing_subscriber::registry().with(JsonLines::new(std::io::stdout).with_filter(filter)).try_init();
}

/// `RUST_LOG` as targets and levels (`info`, `warn,workapi_store=debug`), else Lambda's
/// `AWS_LAMBDA_LOG_LEVEL` (the function's `ApplicationLogLevel`: `TRACE` … `FATAL`), else
/// `info`. Not the full `EnvFilter` syntax (span and field filters), which would link a regex
/// engine into every bootstrap.
pub fn filter(var: crate::app::EnvVars<'_>) -> tracing_subscriber::filter::Targets {
    let lambda_level = || {
        var("AWS_LAMBDA_LOG_LEVEL").map(|level| match level.to_ascii_lowercase().as_str() {
            "fatal" => "error".to_owned(),
            other => other.to_owned(),
        })
    };
    var("RUST_LOG")
        .or_else(lambda_level)
        .and_then(|directives| directives.parse().ok())
        .unwrap_or_else(|| tracing_subscriber::filter::Targets::new().with_default(tracing::Level::INFO))
}

/// Writes each event as one JSON object on one line: `timestamp`, `level`, `message`, the
/// event's fields and those of every span it is in (outermost first; an event's own field wins
/// a clash). A metric document ([`METRICS_TARGET`]) is written as it is.
pub struct JsonLines<W> {
    writer: W,
}

impl<W> JsonLines<W>
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + 'static,
{
    pub fn new(writer: W) -> Self {
        JsonLines { writer }
    }

    fn write_line(&self, mut line: String) {
        line.push('\n');
        // One write per line, so that lines of concurrent requests never interleave.
        let _ = self.writer.make_writer().write_all(line.as_bytes());
    }
}

/// The fields a span was created or recorded with, kept for the events inside it.
struct SpanFields(Map<String, Value>);

/// Collects fields as JSON values: numbers and booleans as such, the rest as text.
struct Fields<'a>(&'a mut Map<String, Value>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), Value::String(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), Value::String(value.to_owned()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), value.into());
    }
}

impl<S, W> Layer<S> for JsonLines<W>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + 'static,
{
    fn on_new_span(&self, attributes: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Map::new();
        attributes.record(&mut Fields(&mut fields));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(SpanFields(fields));
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<SpanFields>()
        {
            values.record(&mut Fields(&mut fields.0));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut line = Map::new();
        if event.metadata().target() == METRICS_TARGET {
            event.record(&mut Fields(&mut line));
            if let Some(Value::String(document)) = line.remove(crate::metrics::DOCUMENT_FIELD) {
                self.write_line(document);
            }
            return;
        }
        let now = time::OffsetDateTime::now_utc();
        let timestamp = now.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
        line.insert("timestamp".into(), timestamp.into());
        line.insert("level".into(), event.metadata().level().as_str().into());
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope.from_root() {
                if let Some(fields) = span.extensions().get::<SpanFields>() {
                    line.extend(fields.0.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
        }
        event.record(&mut Fields(&mut line));
        if let Ok(text) = serde_json::to_string(&line) {
            self.write_line(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_event_is_one_line_with_the_fields_of_its_spans_and_a_metric_document_is_written_as_is() {
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::registry().with(JsonLines::new(move || writer.clone()));
        tracing::subscriber::with_default(subscriber, || {
            let request = tracing::info_span!("request", requestId = "r-1", traceId = tracing::field::Empty);
            request.record("traceId", "t-1");
            let _entered = request.enter();
            let store = tracing::info_span!("store", operation = "get");
            let _in_store = store.enter();
            tracing::warn!(status = 503, "store call failed\nsecond line");
            tracing::info!(target: METRICS_TARGET, document = r#"{"_aws":{}}"#);
        });
        let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        let written: Vec<&str> = text.lines().collect();
        assert_eq!(written.len(), 2, "{text}");
        let event: Value = serde_json::from_str(written[0]).unwrap();
        assert_eq!(event["requestId"], "r-1");
        assert_eq!(event["traceId"], "t-1");
        assert_eq!(event["operation"], "get");
        assert_eq!(event["status"], 503);
        assert_eq!(event["level"], "WARN");
        assert_eq!(event["message"], "store call failed\nsecond line");
        assert!(event["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')), "{event}");
        assert_eq!(written[1], r#"{"_aws":{}}"#);
    }

    #[test]
    fn the_level_comes_from_rust_log_else_from_the_functions_application_log_level() {
        use tracing::level_filters::LevelFilter;
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
        };
        let level = |var: crate::app::EnvVars<'_>| filter(var).default_level();
        assert_eq!(level(&vars(&[])), Some(LevelFilter::INFO));
        assert_eq!(level(&vars(&[("AWS_LAMBDA_LOG_LEVEL", "WARN")])), Some(LevelFilter::WARN));
        assert_eq!(level(&vars(&[("AWS_LAMBDA_LOG_LEVEL", "FATAL")])), Some(LevelFilter::ERROR));
        assert_eq!(level(&vars(&[("AWS_LAMBDA_LOG_LEVEL", "WARN"), ("RUST_LOG", "debug")])), Some(LevelFilter::DEBUG));
    }
}
