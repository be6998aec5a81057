//! The monitoring `workapi template` writes from the registry (docs/operations.md): each
//! function's alarms, and the one dashboard with a row per function, from the metrics every
//! request writes (`workapi_kit::metrics`) and Lambda's own. The API's and the table's alarms
//! are written by hand in template.yaml; their thresholds, like these, are template parameters.

use serde_json::{Value, json};
use std::fmt::Write as _;
use workapi_kit::function::{Function, GLOBAL_TIMEOUT_SECONDS};
use workapi_kit::metrics::{FUNCTION_DIMENSION, metric};

/// The alias every function deploys through (`AutoPublishAlias`), which API Gateway invokes.
pub const ALIAS: &str = "live";

/// The API-level alarm that also rolls a function's deployment back.
pub const API_SERVER_ERRORS_ALARM: &str = "ApiServerErrorRateAlarm";

/// The metrics' namespace as template.yaml sets it (`LT_METRICS_NAMESPACE`, one per stack).
pub const NAMESPACE: &str = "workapi/${AWS::StackName}";

/// A function's alarms: `(logical id suffix, what it means)`, the suffix appended to the
/// function's resource name (`TagsFunction` → `TagsFunctionErrorRateAlarm`).
pub const FUNCTION_ALARMS: [(&str, &str); 3] = [
    ("ErrorRateAlarm", "invocations that failed or answered 5xx above FunctionErrorRatePercent"),
    ("ThrottleRateAlarm", "invocations Lambda throttled above FunctionThrottleRatePercent"),
    ("DurationAlarm", "p99 duration above FunctionDurationPercentOfTimeout of the timeout"),
];

/// The logical ids of a function's alarms, in [`FUNCTION_ALARMS`]' order.
pub fn alarm_names(resource: &str) -> Vec<String> {
    FUNCTION_ALARMS.iter().map(|(suffix, _)| format!("{resource}{suffix}")).collect()
}

/// The properties that make a function deploy gradually, traced and logging JSON.
pub fn function_properties(resource: &str) -> String {
    let errors = &alarm_names(resource)[0];
    format!(
        "      Tracing: Active\n      LoggingConfig:\n        LogFormat: JSON\n        ApplicationLogLevel: !Ref \
         ApplicationLogLevel\n        SystemLogLevel: !Ref SystemLogLevel\n      AutoPublishAlias: {ALIAS}\n      \
         DeploymentPreference:\n        Type: !Ref DeploymentType\n        Alarms:\n          - !Ref {errors}\n          \
         - !Ref {API_SERVER_ERRORS_ALARM}\n"
    )
}

/// One `MetricStat` entry of an alarm's `Metrics`.
fn stat(out: &mut String, id: &str, namespace: &str, name: &str, dimension: (&str, &str), statistic: &str) {
    let _ = write!(
        out,
        "        - Id: {id}\n          ReturnData: false\n          MetricStat:\n            Metric:\n              \
         Namespace: {namespace}\n              MetricName: {name}\n              Dimensions:\n                \
         - Name: {}\n                  Value: {}\n            Period: 60\n            Stat: {statistic}\n",
        dimension.0, dimension.1
    );
}

/// An alarm on a metric-math `expression` over `stats` above the parameter `threshold`.
fn alarm(out: &mut String, name: &str, description: &str, threshold: &str, expression: &str, label: &str) {
    let _ = write!(
        out,
        "\n  {name}:\n    Type: AWS::CloudWatch::Alarm\n    Properties:\n      AlarmDescription: \"{description} \
         (docs/operations.md)\"\n      ComparisonOperator: GreaterThanThreshold\n      Threshold: !Ref {threshold}\n      \
         EvaluationPeriods: 3\n      DatapointsToAlarm: 2\n      TreatMissingData: notBreaching\n      AlarmActions: !If \
         [HasAlarmTopic, [!Ref AlarmTopicArn], []]\n      OKActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], []]\n      \
         Metrics:\n        - Id: value\n          Label: {label}\n          Expression: \"{expression}\"\n          \
         ReturnData: true\n"
    );
}

/// The function's alarms ([`FUNCTION_ALARMS`]), as template.yaml holds them.
pub fn function_alarms(function: &Function, resource: &str) -> String {
    let names = alarm_names(resource);
    let name = function.name;
    let lambda = ("FunctionName", &*format!("!Ref {resource}"));
    let ours = (FUNCTION_DIMENSION, name);
    let timeout_ms = function.needs.timeout_seconds.unwrap_or(GLOBAL_TIMEOUT_SECONDS) * 1000;
    let mut out = String::new();
    alarm(
        &mut out,
        &names[0],
        &format!("workapi {name}: {}", FUNCTION_ALARMS[0].1),
        "FunctionErrorRatePercent",
        "IF(invocations > 0, 100 * (FILL(errors, 0) + FILL(answered5xx, 0)) / invocations, 0)",
        "percent of invocations failed or answered 5xx",
    );
    stat(&mut out, "invocations", "AWS/Lambda", "Invocations", lambda, "Sum");
    stat(&mut out, "errors", "AWS/Lambda", "Errors", lambda, "Sum");
    stat(&mut out, "answered5xx", &format!("!Sub \"{NAMESPACE}\""), metric::SERVER_ERRORS, ours, "Sum");
    alarm(
        &mut out,
        &names[1],
        &format!("workapi {name}: {}", FUNCTION_ALARMS[1].1),
        "FunctionThrottleRatePercent",
        "IF(FILL(invocations, 0) + FILL(throttles, 0) > 0, 100 * FILL(throttles, 0) / (FILL(invocations, 0) + \
         FILL(throttles, 0)), 0)",
        "percent of invocations throttled",
    );
    stat(&mut out, "invocations", "AWS/Lambda", "Invocations", lambda, "Sum");
    stat(&mut out, "throttles", "AWS/Lambda", "Throttles", lambda, "Sum");
    alarm(
        &mut out,
        &names[2],
        &format!("workapi {name}: {} ({timeout_ms} ms)", FUNCTION_ALARMS[2].1),
        "FunctionDurationPercentOfTimeout",
        &format!("100 * duration / {timeout_ms}"),
        "p99 duration in percent of the timeout",
    );
    stat(&mut out, "duration", "AWS/Lambda", "Duration", lambda, "p99");
    out
}

