//! Posts due webhook deliveries. A round leases up to `concurrency` due deliveries (their
//! `next_attempt_at` moves past the post's timeout, `FOR UPDATE SKIP LOCKED`, so replicas share
//! the work), posts them signed, and records each outcome: delivered, another attempt after an
//! exponential backoff, or `failed` after `max_attempts`. A replica killed mid-post leaves the
//! lease to run out and the delivery is posted again with the same `webhook-id`: receivers see
//! a delivery at least once and drop repeats by that id, as Standard Webhooks prescribes.

use crate::Automation;
use crate::error::Result;
use futures::StreamExt;
use relay_contracts::automation::events::WebhookDisabled;
use std::time::Duration;

struct Due {
    delivery_id: String,
    webhook_id: String,
    body: String,
    attempts: i32,
    url: String,
    secret: String,
    workspace: String,
    /// An A2A task push's token, sent back in `X-A2A-Notification-Token`.
    a2a_token: Option<String>,
    /// Who made the webhook: it posts while that key stands.
    created_by: String,
}

enum Outcome {
    Delivered(u16),
    Failed {
        status: Option<u16>,
        error: String,
    },
    /// The key that made the webhook was revoked: nothing is posted, the webhook is disabled.
    Revoked(String),
}

pub async fn run(a: Automation) {
    relay_bus::outbox::repeat(
        &a.post,
        "cannot post webhooks yet",
        || async { Ok::<_, crate::AutomationError>(round(&a).await? > 0) },
        || until_next_due(&a),
    )
    .await
}

/// An A2A push posts its task's updates one at a time, in order: a delivery waits while an
/// earlier one of the same push is pending (a receiver appending artifact chunks needs them in
/// order). Other webhooks post concurrently.
const IN_TURN: &str = "(s.a2a_task IS NULL OR NOT EXISTS (
    SELECT 1 FROM webhook_deliveries e
    WHERE e.webhook_id = d.webhook_id AND e.status = 'pending' AND e.event_seq < d.event_seq))";

/// How long until the earliest pending delivery is due, at most the poll interval.
async fn until_next_due(a: &Automation) -> Duration {
    let next: Option<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT min(d.next_attempt_at) FROM webhook_deliveries d
         JOIN webhook_subscriptions s ON s.webhook_id = d.webhook_id
         WHERE d.status = 'pending' AND s.enabled AND {IN_TURN}"
    )))
    .fetch_one(&a.db)
    .await
    .unwrap_or(None);
    crate::wait_until(next, a.webhooks.poll_interval_ms)
}

/// Leases and posts the due deliveries; how many.
async fn round(a: &Automation) -> Result<usize> {
    let now = relay_bus::now_ms();
    let lease = a.webhooks.timeout_ms as i64 + 5_000;
    type Row = (
        String,
        String,
        String,
        i32,
        String,
        String,
        String,
        Option<String>,
        String,
    );
    let rows: Vec<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "UPDATE webhook_deliveries u SET next_attempt_at = $1 + $3, attempts = u.attempts + 1
         FROM webhook_subscriptions t
         WHERE t.webhook_id = u.webhook_id AND u.delivery_id IN (
             SELECT d.delivery_id FROM webhook_deliveries d
             JOIN webhook_subscriptions s ON s.webhook_id = d.webhook_id
             WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND s.enabled AND {IN_TURN}
             ORDER BY d.next_attempt_at, d.event_seq LIMIT $2 FOR UPDATE OF d SKIP LOCKED)
         RETURNING u.delivery_id, u.webhook_id, u.body, u.attempts, t.url, t.secret, t.workspace, t.a2a_task->>'token', t.created_by"
    )))
    .bind(now)
    .bind(a.webhooks.concurrency as i64)
    .bind(lease)
    .fetch_all(&a.db)
    .await?;
    let n = rows.len();
    let due = rows.into_iter().map(|r| Due {
        delivery_id: r.0,
        webhook_id: r.1,
        body: r.2,
        attempts: r.3,
        url: r.4,
        secret: r.5,
        workspace: r.6,
        a2a_token: r.7,
        created_by: r.8,
    });
    let results: Vec<Result<()>> = futures::stream::iter(due)
        .map(|d| async move {
            let outcome = post(a, &d).await;
            record(a, &d, outcome).await
        })
        .buffer_unordered(a.webhooks.concurrency)
        .collect()
        .await;
    for r in results {
        r?;
    }
    Ok(n)
}

