//! The console's sign-in cookies (console.rs explains the scheme): reading them, and the CSRF
//! check every surface that accepts the cookie makes (auth.rs for REST, grpc.rs for gRPC-Web).

use crate::ApiError;
use axum::http::{HeaderMap, Method, header};

pub const KEY_COOKIE: &str = "relay_key";
pub const CSRF_COOKIE: &str = "relay_csrf";
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The value of cookie `name`, if the request has it.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| decode(v))
}

/// `forbidden` for a change made with the sign-in cookie but without the page's CSRF token.
pub fn check_csrf(method: &Method, headers: &HeaderMap) -> Result<(), ApiError> {
    let safe = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    let by_cookie = headers.get(header::AUTHORIZATION).is_none() && cookie(headers, KEY_COOKIE).is_some();
    if safe || !by_cookie {
        return Ok(());
    }
    let expected = cookie(headers, CSRF_COOKIE).unwrap_or_default();
    let given = headers
        .get(CSRF_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if expected.is_empty() || !bool::from(subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), given.as_bytes())) {
        return Err(ApiError::Forbidden(
            "a change made with the console's cookie needs its X-CSRF-Token header".into(),
        ));
    }
    Ok(())
}

/// Cookie values are kept to unreserved characters; anything else is %-encoded.
pub fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn cookie_values_survive_encoding() {
        for key in ["rk_abc-DEF_123", "s3cret token;=%", "ünï"] {
            assert_eq!(decode(&encode(key)), key);
        }
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; relay_key=rk_x%3B; relay_csrf=c"),
        );
        assert_eq!(cookie(&h, KEY_COOKIE).as_deref(), Some("rk_x;"));
        assert_eq!(cookie(&h, "missing"), None);
    }

    #[test]
    fn a_change_with_the_cookie_needs_the_csrf_header_and_a_bearer_does_not() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("relay_key=rk_x; relay_csrf=tok"),
        );
        assert!(check_csrf(&Method::GET, &h).is_ok());
        assert!(check_csrf(&Method::POST, &h).is_err());
        h.insert(CSRF_HEADER, HeaderValue::from_static("wrong"));
        assert!(check_csrf(&Method::POST, &h).is_err());
        h.insert(CSRF_HEADER, HeaderValue::from_static("tok"));
        assert!(check_csrf(&Method::POST, &h).is_ok());
        let mut b = HeaderMap::new();
        b.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer rk_x"));
        assert!(check_csrf(&Method::DELETE, &b).is_ok());
    }
}
