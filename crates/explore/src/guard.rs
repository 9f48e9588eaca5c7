//! The checks every request passes before any handler runs: the `Host` header names the bound
//! address (so a page on another site whose DNS name is re-pointed at 127.0.0.1 is refused),
//! an `Origin` header, when sent, is the page's own origin (a cross-site `fetch`), and `/` and
//! the API carry the per-run token (header `X-Cavesweep-Token` or query `token`). The page's
//! script and style need only the Host check: they hold no data and run nothing.
//!
//! Responses also carry headers that keep the page to itself: a strict Content-Security-Policy
//! (its own script and style only, no framing), `nosniff` and no referrer (the token is in the
//! page's URL).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::{ApiError, App};

/// Compare two strings in time independent of where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The token a request carries, if any.
fn token_of(req: &Request) -> Option<String> {
    if let Some(v) = req.headers().get("x-cavesweep-token") {
        return v.to_str().ok().map(str::to_string);
    }
    let q = req.uri().query()?;
    q.split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "token")
        .map(|(_, v)| v.to_string())
}

fn refuse(message: &str) -> Response {
    ApiError::status(StatusCode::FORBIDDEN, message).into_response()
}

pub(crate) async fn check(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_ascii_lowercase);
    match host {
        Some(h) if app.hosts.contains(&h) => {}
        _ => {
            return refuse(
                "this server answers only requests addressed to it (the Host header names another site)",
            );
        }
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let ok = origin
            .to_str()
            .is_ok_and(|o| app.origins.iter().any(|a| a.eq_ignore_ascii_case(o)));
        if !ok {
            return refuse("cross-site requests are refused");
        }
    }
    let path = req.uri().path();
    let public = matches!(path, "/app.js" | "/app.css");
    if !public {
        let ok = token_of(&req).is_some_and(|t| same(t.as_bytes(), app.token.as_bytes()));
        if !ok {
            return refuse(
                "missing or wrong token: open the URL `cavesweep explore` printed, token included",
            );
        }
    }
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; \
             connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    resp
}

#[cfg(test)]
mod unit {
    use super::same;

    #[test]
    fn same_compares_whole_strings() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
        assert!(same(b"", b""));
    }
}
