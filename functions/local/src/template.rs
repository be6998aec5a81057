//! `workapi template`: what the registry implies for the files that deploy and emulate the
//! functions, written from each function's descriptor (`Function::needs`, docs/functions.md):
//!
//! - template.yaml, between [`TEMPLATE_BEGIN`] and [`TEMPLATE_END`]: every function's
//!   `AWS::Serverless::Function` resource (routes, memory, timeout, environment, policies,
//!   tracing, JSON logs, its alias and deployment preference), its log group and its alarms, and
//!   the dashboard (`crate::monitoring`); the MCP function's needs are the union of those of the
//!   functions it runs;
//! - Cargo.toml, between [`WATCH_BEGIN`] and [`WATCH_END`]: the `cargo lambda watch` router, the
//!   same paths as the API Gateway resources;
//! - `events/<function>/<operation>.json`: an API Gateway event for every documented operation
//!   that has none yet (existing events, often hand-tuned, are never rewritten).
//!
//! `workapi template --check` writes nothing and fails when a file differs; the registry test
//! `registry::the_generated_files_match_the_registry` runs the same check.

use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use workapi_kit::function::{Function, Grant, Variable};

pub const TEMPLATE_BEGIN: &str = "  # BEGIN generated functions (`workapi template`)";
pub const TEMPLATE_END: &str = "  # END generated functions";
pub const WATCH_BEGIN: &str = "# BEGIN generated watch router (`workapi template`)";
pub const WATCH_END: &str = "# END generated watch router";

/// A file as the registry implies it, relative to the repository root.
#[derive(Debug, PartialEq)]
pub struct File {
    pub path: PathBuf,
    pub text: String,
}

/// What a function needs once the functions it runs are added in: `data` if any needs it,
/// every distinct grant and variable in order.
#[derive(Debug, Default)]
pub struct Resolved {
    pub data: bool,
    pub grants: Vec<&'static Grant>,
    pub variables: Vec<Variable>,
}

/// The function's needs with those of every function it runs. Two grants with one `sid` but
/// different statements, or two values of one variable, are an error: a policy or an
/// environment cannot hold both.
pub fn resolve(function: &'static Function) -> Result<Resolved, String> {
    let mut resolved = Resolved::default();
    let mut declared = Vec::new();
    add(function, &mut resolved, &mut declared)?;
    let implied: Vec<Variable> = resolved.grants.iter().map(|g| g.on.variable()).collect();
    for variable in implied.into_iter().chain(declared) {
        match resolved.variables.iter().find(|v| v.name == variable.name) {
            Some(v) if *v == variable => {}
            Some(v) => return Err(format!("{}: {} is both {} and {}", function.name, v.name, v.value, variable.value)),
            None => resolved.variables.push(variable),
        }
    }
    Ok(resolved)
}

fn add(function: &'static Function, into: &mut Resolved, variables: &mut Vec<Variable>) -> Result<(), String> {
    let needs = &function.needs;
    into.data |= needs.data;
    for grant in needs.grants {
        match into.grants.iter().find(|g| g.sid == grant.sid) {
            Some(g) if *g == grant => {}
            Some(_) => return Err(format!("{}: two different grants are named {}", function.name, grant.sid)),
            None => into.grants.push(grant),
        }
    }
    variables.extend(needs.environment.iter().copied());
    needs.runs.iter().try_for_each(|run| add(run, into, variables))
}

/// `tags` → `TagsFunction`, the SAM resource.
pub fn resource_name(function: &Function) -> String {
    let mut chars = function.name.chars();
    let capitalised = chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default();
    format!("{capitalised}Function")
}

/// `# ` lines of a note at an indentation (nothing for an empty note).
fn comment(out: &mut String, indent: usize, note: &str) {
    for line in note.lines().filter(|_| !note.is_empty()) {
        let _ = writeln!(out, "{:indent$}# {line}", "");
    }
}

