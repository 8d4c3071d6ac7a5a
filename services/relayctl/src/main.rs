//! `relayctl`: the operator's view of a running mesh, over NATS like any other client.

mod automation;
mod bus;
mod commands;
mod coordination;
mod error;
mod messaging;
mod output;

use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "relayctl",
    version,
    about = "Operate a relay-mesh: sessions, events, permissions, costs, deliveries"
)]
struct Cli {
    /// NATS server (the mesh's configuration: RELAY_NATS__URL, RELAY_CONFIG, then this default).
    #[arg(long, global = true, env = "RELAY_NATS__URL")]
    nats: Option<String>,
    /// Print the replies as JSON (one document, or one line per event for `events tail`).
    #[arg(long, global = true)]
    json: bool,
    /// How long a request waits for its reply.
    #[arg(long, global = true, default_value_t = 5000)]
    timeout_ms: u64,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Sessions in the registry.
    #[command(subcommand)]
    Sessions(Sessions),
    /// The event log.
    #[command(subcommand)]
    Events(Events),
    /// Agents by handle: the directory (agent.list, agent.get).
    #[command(subcommand)]
    Agents(Agents),
    /// Permission requests waiting for (or given) a decision.
    #[command(subcommand)]
    Permissions(Permissions),
    /// Questions agents asked.
    #[command(subcommand)]
    Questions(Questions),
    /// Token usage and cost (cost.report).
    Costs(CostArgs),
    /// Messages on their way to agents.
    #[command(subcommand)]
    Deliveries(Deliveries),
    /// Sends a relay message, as relayctl (`operator:relayctl`), to `@handle`, `#channel` or
    /// `@a,@b` (a group); `send --thread ID - TEXT` replies in a thread.
    Send(messaging::SendArgs),
    /// Channels of a workspace (channel.*).
    #[command(subcommand)]
    Channels(messaging::Channels),
    /// Follows a conversation's messages as they are exchanged: `#channel`, `@handle` (its DMs
    /// and mentions) or `all`.
    Tail(messaging::TailMessages),
    /// Actions agents expose (action.list, action.invoke).
    #[command(subcommand)]
    Actions(coordination::Actions),
    /// Questions put to agents, who vote (consensus.*).
    #[command(subcommand)]
    Consensus(coordination::Consensus),
    /// The workspace's events posted to URLs, signed (webhook.*).
    #[command(subcommand)]
    Webhooks(automation::Webhooks),
    /// Messages sent at a time or on a cron expression (schedule.*).
    #[command(subcommand)]
    Schedules(automation::Schedules),
    /// The agent hosts (one per agent-spawner): status, load, labels (host.list).
    Hosts {
        /// online, offline, lost or all.
        #[arg(long, default_value = "all")]
        status: String,
    },
    /// The micro services on the bus and their instances ($SRV.PING / $SRV.STATS).
    Services,
    /// The audit trail: decisions, keys, workspaces, agent stops (audit.list).
    Audit {
        /// Unix ms, inclusive.
        #[arg(long)]
        since: Option<i64>,
        #[arg(long, default_value_t = 100)]
        limit: i64,
    },
    /// Workspaces, the unit of isolation (workspace.*).
    #[command(subcommand)]
    Workspaces(Workspaces),
    /// The gateway's workspace API keys (key.*).
    #[command(subcommand)]
    Keys(Keys),
    /// NATS identities: credentials for a new cluster, harness identities.
    #[command(subcommand)]
    Auth(Auth),
    /// TLS: a private CA and server certificate for the gateway, NATS and Postgres.
    #[command(subcommand)]
    Tls(Tls),
    /// Apply the database migrations (RELAY_DATABASE__URL) and exit; safe to run concurrently.
    Migrate {
        #[arg(long, env = "RELAY_DATABASE__URL")]
        database_url: Option<String>,
    },
}

#[derive(Subcommand)]
pub(crate) enum Workspaces {
    /// Creates a workspace; give it keys with `keys create --workspace NAME`.
    Create {
        name: String,
        #[arg(long)]
        display_name: Option<String>,
    },
    List,
    Show {
        name: String,
    },
    /// Deletes a workspace with no live agent: its keys are revoked at once, its name stays taken.
    Delete {
        name: String,
    },
    /// Sets the workspace's delivery policy (seed 001 step 3); `--clear` removes it.
    Policy {
        name: String,
        /// The mode of a send that names none.
        #[arg(long)]
        default_mode: Option<String>,
        /// A mode sends may ask for (again for more; all when none).
        #[arg(long = "allow")]
        allowed_modes: Vec<String>,
        /// The most deliveries that may wait for one agent.
        #[arg(long)]
        max_pending: Option<i64>,
        #[arg(long, conflicts_with_all = ["default_mode", "allowed_modes", "max_pending"])]
        clear: bool,
    },
}

#[derive(Subcommand)]
pub(crate) enum Keys {
    /// Creates a key and prints its token, which is shown this once.
    Create {
        name: String,
        /// viewer, operator or admin.
        #[arg(long)]
        role: String,
        #[arg(long, default_value = "default")]
        workspace: String,
    },
    /// Keys (never their tokens); every workspace unless one is named.
    List {
        #[arg(long)]
        workspace: Option<String>,
        /// Revoked keys too.
        #[arg(long)]
        all: bool,
    },
    /// Revokes a key: the next request with it is 401 and its streams end.
    Revoke { key_id: String },
}