/// One signed post, while the webhook's creator stands.
async fn post(a: &Automation, d: &Due) -> Outcome {
    match crate::creator::stands(a, &d.created_by).await {
        Err(e) if e.code() == relay_contracts::ErrorCode::Unauthorized => return Outcome::Revoked(e.error.message),
        Err(e) => {
            return Outcome::Failed {
                status: None,
                error: format!("cannot check the webhook's key now: {}", e.error.message),
            };
        }
        Ok(()) => {}
    }
    if let Err(e) = crate::guard::check_url(&d.url, a.webhooks.allow_private) {
        return Outcome::Failed { status: None, error: e };
    }
    let timestamp = relay_bus::now_ms() / 1000;
    let signature =
        standardwebhooks::Webhook::new(&d.secret).and_then(|w| w.sign(&d.delivery_id, timestamp, d.body.as_bytes()));
    let signature = match signature {
        Ok(s) => s,
        Err(e) => {
            return Outcome::Failed {
                status: None,
                error: format!("cannot sign: {e}"),
            };
        }
    };
    let mut post = a
        .http
        .post(&d.url)
        .header("content-type", "application/json")
        .header(standardwebhooks::HEADER_WEBHOOK_ID, &d.delivery_id)
        .header(standardwebhooks::HEADER_WEBHOOK_TIMESTAMP, timestamp.to_string())
        .header(standardwebhooks::HEADER_WEBHOOK_SIGNATURE, signature);
    if let Some(token) = &d.a2a_token {
        post = post.header(relay_contracts::a2a::NOTIFICATION_TOKEN_HEADER, token);
    }
    let sent = post.body(d.body.clone()).send().await;
    match sent {
        Ok(r) if r.status().is_success() => Outcome::Delivered(r.status().as_u16()),
        Ok(r) => Outcome::Failed {
            status: Some(r.status().as_u16()),
            error: format!("the receiver answered {}", r.status()),
        },
        Err(e) => Outcome::Failed {
            status: None,
            error: chain(&e),
        },
    }
}

/// An error with its causes (reqwest's own message alone hides the resolver's refusal).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The wait before attempt `attempts + 1`: base · 2^(attempts − 1), capped.
fn backoff_ms(a: &Automation, attempts: i32) -> i64 {
    let doublings = (attempts - 1).clamp(0, 30) as u32;
    a.webhooks
        .retry_base_ms
        .saturating_mul(1i64 << doublings)
        .min(a.webhooks.retry_max_ms)
}

async fn record(a: &Automation, d: &Due, outcome: Outcome) -> Result<()> {
    let now = relay_bus::now_ms();
    let mut tx = a.db.begin().await?;
    match outcome {
        Outcome::Delivered(status) => {
            sqlx::query(
                "UPDATE webhook_deliveries SET status = 'delivered', delivered_at = $2, last_status = $3, last_error = NULL
                 WHERE delivery_id = $1 AND status = 'pending'",
            )
            .bind(&d.delivery_id)
            .bind(now)
            .bind(status as i32)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "UPDATE webhook_subscriptions SET consecutive_failures = 0 WHERE webhook_id = $1 AND consecutive_failures <> 0",
            )
            .bind(&d.webhook_id)
            .execute(&mut *tx)
            .await?;
            tracing::debug!(delivery_id = %d.delivery_id, status, "webhook delivered");
        }
        Outcome::Failed { status, error } => {
            let last = d.attempts >= a.webhooks.max_attempts;
            sqlx::query(
                "UPDATE webhook_deliveries SET status = CASE WHEN $2 THEN 'failed' ELSE 'pending' END,
                     next_attempt_at = $3, last_status = $4, last_error = $5
                 WHERE delivery_id = $1 AND status = 'pending'",
            )
            .bind(&d.delivery_id)
            .bind(last)
            .bind(now + backoff_ms(a, d.attempts))
            .bind(status.map(i32::from))
            .bind(&error)
            .execute(&mut *tx)
            .await?;
            let failures: Option<(i32, bool)> = sqlx::query_as(
                "UPDATE webhook_subscriptions SET consecutive_failures = consecutive_failures + 1
                 WHERE webhook_id = $1 RETURNING consecutive_failures, enabled",
            )
            .bind(&d.webhook_id)
            .fetch_optional(&mut *tx)
            .await?;
            tracing::info!(delivery_id = %d.delivery_id, webhook_id = %d.webhook_id, attempt = d.attempts, last, error = %error, "webhook attempt failed");
            if let Some((n, true)) = failures
                && n >= a.webhooks.disable_after
            {
                let reason = format!("{n} failed attempts in a row; the last: {error}");
                return disable(a, tx, d, reason).await;
            }
        }
        Outcome::Revoked(reason) => {
            // The lease is given back: the delivery waits, unposted, should the webhook be
            // enabled again by someone whose key stands.
            sqlx::query(
                "UPDATE webhook_deliveries SET attempts = attempts - 1, next_attempt_at = $2 WHERE delivery_id = $1",
            )
            .bind(&d.delivery_id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            return disable(a, tx, d, reason).await;
        }
    }
    tx.commit().await?;
    Ok(())
}

/// Disables the webhook with `reason` (`webhook.disabled`), committing `tx`.
async fn disable(a: &Automation, mut tx: sqlx::Transaction<'_, sqlx::Postgres>, d: &Due, reason: String) -> Result<()> {
    let now = relay_bus::now_ms();
    sqlx::query(
        "UPDATE webhook_subscriptions SET enabled = false, disabled_reason = $2, updated_at = $3 WHERE webhook_id = $1",
    )
    .bind(&d.webhook_id)
    .bind(&reason)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    let disabled = WebhookDisabled {
        webhook_id: d.webhook_id.clone(),
        reason,
        url: d.url.clone(),
    };
    crate::OUTBOX
        .write(&mut tx, &d.workspace, &format!("webhook:{}", d.webhook_id), &disabled)
        .await?;
    let reason = disabled.reason;
    tracing::warn!(webhook_id = %d.webhook_id, %reason, "webhook disabled");
    tx.commit().await?;
    a.outbox.notify_one();
    Ok(())
}
