//! The soak (bench/soak.sh; not CI): the local server (`workapi serve`) on DynamoDB Local behind
//! the fault proxy with ~1 % of store requests faulted, a steady mixed load for a while, then a
//! report: requests, the status mix, p50/p99, the server's RSS at start and end, and whether
//! every acknowledged create reads back. docs/reliability.md#the-soak.
//!
//! Environment: `LT_DYNAMODB_ENDPOINT` (required), `SOAK_SECS` (600), `SOAK_RATE` (requests per
//! second, 20), `SOAK_FAULTS` (fraction of store requests faulted, 0.01), `SOAK_USERS` (tokens,
//! 50), `SOAK_CREATE_KIND` (one tag type for every create, e.g. `object`, which the load never lists), `SOAK_SERVER` (the `workapi` binary, target/debug/workapi).

use api_tests::fault_proxy::{Fault, FaultProxy, Rule};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use workapi_domain::identity::{self, NewToken, NewUser, UserKind};
use workapi_domain::permissions::ROOT;
use workapi_domain::token::TokenKey;
use workapi_kit::session::SessionKeySet;
use workapi_store::Store;

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

#[derive(Default)]
struct Tally {
    statuses: BTreeMap<String, BTreeMap<u16, usize>>,
    latencies_ms: Vec<f64>,
    created: Vec<(String, String, String)>, // (token, tag type, name) acknowledged with 2xx
    transport_errors: usize,
}

