//! Who is calling `/api/v1` and gRPC, and what they may do.
//!
//! - A workspace API key (`Authorization: Bearer rk_…`, made by `key.create`, or the console's
//!   HttpOnly sign-in cookie standing for that header): its role and
//!   workspace, verified by the registry (`key.verify`) and cached for a few seconds; a
//!   `key.revoked` event drops it from the cache at once and ends its open streams.
//! - The configured `RELAY_API_TOKEN`: an admin key of `default` (kept as a SHA-256 digest and
//!   compared in constant time, so response timing says nothing about it).
//! - Nothing presented: `401`, unless the gateway was started open (`gateway.open`, loopback
//!   only, no shared token): then an admin of `default` (local development).
//!
//! Each key has its own rate limit (governor's keyed GCRA: `429` with `Retry-After`; the
//! shared token is not limited), and each
//! bus call checks the key's role against the subject's declared roles (`403` otherwise).

use crate::{ApiError, AppState};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::{DefaultKeyedRateLimiter, Quota};
use relay_contracts::context::DEFAULT_WORKSPACE;
use relay_contracts::keys::{ApiKey, KEY_REVOKED, KeyRevoked, KeyRole, TOKEN_PREFIX, VerifyKeyRequest};
use relay_contracts::rpc::{self, Role};
use relay_contracts::{Caller, ErrorCode, RequestContext};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;
use tokio::sync::broadcast;

/// How long a verified key is trusted without asking the registry again: the longest a revoked
/// key can still be used by a gateway that missed the `key.revoked` event.
const KEY_CACHE_TTL: Duration = Duration::from_secs(5);

use relay_contracts::keys::{OPEN_CALLER as OPEN, SHARED_CALLER as SHARED, is_key_id};

/// The API key the current request was made with, if it was made with one.
pub fn current_key() -> Option<String> {
    match relay_bus::context::outgoing().caller {
        Caller::Admin(id) | Caller::Operator(id) | Caller::Viewer(id) if is_key_id(&id) => Some(id),
        _ => None,
    }
}

#[derive(Clone)]
pub struct Token([u8; 32]);

impl Token {
    pub fn new(token: &str) -> Token {
        Token(Sha256::digest(token.as_bytes()).into())
    }

    fn matches(&self, presented: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        self.0.ct_eq(&digest).into()
    }
}

/// An authenticated caller: the context its bus calls carry, and its key (none for the shared
/// token or open access).
#[derive(Debug, Clone)]
pub struct Principal {
    pub ctx: RequestContext,
    pub role: KeyRole,
    pub key_id: Option<String>,
}

impl Principal {
    fn shared(id: &str) -> Principal {
        Principal {
            ctx: RequestContext::new(Caller::Admin(id.into()), DEFAULT_WORKSPACE),
            role: KeyRole::Admin,
            key_id: None,
        }
    }

    fn of_key(key: &ApiKey) -> Principal {
        let id = key.key_id.clone();
        let caller = match key.role {
            KeyRole::Admin => Caller::Admin(id),
            KeyRole::Operator => Caller::Operator(id),
            KeyRole::Viewer => Caller::Viewer(id),
        };
        Principal {
            ctx: RequestContext::new(caller, key.workspace.clone()),
            role: key.role,
            key_id: Some(key.key_id.clone()),
        }
    }

    /// The rate limiter's bucket.
    fn bucket(&self) -> String {
        self.key_id.clone().unwrap_or_default()
    }
}

/// Whether a key of `role` may call a subject declared for `roles`.
pub fn allows(role: KeyRole, roles: &[Role]) -> bool {
    roles.iter().any(|r| match role {
        KeyRole::Admin => matches!(r, Role::Admin | Role::Operator | Role::Viewer),
        KeyRole::Operator => matches!(r, Role::Operator | Role::Viewer),
        KeyRole::Viewer => matches!(r, Role::Viewer),
    })
}

/// `forbidden` unless the caller of the current request may call `subject`.
pub fn check_role(subject: &str) -> Result<(), ApiError> {
    let Some(decl) = rpc::find(subject) else {
        return Ok(());
    };
    let role = match relay_bus::context::outgoing().caller {
        Caller::Admin(_) => KeyRole::Admin,
        Caller::Operator(_) => KeyRole::Operator,
        Caller::Viewer(_) => KeyRole::Viewer,
        // Not acting for a key: the gateway's own calls.
        _ => return Ok(()),
    };
    if allows(role, decl.roles) {
        Ok(())
    } else {
        Err(ApiError::Forbidden(format!(
            "a {} key may not call {subject}",
            role.as_str()
        )))
    }
}

/// Keys, their cache, revocations and rate limits.
pub struct Keys {
    shared: Option<Token>,
    /// Callers that present nothing are served (`gateway.open` on loopback).
    pub open: bool,
    cache: Mutex<HashMap<[u8; 32], (Principal, Instant)>>,
    /// Key ids as they are revoked, for the streams to end.
    pub revoked: broadcast::Sender<String>,
    limiter: Option<DefaultKeyedRateLimiter<String>>,
}

impl Keys {
    pub fn new(shared: Option<Token>, open: bool, per_sec: u32, burst: u32) -> Keys {
        let limiter = NonZeroU32::new(per_sec).map(|rate| {
            let burst = NonZeroU32::new(burst.max(per_sec)).unwrap_or(rate);
            governor::RateLimiter::keyed(Quota::per_second(rate).allow_burst(burst))
        });
        Keys {
            shared,
            open,
            cache: Mutex::new(HashMap::new()),
            revoked: broadcast::channel(1024).0,
            limiter,
        }
    }