#[derive(Subcommand)]
pub(crate) enum Auth {
    /// Writes a new operator and account, the nats-server include `nats-auth.conf`, a `.creds`
    /// file for each service, the gateway and `admin`, and `harness-signer.nk` for spawners.
    /// Refuses a directory that already holds a setup (credential files are secrets: 0600).
    Init {
        dir: std::path::PathBuf,
        /// Keep a setup that is already there (and say so) instead of refusing.
        #[arg(long)]
        if_missing: bool,
    },
    /// Prints the `.creds` of a harness for one agent (a harness run by hand, not by a spawner),
    /// minted with the harness signer and the account named in the spawner's credentials.
    Harness {
        #[arg(long)]
        agent: String,
        #[arg(long, default_value = "default")]
        workspace: String,
        /// The setup directory of `auth init`.
        #[arg(long)]
        dir: std::path::PathBuf,
    },
}

#[derive(Subcommand)]
pub(crate) enum Tls {
    /// Writes `ca.pem` (every client trusts it), `ca.key` (keep offline), and `server.pem` /
    /// `server.key` for the given host names and IP addresses. Refuses a directory that already
    /// holds a CA.
    Init {
        dir: std::path::PathBuf,
        /// A DNS name or IP address the server certificate is valid for (repeat it).
        #[arg(long = "host", default_values_t = ["localhost".to_string(), "127.0.0.1".to_string()])]
        hosts: Vec<String>,
        /// Keep a CA that is already there (and say so) instead of refusing.
        #[arg(long)]
        if_missing: bool,
    },
}

#[derive(Subcommand)]
pub(crate) enum Agents {
    /// Live agents (with --all, released ones too), most recently active first.
    List {
        #[arg(long)]
        all: bool,
        /// Only the live agents whose last reported status is this (`waiting`: who waits on a
        /// person; `blocked`, `idle`, …).
        #[arg(long, conflicts_with = "all")]
        status: Option<String>,
        #[arg(long)]
        session: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: i64,
    },
    /// One agent by handle (`@bob`, `bob`) or id.
    Show { agent: String },
}

#[derive(Subcommand)]
enum Sessions {
    List {
        /// all, active, closed, archived or discovered.
        #[arg(long, default_value = "all")]
        status: String,
        #[arg(long, default_value_t = 50)]
        limit: i64,
    },
    /// A session with its agents and turns.
    Show { session_id: String },
    /// Cancels the session's running turn (or --turn) and interrupts its busy agents.
    Interrupt {
        session_id: String,
        #[arg(long)]
        turn: Option<String>,
        #[arg(long)]
        reason: Option<String>,
    },
}

#[derive(Subcommand)]
enum Events {
    /// Print events as they are committed; with --from-seq, replay the log from there first.
    Tail(TailArgs),
}

#[derive(Args)]
struct TailArgs {
    /// Only this session's events (repeatable).
    #[arg(long = "session")]
    sessions: Vec<String>,
    /// Only this agent's (name or id; repeatable).
    #[arg(long = "agent")]
    agents: Vec<String>,
    /// Only this event type (repeatable).
    #[arg(long = "type")]
    types: Vec<String>,
    /// Replay events after this seq (0 = the whole log) before following.
    #[arg(long)]
    from_seq: Option<i64>,
    /// Stop once caught up instead of following.
    #[arg(long)]
    no_follow: bool,
    /// Stop after this many events.
    #[arg(long)]
    count: Option<u64>,
}

#[derive(Subcommand)]
enum Permissions {
    /// Permission requests, pending ones unless --status says otherwise.
    List(ListFilter),
    Approve {
        request_id: String,
        #[arg(long)]
        reason: Option<String>,
    },
    Deny {
        request_id: String,
        #[arg(long)]
        reason: Option<String>,
    },
}

#[derive(Subcommand)]
enum Questions {
    /// Questions, pending ones unless --status says otherwise.
    List(ListFilter),
    Answer {
        question_id: String,
        answer: String,
    },
}

// The filters of `permissions list` and `questions list`.
#[derive(Args)]
struct ListFilter {
    /// pending (the default), a final status (permissions: approved, denied; questions:
    /// answered, expired), or all.
    #[arg(long)]
    status: Option<String>,
    #[arg(long)]
    session: Option<String>,
    #[arg(long, default_value_t = 100)]
    limit: i64,
}

impl ListFilter {
    fn request(self) -> relay_contracts::permission::ListRequest {
        relay_contracts::permission::ListRequest {
            agent_id: None,
            session_id: self.session,
            status: self.status,
            limit: Some(self.limit),
        }
    }
}

#[derive(Args)]
struct CostArgs {
    #[arg(long)]
    session: Option<String>,
    #[arg(long)]
    agent: Option<String>,
    #[arg(long)]
    model: Option<String>,
    /// Unix ms, inclusive.
    #[arg(long)]
    since: Option<i64>,
    /// Unix ms, exclusive.
    #[arg(long)]
    until: Option<i64>,
}

#[derive(Subcommand)]
enum Deliveries {
    List {
        #[arg(long)]
        session: Option<String>,
        #[arg(long)]
        agent: Option<String>,
        /// pending, accepted, deferred, delivered, failed or cancelled.
        #[arg(long)]
        status: Option<String>,
        /// Every page, not only the first (progress on stderr).
        #[arg(long)]
        all: bool,
        #[arg(long, default_value_t = 100)]
        limit: i64,
    },
    Show {
        delivery_id: String,
    },
    Retry {
        delivery_id: String,
    },
    Cancel {
        delivery_id: String,
        #[arg(long)]
        reason: Option<String>,
    },
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // Warnings (e.g. "Postgres not reachable yet") go to stderr; stdout is the output.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .init();
    match commands::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("relayctl: {e}");
            std::process::ExitCode::from(e.exit_code())
        }
    }
}
