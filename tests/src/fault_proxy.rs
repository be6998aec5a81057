//! A fault-injecting HTTP/1.1 proxy between the AWS SDK clients and DynamoDB Local / moto
//! (docs/reliability.md). A client is pointed at it by its endpoint URL; the proxy forwards
//! every request byte for byte to the upstream service and its answer back, unless a [`Rule`]
//! says otherwise for that request.
//!
//! Requests are named by their operation: the `X-Amz-Target` action for the JSON protocols
//! (`TransactWriteItems`, `GetSecretValue`), `S3:<METHOD>` for S3 (`S3:PUT`). The proxy counts
//! requests per operation, so a test can assert that retries happened or find how many store
//! calls an API request makes (and inject a fault at each of them).
//!
//! It speaks just enough HTTP/1.1 for the SDKs: `Content-Length` and chunked bodies both ways,
//! `Expect: 100-continue`, keep-alive on the client side, one upstream connection per request.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the proxy does to a request a rule matches.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// Waits this long, then forwards.
    Latency(Duration),
    /// Answers this status (500, 503) with the service's error body, without forwarding.
    Status(u16),
    /// DynamoDB's `ThrottlingException` (400), without forwarding.
    Throttling,
    /// DynamoDB's `ProvisionedThroughputExceededException` (400), without forwarding.
    ProvisionedThroughputExceeded,
    /// `TransactionCanceledException` with a `TransactionConflict` reason for every item (400),
    /// without forwarding.
    TransactionConflict,
    /// Forwards (the upstream applies the request), then sends part of the response head and
    /// resets the connection (RST).
    Reset,
    /// Forwards, then sends the head and half the body, and closes the connection.
    Truncate,
    /// Accepts the request and never answers.
    Hang,
}

impl Fault {
    /// Whether the upstream service sees the request (a write it carries is applied).
    pub fn forwards(&self) -> bool {
        matches!(self, Fault::Latency(_) | Fault::Reset | Fault::Truncate)
    }
}

/// When a fault applies: to the requests of an operation (or any), from the `nth` match on
/// (1-based, counted from when the rule was added), `times` times in a row (0: forever), or,
/// with `chance`, to each match with that probability.
#[derive(Debug, Clone)]
pub struct Rule {
    operation: Option<String>,
    nth: usize,
    times: usize,
    chance: Option<f64>,
    fault: Fault,
    seen: usize,
    fired: usize,
}

impl Rule {
    /// The requests of one operation (`PutItem`, `TransactWriteItems`, `GetSecretValue`, `S3:PUT`).
    pub fn on(operation: &str, fault: Fault) -> Rule {
        Rule { operation: Some(operation.to_owned()), ..Rule::any(fault) }
    }

    /// Every request.
    pub fn any(fault: Fault) -> Rule {
        Rule { operation: None, nth: 1, times: 1, chance: None, fault, seen: 0, fired: 0 }
    }

    pub fn nth(mut self, nth: usize) -> Rule {
        self.nth = nth.max(1);
        self
    }

    /// How many consecutive matching requests get the fault (0: all from the nth on).
    pub fn times(mut self, times: usize) -> Rule {
        self.times = times;
        self
    }

    pub fn always(self) -> Rule {
        self.times(0)
    }

    /// Each matching request independently with probability `p` (ignores nth and times).
    pub fn chance(mut self, p: f64) -> Rule {
        self.chance = Some(p);
        self
    }

    fn applies(&mut self, operation: &str) -> Option<Fault> {
        if self.operation.as_deref().is_some_and(|o| o != operation) {
            return None;
        }
        self.seen += 1;
        if let Some(p) = self.chance {
            return (rand_unit() < p).then(|| self.fault.clone());
        }
        if self.seen < self.nth || (self.times != 0 && self.fired >= self.times) {
            return None;
        }
        self.fired += 1;
        Some(self.fault.clone())
    }
}

fn rand_unit() -> f64 {
    rand::random::<f64>()
}