    /// Forgets a revoked key and tells its streams.
    fn forget(&self, key_id: &str) {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|_, (p, _)| p.key_id.as_deref() != Some(key_id));
        let _ = self.revoked.send(key_id.to_string());
    }

    /// How long to wait, if this caller is over its rate. Keys are limited; the shared token
    /// and open access (the operator's own) are not.
    fn over_limit(&self, p: &Principal) -> Option<Duration> {
        p.key_id.as_ref()?;
        let limiter = self.limiter.as_ref()?;
        limiter.check_key(&p.bucket()).err().map(|not_until| {
            not_until.wait_time_from(governor::clock::Clock::now(&governor::clock::DefaultClock::default()))
        })
    }
}

/// Follows `key.revoked` for as long as the gateway runs.
pub fn watch_revocations(nats: async_nats::Client, keys: Arc<Keys>) {
    tokio::spawn(async move {
        use futures::StreamExt;
        let mut sub = match nats.subscribe(KEY_REVOKED).await {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, "cannot follow key.revoked; revoked keys live out the cache");
                return;
            }
        };
        while let Some(msg) = sub.next().await {
            if let Ok(r) = serde_json::from_slice::<KeyRevoked>(&msg.payload) {
                tracing::info!(key_id = r.key_id, "API key revoked: forgotten");
                keys.forget(&r.key_id);
            }
        }
    });
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
}

/// Who is calling, from the `Authorization: Bearer` header (HTTP, or gRPC metadata, which is
/// HTTP/2 headers): `unauthorized` when a token is required and missing, or wrong, unknown or
/// revoked.
pub async fn authenticate(state: &AppState, headers: &HeaderMap) -> Result<Principal, ApiError> {
    let keys = &state.keys;
    // The console's sign-in cookie stands for the header (see `console`).
    let cookie = crate::cookies::cookie(headers, crate::cookies::KEY_COOKIE);
    let Some(presented) = bearer(headers).or(cookie.as_deref()) else {
        return match keys.open {
            true => Ok(Principal::shared(OPEN)),
            false => Err(ApiError::Unauthorized),
        };
    };
    if presented.starts_with(TOKEN_PREFIX) {
        return verify(state, presented).await;
    }
    match &keys.shared {
        Some(t) if t.matches(presented) => Ok(Principal::shared(SHARED)),
        _ => Err(ApiError::Unauthorized),
    }
}

async fn verify(state: &AppState, token: &str) -> Result<Principal, ApiError> {
    let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    let cached = state
        .keys
        .cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&digest)
        .filter(|(_, at)| at.elapsed() < KEY_CACHE_TTL)
        .map(|(p, _)| p.clone());
    if let Some(p) = cached {
        return Ok(p);
    }
    let req = VerifyKeyRequest { token: token.into() };
    match relay_bus::client::call::<rpc::KeyVerify>(&state.nats, &req, state.timeout()).await {
        Ok(key) => {
            let p = Principal::of_key(&key);
            let mut cache = state
                .keys
                .cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if cache.len() > 100_000 {
                cache.retain(|_, (_, at)| at.elapsed() < KEY_CACHE_TTL);
            }
            cache.insert(digest, (p.clone(), Instant::now()));
            Ok(p)
        }
        Err(e) if e.code() == ErrorCode::Unauthorized => Err(ApiError::Unauthorized),
        Err(e) => Err(ApiError::Bus(e)),
    }
}

/// Lets an authorised request through (its bus calls made as its caller, the principal in its
/// extensions); 401, or 429 over its rate.
pub async fn require_bearer(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    if let Err(e) = crate::cookies::check_csrf(request.method(), request.headers()) {
        return e.into_response();
    }
    match admit(&state, request.headers(), origin(&state, &request)).await {
        Ok(p) => {
            let ctx = p.ctx.clone();
            let what = format!("{} {}", request.method(), request.uri().path());
            request.extensions_mut().insert(p);
            let response = relay_bus::context::act_as(ctx.clone(), next.run(request)).await;
            if response.status() == axum::http::StatusCode::FORBIDDEN {
                audit_refusal(&state, &ctx, what);
            }
            response
        }
        Err(e) => e.into_response(),
    }
}

/// A caller refused for its role is an audit entry (`refused`, the route as target): who
/// tried what they may not do is the trail's, not only the client's.
pub fn audit_refusal(state: &AppState, ctx: &RequestContext, what: String) {
    relay_bus::audit::record(&state.nats, &ctx.workspace, ctx, "refused", &what, None);
}

/// Where a request came from, for the audit trail: the peer address, or behind a proxy
/// (`gateway.forwarded_for`) the address that proxy appended to `X-Forwarded-For`.
pub fn origin(state: &AppState, request: &Request) -> Option<String> {
    if state.settings.forwarded_for
        && let Some(last) = request
            .headers()
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .rfind(|a| !a.is_empty())
    {
        return Some(last.to_string());
    }
    request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip().to_string())
}

/// Authenticates, applies the caller's rate limit and notes where the request came from (the
/// address is read first: the request itself may not be held across an await).
pub async fn admit(state: &AppState, headers: &HeaderMap, origin: Option<String>) -> Result<Principal, ApiError> {
    let mut p = authenticate(state, headers).await?;
    p.ctx.origin = origin;
    if let Some(wait) = state.keys.over_limit(&p) {
        state.metrics.rate_limited.inc();
        return Err(ApiError::RateLimited {
            retry_after_secs: wait.as_secs_f64().ceil().max(1.0) as u64,
        });
    }
    Ok(p)
}
