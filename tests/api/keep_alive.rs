//! The local server keeps a keep-alive connection usable after an answer that did not need the
//! request body (an early 401, a scope 403, a path 400), even when the body arrives in a later
//! packet than the headers: the request is written by hand on one TCP connection, headers, a
//! pause, then the body, and a second request follows on the same connection.

use api_tests::{TestApi, backends};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use workapi_domain::identity::UserKind;
use workapi_domain::permissions::ROOT;

/// Reads one HTTP/1.1 response with a `Content-Length`: its status, its headers (lower-case
/// names) and its body.
async fn read_response(connection: &mut BufReader<TcpStream>) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut status_line = String::new();
    let read = tokio::time::timeout(Duration::from_secs(10), connection.read_line(&mut status_line)).await;
    assert!(read.expect("an answer within 10 s").expect("a readable connection") > 0, "the connection was closed");
    let status = status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status line");
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        connection.read_line(&mut line).await.unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    let length: usize = headers.iter().find(|(n, _)| n == "content-length").map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; length];
    connection.read_exact(&mut body).await.unwrap();
    (status, headers, body)
}

#[tokio::test]
async fn an_early_answer_keeps_the_connection_usable_when_the_body_comes_later() {
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let (_, token) = api.user(ROOT, UserKind::Employee).await;
    let (_, reader) = api.user_in(api.workspace_id, ROOT, UserKind::Employee, &["api:read"]).await;
    let address = api.base.strip_prefix("http://").unwrap().to_owned();
    let body = r#"{"name": "Sent after a pause"}"#;
    for (what, path, authorization, expected) in [
        ("no credentials", "/tags/task/create", None, 401),
        ("a read-only token writing", "/tags/task/create", Some(&reader), 403),
        ("a malformed path", "/tags/not-a-type/create", Some(&token), 400),
    ] {
        let mut connection = BufReader::new(TcpStream::connect(&address).await.unwrap());
        let authorization = authorization.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {address}\r\n{authorization}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        connection.get_mut().write_all(head.as_bytes()).await.unwrap();
        connection.get_mut().flush().await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        connection.get_mut().write_all(body.as_bytes()).await.unwrap();
        let (status, headers, answer) = read_response(&mut connection).await;
        assert_eq!(status, expected, "{what}: {}", String::from_utf8_lossy(&answer));
        assert!(
            !headers.iter().any(|(n, v)| n == "connection" && v.eq_ignore_ascii_case("close")),
            "{what}: the connection is kept: {headers:?}"
        );

        let second = format!("GET /tags/task HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\n\r\n");
        connection.get_mut().write_all(second.as_bytes()).await.unwrap();
        let (status, _, answer) = read_response(&mut connection).await;
        assert_eq!(status, 200, "{what}: the second request on the connection: {}", String::from_utf8_lossy(&answer));
        assert!(serde_json::from_slice::<serde_json::Value>(&answer).unwrap().is_array());
    }
}

/// A body longer than any route accepts is not read: the early answer says `Connection: close`,
/// so a client does not send its next request on that connection.
#[tokio::test]
async fn an_early_answer_to_a_body_too_long_to_discard_says_connection_close() {
    let backend = backends().await.into_iter().next().unwrap();
    let api = TestApi::start(&backend).await;
    let address = api.base.strip_prefix("http://").unwrap().to_owned();
    let mut connection = BufReader::new(TcpStream::connect(&address).await.unwrap());
    let length = local::keep_alive::DISCARD_BYTES + 1;
    let head = format!(
        "POST /tags/task/create HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    );
    connection.get_mut().write_all(head.as_bytes()).await.unwrap();
    let (status, headers, _) = read_response(&mut connection).await;
    assert_eq!(status, 401);
    assert!(headers.iter().any(|(n, v)| n == "connection" && v.eq_ignore_ascii_case("close")), "{headers:?}");
}