/// A metric of the dashboard: `[namespace, name, dimension, value, {options}]`.
fn line(namespace: &str, name: &str, dimension: (&str, &str), options: Value) -> Value {
    json!([namespace, name, dimension.0, dimension.1, options])
}

fn widget(title: &str, x: u32, y: u32, metrics: Vec<Value>) -> Value {
    json!({
        "type": "metric", "x": x, "y": y, "width": 8, "height": 6,
        "properties": {
            "title": title, "region": "${AWS::Region}", "view": "timeSeries", "stacked": false,
            "period": 60, "metrics": metrics,
        },
    })
}

/// The dashboard's widgets: the API's and the table's row, then a row per function (its
/// requests and answers by class, its latency, its cold starts and throttles).
pub fn dashboard_body(functions: &[&'static Function]) -> Value {
    let sum = || json!({ "stat": "Sum" });
    let api = ("ApiName", "${AWS::StackName}-api");
    let table = ("TableName", "${Table}");
    let mut widgets = vec![
        widget(
            "API: requests and errors",
            0,
            0,
            vec![
                line("AWS/ApiGateway", "Count", api, sum()),
                line("AWS/ApiGateway", "4XXError", api, sum()),
                line("AWS/ApiGateway", "5XXError", api, sum()),
            ],
        ),
        widget(
            "API: latency",
            8,
            0,
            vec![
                line("AWS/ApiGateway", "Latency", api, json!({ "stat": "p50" })),
                line("AWS/ApiGateway", "Latency", api, json!({ "stat": "p99" })),
            ],
        ),
        widget(
            "Table: throttles and system errors",
            16,
            0,
            vec![
                line("AWS/DynamoDB", "ReadThrottleEvents", table, sum()),
                line("AWS/DynamoDB", "WriteThrottleEvents", table, sum()),
                json!([{ "expression": "SUM(SEARCH('{AWS/DynamoDB,TableName,Operation} MetricName=\"SystemErrors\" TableName=\"${Table}\"', 'Sum', 60))", "label": "SystemErrors", "id": "systemErrors" }]),
            ],
        ),
    ];
    for (row, function) in functions.iter().enumerate() {
        let y = 6 * (row as u32 + 1);
        let (name, resource) = (function.name, crate::template::resource_name(function));
        let ours = (FUNCTION_DIMENSION, name);
        let lambda = ("FunctionName", &*format!("${{{resource}}}"));
        let answers = [
            metric::REQUESTS,
            metric::CLIENT_ERRORS,
            metric::SERVER_ERRORS,
            metric::THROTTLED,
            metric::DEPENDENCY_UNAVAILABLE,
        ];
        widgets.push(widget(
            &format!("{name}: requests and answers"),
            0,
            y,
            answers.iter().map(|m| line(NAMESPACE, m, ours, sum())).collect(),
        ));
        widgets.push(widget(
            &format!("{name}: latency (ms)"),
            8,
            y,
            vec![
                line(NAMESPACE, metric::LATENCY, ours, json!({ "stat": "p50" })),
                line(NAMESPACE, metric::LATENCY, ours, json!({ "stat": "p99" })),
                line("AWS/Lambda", "Duration", lambda, json!({ "stat": "p99" })),
            ],
        ));
        widgets.push(widget(
            &format!("{name}: cold starts, throttles, errors"),
            16,
            y,
            vec![
                line(NAMESPACE, metric::COLD_START, ours, sum()),
                line("AWS/Lambda", "Throttles", lambda, sum()),
                line("AWS/Lambda", "Errors", lambda, sum()),
                line("AWS/Lambda", "ConcurrentExecutions", lambda, json!({ "stat": "Maximum" })),
            ],
        ));
    }
    json!({ "widgets": widgets })
}

/// The dashboard resource, as template.yaml holds it.
pub fn dashboard(functions: &[&'static Function]) -> String {
    let body = serde_json::to_string_pretty(&dashboard_body(functions)).unwrap_or_default();
    let mut out = String::from(
        "  # One dashboard: the API, the table, and a row per function from the metrics every request\n  # \
         writes (docs/operations.md, \"Metrics\").\n  Dashboard:\n    Type: AWS::CloudWatch::Dashboard\n    \
         Properties:\n      DashboardName: !Sub \"${AWS::StackName}\"\n      DashboardBody: !Sub |\n",
    );
    for text in body.lines() {
        let _ = writeln!(out, "        {text}");
    }
    out
}
