//! What the mesh does by itself (the `automation` service): webhooks, which post the event log's
//! events to people's URLs signed the Standard Webhooks way, and schedules, which send a
//! message or spawn a session at a time or on a cron expression.

use crate::capabilities::DeliveryMode;
use crate::messaging::To;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

// ---- webhooks --------------------------------------------------------------------------------

/// The event types a subscription gets when it names none: what needs a person's attention.
pub const DEFAULT_WEBHOOK_EVENTS: &[&str] = &[
    "permission.requested",
    "question.requested",
    "budget.exceeded",
    "status.idle",
    "session.turn.completed",
    "delivery.failed",
];

/// `webhook.create`: a subscription of the caller's workspace.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateWebhookRequest {
    /// An http(s) URL. Loopback, link-local and private addresses are refused unless the
    /// automation service allows them (`webhooks.allow_private`), also when a name resolves to
    /// one at send time; redirects are not followed.
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 2000))]
    pub url: String,
    /// Event types (`session.created`, …), or `*` for all; the attention defaults when absent:
    /// permission.requested, question.requested, budget.exceeded, status.idle (the agent went
    /// idle), session.turn.completed, delivery.failed.
    #[cfg_attr(feature = "openapi", schema(max_items = 100))]
    pub events: Option<Vec<String>>,
    /// The signing secret, `whsec_` + base64 of 24 to 64 bytes; one is made when absent.
    pub secret: Option<String>,
    #[cfg_attr(feature = "openapi", schema(max_length = 500))]
    pub description: Option<String>,
    /// Follow one A2A task instead (what the A2A push-notification calls make): its updates
    /// are posted as A2A `StreamResponse`s with the token in `X-A2A-Notification-Token`;
    /// `events` is then ignored.
    pub a2a_task: Option<crate::a2a::A2aTaskPush>,
}

/// A subscription. Its `secret` is shown only in the reply to `webhook.create`.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Webhook {
    pub webhook_id: String,
    pub url: String,
    pub events: Vec<String>,
    pub description: Option<String>,
    pub enabled: bool,
    /// Why it was disabled (by a person, or after too many failed attempts in a row).
    pub disabled_reason: Option<String>,
    /// Failed attempts since the last success.
    pub consecutive_failures: i64,
    pub secret: Option<String>,
    /// The A2A task it follows, if it is an A2A push.
    pub a2a_task: Option<crate::a2a::A2aTaskPush>,
    pub created_by: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// `webhook.get`, `webhook.delete`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookRef {
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub webhook_id: String,
}

/// `webhook.update`: what is given changes. Enabling again clears the failure count; the
/// deliveries held while it was disabled then go.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateWebhookRequest {
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub webhook_id: String,
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 2000))]
    pub url: Option<String>,
    #[cfg_attr(feature = "openapi", schema(max_items = 100))]
    pub events: Option<Vec<String>>,
    #[cfg_attr(feature = "openapi", schema(max_length = 500))]
    pub description: Option<String>,
    pub enabled: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WebhookList {
    pub webhooks: Vec<Webhook>,
}

/// `webhook.list`: the workspace's subscriptions, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListWebhooksRequest {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum WebhookDeliveryStatus {
    /// Waiting for its next attempt (or for its subscription to be enabled again).
    Pending,
    /// The receiver answered 2xx.
    Delivered,
    /// Every attempt failed; `webhook.replay` tries again.
    Failed,
}

impl WebhookDeliveryStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One event posted to one subscription: its `webhook-id` header is `deliveryId`, the same on
/// every attempt, so a receiver can drop repeats.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WebhookDelivery {
    pub delivery_id: String,
    pub webhook_id: String,
    /// The event's seq in the log.
    pub event_seq: i64,
    pub event_type: String,
    pub status: WebhookDeliveryStatus,
    pub attempts: i64,
    /// When the next attempt goes (pending only).
    pub next_attempt_at: Option<i64>,
    /// The receiver's last HTTP status.
    pub last_status: Option<i64>,
    /// Why the last attempt failed (no answer, refused address, …).
    pub last_error: Option<String>,
    pub created_at: i64,
    pub delivered_at: Option<i64>,
}

/// `webhook.deliveries`: a subscription's delivery log, newest first.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookDeliveriesRequest {
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub webhook_id: String,
    pub status: Option<WebhookDeliveryStatus>,
    /// 1 to 500 (default 50).
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 500))]
    pub limit: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WebhookDeliveryList {
    pub deliveries: Vec<WebhookDelivery>,
}

/// `webhook.replay`: tries one delivery again now, with a fresh run of attempts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplayRequest {
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub webhook_id: String,
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub delivery_id: String,
}

// ---- schedules -------------------------------------------------------------------------------