/// The function's resource and its log group, as template.yaml holds them.
pub fn function_block(function: &'static Function) -> Result<String, String> {
    let needs = &function.needs;
    let resolved = resolve(function)?;
    let (name, resource) = (function.name, resource_name(function));
    if needs.routes.is_empty() {
        return Err(format!("{name}: its descriptor declares no route (needs.routes)"));
    }
    let mut out = String::new();
    comment(&mut out, 2, needs.note);
    let _ = write!(
        out,
        "  {resource}:\n    Type: AWS::Serverless::Function\n    Metadata:\n      BuildMethod: rust-cargolambda\n      \
         BuildProperties:\n        Binary: {name}\n    Properties:\n"
    );
    if let Some(memory) = &needs.memory {
        comment(&mut out, 6, memory.why);
        let _ = writeln!(out, "      MemorySize: {}", memory.megabytes);
    }
    if let Some(seconds) = needs.timeout_seconds {
        let _ = writeln!(out, "      Timeout: {seconds}");
    }
    let _ = writeln!(out, "      CodeUri: .\n      Description: workapi {name} ({})", needs.summary);
    out.push_str(&crate::monitoring::function_properties(&resource));
    out.push_str("      Events:\n");
    for route in needs.routes {
        comment(&mut out, 8, route.note);
        let _ = write!(
            out,
            "        {}:\n          Type: Api\n          Properties:\n            RestApiId: !Ref Api\n            \
             Path: {}\n            Method: ANY\n",
            route.event, route.path
        );
    }
    if !resolved.variables.is_empty() {
        out.push_str("      Environment:\n        Variables:\n");
        for variable in &resolved.variables {
            let _ = writeln!(out, "          {}: {}", variable.name, variable.value);
        }
    }
    out.push_str("      Policies:\n        - !Ref FunctionBasePolicy\n");
    if resolved.data {
        out.push_str("        - !Ref DataAccessPolicy\n");
    }
    if !resolved.grants.is_empty() {
        out.push_str("        - Version: \"2012-10-17\"\n          Statement:\n");
        for grant in &resolved.grants {
            comment(&mut out, 12, grant.note);
            let _ = write!(out, "            - Sid: {}\n              Effect: Allow\n", grant.sid);
            match grant.actions {
                [action] => {
                    let _ = writeln!(out, "              Action: {action}");
                }
                actions => {
                    out.push_str("              Action:\n");
                    for action in actions {
                        let _ = writeln!(out, "                - {action}");
                    }
                }
            }
            let _ = writeln!(out, "              Resource: {}", grant.on.arn());
        }
    }
    let _ = write!(
        out,
        "\n  {resource}Logs:\n    Type: AWS::Logs::LogGroup\n    Properties:\n      LogGroupName: !Sub \
         \"/aws/lambda/${{{resource}}}\"\n      RetentionInDays: !Ref LogRetentionDays\n"
    );
    out.push_str(&crate::monitoring::function_alarms(function, &resource));
    Ok(out)
}

