//! Automation: what the mesh does by itself, on an event or at a time.
//!
//! - **Webhooks** ([`webhooks`], [`fanout`], [`post`]): a workspace subscribes URLs to event
//!   types; the fan-out follows the event log and queues one delivery per (subscription, event)
//!   in the transaction that moves its cursor; the poster signs each the Standard Webhooks way
//!   and posts it, retrying with exponential backoff, and disables a subscription after too
//!   many failures in a row.
//! - **Schedules** ([`schedules`], [`fire`]): a message, a relay message or a new session at a
//!   time (`at`, a delayed message) or on a cron expression in a time zone; a run is claimed
//!   with its row locked and recorded under its due time, so two replicas fire it once.
//! - **Retention** ([`retention`]): finished webhook deliveries and old schedule runs are
//!   deleted after their windows.

mod creator;
mod error;
pub mod fanout;
pub mod fire;
pub mod guard;
pub mod post;
mod retention;
pub mod schedules;
pub mod webhooks;

pub use error::AutomationError;

use relay_bus::outbox::{self, Outbox};
use relay_bus::service::{ServiceError, ServiceHost};
use relay_bus::settings::{DatabaseSettings, NatsSettings, TelemetrySettings};
use relay_contracts::rpc;
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use std::sync::Arc;
use tokio::sync::Notify;

pub const SERVICE_NAME: &str = "automation";

