//! Keep-alive on the local server. An answer that did not need the request body (an early 401,
//! a scope 403, a path 400) drops it unread; when the body arrives in a later packet, hyper
//! cannot drain it and closes the connection after the answer, without `Connection: close`, so
//! a pooling client's next request on that connection fails. This layer reads what the handler
//! left of the body to its end before answering, so the connection stays usable; a body too
//! long or too slow to discard closes the connection, and the answer says so. On Lambda, API
//! Gateway holds the connection and the event carries the whole body: nothing to do there.

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use futures_util::StreamExt;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

/// The most of an unread body discarded: the largest body a route accepts (the upload).
pub const DISCARD_BYTES: usize = workspace::image::MAX_BODY_BYTES;
/// How long the rest of an unread body may take to arrive.
pub const DISCARD_TIME: Duration = Duration::from_secs(5);

/// The request body, shared between the handler and this layer: whatever the handler has not
/// read stays in the slot when it drops its end.
type Slot = Arc<Mutex<Option<Body>>>;

struct SharedBody(Slot);

impl HttpBody for SharedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(body) = slot.as_mut() else { return Poll::Ready(None) };
        let polled = Pin::new(body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None) | Poll::Ready(Some(Err(_)))) {
            *slot = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).as_ref().is_none_or(HttpBody::is_end_stream)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        match self.0.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
            Some(body) => body.size_hint(),
            None => http_body::SizeHint::with_exact(0),
        }
    }
}

/// The middleware (`axum::middleware::from_fn`): the handler gets the body through the shared
/// slot; after its answer, the rest is discarded, or the answer gets `Connection: close`.
pub async fn discard_unread_body(request: Request, next: Next) -> Response {
    let slot: Slot = Arc::new(Mutex::new(None));
    let request = request.map(|body| {
        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(body);
        Body::new(SharedBody(slot.clone()))
    });
    let mut response = next.run(request).await;
    let rest = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(rest) = rest.filter(|body| !body.is_end_stream())
        && !discarded(rest).await
    {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Reads a body to its end without keeping it: false when it is (or says it is) longer than
/// [`DISCARD_BYTES`],
/// slower than [`DISCARD_TIME`], or broken.
async fn discarded(body: Body) -> bool {
    if body.size_hint().lower() > DISCARD_BYTES as u64 {
        // Its Content-Length says so already: not worth reading.
        return false;
    }
    let read = async {
        let mut data = body.into_data_stream();
        let mut total = 0usize;
        while let Some(chunk) = data.next().await {
            total += chunk.map_err(|_| ())?.len();
            if total > DISCARD_BYTES {
                return Err(());
            }
        }
        Ok(())
    };
    matches!(tokio::time::timeout(DISCARD_TIME, read).await, Ok(Ok(())))
}
