use super::*;

fn paging(query: &str) -> ApiResult<Paging> {
    Paging::parse("/tags/task", Some(query), "https://api.example/tags/task".into())
}

/// The `cursor` parameter of a `Link` header value.
fn cursor_of(link: &str) -> String {
    let url = link.trim_start_matches('<').split('>').next().unwrap();
    let query = url.split_once('?').unwrap().1;
    form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "cursor").unwrap().1.into_owned()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Item {
    name: String,
    id: u32,
}

fn key(item: &Item) -> OrderKey {
    OrderKey::new().name(&item.name).int(item.id.into())
}

fn items(names: &[&str]) -> Vec<Item> {
    names.iter().enumerate().map(|(i, n)| Item { name: (*n).into(), id: i as u32 }).collect()
}

/// Pages through `list` (re-read before each page by `list_now`), returning every page.
fn pages(limit: u32, mut list_now: impl FnMut(usize) -> Vec<Item>) -> Vec<Vec<Item>> {
    let mut out = Vec::new();
    let mut query = format!("limit={limit}");
    loop {
        let answered = paging(&query).unwrap().window(list_now(out.len()), key).unwrap().answer().unwrap();
        out.push(serde_json::from_slice(&answered.body).unwrap());
        match answered.link() {
            Some(link) => query = format!("limit={limit}&cursor={}", cursor_of(link)),
            None => return out,
        }
    }
}

#[test]
fn pages_cover_the_list_in_order_once() {
    let list = items(&["delta", "Alpha", "charlie", "bravo", "echo"]);
    let all: Vec<Item> = pages(2, |_| list.clone()).concat();
    let names: Vec<&str> = all.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["Alpha", "bravo", "charlie", "delta", "echo"]);
    assert_eq!(pages(2, |_| list.clone()).len(), 3);
    assert_eq!(pages(5, |_| list.clone()).len(), 1, "an exact last page has no next link");
}

#[test]
fn inserts_and_deletes_between_pages_neither_repeat_nor_skip_what_stayed() {
    let original = items(&["a", "c", "e", "g", "i", "k"]);
    let seen = pages(2, |page| {
        let mut now = original.clone();
        if page >= 1 {
            // Before and after the cursor, and one of the first page deleted.
            now.push(Item { name: "b".into(), id: 100 });
            now.push(Item { name: "h".into(), id: 101 });
            now.retain(|i| i.name != "a");
        }
        now
    })
    .concat();
    let names: Vec<&str> = seen.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["a", "c", "e", "g", "h", "i", "k"]);
}

#[test]
fn a_page_stops_at_its_byte_bound_and_a_huge_item_is_a_page_alone() {
    let big = "x".repeat(400 * 1024);
    let list: Vec<Item> = (0..5).map(|i| Item { name: format!("{i}{big}"), id: i }).collect();
    let page = pages(100, |_| list.clone());
    assert_eq!(page.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1]);

    let huge = vec![Item { name: "y".repeat(PAGE_BYTES * 2), id: 1 }, Item { name: "z".into(), id: 2 }];
    let page = pages(100, |_| huge.clone());
    assert_eq!(page.iter().map(Vec::len).collect::<Vec<_>>(), [1, 1]);
    let window = paging("").unwrap().window(huge, key).unwrap();
    let answered = window.answer().unwrap();
    assert!(answered.body.len() <= PAGE_BYTES * 2 + 64);
}

#[test]
fn the_next_cursor_is_read_back_from_the_link() {
    let answered = paging("limit=1").unwrap().window(items(&["a", "b"]), key).unwrap().answer().unwrap();
    let link = answered.link().unwrap();
    assert_eq!(next_cursor(link), Some(cursor_of(link)));
    assert_eq!(next_cursor("<https://x/y?cursor=c>; rel=\"prev\""), None);
}

#[test]
fn the_next_link_keeps_the_filters_and_the_limit() {
    let p = Paging::parse("/contacts", Some("organizationId=o%201&limit=1"), "https://api.example/contacts".into())
        .unwrap();
    let answered = p.window(items(&["a", "b"]), key).unwrap().answer().unwrap();
    let link = answered.link().unwrap();
    assert!(link.starts_with("<https://api.example/contacts?organizationId=o+1&limit=1&cursor="), "{link}");
    assert!(link.ends_with(">; rel=\"next\""), "{link}");
}

#[test]
fn anything_but_a_cursor_of_this_list_is_a_400_naming_cursor() {
    let list = items(&["a", "b", "c"]);
    let other_list = Paging::parse("/tags/project", Some("limit=1"), "x".into()).unwrap();
    let foreign = cursor_of(other_list.window(list.clone(), key).unwrap().answer().unwrap().link().unwrap());
    let wrong_shape = URL_SAFE_NO_PAD.encode(r#"{"p":"/tags/task","k":[1,"a"]}"#);
    let extra_field = URL_SAFE_NO_PAD.encode(r#"{"p":"/tags/task","k":["a",1],"x":1}"#);
    for cursor in ["", "not base64!", "bm9wZQ", foreign.as_str(), wrong_shape.as_str(), extra_field.as_str()] {
        let query = format!("cursor={}", urlencode(cursor));
        let error = paging(&query).unwrap().window(list.clone(), key).err().expect(cursor);
        assert_eq!(error.status, 400);
        assert!(error.errors.as_ref().is_some_and(|e| e.contains_key("cursor")), "{cursor}");
    }
}

#[test]
fn limit_is_an_integer_from_1_to_100() {
    for bad in ["0", "101", "-1", "ten", "1.5", ""] {
        let error = paging(&format!("limit={bad}")).err().expect(bad);
        assert!(error.errors.as_ref().is_some_and(|e| e.contains_key("limit")), "{bad}");
    }
    assert_eq!(paging("limit=100").unwrap().limit_or(1), 100);
    assert_eq!(paging("").unwrap().limit_or(25), 25);
}

fn urlencode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
