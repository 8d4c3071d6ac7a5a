//! The operator console (issue 20): one page, its script and its stylesheet, embedded in the
//! binary and served at `/`; the page uses the public REST and SSE API and nothing else.
//!
//! A browser cannot put an `Authorization` header on every request it makes for the page, so
//! signing in trades the API key for an HttpOnly, SameSite=Strict cookie (`relay_key`) that the
//! API accepts in place of the header (never a key in a URL). A request that changes something
//! with that cookie must also carry the `X-CSRF-Token` header equal to the `relay_csrf` cookie,
//! which only the page's own script can read (double submit); SameSite=Strict already keeps
//! other sites' requests from carrying the cookie at all.

use crate::cookies::{CSRF_COOKIE, KEY_COOKIE, encode};
use crate::{ApiError, AppState, auth};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};

const INDEX: &str = include_str!("../console/index.html");
const APP: &str = include_str!("../console/app.js");
const STYLE: &str = include_str!("../console/style.css");
/// xterm.js, the agents page's terminal (`scripts/vendor-xterm.sh` refreshes the copy).
const XTERM: &str = include_str!("../console/vendor/xterm.mjs");
const XTERM_CSS: &str = include_str!("../console/vendor/xterm.css");

/// How long a sign-in lasts (the key itself may be revoked sooner: it is checked every time).
const SIGN_IN_SECS: u64 = 12 * 3600;

/// No inline script, nothing from elsewhere: agent output in the page can never run.
/// Styles may be inline (xterm.js's renderer writes a `<style>` element); styles cannot run code.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; \
                   img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(|| async { asset("text/html; charset=utf-8", INDEX) }))
        .route(
            "/console/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP) }),
        )
        .route(
            "/console/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE) }),
        )
        .route(
            "/console/vendor/xterm.mjs",
            get(|| async { asset("text/javascript; charset=utf-8", XTERM) }),
        )
        .route(
            "/console/vendor/xterm.css",
            get(|| async { asset("text/css; charset=utf-8", XTERM_CSS) }),
        )
        .route("/console/signin", post(sign_in))
        .route("/console/signout", post(sign_out))
        .route("/console/me", get(who))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SignIn {
    key: String,
}

/// Who the console is signed in as.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Me {
    role: &'static str,
    workspace: String,
    key_id: Option<String>,
}

fn me(p: &auth::Principal) -> Me {
    Me {
        role: p.role.as_str(),
        workspace: p.ctx.workspace.clone(),
        key_id: p.key_id.clone(),
    }
}

/// Checks the key as the API would, then sets the two cookies.
async fn sign_in(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
    let origin = auth::origin(&state, &request);
    let body = axum::body::to_bytes(request.into_body(), 64 * 1024)
        .await
        .map_err(|e| ApiError::Invalid(format!("cannot read the body: {e}")))?;
    let SignIn { key } = crate::extract::parse(&body)?;
    let key = key.trim().to_string();
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ApiError::Unauthorized);
    }
    let mut headers = HeaderMap::new();
    let bearer = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| ApiError::Unauthorized)?;
    headers.insert(header::AUTHORIZATION, bearer);
    let p = auth::admit(&state, &headers, origin).await?;
    let secure = if state.settings.tls().ok().flatten().is_some() {
        "; Secure"
    } else {
        ""
    };
    let csrf = uuid::Uuid::new_v4().simple().to_string();
    let key_cookie = format!(
        "{KEY_COOKIE}={}; HttpOnly; SameSite=Strict; Path=/; Max-Age={SIGN_IN_SECS}{secure}",
        encode(&key)
    );
    let csrf_cookie = format!("{CSRF_COOKIE}={csrf}; SameSite=Strict; Path=/; Max-Age={SIGN_IN_SECS}{secure}");
    let mut response = axum::Json(me(&p)).into_response();
    for c in [key_cookie, csrf_cookie] {
        let value = HeaderValue::from_str(&c).map_err(|_| ApiError::Unauthorized)?;
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    Ok(response)
}

async fn sign_out() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    for name in [KEY_COOKIE, CSRF_COOKIE] {
        let c = format!("{name}=; SameSite=Strict; Path=/; Max-Age=0");
        if let Ok(v) = HeaderValue::from_str(&c) {
            response.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    response
}

async fn who(State(state): State<AppState>, request: Request) -> Result<axum::Json<Me>, ApiError> {
    let origin = auth::origin(&state, &request);
    let p = auth::admit(&state, request.headers(), origin).await?;
    Ok(axum::Json(me(&p)))
}
