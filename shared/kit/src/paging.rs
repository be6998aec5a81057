//! Paged lists (docs/conventions.md#paging): every list operation takes `limit` and `cursor`
//! and answers one page, with the next page's URL in a `Link: <…>; rel="next"` header (RFC 8288)
//! while more remain. The documented shapes stay: an array is still an array.
//!
//! A page is a window of the list in its documented order: the items whose [`OrderKey`] comes
//! after the cursor's, at most `limit` of them and at most [`PAGE_BYTES`] of JSON (an item
//! larger than that alone still makes a page of one). The cursor names the last item's place in
//! the order by value, not by offset, so an item inserted or deleted meanwhile never makes
//! another one appear twice or be skipped. It is opaque (base64url of JSON) and validated: one
//! that is not a cursor of this list is a 400 naming `cursor`. Editing a valid cursor gains
//! nothing: it only moves within the list the caller may read anyway.

use crate::app::AppState;
use crate::error::{ApiError, ApiResult};
use axum::extract::FromRequestParts;
use axum::http::{HeaderValue, header, request::Parts};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use std::marker::PhantomData;
use workapi_store::{Cursor, Item, Query, Store, limits};
pub use workapi_wire::order::{OrderKey, Part};

/// The largest `limit`.
pub const MAX_LIMIT: u32 = 100;
/// The page size when `limit` is absent.
pub const DEFAULT_LIMIT: u32 = 100;
/// The JSON bytes a page stops at: far below what Lambda can return (6 MB) even with the
/// largest single item the API stores after it (docs/performance.md, "The largest page").
pub const PAGE_BYTES: usize = 1 << 20;

/// The query parameters, for the OpenAPI document (`params(PageParams)` beside the list's own).
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct PageParams {
    /// Items per page, 1 to 100 (default 100; the notifications list: 25)
    #[param(minimum = 1, maximum = 100, example = 50)]
    limit: Option<u32>,
    /// From the previous page's `Link: <…>; rel="next"` URL; absent for the first page
    #[param(
        example = "eyJwIjoiL3RhZ3MvdGFzayIsImsiOlsidXJnZW50IiwiM2YwYzZhNWUtOGYxZS00YzU1LTlkM2EtMGIxZDJjM2U0ZjUwIl19"
    )]
    cursor: Option<String>,
}

/// What a cursor carries: the list's path and the last item's place.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CursorBody {
    p: String,
    k: OrderKey,
}

/// The paging of one list request: `limit`, `cursor`, and what the next page's URL is built
/// from. A malformed `limit` or `cursor` is a 400 naming it.
pub struct Paging {
    limit: Option<u32>,
    cursor: Option<String>,
    /// `{site URL}{path}`: the next page's URL without its query.
    base: String,
    path: String,
    /// The request's other query parameters (filters), kept in the next page's URL.
    rest: Vec<(String, String)>,
}

impl FromRequestParts<AppState> for Paging {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let base = format!("{}{}", state.site_url().of(&parts.headers), parts.uri.path());
        Paging::parse(parts.uri.path(), parts.uri.query(), base)
    }
}

impl Paging {
    fn parse(path: &str, query: Option<&str>, base: String) -> ApiResult<Paging> {
        let mut paging = Paging { limit: None, cursor: None, base, path: path.to_owned(), rest: Vec::new() };
        for (name, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()).into_owned() {
            match name.as_str() {
                "limit" => {
                    let limit = value.parse::<u32>().ok().filter(|n| (1..=MAX_LIMIT).contains(n));
                    paging.limit =
                        Some(limit.ok_or_else(|| ApiError::field("limit", "limit must be an integer from 1 to 100"))?);
                }
                "cursor" => paging.cursor = Some(value),
                _ => paging.rest.push((name, value)),
            }
        }
        Ok(paging)
    }

    /// The page size asked for, or `default`.
    pub fn limit_or(&self, default: u32) -> u32 {
        self.limit.unwrap_or(default)
    }

    /// The raw cursor, for a list that pages in the store's own order (notifications).
    pub fn raw_cursor(&self) -> Option<&str> {
        self.cursor.as_deref()
    }

