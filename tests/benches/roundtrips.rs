//! Store round trips per request, for every documented operation (DESIGN §7, docs/performance.md):
//! `cargo bench -p api-tests --bench roundtrips`. Runs the operation catalogue
//! (`api_tests::operations`) once, in its order, and counts the server's calls on the embedded
//! store (DynamoDB makes exactly the same calls: one trait), with the sequential depth: how many
//! of them the request waited for one after another. Then authentication alone per credential
//! kind, and the requests that fail before any handler. Each request's DynamoDB capacity units
//! (`api_tests::capacity`) and its duration with every store call taking
//! [`STORE_ROUND_TRIP`] give its cost per million requests (`api_tests::cost`) at the function's
//! MemorySize in template.yaml.

use api_tests::capacity::{Capacity, PARTITION_READ_UNITS, PARTITION_WRITE_UNITS, one_per_workspace, partition_kind};
use api_tests::cost::{Cost, memory_size};
use api_tests::operations::{Catalogue, Request, catalogue, success};
use api_tests::{PartitionUnits, RoundTrips, TestApi, backends};
use reqwest::Method;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What one DynamoDB call takes from a Lambda function in its region, as the duration model's
/// unit: AWS states single-digit milliseconds; 5 ms is a typical p50 from inside a VPC-less
/// function (docs/performance.md).
const STORE_ROUND_TRIP: Duration = Duration::from_millis(5);

async fn measure(api: &TestApi, catalogue: &Catalogue, request: &Request) -> (RoundTrips, u16, Vec<u8>, Duration) {
    let start = Instant::now();
    let (trips, (status, body)) = api.round_trips(catalogue.send(api, request)).await;
    (trips, status, body, start.elapsed())
}

/// The round trips of `GET path` with a bearer token given as is.
async fn with_token(api: &TestApi, path: &str, token: Option<&str>) -> (RoundTrips, u16) {
    let (trips, (status, _, _)) = api.round_trips(api.call(Method::GET, path, token, None)).await;
    (trips, status)
}

fn units_since(now: &PartitionUnits, before: &PartitionUnits) -> PartitionUnits {
    now.iter()
        .map(|(pk, units)| (pk.clone(), units.since(before.get(pk).copied().unwrap_or_default())))
        .filter(|(_, u)| u.read_units > 0.0 || u.write_units > 0.0)
        .collect()
}

/// Where a workspace's load lands (docs/performance.md, "Scale"): each kind of partition's
/// capacity units per request, averaged over a mix (every catalogue request once; its reads
/// only), and for the partitions there is one of per workspace, the units a second at 100,
/// 1,000 and 10,000 requests a second against DynamoDB's per-partition limits.
fn scale_table(api: &TestApi, loads: &[(String, bool, PartitionUnits)]) {
    for (mix, only_reads) in [("every catalogue request once", false), ("the catalogue's GET requests", true)] {
        let requests: Vec<&PartitionUnits> =
            loads.iter().filter(|(_, get, _)| *get || !only_reads).map(|(_, _, u)| u).collect();
        let mut kinds: BTreeMap<String, (Capacity, usize)> = BTreeMap::new();
        for units in &requests {
            let mut touched = BTreeMap::new();
            for (pk, u) in *units {
                touched.entry(partition_kind(pk, api.workspace_id)).or_insert_with(Capacity::default).add(*u);
            }
            for (kind, u) in touched {
                let entry = kinds.entry(kind).or_default();
                entry.0.add(u);
                entry.1 += 1;
            }
        }
        let n = requests.len() as f64;
        println!("\n{mix} ({} requests): capacity units per request, by partition", requests.len());
        println!(
            "\n| Partition | One per | Requests touching it | Read units / request | Write units / request | At 100 req/s | At 1,000 req/s | At 10,000 req/s | Ceiling (req/s) |"
        );
        println!("|---|---|---:|---:|---:|---|---|---|---:|");
        for (kind, (units, touching)) in &kinds {
            let (read, write) = (units.read_units / n, units.write_units / n);
            let shared = one_per_workspace(kind);
            let at = |rate: f64| {
                if shared { format!("{:.0} RCU, {:.0} WCU", read * rate, write * rate) } else { "spread".to_owned() }
            };
            let ceiling = if shared {
                let by_reads = if read > 0.0 { PARTITION_READ_UNITS / read } else { f64::INFINITY };
                let by_writes = if write > 0.0 { PARTITION_WRITE_UNITS / write } else { f64::INFINITY };
                format!("{:.0}", by_reads.min(by_writes))
            } else {
                "—".to_owned()
            };
            println!(
                "| `{kind}` | {} | {touching} | {read:.3} | {write:.3} | {} | {} | {} | {ceiling} |",
                if shared { "workspace" } else { "instance" },
                at(100.0),
                at(1000.0),
                at(10000.0)
            );
        }
    }
}

/// Which operations load each partition there is one of per workspace (capacity units of the
/// one request each), so the ceiling can be read per operation.
fn workspace_partition_readers(api: &TestApi, loads: &[(String, bool, PartitionUnits)]) {
    let mut readers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (operation, _, units) in loads {
        for (pk, u) in units {
            let kind = partition_kind(pk, api.workspace_id);
            if one_per_workspace(&kind) {
                readers
                    .entry(kind)
                    .or_default()
                    .push(format!("`{operation}` {:.1} RCU {:.1} WCU", u.read_units, u.write_units));
            }
        }
    }
    println!("\nper-workspace partitions, by operation (one request each):\n");
    for (kind, operations) in readers {
        println!("- `{kind}`: {}", operations.join(", "));
    }
}

