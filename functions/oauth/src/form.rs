//! Request parsing shared by the OAuth endpoints: `application/x-www-form-urlencoded` bodies
//! and queries with the RFC 6749 rule that no parameter appears twice, and HTTP Basic client
//! credentials (RFC 6749 §2.3.1).

use axum::http::{HeaderMap, header};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// At most this many parameters are read from one request.
pub const MAX_PARAMS: usize = 64;

/// Reads `application/x-www-form-urlencoded` parameters (a query or a form body) into the
/// request type that documents them: a struct of optional strings deriving `Deserialize` and
/// its schema, so the names read are the names documented. The endpoints check the values in
/// the order their RFC prescribes (which error comes first, and whether it is a page or a
/// redirect), so the struct carries the raw text. Empty values count as absent, unknown
/// parameters are ignored (RFC 6749 §3.1).
pub fn parse<T: DeserializeOwned>(input: &[u8]) -> Result<T, ParamsError> {
    let params = Params::parse(input)?;
    let map: Map<String, Value> =
        params.0.into_iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| (k, Value::String(v))).collect();
    serde_json::from_value(Value::Object(map)).map_err(|e| ParamsError::Invalid(e.to_string()))
}

/// Like [`parse`], but a repeated parameter is not an error yet: the first occurrence is read
/// and the repeated names are returned beside it. For the authorization endpoint, which must
/// verify the client and its redirect URI before it may report a repeated parameter to the
/// client (RFC 6749 §4.1.2.1, `invalid_request`).
pub fn parse_reporting_repeats<T: DeserializeOwned>(input: &[u8]) -> Result<(T, Vec<String>), ParamsError> {
    let mut map = Map::new();
    let mut repeated: Vec<String> = Vec::new();
    for (count, (name, value)) in form_urlencoded::parse(input).enumerate() {
        if count >= MAX_PARAMS {
            return Err(ParamsError::TooMany);
        }
        if map.contains_key(name.as_ref()) {
            if !repeated.iter().any(|r| *r == name) {
                repeated.push(name.into_owned());
            }
            continue;
        }
        map.insert(name.into_owned(), Value::String(value.into_owned()));
    }
    map.retain(|_, v| v.as_str().is_some_and(|v| !v.is_empty()));
    let params = serde_json::from_value(Value::Object(map)).map_err(|e| ParamsError::Invalid(e.to_string()))?;
    Ok((params, repeated))
}

/// Parameters by name.
struct Params(BTreeMap<String, String>);

/// Why a parameter set is refused: a repeated name (RFC 6749 §3.1, §3.2), too many, or
/// values the request type cannot hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamsError {
    Repeated(String),
    TooMany,
    Invalid(String),
}

impl Params {
    fn parse(input: &[u8]) -> Result<Params, ParamsError> {
        let mut map = BTreeMap::new();
        for (count, (name, value)) in form_urlencoded::parse(input).enumerate() {
            if count >= MAX_PARAMS {
                return Err(ParamsError::TooMany);
            }
            if map.contains_key(name.as_ref()) {
                return Err(ParamsError::Repeated(name.into_owned()));
            }
            map.insert(name.into_owned(), value.into_owned());
        }
        Ok(Params(map))
    }
}

/// True when the request declares a form body.
pub fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"))
}

/// Client credentials of an `Authorization: Basic` header.
pub struct BasicCredentials {
    pub client_id: String,
    pub client_secret: String,
}

/// A malformed `Authorization: Basic` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MalformedBasic;

/// `None` without a Basic header; `Some(Err(MalformedBasic))` for a malformed one; otherwise
/// the client id and secret, each form-decoded as RFC 6749 §2.3.1 says.
pub fn basic_credentials(headers: &HeaderMap) -> Option<Result<BasicCredentials, MalformedBasic>> {
    let value = headers.get(header::AUTHORIZATION)?;
    let value = value.to_str().ok()?;
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    Some(parse_basic(encoded.trim()))
}

fn parse_basic(encoded: &str) -> Result<BasicCredentials, MalformedBasic> {
    let decoded = STANDARD.decode(encoded).map_err(|_| MalformedBasic)?;
    let text = String::from_utf8(decoded).map_err(|_| MalformedBasic)?;
    let (id, secret) = text.split_once(':').ok_or(MalformedBasic)?;
    let decode = |part: &str| -> String {
        form_urlencoded::parse(format!("x={part}").as_bytes()).next().map(|(_, v)| v.into_owned()).unwrap_or_default()
    };
    let client_id = decode(id);
    if client_id.is_empty() {
        return Err(MalformedBasic);
    }
    Ok(BasicCredentials { client_id, client_secret: decode(secret) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Example {
        a: Option<String>,
        b: Option<String>,
        c: Option<String>,
    }

    #[test]
    fn parameters_read_into_their_type_and_repeats_are_refused() {
        for repeated in [&b"a=1&a=2"[..], b"a=1&a=", b"a=&a=1"] {
            assert_eq!(parse::<Example>(repeated).err(), Some(ParamsError::Repeated("a".into())));
        }
        let (p, repeated): (Example, _) = parse_reporting_repeats(b"a=1&b=2&a=3&a=4&b=&c=").unwrap();
        assert_eq!((p.a.as_deref(), p.b.as_deref(), p.c), (Some("1"), Some("2"), None));
        assert_eq!(repeated, ["a", "b"]);
        let p: Example = parse(b"a=1&b=&c=x%20y+z&unknown=1").unwrap();
        assert_eq!(p, Example { a: Some("1".into()), b: None, c: Some("x y z".into()) });
        let many: String = (0..=MAX_PARAMS).map(|i| format!("p{i}=1&")).collect();
        assert_eq!(parse::<Example>(many.as_bytes()).err(), Some(ParamsError::TooMany));
    }

    #[test]
    fn basic_credentials_are_form_decoded() {
        let mut headers = HeaderMap::new();
        assert!(basic_credentials(&headers).is_none());
        let encoded = STANDARD.encode("dcr_1%3A2:s%2Bt+u");
        headers.insert(header::AUTHORIZATION, format!("Basic {encoded}").parse().unwrap());
        let creds = basic_credentials(&headers).unwrap().unwrap();
        assert_eq!(creds.client_id, "dcr_1:2");
        assert_eq!(creds.client_secret, "s+t u");
        headers.insert(header::AUTHORIZATION, "Basic !!!".parse().unwrap());
        assert!(basic_credentials(&headers).unwrap().is_err());
        headers.insert(header::AUTHORIZATION, format!("Basic {}", STANDARD.encode("nocolon")).parse().unwrap());
        assert!(basic_credentials(&headers).unwrap().is_err());
        headers.insert(header::AUTHORIZATION, "Bearer x".parse().unwrap());
        assert!(basic_credentials(&headers).is_none());
    }
}