    /// The `Link` header value for the page after `cursor`.
    pub fn next_link(&self, cursor: &str) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        query.extend_pairs(&self.rest);
        if let Some(limit) = self.limit {
            query.append_pair("limit", &limit.to_string());
        }
        query.append_pair("cursor", cursor);
        format!("<{}?{}>; rel=\"next\"", self.base, query.finish())
    }

    /// The cursor's place (validated: 400 for what is not a cursor of this list), for a list
    /// that refuses some places before reading (the event feed's expired cursor).
    pub fn place(&self) -> ApiResult<Option<OrderKey>> {
        self.after()
    }

    fn after(&self) -> ApiResult<Option<OrderKey>> {
        let Some(cursor) = &self.cursor else { return Ok(None) };
        let body = URL_SAFE_NO_PAD
            .decode(cursor.as_bytes())
            .ok()
            .and_then(|bytes| serde_json::from_slice::<CursorBody>(&bytes).ok())
            .filter(|body| body.p == self.path);
        body.map(|body| Some(body.k)).ok_or_else(not_a_cursor)
    }

    fn encode(&self, key: &OrderKey) -> String {
        let body = CursorBody { p: self.path.clone(), k: key.clone() };
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&body).unwrap_or_default())
    }

    /// The page of `items` (in any order) after the cursor, ordered by `key`; at most `limit`
    /// items, before the byte bound [`Window::answer`] applies.
    pub fn window<T>(&self, items: impl IntoIterator<Item = T>, key: impl Fn(&T) -> OrderKey) -> ApiResult<Window<T>> {
        let after = self.after()?;
        let mut keyed: Vec<(OrderKey, T)> = items.into_iter().map(|item| (key(&item), item)).collect();
        if let (Some(after), Some((first, _))) = (&after, keyed.first())
            && !first.same_shape(after)
        {
            return Err(not_a_cursor());
        }
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        let start = after.map_or(0, |after| keyed.partition_point(|(k, _)| *k <= after));
        let limit = self.limit_or(DEFAULT_LIMIT) as usize;
        let more = keyed.len() - start > limit;
        let (keys, items) = keyed.into_iter().skip(start).take(limit).unzip();
        Ok(Window { items, rest: Rest { keys, more, link: self.link_builder() } })
    }

    /// The page after the cursor of a list the store keeps in its order (the list index,
    /// GSI2: `workapi_store::entity::Entity::gsi2`), read from the cursor on rather than whole:
    /// `list.query` names the list's partition, `list.start_after` turns a cursor's place into
    /// the query's start (`None`: not a place in this list), `decode` reads an item (`None`
    /// skips one the caller may not see) and `list.key` gives an item's place, which must be
    /// the order the index keeps. Reads stop at `limit` items, or once the items read hold
    /// [`PAGE_BYTES`] (their answer is rarely larger than the stored item), plus one more to
    /// know that more remain. Each query asks for no more items than the bytes left room for,
    /// judged by the largest item seen (at first `list.largest_item`): DynamoDB stops a query
    /// at 1 MB anyway, but DynamoDB Local reads every item asked for first.
    pub async fn window_from_store<T, S, K>(
        &self,
        store: &dyn Store,
        list: StoreList<S, K>,
        mut decode: impl FnMut(Item) -> ApiResult<Option<T>>,
    ) -> ApiResult<Window<T>>
    where
        S: Fn(&OrderKey) -> Option<Cursor>,
        K: Fn(&T) -> OrderKey,
    {
        let mut start = match self.after()? {
            Some(after) => Some((list.start_after)(&after).ok_or_else(not_a_cursor)?),
            None => None,
        };
        let limit = self.limit_or(DEFAULT_LIMIT) as usize;
        let (mut items, mut bytes, mut more, mut largest_seen) = (Vec::new(), 0, false, 0);
        'pages: loop {
            // Once the bytes are reached, one more item says whether more remain.
            let largest = if largest_seen > 0 { largest_seen } else { list.largest_item.max(1) };
            let room = PAGE_BYTES.saturating_sub(bytes) / largest + 1;
            let wanted = (limit + 1 - items.len()).min(room) as u32;
            let page = store.query(list.query.clone().limit(wanted).after(start.take())).await?;
            for item in page.items {
                if items.len() == limit || bytes >= PAGE_BYTES {
                    more = true;
                    break 'pages;
                }
                let size = limits::item_size(&item);
                largest_seen = largest_seen.max(size);
                if let Some(decoded) = decode(item)? {
                    bytes += size;
                    items.push(decoded);
                }
            }
            match page.next {
                Some(next) => start = Some(next),
                None => break,
            }
        }
        let keys = items.iter().map(&list.key).collect();
        Ok(Window { items, rest: Rest { keys, more, link: self.link_builder() } })
    }

    fn link_builder(&self) -> Paging {
        Paging {
            limit: self.limit,
            cursor: None,
            base: self.base.clone(),
            path: self.path.clone(),
            rest: self.rest.clone(),
        }
    }
}

