//! The first and the last page of the large workspace's lists (issue 33; docs/performance.md,
//! "Lists at scale"): `cargo bench -p api-tests --bench large_lists`, with
//! `LT_DYNAMODB_ENDPOINT` set for DynamoDB Local beside the embedded store. Generates
//! `Sizes::LARGE` (10,000 tags, 2,000 projects, 500 products at the largest item size, 50,000
//! notifications) per backend, walks each list to its end once, then times its first page and
//! its last page (the last page's URL kept from the walk) over [`RUNS`] requests each and
//! prints the medians. A list read whole would make the last page as slow as the whole list;
//! read from the list index, the last page costs what the first does.

use api_tests::{TestApi, backends, bulk_store, next_page};
use local::generate::{self, Sizes};
use std::time::{Duration, Instant};
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;

const RUNS: usize = 9;

/// Sends `GET path` and returns its duration and body size.
async fn get(api: &TestApi, token: &str, path: &str) -> (Duration, usize, Option<String>) {
    let started = Instant::now();
    let response = api.http.get(api.url(path)).bearer_auth(token).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200, "{path}");
    let next = next_page(response.headers()).map(|url| url.strip_prefix(&api.base).unwrap().to_owned());
    let bytes = response.bytes().await.unwrap().len();
    (started.elapsed(), bytes, next)
}

async fn median(api: &TestApi, token: &str, path: &str) -> Duration {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        times.push(get(api, token, path).await.0);
    }
    times.sort();
    times[RUNS / 2]
}

#[tokio::main]
async fn main() {
    let lists = ["/tags/task", "/projects", "/administration/product-catalog", "/account/notifications?limit=100"];
    println!("| Backend | List | Items | Pages | Walk | First page | Last page | Largest page |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for backend in backends().await {
        let api = TestApi::start(&backend).await;
        let (user, token) = api.user(ROOT, UserKind::Employee).await;
        let started = Instant::now();
        generate::generate(bulk_store(&backend).as_ref(), api.workspace_id, user.id, Sizes::LARGE).await.unwrap();
        eprintln!("[{}] generated in {:.1} s", backend.name, started.elapsed().as_secs_f64());
        for list in lists {
            let (mut pages, mut largest, mut last) = (0, 0, list.to_owned());
            let mut next = Some(list.to_owned());
            let walk = Instant::now();
            while let Some(path) = next.take() {
                let (_, bytes, following) = get(&api, &token, &path).await;
                (pages, largest, last) = (pages + 1, largest.max(bytes), path);
                next = following;
            }
            let walk = walk.elapsed();
            let items = match list {
                "/tags/task" => Sizes::LARGE.tags,
                "/projects" => Sizes::LARGE.projects,
                "/administration/product-catalog" => Sizes::LARGE.products,
                _ => Sizes::LARGE.notifications,
            };
            let (first, last) = (median(&api, &token, list).await, median(&api, &token, &last).await);
            println!(
                "| {} | `GET {list}` | {items} | {pages} | {:.1} s | {:.1} ms | {:.1} ms | {} KB |",
                backend.name,
                walk.as_secs_f64(),
                first.as_secs_f64() * 1e3,
                last.as_secs_f64() * 1e3,
                largest / 1024
            );
        }
    }
}