#[derive(Default)]
struct Shared {
    rules: Vec<Rule>,
    counts: HashMap<String, usize>,
    injected: HashMap<String, usize>,
    sequence: Vec<String>,
}

/// A running proxy; it stops when dropped.
pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FaultProxy {
    /// Starts a proxy on a random port of 127.0.0.1 in front of `upstream` (`http://host:port`).
    pub async fn start(upstream: &str) -> FaultProxy {
        let upstream = upstream.trim_start_matches("http://").trim_end_matches('/').to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the fault proxy");
        let addr = listener.local_addr().expect("proxy address");
        let shared = Arc::new(Mutex::new(Shared::default()));
        let state = shared.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else { continue };
                let (state, upstream) = (state.clone(), upstream.clone());
                tokio::spawn(async move {
                    let _ = serve(client, &upstream, &state).await;
                });
            }
        });
        FaultProxy { addr, shared, task }
    }

    /// The URL to give the SDK client as its endpoint.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Adds a rule; the first rule that applies to a request decides its fault.
    pub fn inject(&self, rule: Rule) {
        self.lock().rules.push(rule);
    }

    /// Removes every rule: from now on every request is forwarded untouched.
    pub fn heal(&self) {
        self.lock().rules.clear();
    }

    /// Requests seen for an operation (`*`: all), faulted or not, since the last reset.
    pub fn count(&self, operation: &str) -> usize {
        let shared = self.lock();
        if operation == "*" { shared.counts.values().sum() } else { shared.counts.get(operation).copied().unwrap_or(0) }
    }

    /// Requests of an operation (`*`: all) that got a fault, since the last reset.
    pub fn injected(&self, operation: &str) -> usize {
        let shared = self.lock();
        if operation == "*" {
            shared.injected.values().sum()
        } else {
            shared.injected.get(operation).copied().unwrap_or(0)
        }
    }

    /// The request counts per operation.
    pub fn counts(&self) -> HashMap<String, usize> {
        self.lock().counts.clone()
    }

    /// The operations of the requests seen since the last reset, in order of arrival.
    pub fn sequence(&self) -> Vec<String> {
        self.lock().sequence.clone()
    }

    pub fn reset_counts(&self) {
        let mut shared = self.lock();
        shared.counts.clear();
        shared.injected.clear();
        shared.sequence.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One HTTP message as read: the head's text and the body's raw bytes (framing included).
struct Message {
    head: String,
    body: Vec<u8>,
    /// The decoded body length of a Content-Length body (the whole body), for truncation.
    content_length: Option<usize>,
}

impl Message {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Reads until the end of a head (`\r\n\r\n`); None at a clean end of stream.
async fn read_head<R: AsyncRead + Unpin>(stream: &mut R, buffer: &mut Vec<u8>) -> std::io::Result<Option<String>> {
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end + 4]).into_owned();
            buffer.drain(..end + 4);
            return Ok(Some(head));
        }
        let mut chunk = [0u8; 16 * 1024];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return if buffer.is_empty() { Ok(None) } else { Err(std::io::ErrorKind::UnexpectedEof.into()) };
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
}

