//! The session registry: sessions, attached agents, turns and messages, answered over NATS on
//! the `session.<key>` subjects of seed 002, kept in Postgres.

mod agents;
mod clients;
mod compress;
mod error;
mod handoff;
mod hosts;
mod lifecycle;
mod messages;
mod messaging;
mod posting;
mod progress;
mod prompts;
mod query;
mod retention;
mod scope;
mod snapshot;
mod status;
mod store;
mod turns;

pub use error::RegistryError;

use relay_bus::service::{ServiceError, ServiceHost};
use relay_bus::settings::{DatabaseSettings, NatsSettings, TelemetrySettings};
use relay_contracts::rpc;
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub nats: NatsSettings,
    pub database: DatabaseSettings,
    pub telemetry: TelemetrySettings,
    pub registry: RegistrySettings,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct RegistrySettings {
    /// `resolveAgentConfig` for `canonical-model` selections: model-name prefix → adapter.
    pub model_adapters: BTreeMap<String, String>,
    /// Page size of `session.list` when the caller gives none, and the largest it may ask for.
    pub default_page_size: i64,
    pub max_page_size: i64,
    /// Replies are cut to stay under this many bytes of JSON (NATS max_payload is 1 MiB by
    /// default): list and search return fewer sessions, messages pages sooner.
    pub max_reply_bytes: usize,
    /// Append every registry event to the event log (event-ingest) as `session.<type>`, and
    /// follow the agents' reported status (`status.changed`) from it.
    pub forward_events: bool,
    /// `session.purge` also deletes the session's events from the event log (event-ingest)
    /// and fails with `unavailable` while it cannot. Off only for a registry running alone.
    pub purge_event_log: bool,
    /// Hand stored messages' deliveries and agent changes to the delivery runner
    /// (`delivery.handoff`), and purge its deliveries with a session. Off only for a registry
    /// running alone: what is stored for the runner waits until it is on.
    pub hand_over_deliveries: bool,
    /// Relay messaging's guards.
    pub messaging: relay_messaging::MessagingSettings,
    /// When a quiet agent host is offline, then lost, and what becomes of its agents.
    pub hosts: relay_hosts::HostSettings,
    /// How long quiet sessions and workspace history are kept.
    pub retention: retention::RetentionSettings,
}