/// The generated part of template.yaml: every function's block, a blank line between.
pub fn functions_section(functions: &[&'static Function]) -> Result<String, String> {
    let mut blocks: Vec<String> = functions.iter().map(|f| function_block(f)).collect::<Result<_, _>>()?;
    blocks.push(crate::monitoring::dashboard(functions));
    Ok(blocks.join("\n"))
}

/// The generated part of Cargo.toml: each function's routes for `cargo lambda watch`.
pub fn watch_section(functions: &[&'static Function]) -> String {
    let mut out = String::from("[workspace.metadata.lambda.watch.router]\n");
    for function in functions {
        for route in function.needs.routes {
            let _ = writeln!(out, "\"{}\" = \"{}\"", route.path.replace("{proxy+}", "{*rest}"), function.name);
        }
    }
    out
}

/// `text` with the lines between the `begin` and `end` marker lines replaced by `section`.
pub fn splice(text: &str, begin: &str, end: &str, section: &str) -> Result<String, String> {
    let missing = |marker: &str| format!("no line {marker:?}");
    let start = text.find(&format!("{begin}\n")).ok_or_else(|| missing(begin))? + begin.len() + 1;
    let stop = start + text[start..].find(&format!("{end}\n")).ok_or_else(|| missing(end))?;
    if stop > 0 && !text[..stop].ends_with('\n') {
        return Err(missing(end));
    }
    Ok(format!("{}{section}{}", &text[..start], &text[stop..]))
}

/// Whether a concrete path (placeholders included) fits a path template.
pub fn template_matches(template: &str, path: &str) -> bool {
    let (t, p): (Vec<_>, Vec<_>) = (template.split('/').collect(), path.split('/').collect());
    t.len() == p.len() && t.iter().zip(&p).all(|(t, p)| t == p || (t.starts_with('{') && t.ends_with('}')))
}

/// How API Gateway (REST) matches `path` against `resource`: segment by segment, a literal
/// segment before `{param}`, `{param}` before the greedy `{proxy+}` (one segment or more).
/// Returns the match's rank (higher is more specific) and the path parameters it binds.
pub fn gateway_match(resource: &str, path: &str) -> Option<(Vec<u8>, serde_json::Map<String, Value>)> {
    let segments = |p: &str| -> Vec<String> { p.trim_start_matches('/').split('/').map(str::to_owned).collect() };
    let (resource, path) = (segments(resource), segments(path));
    let (mut rank, mut params) = (Vec::new(), serde_json::Map::new());
    for (i, segment) in resource.iter().enumerate() {
        if segment == "{proxy+}" {
            let rest = path.get(i..).filter(|rest| !rest.is_empty() && rest.iter().all(|s| !s.is_empty()))?;
            params.insert("proxy".into(), Value::String(rest.join("/")));
            rank.push(0);
            return Some((rank, params));
        }
        let part = path.get(i)?;
        match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(name) if !part.is_empty() => {
                params.insert(name.into(), Value::String(part.clone()));
                rank.push(1);
            }
            None if segment == part => rank.push(2),
            _ => return None,
        }
    }
    (resource.len() == path.len()).then_some((rank, params))
}

/// The events of a function: every `events/<name>/*.json`, by file name.
pub fn events(root: &Path, function: &Function) -> Vec<(PathBuf, String)> {
    let dir = root.join("events").join(function.name);
    let mut found: Vec<_> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|p| std::fs::read_to_string(&p).ok().map(|text| (p, text)))
        .collect();
    found.sort();
    found
}

/// `saveTagColor` → `save-tag-color`.
fn kebab(name: &str) -> String {
    name.chars().fold(String::new(), |mut out, c| {
        if c.is_ascii_uppercase() && !out.is_empty() {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
        out
    })
}

/// `expressQuotationId` → `${EXPRESS_QUOTATION_ID}`: a placeholder like those of the written
/// events (its shape is invalid, so the event still reaches the route and answers 400).
fn placeholder(name: &str) -> String {
    format!("${{{}}}", kebab(name).replace('-', "_").to_ascii_uppercase())
}

/// The schema a `$ref` names, followed until it is no reference.
fn resolve_schema<'d>(document: &'d Value, mut schema: &'d Value) -> &'d Value {
    while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        schema = &document["components"]["schemas"][reference.trim_start_matches("#/components/schemas/")];
    }
    schema
}

/// A parameter's value in a generated event: its example, else its schema's first allowed
/// value, else a placeholder.
fn parameter_value(document: &Value, parameter: &Value) -> String {
    let schema = resolve_schema(document, &parameter["schema"]);
    let value = parameter.get("example").or_else(|| schema["enum"].get(0));
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => placeholder(parameter["name"].as_str().unwrap_or("value")),
    }
}

