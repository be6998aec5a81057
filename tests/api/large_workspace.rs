//! A large workspace (issue 33; `local::generate`, docs/seed.md#a-large-workspace): 10,000 tags,
//! 2,000 projects, 50 catalog products at the largest size an item holds (`Sizes::TEST`; the
//! `large_lists` benchmark pages through all 500 of `Sizes::LARGE`) and 50,000 notifications.
//! Every list pages to its end on both backends: each page within its bounds
//! (at most `limit` items, at most 1 MiB unless one item alone is larger), no item twice,
//! nothing missing, in the documented order.

use api_tests::operations::catalogue;
use api_tests::{TestApi, backends, bulk_store, next_page};
use local::generate::{self, Sizes};
use serde_json::Value;
use std::collections::HashSet;
use std::time::Instant;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;
use workapi_kit::paging::PAGE_BYTES;

/// One list walked to its end: its items in the order answered, and how many pages it took.
struct Walk {
    items: Vec<Value>,
    pages: usize,
}

/// Walks `path` page by page with `token`, checking each page's bounds and that no id comes
/// twice.
async fn walk(api: &TestApi, token: &str, path: &str, limit: usize) -> Walk {
    walk_with(api, token, &[], path, limit).await
}

async fn walk_with(api: &TestApi, token: &str, headers: &[(String, String)], path: &str, limit: usize) -> Walk {
    let name = format!("[{}] {path}", api.backend);
    let (mut items, mut pages, mut seen) = (Vec::new(), 0, HashSet::new());
    let mut next = Some(path.to_owned());
    let started = Instant::now();
    while let Some(path) = next.take() {
        let (status, page_headers, bytes) = get_retrying(api, token, headers, &path).await;
        assert_eq!(status, 200, "{name}: {path}: {}", String::from_utf8_lossy(&bytes));
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        let page = body.as_array().or_else(|| body["items"].as_array()).cloned().expect("a page");
        assert!(page.len() <= limit, "{name}: {} items on a page of {limit}", page.len());
        assert!(bytes.len() <= PAGE_BYTES || page.len() == 1, "{name}: a page of {} bytes", bytes.len());
        for item in &page {
            let id = item["id"].as_str().map(str::to_owned).unwrap_or_else(|| item.to_string());
            assert!(seen.insert(id.clone()), "{name}: {id} twice, on page {}", pages + 1);
        }
        pages += 1;
        items.extend(page);
        next = next_page(&page_headers).map(|url| url.strip_prefix(&api.base).unwrap().to_owned());
    }
    println!("{name}: {pages} pages in {:.1} s", started.elapsed().as_secs_f64());
    Walk { items, pages }
}

/// `GET path`, sent again after a 503 as its `Retry-After` asks (as a client does): a debug
/// build on DynamoDB Local, with the other suites running, can take longer than the API's 8 s
/// request deadline for a page of the largest products.
async fn get_retrying(
    api: &TestApi,
    token: &str,
    headers: &[(String, String)],
    path: &str,
) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    for _ in 0..4 {
        let mut request = api.http.get(api.url(path)).bearer_auth(token);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let response = request.send().await.unwrap();
        let (status, headers) = (response.status().as_u16(), response.headers().clone());
        let bytes = response.bytes().await.unwrap().to_vec();
        if status != 503 {
            return (status, headers, bytes);
        }
        eprintln!("[{}] {path}: 503, retrying", api.backend);
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    }
    panic!("[{}] {path}: 503 four times", api.backend)
}

fn names(items: &[Value]) -> Vec<&str> {
    items.iter().map(|i| i["name"].as_str().unwrap()).collect()
}

/// Whether `items` are in order by `key` (non-decreasing).
fn sorted_by<K: Ord>(items: &[Value], key: impl Fn(&Value) -> K) -> bool {
    items.windows(2).all(|pair| key(&pair[0]) <= key(&pair[1]))
}

#[tokio::test]
async fn a_large_workspace_pages_through_every_list_to_the_end() {
    let _alone = api_tests::heavy_dynamo_suite().await;
    let sizes = Sizes::TEST;
    for backend in backends().await {
        let api = TestApi::start(&backend).await;
        let (user, token) = api.user(ROOT, UserKind::Employee).await;
        let started = Instant::now();
        generate::generate(bulk_store(&backend).as_ref(), api.workspace_id, user.id, sizes).await.unwrap();
        println!("[{}] generated {sizes:?} in {:.1} s", backend.name, started.elapsed().as_secs_f64());
        let started = Instant::now();

        let tags = walk(&api, &token, "/tags/task?limit=100", 100).await;
        assert_eq!(tags.items.len(), sizes.tags, "[{}] every tag", backend.name);
        let folded = |t: &Value| (tags::domain::fold_name(t["name"].as_str().unwrap()), t["id"].to_string());
        assert!(sorted_by(&tags.items, folded), "[{}] tags by name: {:?}", backend.name, &names(&tags.items)[..20]);

        // The test user is the generated projects' member (and Root: it sees every project).
        let projects = walk(&api, &token, "/projects", 100).await;
        assert_eq!(projects.items.len(), sizes.projects, "[{}] every project", backend.name);
        let lower = |p: &Value| (p["name"].as_str().unwrap().to_lowercase(), p["id"].to_string());
        assert!(sorted_by(&projects.items, lower), "[{}] projects by name", backend.name);

        let products = walk(&api, &token, "/administration/product-catalog", 100).await;
        assert_eq!(products.items.len(), sizes.products, "[{}] every product", backend.name);
        assert!(sorted_by(&products.items, lower), "[{}] products by name", backend.name);
        // The byte bound made the pages: far fewer than 100 of these products fit 1 MiB.
        assert!(products.pages >= sizes.products / 5, "[{}] {} product pages", backend.name, products.pages);
        let category = products.items[0]["categoryId"].as_str().unwrap();
        let of_category =
            walk(&api, &token, &format!("/administration/product-catalog?categoryId={category}"), 100).await;
        assert_eq!(names(&of_category.items), names(&products.items), "[{}] the category's products", backend.name);

        let notifications = walk(&api, &token, "/account/notifications?limit=100", 100).await;
        assert_eq!(notifications.items.len(), sizes.notifications, "[{}] every notification", backend.name);
        let newest_first = |n: &Value| std::cmp::Reverse(n["createdAt"].as_str().unwrap().to_owned());
        assert!(sorted_by(&notifications.items, newest_first), "[{}] notifications newest first", backend.name);
        println!(
            "[{}] walked in {:.1} s: tags {} pages, projects {}, products {}, notifications {}",
            backend.name,
            started.elapsed().as_secs_f64(),
            tags.pages,
            projects.pages,
            products.pages,
            notifications.pages
        );

        // Every other list of the document too, in this workspace, with its default page.
        let catalogue = catalogue(&api).await;
        let mut paged = api_tests::operations::paged_operation_ids();
        for walked in ["listTags", "listProjects", "listCatalogProducts"] {
            assert!(paged.remove(walked), "{walked} is a list of the document");
        }
        for request in catalogue.requests.iter().filter(|r| paged.contains(&r.operation_id)) {
            let Some(token) = catalogue.token(request.credential) else { continue };
            let walked = walk_with(&api, token, &request.headers, &request.path, 100).await;
            assert!(walked.pages >= 1, "[{}] {}", backend.name, request.operation_id);
        }
    }
}