async fn fill<R: AsyncRead + Unpin>(stream: &mut R, buffer: &mut Vec<u8>, at_least: usize) -> std::io::Result<()> {
    while buffer.len() < at_least {
        let mut chunk = [0u8; 16 * 1024];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    Ok(())
}

/// Reads a body framed as `head` says; `until_close` for responses without framing.
async fn read_body<R: AsyncRead + Unpin>(
    stream: &mut R,
    buffer: &mut Vec<u8>,
    head_of: &Message,
    until_close: bool,
) -> std::io::Result<(Vec<u8>, Option<usize>)> {
    if head_of.header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        let mut raw = Vec::new();
        loop {
            let line_end = loop {
                if let Some(i) = buffer.windows(2).position(|w| w == b"\r\n") {
                    break i;
                }
                let have = buffer.len();
                fill(stream, buffer, have + 1).await?;
            };
            let size_text = String::from_utf8_lossy(&buffer[..line_end]).into_owned();
            let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| std::io::Error::other("bad chunk size"))?;
            if size == 0 {
                // The last chunk, optional trailers, and the final CRLF.
                loop {
                    if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                        raw.extend(buffer.drain(..i + 4));
                        return Ok((raw, None));
                    }
                    if buffer.len() >= line_end + 4 && &buffer[line_end..line_end + 4] == b"\r\n\r\n" {
                        raw.extend(buffer.drain(..line_end + 4));
                        return Ok((raw, None));
                    }
                    let have = buffer.len();
                    fill(stream, buffer, have + 1).await?;
                }
            }
            let total = line_end + 2 + size + 2;
            fill(stream, buffer, total).await?;
            raw.extend(buffer.drain(..total));
        }
    }
    if let Some(length) = head_of.header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        fill(stream, buffer, length).await?;
        return Ok((buffer.drain(..length).collect(), Some(length)));
    }
    if until_close {
        stream.read_to_end(buffer).await?;
        return Ok((std::mem::take(buffer), None));
    }
    Ok((Vec::new(), Some(0)))
}

fn operation_of(request: &Message) -> String {
    match request.header("x-amz-target") {
        Some(target) => target.rsplit('.').next().unwrap_or(target).to_owned(),
        None => format!("S3:{}", request.head.split(' ').next().unwrap_or("?")),
    }
}

async fn serve(mut client: TcpStream, upstream: &str, shared: &Mutex<Shared>) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    loop {
        let Some(head) = read_head(&mut client, &mut buffer).await? else { return Ok(()) };
        let mut request = Message { head, body: Vec::new(), content_length: None };
        let continues = request.header("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue"));
        if continues {
            client.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
            // The upstream gets the body at once: no Expect header for it.
            request.head = request
                .head
                .split_inclusive("\r\n")
                .filter(|line| !line.to_ascii_lowercase().starts_with("expect:"))
                .collect();
        }
        let (body, _) = read_body(&mut client, &mut buffer, &request, false).await?;
        request.body = body;
        let operation = operation_of(&request);
        let fault = {
            let mut shared = shared.lock().unwrap_or_else(|p| p.into_inner());
            *shared.counts.entry(operation.clone()).or_default() += 1;
            shared.sequence.push(operation.clone());
            let fault = shared.rules.iter_mut().find_map(|rule| rule.applies(&operation));
            if fault.is_some() {
                *shared.injected.entry(operation.clone()).or_default() += 1;
            }
            fault
        };
        match fault {
            None => forward_and_answer(&mut client, upstream, &request).await?,
            Some(Fault::Latency(pause)) => {
                tokio::time::sleep(pause).await;
                forward_and_answer(&mut client, upstream, &request).await?
            }
            Some(Fault::Hang) => {
                // Holds the connection until the client gives up.
                let mut sink = [0u8; 1024];
                while client.read(&mut sink).await? != 0 {}
                return Ok(());
            }
            Some(Fault::Reset) => {
                let response = forward(upstream, &request).await?;
                let cut = response.head.len() / 2;
                client.write_all(&response.head.as_bytes()[..cut]).await?;
                client.flush().await?;
                client.set_zero_linger()?;
                return Ok(()); // dropped with linger 0: RST
            }
            Some(Fault::Truncate) => {
                let response = forward(upstream, &request).await?;
                client.write_all(response.head.as_bytes()).await?;
                client.write_all(&response.body[..response.body.len() / 2]).await?;
                client.flush().await?;
                client.shutdown().await?;
                return Ok(());
            }
            Some(error) => {
                let (status, content_type, body) = error_response(&error, &request);
                let reason = match status {
                    400 => "Bad Request",
                    500 => "Internal Server Error",
                    503 => "Service Unavailable",
                    _ => "Error",
                };
                let head = format!(
                    "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nx-amzn-RequestId: fault-proxy\r\n\r\n",
                    body.len()
                );
                client.write_all(head.as_bytes()).await?;
                client.write_all(body.as_bytes()).await?;
            }
        }
    }
}

