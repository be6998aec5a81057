//! The floors of `shared/` (docs/functions.md, "The floors"): Cargo already refuses a cycle
//! between crates; this checks what it cannot: that a floor depends only on the floors below
//! it, that no floor below the kit reaches the HTTP server stack, even through another crate,
//! and that no function depends on another function.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each floor and the workspace crates it may depend on.
const FLOORS: &[(&str, &[&str])] = &[
    ("workapi-richtext", &[]),
    ("workapi-store", &[]),
    ("workapi-wire", &["workapi-richtext", "workapi-wire-derive"]),
    ("workapi-domain", &["workapi-store", "workapi-wire", "workapi-richtext"]),
    ("workapi-kit", &["workapi-store", "workapi-wire", "workapi-domain", "workapi-richtext"]),
];

/// The server-side HTTP stack: only the kit and the functions link it. (`http` itself reaches
/// the store through the AWS SDK's client, so it is checked as a direct dependency only.)
const HTTP_SERVER: &[&str] = &["axum", "axum-core", "lambda_http", "lambda_runtime", "tower-http", "utoipa-axum"];

/// The crates that put functions together; every other function depends on no function.
const AGGREGATORS: &[&str] = &["registry", "mcp", "local", "dispatch", "api-tests"];

struct Workspace {
    /// Package id → name, for every package in the graph.
    names: BTreeMap<String, String>,
    /// Workspace members by name → their manifest's directory.
    members: BTreeMap<String, String>,
    /// Package id → ids of its normal (and build) dependencies, as resolved.
    normal: BTreeMap<String, Vec<String>>,
}

/// The host's target triple: the graph is resolved for it (other platforms' crates, such as
/// Windows consoles, are not downloaded on this machine).
fn host() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc).arg("-vV").output().expect("rustc runs");
    let text = String::from_utf8(out.stdout).unwrap();
    let host = text.lines().find_map(|l| l.strip_prefix("host: "));
    host.expect("rustc -vV names the host").to_owned()
}

/// The workspace's dependency graph, read once for every test.
fn workspace() -> &'static Workspace {
    static GRAPH: std::sync::OnceLock<Workspace> = std::sync::OnceLock::new();
    GRAPH.get_or_init(read_workspace)
}

fn read_workspace() -> Workspace {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline", "--filter-platform", &host()])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap().to_owned(), p["name"].as_str().unwrap().to_owned()))
        .collect::<BTreeMap<_, _>>();
    let member_ids: BTreeSet<&str> =
        meta["workspace_members"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let members = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| member_ids.contains(p["id"].as_str().unwrap()))
        .map(|p| (p["name"].as_str().unwrap().to_owned(), p["manifest_path"].as_str().unwrap().to_owned()))
        .collect();
    let normal = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| {
            let deps = node["deps"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["dep_kinds"].as_array().unwrap().iter().any(|k| k["kind"].as_str() != Some("dev")))
                .map(|d| d["pkg"].as_str().unwrap().to_owned())
                .collect();
            (node["id"].as_str().unwrap().to_owned(), deps)
        })
        .collect();
    Workspace { names, members, normal }
}

impl Workspace {
    fn id(&self, name: &str) -> &str {
        let id = self.names.iter().find(|(_, n)| n.as_str() == name).map(|(id, _)| id.as_str());
        id.unwrap_or_else(|| panic!("{name} is in the workspace"))
    }

    /// The names of a package's direct normal dependencies.
    fn direct(&self, name: &str) -> BTreeSet<&str> {
        self.normal[self.id(name)].iter().map(|id| self.names[id].as_str()).collect()
    }

    /// The names of every package a package links (normal and build dependencies, transitively).
    fn reach(&self, name: &str) -> BTreeSet<&str> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![self.id(name).to_owned()];
        while let Some(id) = todo.pop() {
            for dep in &self.normal[&id] {
                if seen.insert(self.names[dep].as_str()) {
                    todo.push(dep.clone());
                }
            }
        }
        seen
    }
}

#[test]
fn each_floor_depends_only_on_the_floors_below_it() {
    let ws = workspace();
    for (floor, allowed) in FLOORS {
        let inside: BTreeSet<&str> = ws.direct(floor).into_iter().filter(|d| ws.members.contains_key(*d)).collect();
        let extra: Vec<_> = inside.iter().filter(|d| !allowed.contains(d)).collect();
        assert!(extra.is_empty(), "{floor} depends on {extra:?}; it may depend on {allowed:?} only");
    }
}

#[test]
fn no_floor_below_the_kit_links_the_http_server_stack() {
    let ws = workspace();
    for (floor, _) in FLOORS.iter().filter(|(f, _)| *f != "workapi-kit") {
        let linked: Vec<_> = ws.reach(floor).into_iter().filter(|d| HTTP_SERVER.contains(d)).collect();
        assert!(linked.is_empty(), "{floor} links {linked:?}");
        assert!(!ws.direct(floor).contains("http"), "{floor} depends on `http` directly");
    }
}

#[test]
fn no_function_depends_on_another_function() {
    let ws = workspace();
    let functions: BTreeSet<&str> = ws
        .members
        .iter()
        .filter(|(_, manifest)| manifest.contains("/functions/"))
        .map(|(name, _)| name.as_str())
        .collect();
    assert!(functions.len() > 10, "found the functions: {functions:?}");
    for function in functions.iter().filter(|f| !AGGREGATORS.contains(f)) {
        let others: Vec<_> = ws.direct(function).into_iter().filter(|d| functions.contains(d)).collect();
        assert!(
            others.is_empty(),
            "{function} depends on the functions {others:?}; share a record through workapi-domain"
        );
    }
}
