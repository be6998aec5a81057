//! Warm handler time of every documented operation (issue 25 item 4, docs/performance.md "Warm
//! handler time"): `cargo bench -p api-tests --bench handlers`. The merged router
//! (`local::app`, as the local server serves it) is called in process as a tower Service
//! (`oneshot`, no TCP) on the embedded store, with the operation catalogue's request
//! (`api_tests::operations`); the harness's generous rate limits never interfere.
//!
//! Criterion drives each operation (`iter_custom`); every single call is also timed, from the
//! request handed to the router to the last byte of the response body, and the p50 and p99 of
//! all those calls (warm-up included, criterion's samples too) are computed here from the sorted
//! durations (nearest rank), as criterion reports only means and medians of its samples.
//! Requests that consume their state (`Request::once`) are skipped, with the reason printed.
//! Every server first runs each request once in the catalogue's order. Every writing operation
//! runs on a server and catalogue of its own, replaced every 300 calls, so the items it piles up
//! (thousands of roles, billings) slow down only itself, never the operations measured after it.
//! Any call that does not succeed fails the bench.

use api_tests::operations::{Catalogue, Request, catalogue, success};
use api_tests::{TestApi, backends};
use axum::extract::ConnectInfo;
use criterion::Criterion;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tower::ServiceExt;

/// The p-th percentile (nearest rank) of sorted durations.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One call through the router: its duration and status.
fn call(rt: &tokio::runtime::Runtime, api: &TestApi, catalogue: &Catalogue, request: &Request) -> (Duration, u16) {
    let mut http = catalogue.http_request(request).map(axum::body::Body::from);
    http.extensions_mut().insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40000))));
    let router = api.router.clone();
    let start = Instant::now();
    let status = rt.block_on(async move {
        let response = router.oneshot(http).await.expect("the router answers");
        let status = response.status().as_u16();
        axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("the body");
        status
    });
    (start.elapsed(), status)
}

/// Calls of a writing operation on one server before it is replaced by a fresh one.
const WRITES_PER_SERVER: usize = 300;

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let fresh = || {
        rt.block_on(async {
            let backend = backends().await.into_iter().next().expect("the embedded backend");
            let api = TestApi::start(&backend).await;
            let catalogue = catalogue(&api).await;
            // Every request once, in the catalogue's order (as the round-trip bench does), so
            // that an operation measured here finds what earlier ones create (a saved provider
            // to read, a skill to patch).
            for request in catalogue.requests.iter().filter(|r| !r.once) {
                let (status, body) = catalogue.send(&api, request).await;
                assert!(
                    success(request, status),
                    "priming {}: {status} {}",
                    request.operation_id,
                    String::from_utf8_lossy(&body)
                );
            }
            (api, catalogue)
        })
    };
    let (reads_api, reads_catalogue) = fresh();
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(10)
        .configure_from_args();
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for request in &reads_catalogue.requests {
        if request.once {
            skipped.push(format!(
                "{} ({}): consumes the state it needs (succeeds once per catalogue)",
                request.operation_id, request.function
            ));
            continue;
        }
        let reads = request.method.as_str() == "GET";
        // A writing operation runs on a server of its own, replaced every WRITES_PER_SERVER calls:
        // some creates are capped per workspace (500 skills), and the items piling up would
        // otherwise be what the bench measures.
        let mut own = if reads { None } else { Some(fresh()) };
        let mut calls_on_own = 0;
        let operation_id = request.operation_id.clone();
        let mut samples: Vec<Duration> = Vec::new();
        let mut failures: Vec<u16> = Vec::new();
        criterion.bench_function(&operation_id, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    if !reads && calls_on_own == WRITES_PER_SERVER {
                        own = Some(fresh());
                        calls_on_own = 0;
                    }
                    calls_on_own += 1;
                    let (api, catalogue) = own.as_ref().map_or((&reads_api, &reads_catalogue), |o| (&o.0, &o.1));
                    // The same operation in the catalogue the calls run against.
                    let request = catalogue
                        .requests
                        .iter()
                        .find(|r| r.operation_id == operation_id)
                        .expect("every catalogue has the same operations");
                    let (elapsed, status) = call(&rt, api, catalogue, request);
                    if !success(request, status) {
                        failures.push(status);
                    }
                    samples.push(elapsed);
                    total += elapsed;
                }
                total
            })
        });
        assert!(failures.is_empty(), "{}: {} calls failed, e.g. {:?}", operation_id, failures.len(), &failures[..1]);
        samples.sort();
        let name = format!("`{}` {}", request.operation_id, request.method);
        rows.push((request.function, name, samples.len(), percentile(&samples, 50.0), percentile(&samples, 99.0)));
    }

    let micros = |d: Duration| format!("{:.0}", d.as_secs_f64() * 1e6);
    println!("\n| Function | Operation | Calls | p50 (µs) | p99 (µs) | p99 < 1 ms |");
    println!("|---|---|---:|---:|---:|---|");
    for (function, name, calls, p50, p99) in &rows {
        let within = if *p99 < Duration::from_millis(1) { "yes" } else { "**no**" };
        println!("| {function} | {name} | {calls} | {} | {} | {within} |", micros(*p50), micros(*p99));
    }
    println!("\nSkipped:");
    for reason in skipped {
        println!("- {reason}");
    }
    let over: Vec<&String> = rows.iter().filter(|r| r.4 >= Duration::from_millis(1)).map(|r| &r.1).collect();
    println!("\nOver the budget (p99 ≥ 1 ms): {over:?}");
}