impl Default for RegistrySettings {
    fn default() -> Self {
        let model_adapters = [
            ("claude", "claude"),
            ("gpt", "codex"),
            ("o3", "codex"),
            ("o4", "codex"),
            ("gemini", "gemini"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        RegistrySettings {
            model_adapters,
            default_page_size: 50,
            max_page_size: 500,
            purge_event_log: true,
            hand_over_deliveries: true,
            forward_events: true,
            max_reply_bytes: 900_000,
            messaging: relay_messaging::MessagingSettings::default(),
            hosts: relay_hosts::HostSettings::default(),
            retention: retention::RetentionSettings::default(),
        }
    }
}

/// Handler state: cheap to clone, shared by every request.
#[derive(Clone)]
pub struct Registry {
    db: PgPool,
    nats: async_nats::Client,
    settings: Arc<RegistrySettings>,
    /// Poked after each commit so the forwarders send new events at once ([`OUTBOX`],
    /// [`SEED_OUTBOX`]).
    forward_wake: [Arc<tokio::sync::Notify>; 2],
    /// Hands stored messages' deliveries and agent changes to the delivery runner.
    relay: handoff::Relay,
    /// Workspaces and API keys, hosted here ([`relay_tenancy`]).
    tenancy: relay_tenancy::Tenancy,
    /// Relay messaging, hosted here ([`relay_messaging`]).
    messaging: relay_messaging::Messaging,
    /// Agent hosts, hosted here ([`relay_hosts`]).
    hosts: relay_hosts::Hosts,
}

/// `registry_events` rows become `session.<type>` events in the log.
const OUTBOX: relay_bus::outbox::Outbox = relay_bus::outbox::Outbox {
    table: "registry_events",
    type_prefix: "session.",
    // Audit entries written in a change's transaction, and seed 003's relay event, keep the
    // names they are known by.
    verbatim: &[
        "audit.%",
        <relay_contracts::session::events::MessageExchanged as relay_contracts::session::EventPayload>::TYPE,
    ],
    lock_key: 0x7265_6c61_7966_7764, // "relayfwd"
    // The session history of snapshots is read back from it.
    prune: false,
};

/// `registry_seed_events` rows keep their type in the log: seed 000's `message.sent`.
const SEED_OUTBOX: relay_bus::outbox::Outbox = relay_bus::outbox::Outbox {
    table: "registry_seed_events",
    type_prefix: "",
    verbatim: &[],
    lock_key: 0x7265_6c61_7973_6564, // "relaysed"
    prune: true,
};

impl Registry {
    /// Builds the handler state and, when configured, starts forwarding events to the log.
    pub fn new(db: PgPool, nats: async_nats::Client, settings: RegistrySettings) -> Self {
        let forward_wake =
            [OUTBOX, SEED_OUTBOX].map(|o| relay_bus::outbox::start(o, &db, &nats, settings.forward_events));
        // With the event log there, the agents' reported status is followed from it too.
        if settings.forward_events {
            status::start(db.clone(), nats.clone());
        }
        let relay = handoff::Relay::start(db.clone(), nats.clone(), settings.hand_over_deliveries);
        let tenancy = relay_tenancy::Tenancy {
            db: db.clone(),
            nats: nats.clone(),
        };
        let messaging = relay_messaging::Messaging {
            db: db.clone(),
            settings: settings.messaging.clone(),
            conversations: Default::default(),
        };
        let hosts = relay_hosts::Hosts {
            db: db.clone(),
            nats: nats.clone(),
            settings: settings.hosts.clone(),
        };
        let reg = Registry {
            tenancy,
            messaging,
            hosts,
            db,
            nats,
            settings: Arc::new(settings),
            forward_wake,
            relay,
        };
        relay_hosts::start(reg.clone());
        progress::start(&reg);
        retention::start(&reg);
        reg
    }
}

pub const SERVICE_NAME: &str = relay_contracts::rpc::service::SESSION_REGISTRY;

use relay_bus::scope::scoped;

/// Registers the micro service and every endpoint.
pub async fn serve(nats: async_nats::Client, reg: Registry) -> Result<ServiceHost<Registry>, ServiceError> {
    let mut host = ServiceHost::start(
        nats,
        SERVICE_NAME,
        env!("CARGO_PKG_VERSION"),
        "Sessions, agents, turns and messages (session.* subjects)",
        reg,
    )
    .await?;
    host.serve::<rpc::SessionCreate>(scoped(lifecycle::create)).await?;
    relay_hosts::serve(&mut host).await?;
    host.serve::<rpc::SessionGet>(query::get).await?;
    host.serve::<rpc::SessionList>(query::list).await?;
    host.serve::<rpc::SessionUpdate>(scoped(lifecycle::update)).await?;
    host.serve::<rpc::SessionClose>(scoped(lifecycle::close)).await?;
    host.serve::<rpc::SessionResume>(scoped(lifecycle::resume)).await?;
    host.serve::<rpc::SessionArchive>(scoped(lifecycle::archive)).await?;
    host.serve::<rpc::SessionPurge>(scoped(lifecycle::purge)).await?;
    host.serve::<rpc::SessionFork>(scoped(lifecycle::fork)).await?;
    host.serve::<rpc::SessionMerge>(scoped(lifecycle::merge)).await?;
    host.serve::<rpc::SessionCompress>(scoped(compress::compress)).await?;
    host.serve::<rpc::SessionRequestCompression>(scoped(compress::request))
        .await?;
    host.serve::<rpc::SessionObserveClient>(scoped(clients::observe))
        .await?;
    host.serve::<rpc::SessionAgentSwap>(scoped(clients::swap)).await?;
    host.serve::<rpc::SessionResolveSystemPrompt>(scoped(prompts::resolve))
        .await?;
    relay_prompts::serve(&mut host).await?;
    host.serve::<rpc::SessionAbandon>(scoped(lifecycle::abandon)).await?;
    host.serve::<rpc::SessionGetChildren>(scoped(query::get_children))
        .await?;
    host.serve::<rpc::SessionGetStatusCounts>(query::status_counts).await?;
    host.serve::<rpc::SessionGetByAdapterSessionId>(query::get_by_adapter_session_id)
        .await?;
    host.serve::<rpc::SessionSearch>(query::search).await?;
    host.serve::<rpc::SessionAgentAttach>(scoped(agents::attach)).await?;
    host.serve::<rpc::SessionAgentRelease>(scoped(agents::release)).await?;
    host.serve::<rpc::SessionAgentCapabilities>(scoped(agents::capabilities))
        .await?;
    host.serve::<rpc::SessionAgentDeclareCapabilities>(scoped(agents::declare_capabilities))
        .await?;
    host.serve::<rpc::SessionResolveAgentConfig>(agents::resolve_agent_config)
        .await?;
    host.serve::<rpc::AgentList>(agents::list).await?;
    host.serve::<rpc::AgentGet>(agents::get).await?;
    host.serve::<rpc::SessionAgentSetTools>(agents::set_tools).await?;
    relay_messaging::serve(&mut host).await?;
    host.serve::<rpc::SessionSendMessage>(messages::send).await?;
    host.serve::<rpc::SessionUserMessageAcknowledge>(scoped(messages::acknowledge))
        .await?;
    host.serve::<rpc::SessionUserMessageComplete>(scoped(messages::complete))
        .await?;
    host.serve::<rpc::SessionTurnCancel>(scoped(turns::cancel)).await?;
    host.serve::<rpc::SessionTurns>(scoped(messages::turns)).await?;
    host.serve::<rpc::SessionMessages>(scoped(messages::list)).await?;
    host.serve::<rpc::SessionUsage>(scoped(messages::usage)).await?;
    host.serve::<rpc::SessionSnapshotExport>(scoped(snapshot::export))
        .await?;
    host.serve::<rpc::SessionSnapshotImport>(scoped(snapshot::import))
        .await?;
    host.serve::<rpc::SessionSnapshotValidate>(scoped(snapshot::validate))
        .await?;
    relay_tenancy::serve(&mut host).await?;
    Ok(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_config_file_loads_and_matches_the_defaults() {
        let loaded: Settings = relay_bus::settings::load_example().unwrap();
        let defaults = Settings::default();
        assert_eq!(loaded.registry.model_adapters, defaults.registry.model_adapters);
        assert_eq!(loaded.registry.max_page_size, defaults.registry.max_page_size);
        assert_eq!(loaded.registry.messaging.max_hops, defaults.registry.messaging.max_hops);
        assert_eq!(
            loaded.registry.messaging.max_per_minute,
            defaults.registry.messaging.max_per_minute
        );
        assert_eq!(
            loaded.registry.messaging.max_recipients,
            defaults.registry.messaging.max_recipients
        );
        assert_eq!(loaded.nats.url, defaults.nats.url);
        assert_eq!(loaded.database.url, defaults.database.url);
    }
}
