//! Paged lists (docs/conventions.md#paging): every list operation of the document takes
//! `limit` and `cursor`, answers its documented shape, and names the next page in
//! `Link: <…>; rel="next"`; paging one item at a time gives exactly the whole list, in order;
//! a cursor survives inserts; anything but a cursor of the list is a 400 naming `cursor`.

use api_tests::operations::{Catalogue, Request, catalogue, paged_operation_ids};
use api_tests::{TestApi, assert_error_body, backends, next_page};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;

#[test]
fn every_list_operation_takes_limit_and_cursor_and_documents_its_next_page() {
    let document = serde_json::to_value(registry::document()).unwrap();
    let mut lists = 0;
    for (path, item) in document["paths"].as_object().unwrap() {
        let Some(get) = item.get("get") else { continue };
        let ok = &get["responses"]["200"];
        let schema = &ok["content"]["application/json"]["schema"];
        let is_list = schema["type"] == "array" || get["operationId"] == "listNotifications";
        if !is_list {
            continue;
        }
        lists += 1;
        let names: Vec<&str> =
            get["parameters"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
        assert!(names.contains(&"limit") && names.contains(&"cursor"), "GET {path} lists without paging: {names:?}");
        assert!(ok["headers"].get("Link").is_some(), "GET {path}: the 200 does not document Link");
    }
    assert_eq!(lists, paged_operation_ids().len());
    assert!(lists >= 21, "{lists} list operations");
}

/// `request` (a catalogue GET) sent to `path` instead of its own: status, headers, body.
async fn get(
    api: &TestApi,
    catalogue: &Catalogue,
    request: &Request,
    path: &str,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut builder = api.http.get(api.url(path));
    if let Some(token) = catalogue.token(request.credential) {
        builder = builder.bearer_auth(token);
    }
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    let response = builder.send().await.unwrap();
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    (status, headers, response.json().await.unwrap_or(Value::Null))
}

fn with_query(path: &str, pair: &str) -> String {
    format!("{path}{}{pair}", if path.contains('?') { '&' } else { '?' })
}

/// The items of one page, whatever the list's shape (an array, or the notifications' page).
fn items(body: &Value) -> Vec<Value> {
    body.as_array().or_else(|| body["items"].as_array()).cloned().unwrap_or_else(|| panic!("not a page: {body}"))
}

#[tokio::test]
async fn every_list_pages_one_by_one_to_exactly_the_whole_list() {
    let paged = paged_operation_ids();
    for backend in backends().await {
        let api = TestApi::start(&backend).await;
        let catalogue = catalogue(&api).await;
        let mut walked = BTreeSet::new();
        let mut several = Vec::new();
        for request in catalogue.requests.iter().filter(|r| paged.contains(&r.operation_id)) {
            let name = format!("[{}] {}", backend.name, request.operation_id);
            let (status, headers, whole) = get(&api, &catalogue, request, &request.path).await;
            assert_eq!(status, 200, "{name}: {whole}");
            let whole = items(&whole);
            // The event feed grows at its end: a page holding events links to what follows,
            // which is empty now (docs/events.md#a-gapless-feed); every other list's last page
            // has no link.
            match next_page(&headers) {
                Some(next) if request.operation_id == "listEvents" && !whole.is_empty() => {
                    let next = next.strip_prefix(&api.base).unwrap().to_owned();
                    let (status, headers, after) = get(&api, &catalogue, request, &next).await;
                    assert_eq!((status, items(&after).len()), (200, 0), "{name}: nothing follows yet: {after}");
                    assert!(next_page(&headers).is_none(), "{name}: an empty page has no next");
                }
                next => assert!(next.is_none(), "{name}: the catalogue's lists fit one default page"),
            }

            let mut one_by_one = Vec::new();
            let mut next = Some(with_query(&request.path, "limit=1"));
            while let Some(path) = next.take() {
                let (status, headers, body) = get(&api, &catalogue, request, &path).await;
                assert_eq!(status, 200, "{name} {path}: {body}");
                let page = items(&body);
                assert!(page.len() <= 1, "{name}: {} items on a page of 1", page.len());
                one_by_one.extend(page);
                next = next_page(&headers).map(|url| url.strip_prefix(&api.base).unwrap().to_owned());
                assert!(one_by_one.len() <= whole.len() + 1, "{name}: pages beyond the list");
            }
            // Notifications carry `isRead` and the list order only; compare what pages.
            assert_eq!(one_by_one, whole, "{name}: one by one is the whole list, in order");
            walked.insert(request.operation_id.clone());
            if whole.len() >= 2 {
                several.push(request.operation_id.as_str());
            }
        }
        println!("[{}] lists of two items or more: {several:?}", backend.name);
        assert!(several.len() >= 12, "[{}] too few lists to page through: {several:?}", backend.name);
        assert_eq!(walked, paged, "[{}] every list operation was walked", backend.name);
    }
}

#[tokio::test]
async fn a_cursor_keeps_its_place_when_items_are_inserted_before_and_after_it() {
    for backend in backends().await {
        let api = TestApi::start(&backend).await;
        let (_, token) = api.user(ROOT, UserKind::Employee).await;
        let create = async |name: &str| {
            let (status, body) = api.post("/tags/task/create", &token, json!({"name": name})).await;
            assert_eq!(status, 200, "{body}");
        };
        for name in ["a", "c", "e", "g", "i"] {
            create(name).await;
        }
        let names = |page: &Value| {
            page.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
        };
        let (_, headers, first) = api.call(Method::GET, "/tags/task?limit=2", Some(&token), None).await;
        assert_eq!(names(&first), ["a", "c"]);
        let next = next_page(&headers).expect("a next page");
        assert!(next.starts_with(&api.url("/tags/task?limit=2&cursor=")), "{next}");
        // One before the cursor, one after it.
        create("b").await;
        create("h").await;
        let mut seen = names(&first);
        let mut next = Some(next);
        while let Some(url) = next.take() {
            let (status, headers, page) =
                api.call(Method::GET, url.strip_prefix(&api.base).unwrap(), Some(&token), None).await;
            assert_eq!(status, 200, "{page}");
            seen.extend(names(&page));
            next = next_page(&headers);
        }
        assert_eq!(
            seen,
            ["a", "c", "e", "g", "h", "i"],
            "[{}] nothing twice, nothing that stayed skipped",
            backend.name
        );
    }
}

#[tokio::test]
async fn anything_but_a_cursor_of_the_list_or_a_limit_from_1_to_100_is_a_400_naming_it() {
    let backend = backends().await.remove(0);
    let api = TestApi::start(&backend).await;
    let (_, token) = api.user(ROOT, UserKind::Employee).await;
    for name in ["x", "y"] {
        api.post("/tags/project/create", &token, json!({"name": name})).await;
    }
    let (_, headers, _) = api.call(Method::GET, "/tags/project?limit=1", Some(&token), None).await;
    let other_list = next_page(&headers).unwrap();
    let other_cursor = other_list.split("cursor=").nth(1).unwrap();
    for (query, field) in [
        ("cursor=garbage".to_owned(), "cursor"),
        ("cursor=".to_owned(), "cursor"),
        (format!("cursor={other_cursor}"), "cursor"),
        ("limit=0".to_owned(), "limit"),
        ("limit=101".to_owned(), "limit"),
        ("limit=many".to_owned(), "limit"),
    ] {
        let (status, _, body) = api.call(Method::GET, &format!("/tags/task?{query}"), Some(&token), None).await;
        assert_error_body(api.backend, status, &body, 400);
        assert!(body["errors"][field].is_array(), "{query}: {body}");
    }
}