/// A JSON request body's example: on the media type, or on its (resolved) schema.
fn body_example(document: &Value, operation: &Value) -> Option<Value> {
    let media = operation.pointer("/requestBody/content/application~1json")?;
    let first = |v: &Value| v.get("example").cloned().or_else(|| v["examples"].get(0).cloned());
    let schema = &media["schema"];
    media.get("example").cloned().or_else(|| first(schema)).or_else(|| first(resolve_schema(document, schema)))
}

/// An ordered JSON object (API Gateway's order, as in the written events), pretty-printed with
/// two spaces like them.
enum Json {
    Raw(Value),
    Object(Vec<(&'static str, Json)>),
}

impl Json {
    fn write(&self, out: &mut String, indent: usize) {
        match self {
            Json::Raw(value) => {
                let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
                out.push_str(&pretty.replace('\n', &format!("\n{:indent$}", "")));
            }
            Json::Object(fields) => {
                out.push_str("{\n");
                for (i, (name, value)) in fields.iter().enumerate() {
                    let _ = write!(out, "{:width$}\"{name}\": ", "", width = indent + 2);
                    value.write(out, indent + 2);
                    out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
                }
                let _ = write!(out, "{:indent$}}}", "");
            }
        }
    }
}

/// The API Gateway REST proxy event of one operation, routed as the template's resources route
/// it; None when no resource matches (then the template lacks a route, which the registry test
/// names).
fn event(
    document: &Value,
    resources: &[(&str, &str)],
    template: &str,
    method: &str,
    operation: &Value,
) -> Option<String> {
    let parameters = operation["parameters"].as_array().cloned().unwrap_or_default();
    let of = |location: &str| -> Vec<(String, String)> {
        parameters
            .iter()
            .filter(|p| p["in"] == location && (location == "path" || p["required"] == true))
            .map(|p| (p["name"].as_str().unwrap_or_default().to_owned(), parameter_value(document, p)))
            .collect()
    };
    let mut path = template.to_owned();
    for (name, value) in of("path") {
        path = path.replace(&format!("{{{name}}}"), &value);
    }
    let (_, resource, bound) = resources
        .iter()
        .filter_map(|(_, resource)| gateway_match(resource, &path).map(|(rank, bound)| (rank, *resource, bound)))
        .max_by(|a, b| a.0.cmp(&b.0))?;
    let body = body_example(document, operation);
    let mut headers = vec![
        ("Accept", "application/json".to_owned()),
        ("Authorization", "Bearer ${TOKEN}".to_owned()),
        ("Host", "abc123.execute-api.eu-central-1.amazonaws.com".to_owned()),
        ("User-Agent", "curl/8.5.0".to_owned()),
        ("X-Forwarded-For", "198.51.100.7".to_owned()),
        ("X-Forwarded-Proto", "https".to_owned()),
    ];
    if body.is_some() {
        headers.push(("Content-Type", "application/json".to_owned()));
    }
    let query = of("query");
    let single = |pairs: Vec<(String, String)>| -> Value {
        if pairs.is_empty() { Value::Null } else { pairs.into_iter().map(|(k, v)| (k, Value::String(v))).collect() }
    };
    let multi = |pairs: Vec<(String, String)>| -> Value {
        if pairs.is_empty() {
            Value::Null
        } else {
            pairs.into_iter().map(|(k, v)| (k, Value::Array(vec![Value::String(v)]))).collect()
        }
    };
    let raw = |value: Value| Json::Raw(value);
    let text = |s: &str| Json::Raw(Value::String(s.to_owned()));
    let event = Json::Object(vec![
        ("resource", text(resource)),
        ("path", text(&path)),
        ("httpMethod", text(method)),
        ("headers", Json::Object(headers.iter().map(|(k, v)| (*k, text(v))).collect())),
        ("multiValueHeaders", Json::Object(headers.iter().map(|(k, v)| (*k, raw(serde_json::json!([v])))).collect())),
        ("queryStringParameters", raw(single(query.clone()))),
        ("multiValueQueryStringParameters", raw(multi(query))),
        ("pathParameters", raw(if bound.is_empty() { Value::Null } else { Value::Object(bound) })),
        ("stageVariables", raw(Value::Null)),
        (
            "requestContext",
            Json::Object(vec![
                ("accountId", text("123456789012")),
                ("resourceId", text("abc123")),
                ("stage", text("prod")),
                ("requestId", text("c6af9ac6-7b61-11e6-9a41-93e8deadbeef")),
                ("identity", Json::Object(vec![("sourceIp", text("198.51.100.7")), ("userAgent", text("curl/8.5.0"))])),
                ("resourcePath", text(resource)),
                ("httpMethod", text(method)),
                ("apiId", text("abc123def4")),
                ("path", text(&format!("/prod{path}"))),
                ("protocol", text("HTTP/1.1")),
                ("requestTimeEpoch", raw(Value::from(1_795_000_000_000_u64))),
            ]),
        ),
        ("body", raw(body.map_or(Value::Null, |b| Value::String(b.to_string())))),
        ("isBase64Encoded", raw(Value::Bool(false))),
    ]);
    let mut out = String::new();
    event.write(&mut out, 0);
    out.push('\n');
    Some(out)
}

/// The events to add: one for every documented operation of `functions` without one.
pub fn missing_events(root: &Path, functions: &[&'static Function], document: &Value) -> Vec<File> {
    let resources: Vec<(&str, &str)> =
        functions.iter().flat_map(|f| f.needs.routes.iter().map(move |r| (f.name, r.path))).collect();
    let mut missing = Vec::new();
    for function in functions {
        let existing: Vec<(String, String)> = events(root, function)
            .into_iter()
            .filter_map(|(_, text)| {
                let event: Value = serde_json::from_str(&text).ok()?;
                Some((event["httpMethod"].as_str()?.to_owned(), event["path"].as_str()?.to_owned()))
            })
            .collect();
        let own = serde_json::to_value(function.document()).unwrap_or_default();
        let mut names = BTreeSet::new();
        for (template, item) in own["paths"].as_object().into_iter().flatten() {
            for method in item.as_object().into_iter().flatten().map(|(m, _)| m.to_uppercase()) {
                if existing.iter().any(|(m, path)| *m == method && template_matches(template, path)) {
                    continue;
                }
                let operation = &document["paths"][template][method.to_lowercase()];
                let id = operation["operationId"].as_str().map_or_else(|| kebab(&method), kebab);
                let Some(text) = event(document, &resources, template, &method, operation) else { continue };
                let mut name = id.clone();
                while !names.insert(name.clone())
                    || root.join("events").join(function.name).join(format!("{name}.json")).exists()
                {
                    name.push_str("-2");
                }
                missing.push(File { path: Path::new("events").join(function.name).join(format!("{name}.json")), text });
            }
        }
    }
    missing
}

/// Every file that differs from what `functions` imply (the registry's document for their
/// operations): template.yaml and Cargo.toml with their generated parts, and missing events.
pub fn stale(root: &Path, functions: &[&'static Function], document: &Value) -> Result<Vec<File>, String> {
    let read = |path: &str| std::fs::read_to_string(root.join(path)).map_err(|e| format!("{path}: {e}"));
    let mut files = Vec::new();
    let template = read("template.yaml")?;
    let section = functions_section(functions)?;
    let generated =
        splice(&template, TEMPLATE_BEGIN, TEMPLATE_END, &section).map_err(|e| format!("template.yaml: {e}"))?;
    if generated != template {
        files.push(File { path: "template.yaml".into(), text: generated });
    }
    let cargo = read("Cargo.toml")?;
    let generated =
        splice(&cargo, WATCH_BEGIN, WATCH_END, &watch_section(functions)).map_err(|e| format!("Cargo.toml: {e}"))?;
    if generated != cargo {
        files.push(File { path: "Cargo.toml".into(), text: generated });
    }
    files.extend(missing_events(root, functions, document));
    Ok(files)
}

/// Where `found` first departs from `expected`, with the expected resource (or event) around
/// that line, for a check's message.
pub fn first_difference(expected: &str, found: &str) -> String {
    let expected_lines: Vec<&str> = expected.lines().collect();
    let found_lines: Vec<&str> = found.lines().collect();
    let Some(at) =
        (0..expected_lines.len().max(found_lines.len())).find(|&i| expected_lines.get(i) != found_lines.get(i))
    else {
        return "only the final newline differs".into();
    };
    // The expected block holding the line: from its resource's header (two spaces, a name, a
    // colon) to the next blank line.
    let start = (0..=at.min(expected_lines.len().saturating_sub(1)))
        .rev()
        .find(|&i| {
            let line = expected_lines[i];
            line.starts_with("  ") && !line.starts_with("   ") && line.ends_with(':')
        })
        .unwrap_or(at.saturating_sub(5));
    let end = (at..expected_lines.len()).find(|&i| expected_lines[i].is_empty()).unwrap_or(expected_lines.len());
    format!(
        "line {}: expected {:?}, found {:?}; expected:\n{}",
        at + 1,
        expected_lines.get(at),
        found_lines.get(at),
        expected_lines.get(start..end).unwrap_or_default().join("\n")
    )
}

/// What differs, file by file, with the expected text where it departs.
pub fn report(root: &Path, files: &[File]) -> String {
    let mut report = String::from(
        "these files differ from what the registry implies; run `cargo run -p local -- template` (docs/functions.md):\n",
    );
    for file in files {
        let difference = match std::fs::read_to_string(root.join(&file.path)) {
            Ok(found) => first_difference(&file.text, &found),
            Err(_) => format!("missing; expected:\n{}", file.text),
        };
        let _ = writeln!(report, "{}: {difference}", file.path.display());
    }
    report
}

/// `workapi template [--check]` in the repository at `root`.
pub fn run(root: &Path, check: bool) -> Result<(), String> {
    let functions: Vec<&'static Function> = crate::functions().collect();
    let document = serde_json::to_value(registry::document()).map_err(|e| e.to_string())?;
    let files = stale(root, &functions, &document)?;
    if check {
        if files.is_empty() {
            eprintln!("template.yaml, Cargo.toml's watch router and events/ match the registry");
            return Ok(());
        }
        return Err(report(root, &files));
    }
    for file in &files {
        let path = root.join(&file.path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(&path, &file.text).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("wrote {}", file.path.display());
    }
    if files.is_empty() {
        eprintln!("nothing to write: every file matches the registry");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_replaces_only_between_the_markers() {
        let text = "a\n# B\nold\nlines\n# E\nz\n";
        assert_eq!(splice(text, "# B", "# E", "new\n").unwrap(), "a\n# B\nnew\n# E\nz\n");
        assert!(splice("a\n# B\n", "# B", "# E", "").is_err(), "no end marker");
        assert!(splice("a\n", "# B", "# E", "").is_err(), "no begin marker");
    }

    #[test]
    fn names_and_placeholders() {
        assert_eq!(kebab("saveTagColor"), "save-tag-color");
        assert_eq!(placeholder("expressQuotationId"), "${EXPRESS_QUOTATION_ID}");
        assert_eq!(resource_name(&mcp::FUNCTION), "McpFunction");
    }

    /// MCP runs every function of the registry, so it holds each grant one of them declares and
    /// the variables those grants and their declarations bring.
    #[test]
    fn mcp_needs_the_union_of_what_it_runs() {
        let mcp = resolve(&mcp::FUNCTION).unwrap();
        assert!(mcp.data);
        for function in registry::FUNCTIONS {
            for grant in function.needs.grants {
                assert!(mcp.grants.contains(&grant), "mcp lacks {} of {}", grant.sid, function.name);
                assert!(mcp.variables.contains(&grant.on.variable()), "mcp lacks {}'s variable", grant.sid);
            }
            for variable in function.needs.environment {
                assert!(mcp.variables.contains(variable), "mcp lacks {} of {}", variable.name, function.name);
            }
        }
        let docs = registry::FUNCTIONS.iter().find(|f| f.name == "docs").unwrap();
        let docs = resolve(docs).unwrap();
        assert!(!docs.data && docs.grants.is_empty() && docs.variables.is_empty());
    }

    /// A scratch repository root holding `files`, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str, files: &[(&str, &str)]) -> Scratch {
            let root = std::env::temp_dir().join(format!("workapi-template-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            for (path, text) in files {
                std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
                std::fs::write(root.join(path), text).unwrap();
            }
            Scratch(root)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// The check fails on a hand edit between the markers, names the file and the line, and
    /// the regenerated text is the generated one again.
    #[test]
    fn a_hand_edited_block_is_stale() {
        let functions = [&mcp::FUNCTION];
        let template =
            format!("Resources:\n{TEMPLATE_BEGIN}\n{}{TEMPLATE_END}\n", functions_section(&functions).unwrap());
        let cargo = format!("{WATCH_BEGIN}\n{}{WATCH_END}\n", watch_section(&functions));
        assert!(template.contains("Path: /mcp/{proxy+}") && cargo.contains("\"/mcp/{*rest}\" = \"mcp\""));
        let document = serde_json::json!({"paths": {}});
        let fresh = Scratch::new("fresh", &[("template.yaml", &template), ("Cargo.toml", &cargo)]);
        assert_eq!(stale(&fresh.0, &functions, &document).unwrap(), []);

        let edited = template.replace("                - s3:DeleteObject\n", "");
        assert_ne!(edited, template);
        let drifted = Scratch::new("drifted", &[("template.yaml", &edited), ("Cargo.toml", &cargo)]);
        let files = stale(&drifted.0, &functions, &document).unwrap();
        assert_eq!(files, [File { path: "template.yaml".into(), text: template }]);
        let message = report(&drifted.0, &files);
        assert!(message.contains("template.yaml: line") && message.contains("s3:DeleteObject"), "{message}");
    }

    /// An operation without an event gets one that API Gateway would send for it: the resource
    /// the template routes it by, the path parameters that resource binds, the body example.
    #[test]
    fn missing_events_are_derived_from_the_document() {
        let tags = registry::FUNCTIONS.iter().find(|f| f.name == "tags").unwrap();
        let document = serde_json::to_value(registry::document()).unwrap();
        let empty = Scratch::new("events", &[]);
        let events = missing_events(&empty.0, &[tags], &document);
        let operations = serde_json::to_value(tags.document()).unwrap()["paths"]
            .as_object()
            .unwrap()
            .values()
            .map(|item| item.as_object().unwrap().len())
            .sum::<usize>();
        assert_eq!(events.len(), operations);
        let create = events.iter().find(|e| e.path.ends_with("events/tags/create-tag.json")).expect("createTag");
        let event: Value = serde_json::from_str(&create.text).unwrap();
        assert_eq!(event["httpMethod"], "POST");
        assert_eq!(event["path"], "/tags/task/create");
        assert_eq!(event["resource"], "/tags/{proxy+}");
        assert_eq!(event["requestContext"]["resourcePath"], "/tags/{proxy+}");
        assert_eq!(event["pathParameters"], serde_json::json!({"proxy": "task/create"}));
        let body: Value = serde_json::from_str(event["body"].as_str().unwrap()).unwrap();
        assert!(body["name"].is_string(), "{body}");
        // Written events are kept: with them present nothing is missing.
        let written = Scratch::new(
            "written",
            &events.iter().map(|e| (e.path.to_str().unwrap(), e.text.as_str())).collect::<Vec<_>>(),
        );
        assert_eq!(missing_events(&written.0, &[tags], &document), []);
    }
}