/// Where automation's events (`relay_contracts::automation::events`) wait for the log,
/// written in the transaction of their change (`OUTBOX.write`).
pub(crate) const OUTBOX: Outbox = Outbox {
    table: "automation_events",
    type_prefix: "",
    verbatim: &[],
    lock_key: 0x7265_6c61_7961_7574, // "relayaut"
    prune: true,
};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub nats: NatsSettings,
    pub database: DatabaseSettings,
    pub telemetry: TelemetrySettings,
    pub webhooks: WebhookSettings,
    pub schedules: ScheduleSettings,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct WebhookSettings {
    /// Follow the event log and post; off, subscriptions are kept but nothing is sent.
    pub enabled: bool,
    /// Let URLs reach loopback, link-local and private addresses (a receiver on this host or
    /// the LAN); off by default, so a webhook cannot be aimed at the mesh's own network.
    pub allow_private: bool,
    /// How long one post may take.
    pub timeout_ms: u64,
    /// Attempts per delivery before it is `failed` (webhook.replay tries again).
    pub max_attempts: i32,
    /// The wait after the first failed attempt, doubling after each, up to `retry_max_ms`.
    pub retry_base_ms: i64,
    pub retry_max_ms: i64,
    /// Failed attempts in a row after which a subscription is disabled (`webhook.disabled`).
    pub disable_after: i32,
    /// Posts in flight at once.
    pub concurrency: usize,
    /// Events read from the log per step.
    pub page: i64,
    pub poll_interval_ms: u64,
    /// How long a delivered or failed delivery stays in a webhook's delivery log (and a failed
    /// one can be replayed); then it is deleted.
    pub keep_deliveries_ms: i64,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        WebhookSettings {
            enabled: true,
            allow_private: false,
            timeout_ms: 10_000,
            max_attempts: 8,
            retry_base_ms: 5_000,
            retry_max_ms: 3_600_000,
            disable_after: 100,
            concurrency: 16,
            page: 500,
            poll_interval_ms: 1_000,
            keep_deliveries_ms: 7 * 24 * 3_600_000,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct ScheduleSettings {
    /// Fire due schedules; off, schedules are kept but nothing fires.
    pub enabled: bool,
    /// How often to look for due schedules (a schedule fires at most this late).
    pub poll_interval_ms: u64,
    /// How long a run's call (a send, a spawn) may take.
    pub call_timeout_ms: u64,
    /// The most schedules one workspace may have.
    pub max_per_workspace: i64,
    /// A run whose call fails for a while (`unavailable`, `timeout`: a service restarting) is
    /// tried again every `retry_ms` until this long after it was due, then recorded failed.
    pub retry_for_ms: i64,
    pub retry_ms: i64,
    /// How long a run stays in a schedule's history (its latest run always stays).
    pub keep_runs_ms: i64,
}

impl Default for ScheduleSettings {
    fn default() -> Self {
        ScheduleSettings {
            enabled: true,
            poll_interval_ms: 500,
            call_timeout_ms: 40_000,
            max_per_workspace: 1_000,
            retry_for_ms: 300_000,
            retry_ms: 1_000,
            keep_runs_ms: 7 * 24 * 3_600_000,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("webhooks: {0}")]
    Settings(String),
    #[error("webhooks: cannot build the HTTP client: {0}")]
    Http(#[from] reqwest::Error),
}

/// Handler and loop state.
#[derive(Clone)]
pub struct Automation {
    db: PgPool,
    nats: async_nats::Client,
    webhooks: Arc<WebhookSettings>,
    schedules: Arc<ScheduleSettings>,
    http: reqwest::Client,
    /// Poked after events are written to the outbox.
    outbox: Arc<Notify>,
    /// Poked when deliveries may be due (queued, replayed, re-enabled).
    post: Arc<Notify>,
    /// Poked when a schedule may be due sooner (created, resumed).
    fire: Arc<Notify>,
}

impl Automation {
    /// Checks the settings and starts the fan-out, the poster, the scheduler and the outbox.
    pub fn start(
        db: PgPool,
        nats: async_nats::Client,
        webhooks: WebhookSettings,
        schedules: ScheduleSettings,
    ) -> Result<Self, StartError> {
        if webhooks.max_attempts < 1 || webhooks.disable_after < 1 || webhooks.concurrency < 1 || webhooks.page < 1 {
            return Err(StartError::Settings(
                "max_attempts, disable_after, concurrency and page must be at least 1".into(),
            ));
        }
        if webhooks.retry_base_ms < 1 || webhooks.retry_max_ms < webhooks.retry_base_ms {
            return Err(StartError::Settings("need 1 <= retry_base_ms <= retry_max_ms".into()));
        }
        let http = guard::client(&webhooks)?;
        let outbox = outbox::start(OUTBOX, &db, &nats, true);
        let a = Automation {
            db,
            nats,
            webhooks: Arc::new(webhooks),
            schedules: Arc::new(schedules),
            http,
            outbox,
            post: Arc::new(Notify::new()),
            fire: Arc::new(Notify::new()),
        };
        if a.webhooks.enabled {
            tokio::spawn(fanout::run(a.clone()));
            tokio::spawn(post::run(a.clone()));
        }
        if a.schedules.enabled {
            tokio::spawn(fire::run(a.clone()));
        }
        retention::start(&a);
        Ok(a)
    }
}

pub async fn serve(
    nats: async_nats::Client,
    a: Automation,
) -> std::result::Result<ServiceHost<Automation>, ServiceError> {
    let mut host = ServiceHost::start(
        nats,
        SERVICE_NAME,
        env!("CARGO_PKG_VERSION"),
        "Webhooks and schedules (webhook.*, schedule.*)",
        a,
    )
    .await?;
    host.serve::<rpc::WebhookCreate>(webhooks::create).await?;
    host.serve::<rpc::WebhookList>(webhooks::list).await?;
    host.serve::<rpc::WebhookGet>(webhooks::get).await?;
    host.serve::<rpc::WebhookUpdate>(webhooks::update).await?;
    host.serve::<rpc::WebhookDelete>(webhooks::delete).await?;
    host.serve::<rpc::WebhookDeliveries>(webhooks::deliveries).await?;
    host.serve::<rpc::WebhookReplay>(webhooks::replay).await?;
    host.serve::<rpc::ScheduleCreate>(schedules::create).await?;
    host.serve::<rpc::ScheduleList>(schedules::list).await?;
    host.serve::<rpc::ScheduleGet>(schedules::get).await?;
    host.serve::<rpc::SchedulePause>(schedules::pause).await?;
    host.serve::<rpc::ScheduleResume>(schedules::resume).await?;
    host.serve::<rpc::ScheduleDelete>(schedules::delete).await?;
    host.serve::<rpc::ScheduleRuns>(schedules::runs).await?;
    Ok(host)
}

/// How long to wait for something due at `next` (Unix ms), at most `poll_ms`.
pub(crate) fn wait_until(next: Option<i64>, poll_ms: u64) -> std::time::Duration {
    let wait = next.map_or(poll_ms as i64, |at| (at - relay_bus::now_ms()).clamp(0, poll_ms as i64));
    std::time::Duration::from_millis(wait as u64)
}

/// The page size of a log (`limit`, 1 to 500, 50 by default).
pub(crate) fn page_limit(limit: Option<i64>) -> error::Result<i64> {
    let limit = limit.unwrap_or(50);
    if (1..=500).contains(&limit) {
        Ok(limit)
    } else {
        Err(AutomationError::Invalid(format!("limit {limit}: 1 to 500")))
    }
}

/// A new id: a v7 UUID, time-ordered.
pub(crate) fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::now_v7().simple())
}

/// Checks an id a client chose.
pub(crate) fn check_id(field: &str, id: &str) -> error::Result<()> {
    if relay_contracts::is_name_id(id) {
        Ok(())
    } else {
        Err(AutomationError::Invalid(format!(
            "{field}: 1 to 128 letters, digits, '_', '.', ':' or '-'"
        )))
    }
}