fn not_a_cursor() -> ApiError {
    ApiError::field("cursor", "cursor is not a cursor of this list: start again without one")
}

/// The `cursor` of a `Link` header's next page, for callers that page in process (the MCP
/// tools answer it as `nextCursor`).
pub fn next_cursor(link: &str) -> Option<String> {
    let (target, params) = link.split_once(';')?;
    if params.trim() != "rel=\"next\"" {
        return None;
    }
    let url = target.trim().strip_prefix('<')?.strip_suffix('>')?;
    let query = url.split_once('?')?.1;
    form_urlencoded::parse(query.as_bytes()).find(|(name, _)| name == "cursor").map(|(_, value)| value.into_owned())
}

/// A list the store keeps in its order, for [`Paging::window_from_store`].
pub struct StoreList<S, K> {
    /// The list's partition in its index.
    pub query: Query,
    /// Where the list continues after a cursor's place; `None` if it is not a place of the list.
    pub start_after: S,
    /// An item's place in the list: the order the index keeps.
    pub key: K,
    /// The largest item the list may hold (bytes), until the first is read.
    pub largest_item: usize,
}

/// One page's items, before they are answered.
pub struct Window<T> {
    pub items: Vec<T>,
    pub rest: Rest,
}

impl<T: Serialize> Window<T> {
    /// The page as it is.
    pub fn answer(self) -> ApiResult<Paged<T>> {
        self.rest.answer(self.items)
    }
}

impl<T> Window<T> {
    /// A list that grows at its end (the event feed): its `Link` follows every page that holds
    /// an item, the last page too, so a poller can come back for what comes after it.
    pub fn resumable(mut self) -> Self {
        self.rest.more = self.rest.more || !self.items.is_empty();
        self
    }

    /// The page with each item turned into what the API answers.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Window<U> {
        Window { items: self.items.into_iter().map(f).collect(), rest: self.rest }
    }
}

/// What answering a window needs besides its items: their places and the next page's URL.
pub struct Rest {
    keys: Vec<OrderKey>,
    more: bool,
    link: Paging,
}

impl Rest {
    /// Answers `items`, the window's items turned into their answer one for one, stopping at
    /// [`PAGE_BYTES`] (the next page starts after the last item answered).
    pub fn answer<U: Serialize>(self, items: Vec<U>) -> ApiResult<Paged<U>> {
        let mut body = Vec::with_capacity(1024);
        body.push(b'[');
        let mut answered = 0;
        for item in &items {
            let json = serde_json::to_vec(item).map_err(ApiError::internal)?;
            if answered > 0 && body.len() + 1 + json.len() + 1 > PAGE_BYTES {
                break;
            }
            if answered > 0 {
                body.push(b',');
            }
            body.extend_from_slice(&json);
            answered += 1;
        }
        body.push(b']');
        let more = self.more || answered < items.len();
        let link = match (more, answered.checked_sub(1).and_then(|last| self.keys.get(last))) {
            (true, Some(last)) => Some(self.link.next_link(&self.link.encode(last))),
            _ => None,
        };
        Ok(Paged { body, link, kind: PhantomData })
    }
}

/// One page of a list: a JSON array, with `Link: <…>; rel="next"` while more remain.
pub struct Paged<T> {
    body: Vec<u8>,
    link: Option<String>,
    kind: PhantomData<fn() -> T>,
}

impl<T> Paged<T> {
    /// The `Link` header value, if a next page exists.
    pub fn link(&self) -> Option<&str> {
        self.link.as_deref()
    }
}

impl<T> IntoResponse for Paged<T> {
    fn into_response(self) -> Response {
        with_link(([(header::CONTENT_TYPE, "application/json")], self.body).into_response(), self.link)
    }
}

/// `response` with the next page's `Link` header, if any (for a list answering its own shape).
pub fn with_link(mut response: Response, link: Option<String>) -> Response {
    if let Some(link) = link.and_then(|link| HeaderValue::from_str(&link).ok()) {
        response.headers_mut().insert(header::LINK, link);
    }
    response
}

#[cfg(test)]
mod tests;