#[tokio::main]
async fn main() {
    let endpoint = std::env::var("LT_DYNAMODB_ENDPOINT").expect("LT_DYNAMODB_ENDPOINT: a running DynamoDB Local");
    let secs: u64 = env("SOAK_SECS", 600);
    let rate: u64 = env("SOAK_RATE", 20);
    let fault_rate: f64 = env("SOAK_FAULTS", 0.01);
    let users: usize = env("SOAK_USERS", 50);
    // `SOAK_CREATE_KIND=object` creates tags of a type the load never lists, so that the reads'
    // working set stays the same size all along (tells a leak from a growing data set).
    let create_kind = std::env::var("SOAK_CREATE_KIND").ok();
    let server = std::env::var("SOAK_SERVER").unwrap_or_else(|_| "target/debug/workapi".into());

    // The table, a workspace and its tokens, written directly (not through the proxy).
    let direct = api_tests::dynamo_store(&endpoint).await;
    let table = direct.table().to_owned();
    let key = TokenKey::generate();
    let workspace = identity::create_workspace(&direct, "Soak", "en").await.expect("workspace");
    let mut tokens = Vec::new();
    for i in 0..users {
        let email = format!("soak-{i}-{}@test.example", uuid::Uuid::new_v4().simple());
        let new = NewUser { email: &email, name: "Soak", role_id: ROOT, kind: UserKind::Employee, language: "en" };
        let user = identity::create_user(&direct as &dyn Store, workspace.id, new).await.expect("user");
        let scopes = vec!["api:read".into(), "api:write".into()];
        let (token, _) = identity::create_token(
            &direct,
            &key,
            workspace.id,
            user.id,
            NewToken { name: "soak", scopes, expires_at: None },
        )
        .await
        .expect("token");
        tokens.push(token);
    }

    // ~1 % of store requests faulted, spread over the kinds the SDK must absorb or report.
    let proxy = FaultProxy::start(&endpoint).await;
    let kinds = [
        Fault::Throttling,
        Fault::ProvisionedThroughputExceeded,
        Fault::Status(500),
        Fault::Status(503),
        Fault::Latency(Duration::from_millis(300)),
        Fault::Reset,
        Fault::Truncate,
    ];
    for fault in kinds.iter().cloned() {
        proxy.inject(Rule::any(fault).chance(fault_rate / kinds.len() as f64));
    }

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let data = std::env::temp_dir().join(format!("workapi-soak-{}", uuid::Uuid::new_v4().simple()));
    let mut child = std::process::Command::new(&server)
        .args(["serve", "--store", &format!("dynamodb:{table}"), "--addr", &format!("127.0.0.1:{port}")])
        .env("LT_DATA_DIR", &data)
        .env("AWS_ENDPOINT_URL_DYNAMODB", proxy.url())
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_REGION", "us-east-1")
        .env("LT_TOKEN_KEY", key.to_hex())
        .env("LT_SESSION_KEYS", SessionKeySet::generate("soak").to_json())
        .env("LT_RATE_LIMIT_TOKEN", "100000000")
        .env("LT_RATE_LIMIT_IP", "100000000")
        .env("RUST_LOG", "warn")
        // The server logs (warnings and errors: each names its request id) go to a file.
        .stdout(std::process::Stdio::from(std::fs::File::create("target/soak-server.log").expect("log file")))
        .stderr(std::process::Stdio::from(std::fs::File::create("target/soak-server.err").expect("log file")))
        .spawn()
        .expect("start the workapi server (cargo build -p local first)");
    let pid = child.id();
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::builder().timeout(Duration::from_secs(15)).build().unwrap();
    for _ in 0..200 {
        if http.get(format!("{base}/docs")).send().await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A short warm-up so that the start RSS is the steady state's, not the empty process's.
    for token in &tokens {
        let _ = http.get(format!("{base}/tags/task")).bearer_auth(token).send().await;
    }
    let rss_start = rss_kib(pid);
    proxy.reset_counts();

    let tally = Arc::new(Mutex::new(Tally::default()));
    let started = Instant::now();
    // The server's RSS once a minute, to tell a leak (steady growth) from a burst.
    let samples = Arc::new(Mutex::new(vec![(0u64, rss_start)]));
    let sampler = {
        let samples = samples.clone();
        tokio::spawn(async move {
            let mut minute = tokio::time::interval(Duration::from_secs(60));
            minute.tick().await;
            loop {
                minute.tick().await;
                samples.lock().unwrap().push((started.elapsed().as_secs(), rss_kib(pid)));
            }
        })
    };
    let mut ticker = tokio::time::interval(Duration::from_micros(1_000_000 / rate.max(1)));
    let mut n: u64 = 0;
    let mut inflight = tokio::task::JoinSet::new();
    while started.elapsed() < Duration::from_secs(secs) {
        ticker.tick().await;
        n += 1;
        let token = tokens[(n as usize * 7919) % tokens.len()].clone();
        let (http, base, tally, create_kind) = (http.clone(), base.clone(), tally.clone(), create_kind.clone());
        inflight.spawn(async move {
            // 30 % creates (two functions' tag types), 70 % reads across functions.
            let (label, request, created) = match n % 10 {
                0..=2 => {
                    let kind = match create_kind.as_deref() {
                        Some(kind) => kind,
                        None if n.is_multiple_of(2) => "task",
                        None => "project",
                    };
                    let name = format!("soak-{n}-{}", uuid::Uuid::new_v4().simple());
                    let request = http.post(format!("{base}/tags/{kind}/create")).json(&json!({"name": name}));
                    ("POST /tags/{type}/create", request, Some((kind.to_owned(), name)))
                }
                3 | 4 => ("GET /tags/task", http.get(format!("{base}/tags/task")), None),
                5 => ("GET /projects", http.get(format!("{base}/projects")), None),
                6 => ("GET /contacts", http.get(format!("{base}/contacts")), None),
                7 => ("GET /account/notifications", http.get(format!("{base}/account/notifications")), None),
                8 => ("GET /tags/project", http.get(format!("{base}/tags/project")), None),
                _ => ("GET /administration/roles", http.get(format!("{base}/administration/roles")), None),
            };
            let begun = Instant::now();
            let result = request.bearer_auth(&token).send().await;
            let elapsed = begun.elapsed().as_secs_f64() * 1000.0;
            let mut tally = tally.lock().unwrap();
            match result {
                Ok(response) => {
                    let status = response.status().as_u16();
                    tally.latencies_ms.push(elapsed);
                    *tally.statuses.entry(label.to_owned()).or_default().entry(status).or_default() += 1;
                    if let (true, Some((kind, name))) = (response.status().is_success(), created) {
                        tally.created.push((token, kind, name));
                    }
                }
                Err(_) => tally.transport_errors += 1,
            }
        });
        while let Some(done) = inflight.try_join_next() {
            done.expect("a load task");
        }
    }
    while inflight.join_next().await.is_some() {}
    let elapsed = started.elapsed();
    sampler.abort();
    let rss_end = rss_kib(pid);
    let injected = proxy.injected("*");
    let store_requests = proxy.count("*");

    // Every acknowledged create reads back (faults off: this checks what the store kept).
    proxy.heal();
    let tally = Arc::try_unwrap(tally).ok().expect("all tasks done").into_inner().unwrap();
    let mut missing = 0;
    let mut listed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let kinds: Vec<String> = match &create_kind {
        Some(kind) => vec![kind.clone()],
        None => vec!["task".into(), "project".into()],
    };
    for kind in &kinds {
        let (status, body) = get_json(&http, &format!("{base}/tags/{kind}"), &tokens[0]).await;
        assert_eq!(status, 200, "listing {kind} tags after the soak");
        let names = body.as_array().into_iter().flatten().filter_map(|t| t["name"].as_str().map(str::to_owned));
        listed.insert(kind.clone(), names.collect());
    }
    for (_, kind, name) in &tally.created {
        if !listed[kind.as_str()].contains(name) {
            missing += 1;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&data);

    let mut latencies = tally.latencies_ms.clone();
    latencies.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0)
    };
    let total: usize = tally.statuses.values().flat_map(|m| m.values()).sum();
    let mut mix: BTreeMap<u16, usize> = BTreeMap::new();
    for per in tally.statuses.values() {
        for (status, count) in per {
            *mix.entry(*status).or_default() += count;
        }
    }
    println!("## Soak report");
    println!(
        "duration {:.0} s, target rate {rate}/s, {users} tokens, store fault rate {fault_rate}",
        elapsed.as_secs_f64()
    );
    println!("requests answered {total}, transport errors {}", tally.transport_errors);
    println!("status mix {mix:?}");
    for (label, per) in &tally.statuses {
        println!("  {label}: {per:?}");
    }
    println!(
        "latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        pct(0.50),
        pct(0.99),
        latencies.last().copied().unwrap_or(0.0)
    );
    println!("store requests {store_requests}, faults injected {injected}");
    println!(
        "server RSS start {rss_start} KiB, end {rss_end} KiB ({:+.1} %)",
        (rss_end as f64 - rss_start as f64) * 100.0 / rss_start.max(1) as f64
    );
    let series: Vec<String> =
        samples.lock().unwrap().iter().map(|(at, kib)| format!("{at}s {:.1}", *kib as f64 / 1024.0)).collect();
    println!("server RSS each minute (MiB): {}", series.join(", "));
    let slow = latencies.iter().filter(|ms| **ms > 1000.0).count();
    println!("requests over 1 s: {slow}");
    println!("acknowledged creates {}, missing afterwards {missing}", tally.created.len());
    let server_errors: usize = mix.iter().filter(|(s, _)| **s >= 500 && **s != 503).map(|(_, c)| c).sum();
    println!("5xx other than 503: {server_errors}");
    if missing > 0 || server_errors > 0 || tally.transport_errors > 0 {
        std::process::exit(1);
    }
}

async fn get_json(http: &reqwest::Client, url: &str, token: &str) -> (u16, Value) {
    let response = http.get(url).bearer_auth(token).send().await.expect("the server answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}
