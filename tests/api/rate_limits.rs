//! Rate limits (spec §8) counted in the store: exact across separate router instances (as
//! across Lambda instances), with the headers on every response and a fresh window admitting again.

use api_tests::{Backend, TestApi, assert_error_body, backends};
use serde_json::Value;
use std::time::Duration;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;
use workapi_domain::token::TokenKey;
use workapi_kit::ratelimit::RateLimits;

const WINDOW: i64 = 4;

/// Two independent servers on one store and one token key.
async fn two_instances(backend: &Backend, limits: RateLimits) -> (TestApi, TestApi) {
    let key = TokenKey::generate();
    let a = TestApi::builder(backend).token_key(key.clone()).rate_limits(limits).start().await;
    let b = TestApi::builder(backend).token_key(key).rate_limits(limits).start().await;
    (a, b)
}

/// Sleeps into the start of a window so a burst of requests falls inside one window.
async fn at_window_start() {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let into = now.as_millis() as i64 % (WINDOW * 1000);
    tokio::time::sleep(Duration::from_millis((WINDOW * 1000 - into + 50) as u64)).await;
}

fn header(headers: &reqwest::header::HeaderMap, name: &str) -> Option<i64> {
    headers.get(name).map(|v| v.to_str().unwrap().parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_token_limit_is_exact_across_instances_and_resets_with_the_window() {
    for backend in backends().await {
        let limits = RateLimits { per_token: 6, per_ip: 1_000, window_secs: WINDOW };
        let (a, b) = two_instances(&backend, limits).await;
        let (_, token) = a.user(ROOT, UserKind::Employee).await;
        at_window_start().await;
        let burst = (0..14).map(|i| {
            let api = if i % 2 == 0 { &a } else { &b };
            let request = api.http.get(api.url("/tags/task")).bearer_auth(&token);
            async move {
                let response = request.send().await.unwrap();
                let status = response.status().as_u16();
                let headers = response.headers().clone();
                (status, headers, response.json::<Value>().await.unwrap())
            }
        });
        let results = futures::future::join_all(burst).await;
        let admitted: Vec<_> = results.iter().filter(|(s, _, _)| *s == 200).collect();
        let refused: Vec<_> = results.iter().filter(|(s, _, _)| *s == 429).collect();
        assert_eq!((admitted.len(), refused.len()), (6, 8), "[{}] exactly the limit is admitted", backend.name);

        let mut remaining: Vec<i64> =
            admitted.iter().map(|(_, h, _)| header(h, "x-ratelimit-remaining").unwrap()).collect();
        remaining.sort();
        assert_eq!(remaining, [0, 1, 2, 3, 4, 5], "[{}] each admitted request saw its own count", backend.name);
        for (status, headers, body) in &results {
            assert_eq!(header(headers, "x-ratelimit-limit"), Some(6), "[{}] on every response", backend.name);
            if *status == 429 {
                assert_error_body(backend.name, *status, body, 429);
                assert_eq!(header(headers, "x-ratelimit-remaining"), Some(0));
                let retry = header(headers, "retry-after").expect("Retry-After on 429");
                assert!((1..=WINDOW).contains(&retry), "[{}] Retry-After {retry}", backend.name);
            }
        }

        at_window_start().await;
        let (status, headers, _) = a.call(reqwest::Method::GET, "/tags/task", Some(&token), None).await;
        assert_eq!(status, 200, "[{}] a new window admits again", backend.name);
        assert_eq!(header(&headers, "x-ratelimit-remaining"), Some(5));
    }
}

#[tokio::test]
async fn the_ip_limit_counts_every_request_and_ignores_forwarded_for() {
    for backend in backends().await {
        let limits = RateLimits { per_token: 1_000, per_ip: 4, window_secs: WINDOW };
        let (a, b) = two_instances(&backend, limits).await;
        let (_, token) = a.user(ROOT, UserKind::Employee).await;
        at_window_start().await;
        // Unauthenticated and unknown-route requests count too, and carry the headers.
        let (status, headers, _) = a.call(reqwest::Method::GET, "/tags/task", None, None).await;
        assert_eq!((status, header(&headers, "x-ratelimit-remaining")), (401, Some(3)), "[{}]", backend.name);
        let (status, headers, _) = b.call(reqwest::Method::GET, "/no/such/route", Some(&token), None).await;
        assert_eq!((status, header(&headers, "x-ratelimit-limit")), (404, Some(4)), "[{}]", backend.name);
        assert_eq!(a.get("/tags/task", &token).await.0, 200);
        assert_eq!(b.get("/tags/task", &token).await.0, 200);
        let spoofed = a.http.get(a.url("/tags/task")).bearer_auth(&token).header("x-forwarded-for", "203.0.113.77");
        let response = spoofed.send().await.unwrap();
        assert_eq!(response.status().as_u16(), 429, "[{}] X-Forwarded-For is not a new client", backend.name);
        assert!(response.headers().contains_key("retry-after"));
    }
}