/// The error a fault answers: status, content type and body as the service would send them.
fn error_response(fault: &Fault, request: &Message) -> (u16, &'static str, String) {
    let json = request.header("x-amz-target").is_some();
    let dynamo = |kind: &str, message: &str| {
        serde_json::json!({"__type": format!("com.amazonaws.dynamodb.v20120810#{kind}"), "message": message})
            .to_string()
    };
    match fault {
        Fault::Throttling => (400, "application/x-amz-json-1.0", dynamo("ThrottlingException", "Rate exceeded")),
        Fault::ProvisionedThroughputExceeded => (
            400,
            "application/x-amz-json-1.0",
            dynamo(
                "ProvisionedThroughputExceededException",
                "The level of configured provisioned throughput was exceeded",
            ),
        ),
        Fault::TransactionConflict => {
            let items = serde_json::from_slice::<serde_json::Value>(&request.body)
                .ok()
                .and_then(|b| b["TransactItems"].as_array().map(Vec::len))
                .unwrap_or(1);
            let reasons: Vec<_> = (0..items)
                .map(|_| serde_json::json!({"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}))
                .collect();
            let body = serde_json::json!({
                "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                "message": "Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict]",
                "CancellationReasons": reasons,
            });
            (400, "application/x-amz-json-1.0", body.to_string())
        }
        Fault::Status(status) => {
            let code = if *status == 503 { "ServiceUnavailable" } else { "InternalServerError" };
            if json {
                (*status, "application/x-amz-json-1.0", dynamo(code, "injected by the fault proxy"))
            } else {
                let xml = format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code><Message>injected by the fault proxy</Message><RequestId>fault-proxy</RequestId></Error>"
                );
                (*status, "application/xml", xml)
            }
        }
        other => unreachable!("{other:?} is not an error answer"),
    }
}

async fn forward(upstream: &str, request: &Message) -> std::io::Result<Message> {
    let mut server = TcpStream::connect(upstream).await?;
    server.write_all(request.head.as_bytes()).await?;
    server.write_all(&request.body).await?;
    let mut buffer = Vec::new();
    loop {
        let head = read_head(&mut server, &mut buffer).await?.ok_or(std::io::ErrorKind::UnexpectedEof)?;
        let mut response = Message { head, body: Vec::new(), content_length: None };
        let status: u16 = response.head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        if (100..200).contains(&status) {
            continue; // an interim answer (100 Continue): the final one follows
        }
        let bodiless = request.head.starts_with("HEAD ") || status == 204 || status == 304;
        if bodiless {
            response.content_length = Some(0);
        } else {
            let (body, length) = read_body(&mut server, &mut buffer, &response, true).await?;
            response.body = body;
            response.content_length = length;
        }
        return Ok(response);
    }
}

async fn forward_and_answer(client: &mut TcpStream, upstream: &str, request: &Message) -> std::io::Result<()> {
    let response = match forward(upstream, request).await {
        Ok(response) => response,
        Err(_) => {
            // The upstream itself failed: say so as a gateway would.
            let body = "upstream unreachable";
            let head = format!("HTTP/1.1 502 Bad Gateway\r\nContent-Length: {}\r\n\r\n", body.len());
            client.write_all(head.as_bytes()).await?;
            return client.write_all(body.as_bytes()).await;
        }
    };
    let close = response.content_length.is_none()
        && !response.header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    client.write_all(response.head.as_bytes()).await?;
    client.write_all(&response.body).await?;
    client.flush().await?;
    if close {
        // Framed by the end of the connection: end it.
        client.shutdown().await?;
        return Err(std::io::ErrorKind::ConnectionAborted.into());
    }
    Ok(())
}