#[tokio::main]
async fn main() {
    let backend = backends().await.into_iter().next().expect("the embedded backend");
    // Each store call is delayed, so that concurrent calls overlap and the depth shows.
    let api = TestApi::builder(&backend).store_latency(STORE_ROUND_TRIP).warm_roles_cache().start().await;
    let template =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../template.yaml")).expect("template.yaml");
    let catalogue = catalogue(&api).await;
    // The token's first use records lastUsedAt (at most once an hour); do it before counting.
    api.get("/tags/task", &catalogue.root_token).await;

    println!(
        "| Function | Operation | Status | Store reads | Store writes | Total | Sequential depth | Read units | Write units |"
    );
    println!("|---|---|---|---|---|---|---|---:|---:|");
    let mut costs = Vec::new();
    let (mut failed, mut max_depth) = (Vec::new(), 0);
    let mut access_token = None;
    let mut session_token = None;
    let mut loads = Vec::new();
    for request in &catalogue.requests {
        let before = api.partition_units();
        let (trips, status, body, took) = measure(&api, &catalogue, request).await;
        loads.push((
            request.operation_id.clone(),
            request.method == Method::GET,
            units_since(&api.partition_units(), &before),
        ));
        if !success(request, status) {
            failed.push(format!("{} {status}: {}", request.operation_id, String::from_utf8_lossy(&body)));
        }
        let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        match request.operation_id.as_str() {
            // Measured at once: the catalogue's last request deletes the client, and its tokens.
            "oauthToken" => {
                if let Some(token) = answer["access_token"].as_str() {
                    with_token(&api, "/tags/task", Some(token)).await; // first use
                    access_token = Some(with_token(&api, "/tags/task", Some(token)).await);
                }
            }
            "login" => session_token = answer["accessToken"].as_str().map(str::to_owned),
            _ => {}
        }
        let RoundTrips { reads, writes, depth, capacity } = trips;
        max_depth = max_depth.max(depth);
        println!(
            "| {} | `{}` {} | {status} | {reads} | {writes} | {} | {depth} | {} | {} |",
            request.function,
            request.operation_id,
            request.method,
            reads + writes,
            capacity.read_units,
            capacity.write_units
        );
        // The MemorySize of the function that serves the operation (its Binary in the template).
        let memory = memory_size(&template, request.function)
            .unwrap_or_else(|| panic!("template.yaml has no function with Binary: {}", request.function));
        let duration_ms = took.as_secs_f64() * 1000.0;
        costs.push((request, duration_ms, memory, Cost::of(capacity, duration_ms, memory)));
    }

    println!(
        "\n| Function | Operation | Duration ({} ms a store round trip) | MemorySize | API Gateway | Lambda | DynamoDB | Total per million |",
        STORE_ROUND_TRIP.as_millis()
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for (request, duration_ms, memory, cost) in &costs {
        println!(
            "| {} | `{}` | {duration_ms:.1} ms | {memory} MB | ${:.2} | ${:.3} | ${:.3} | **${:.2}** |",
            request.function,
            request.operation_id,
            cost.api_gateway,
            cost.lambda,
            cost.dynamodb,
            cost.total()
        );
    }

    // Authentication alone: a request whose handler makes no store call of its own would show
    // it; `GET /tags/task` makes one query, so its depth less one is authentication's.
    println!(
        "\n| Credential (`GET /tags/task`, one query of its own) | Status | Store reads | Store writes | Sequential depth | Authentication depth |"
    );
    println!("|---|---|---|---|---|---|");
    let registration = with_token(&api, "/tags/task", Some(&catalogue.registration_token)).await;
    let mut measured = Vec::new();
    for (name, token) in
        [("personal access token", Some(catalogue.root_token.clone())), ("login session (JWT)", session_token)]
    {
        if let Some(token) = token {
            with_token(&api, "/tags/task", Some(&token)).await; // first use
            measured.push((name, Some(with_token(&api, "/tags/task", Some(&token)).await)));
        } else {
            measured.push((name, None));
        }
    }
    measured.push(("OAuth access token", access_token));
    for (name, result) in measured {
        let Some((RoundTrips { reads, writes, depth, .. }, status)) = result else {
            println!("| {name} | not measured: no token | | | | |");
            continue;
        };
        println!("| {name} | {status} | {reads} | {writes} | {depth} | {} |", depth.saturating_sub(1));
    }
    let (RoundTrips { reads, writes, depth, .. }, status) = registration;
    println!(
        "| registration access token (RFC 7592; not an API credential) | {status} | {reads} | {writes} | {depth} | {depth} |"
    );

    // Requests refused before any handler.
    let forged = workapi_domain::token::mint(&workapi_domain::token::TokenKey::generate());
    println!("\n| Request | Status | Store reads | Store writes | Total | Sequential depth |");
    println!("|---|---|---|---|---|---|");
    for (name, path, token) in [
        ("no token (401)", "/tags/task", None),
        ("forged token (401)", "/tags/task", Some(forged.as_str())),
        ("unknown route (404)", "/nope", Some(catalogue.root_token.as_str())),
    ] {
        let (RoundTrips { reads, writes, depth, .. }, status) = with_token(&api, path, token).await;
        println!("| {name} | {status} | {reads} | {writes} | {} | {depth} |", reads + writes);
    }
    scale_table(&api, &loads);
    workspace_partition_readers(&api, &loads);
    eprintln!("max sequential depth over the catalogue: {max_depth}");
    assert!(failed.is_empty(), "catalogue requests that failed:\n{}", failed.join("\n"));
}