/// What a schedule does each time it fires, as the person (key) who created it.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum ScheduleAction {
    /// `session.sendMessage` to a session (each run a message id of its own, so a run retried
    /// after a crash is sent once).
    #[serde(rename_all = "camelCase")]
    SendMessage {
        #[cfg_attr(feature = "openapi", schema(max_length = 256))]
        session_id: String,
        #[cfg_attr(
            feature = "openapi",
            schema(
                min_length = 1,
                max_length = 100000,
                pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"
            )
        )]
        text: String,
        /// How it is delivered (the session's default when absent).
        mode: Option<DeliveryMode>,
        /// Only these of the session's agents (all by default).
        #[cfg_attr(feature = "openapi", schema(max_items = 100))]
        agent_ids: Option<Vec<String>>,
        /// When a target agent is busy: `enqueue`, `reject`, `interrupt` or `rollback`.
        #[cfg_attr(feature = "openapi", schema(pattern = "^(enqueue|reject|interrupt|rollback)$"))]
        on_busy: Option<String>,
        priority: Option<crate::messaging::Priority>,
        /// RFC 3339: a delivery still waiting then fails with reason `deadline`.
        #[cfg_attr(feature = "openapi", schema(max_length = 64))]
        deadline: Option<String>,
    },
    /// A relay message (`message.send`) to `@handle`, `#channel` or a list of handles.
    #[serde(rename_all = "camelCase")]
    Message {
        to: To,
        #[cfg_attr(
            feature = "openapi",
            schema(
                min_length = 1,
                max_length = 32000,
                pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"
            )
        )]
        text: String,
        /// How each recipient's delivery goes (its default when absent).
        mode: Option<DeliveryMode>,
    },
    /// A new session with an agent (`cli`) given `task`.
    #[serde(rename_all = "camelCase")]
    Spawn {
        /// An agent name the spawners know.
        #[cfg_attr(
            feature = "openapi",
            schema(min_length = 1, max_length = 64, pattern = "^[a-z0-9_-]{1,64}$")
        )]
        cli: String,
        #[cfg_attr(
            feature = "openapi",
            schema(
                min_length = 1,
                max_length = 100000,
                pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"
            )
        )]
        task: String,
        /// The agent's handle.
        agent: Option<String>,
        title: Option<String>,
        cwd: Option<String>,
    },
}

/// `schedule.create`: exactly one of `cron` and `at`.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateScheduleRequest {
    /// Creating again with the same id answers with the stored schedule.
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub schedule_id: Option<String>,
    /// A label for people: not blank.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 200, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")
    )]
    pub name: Option<String>,
    /// A cron expression: 5 fields (minute granularity), 6 (seconds first), or `@hourly`,
    /// `@daily`, …, in `timeZone`.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 200, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")
    )]
    pub cron: Option<String>,
    /// An IANA time zone for `cron` (default `UTC`).
    #[cfg_attr(feature = "openapi", schema(max_length = 64))]
    pub time_zone: Option<String>,
    /// One run at this Unix time in ms (a delayed message).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>, minimum = 0, maximum = 253402300799000_i64))]
    pub at: Option<f64>,
    pub action: ScheduleAction,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum ScheduleStatus {
    Active,
    Paused,
    /// A one-time schedule that ran.
    Done,
}

impl ScheduleStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What one run did.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ScheduleRun {
    /// The time it was due.
    pub due_at: i64,
    pub fired_at: i64,
    pub ok: bool,
    /// The action's reply (the message or session id), or its error.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub result: Value,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    pub schedule_id: String,
    pub name: Option<String>,
    pub cron: Option<String>,
    pub time_zone: String,
    pub at: Option<i64>,
    pub action: ScheduleAction,
    pub status: ScheduleStatus,
    /// When it fires next (active only).
    pub next_run_at: Option<i64>,
    pub runs: i64,
    pub last_run: Option<ScheduleRun>,
    pub created_by: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// `schedule.get`, `schedule.pause`, `schedule.resume`, `schedule.delete`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScheduleRef {
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub schedule_id: String,
}

/// `schedule.list`: the workspace's schedules, oldest first.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema, utoipa::IntoParams), into_params(parameter_in = Query))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListSchedulesRequest {
    pub status: Option<ScheduleStatus>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ScheduleList {
    pub schedules: Vec<Schedule>,
}

/// `schedule.runs`: a schedule's runs, newest first.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScheduleRunsRequest {
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub schedule_id: String,
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 500))]
    pub limit: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ScheduleRunList {
    pub runs: Vec<ScheduleRun>,
}

/// The reply to a delete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Deleted {
    pub deleted: bool,
}

/// The events automation writes, typed: every field is written, `null` when unset.
pub mod events {
    use crate::session::EventPayload;
    use serde::{Deserialize, Serialize};
    use serde_json::Value;

    /// `schedule.fired`: one run of a schedule, what it did, and when it runs next.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ScheduleFired {
        pub schedule_id: String,
        pub due_at: i64,
        pub ok: bool,
        /// What the action answered, or `{"error": …}`.
        pub result: Value,
        pub next_run_at: Option<i64>,
    }

    /// `webhook.disabled`: a webhook stopped posting (its endpoint kept failing, or the key
    /// that made it was revoked).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct WebhookDisabled {
        pub webhook_id: String,
        pub reason: String,
        pub url: String,
    }

    impl EventPayload for ScheduleFired {
        const TYPE: &'static str = "schedule.fired";
    }
    impl EventPayload for WebhookDisabled {
        const TYPE: &'static str = "webhook.disabled";
    }
}
