//! What each command does: one bus call (or a few), then output.

use crate::bus::start_seq;
use crate::error::{CtlError, Result, parse};
use crate::output::{self, json, opt, print_json, table, time, wire};
use crate::{
    Agents, Auth, Cli, Command, CostArgs, Deliveries, Events, Keys, Permissions, Questions, Sessions, TailArgs, Tls,
    Workspaces,
};
use futures::StreamExt;
use relay_bus::settings::{DatabaseSettings, NatsSettings};
use relay_client::Client;
use relay_contracts::{cost, delivery, events, permission, session};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// The part of the mesh's configuration relayctl reads (RELAY_CONFIG, RELAY_* env).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
struct Settings {
    nats: NatsSettings,
    database: DatabaseSettings,
}

pub async fn run(cli: Cli) -> Result<()> {
    let settings: Settings = relay_bus::settings::load()?;
    if let Command::Migrate { database_url } = cli.command {
        let mut db = settings.database;
        db.url = database_url.unwrap_or(db.url);
        return migrate(db).await;
    }
    if let Command::Auth(cmd) = cli.command {
        return auth(cmd);
    }
    if let Command::Tls(cmd) = cli.command {
        return tls(cmd);
    }
    // relayctl connects with the mesh's NATS settings: RELAY_NATS__CREDS_FILE names its
    // identity (`admin.creds` from `relayctl auth init`) when auth is on.
    let nats_settings = NatsSettings {
        url: cli.nats.unwrap_or(settings.nats.url),
        connect_attempts: 1,
        ..settings.nats
    };
    let nats = relay_bus::connect_nats(&nats_settings, "relayctl")
        .await
        .map_err(|e| CtlError::Failed(format!("cannot connect to NATS at {}: {e}", nats_settings.url)))?;
    let client = Client::new(nats).with_timeout(Duration::from_millis(cli.timeout_ms));
    let as_json = cli.json;
    match cli.command {
        Command::Sessions(c) => sessions(&client, c, as_json).await,
        Command::Events(Events::Tail(args)) => tail(&client, args, as_json).await,
        Command::Permissions(c) => permissions(&client, c, as_json).await,
        Command::Questions(c) => questions(&client, c, as_json).await,
        Command::Costs(args) => costs(&client, args, as_json).await,
        Command::Deliveries(c) => deliveries(&client, c, as_json).await,
        Command::Send(args) => crate::messaging::send(&client, args, as_json).await,
        Command::Channels(c) => crate::messaging::channels(&client, c, as_json).await,
        Command::Tail(args) => crate::messaging::tail(&client, args, as_json).await,
        Command::Actions(c) => crate::coordination::actions(&client, c, as_json).await,
        Command::Consensus(c) => crate::coordination::consensus(&client, c, as_json).await,
        Command::Webhooks(c) => crate::automation::webhooks(&client, c, as_json).await,
        Command::Schedules(c) => crate::automation::schedules(&client, c, as_json).await,
        Command::Services => services(&client, as_json).await,
        Command::Keys(c) => keys(&client, c, as_json).await,
        Command::Workspaces(c) => workspaces(&client, c, as_json).await,
        Command::Agents(c) => agents(&client, c, as_json).await,
        Command::Hosts { status } => hosts(&client, status, as_json).await,
        Command::Audit { since, limit } => audit(&client, since, limit, as_json).await,
        Command::Migrate { .. } | Command::Auth(_) | Command::Tls(_) => unreachable!("handled above"),
    }
}

fn tls(cmd: Tls) -> Result<()> {
    let Tls::Init { dir, hosts, if_missing } = cmd;
    let certs = relay_bus::pki::Certs::at(&dir);
    if certs.ca.exists() {
        if if_missing {
            println!("{} already holds a CA: kept", dir.display());
            return Ok(());
        }
        return Err(CtlError::Invalid(format!(
            "{} already holds a CA; remove it first to replace the certificates",
            dir.display()
        )));
    }
    let certs = relay_bus::pki::init(&dir, &hosts).map_err(|e| CtlError::Failed(e.to_string()))?;
    println!("wrote {}:", certs.dir.display());
    println!("  ca.pem       trust it: RELAY_NATS__TLS_CA_FILE, sslrootcert=, curl --cacert");
    println!(
        "  server.pem   the gateway's, nats-server's and Postgres' certificate ({})",
        hosts.join(", ")
    );
    println!("  server.key   its key (0600)");
    println!("  ca.key       keep offline; it signs more certificates");
    Ok(())
}

async fn audit(c: &Client, since: Option<i64>, limit: i64, as_json: bool) -> Result<()> {
    let req = relay_contracts::audit::ListAuditRequest {
        since,
        limit: Some(limit),
        ..Default::default()
    };
    let page = c.audit_list(&req).await?;
    if as_json {
        return print_json(&page);
    }
    let s = |e: &relay_contracts::events::Event, k: &str| e.payload[k].as_str().unwrap_or_default().to_string();
    let rows: Vec<_> = page
        .events
        .iter()
        .map(|e| {
            vec![
                time(e.ts),
                e.workspace.clone().unwrap_or_default(),
                s(e, "actor"),
                s(e, "action"),
                s(e, "target"),
            ]
        })
        .collect();
    table(&["WHEN (UTC)", "WORKSPACE", "WHO", "ACTION", "TARGET"], &rows);
    Ok(())
}

async fn workspaces(c: &Client, cmd: Workspaces, as_json: bool) -> Result<()> {
    use relay_contracts::workspace::{
        CreateWorkspaceRequest, DeliveryPolicy, ListWorkspacesRequest, SetDeliveryPolicyRequest, Workspace,
        WorkspaceRef,
    };
    let row = |w: &Workspace| {
        vec![
            w.name.clone(),
            opt(&w.display_name),
            time(w.created_at),
            opt(&w.created_by),
        ]
    };
    const HEADERS: [&str; 4] = ["WORKSPACE", "NAME", "CREATED (UTC)", "BY"];
    let shown = match cmd {
        Workspaces::Create { name, display_name } => {
            let w = c
                .workspace_create(&CreateWorkspaceRequest {
                    name,
                    display_name,
                    delivery_policy: None,
                })
                .await?;
            if as_json {
                return print_json(&w);
            }
            vec![w]
        }
        Workspaces::List => {
            let list = c.workspace_list(&ListWorkspacesRequest {}).await?;
            if as_json {
                return print_json(&list);
            }
            list.workspaces
        }
        Workspaces::Show { name } => {
            let w = c.workspace_get(&WorkspaceRef { name }).await?;
            if as_json {
                return print_json(&w);
            }
            vec![w]
        }
        Workspaces::Delete { name } => {
            let d = c.workspace_delete(&WorkspaceRef { name }).await?;
            if as_json {
                return print_json(&d);
            }
            println!("{}: deleted, {} key(s) revoked", d.name, d.keys_revoked.len());
            return Ok(());
        }
        Workspaces::Policy {
            name,
            default_mode,
            allowed_modes,
            max_pending,
            clear,
        } => {
            let policy = (!clear)
                .then(|| -> Result<DeliveryPolicy> {
                    Ok(DeliveryPolicy {
                        default_mode: default_mode.map(|m| parse("default-mode", &m)).transpose()?,
                        allowed_modes: (!allowed_modes.is_empty())
                            .then(|| {
                                allowed_modes
                                    .iter()
                                    .map(|m| parse("allow", m))
                                    .collect::<Result<Vec<_>>>()
                            })
                            .transpose()?,
                        max_pending_per_agent: max_pending,
                    })
                })
                .transpose()?;
            let req = SetDeliveryPolicyRequest {
                name,
                delivery_policy: policy,
            };
            let w = c.workspace_set_delivery_policy(&req).await?;
            if as_json {
                return print_json(&w);
            }
            println!(
                "{}: {}",
                w.name,
                serde_json::to_string(&w.delivery_policy).unwrap_or_default()
            );
            return Ok(());
        }
    };
    table(&HEADERS, &shown.iter().map(row).collect::<Vec<_>>());
    Ok(())
}

async fn agents(c: &Client, cmd: Agents, as_json: bool) -> Result<()> {
    use relay_contracts::session::{Agent, AgentGetRequest, AgentListRequest};
    let row = |a: &Agent| {
        vec![
            a.handle.as_deref().map(|h| format!("@{h}")).unwrap_or_default(),
            a.agent_id.clone(),
            // What it last reported (waiting, blocked, …), else the registry's record.
            a.reported_status
                .map_or_else(|| format!("{:?}", a.status).to_lowercase(), |s| s.as_str().to_string()),
            a.adapter_name.clone(),
            a.session_id.clone(),
            time(a.last_activity_at),
        ]
    };
    const HEADERS: [&str; 6] = ["HANDLE", "AGENT", "STATUS", "ADAPTER", "SESSION", "ACTIVE (UTC)"];
    let shown = match cmd {
        Agents::List {
            all,
            status,
            session,
            limit,
        } => {
            let req = AgentListRequest {
                status: status.or_else(|| all.then(|| "all".to_string())),
                session_id: session,
                limit: Some(limit),
                offset: None,
            };
            let list = c.agent_list(&req).await?;
            if as_json {
                return print_json(&list);
            }
            list.agents
        }
        Agents::Show { agent } => {
            let a = c.agent_get(&AgentGetRequest { agent }).await?;
            if as_json {
                return print_json(&a);
            }
            vec![a]
        }
    };
    table(&HEADERS, &shown.iter().map(row).collect::<Vec<_>>());
    Ok(())
}

async fn hosts(c: &Client, status: String, as_json: bool) -> Result<()> {
    let list = c
        .host_list(&relay_contracts::hosts::HostListRequest { status: Some(status) })
        .await?;
    if as_json {
        return print_json(&list);
    }
    let rows: Vec<Vec<String>> = list
        .hosts
        .iter()
        .map(|h| {
            let labels: Vec<String> = h.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            vec![
                h.host_id.clone(),
                h.status.clone(),
                format!("{}/{}", h.load, h.capacity),
                labels.join(","),
                h.clis.join(","),
                time(h.last_seen_at),
            ]
        })
        .collect();
    table(&["HOST", "STATUS", "LOAD", "LABELS", "CLIS", "SEEN (UTC)"], &rows);
    Ok(())
}

async fn keys(c: &Client, cmd: Keys, as_json: bool) -> Result<()> {
    use relay_contracts::keys::{CreateKeyRequest, KeyRef, ListKeysRequest};
    let row = |k: &relay_contracts::keys::ApiKey| {
        vec![
            k.key_id.clone(),
            k.workspace.clone(),
            k.role.as_str().to_string(),
            k.name.clone(),
            time(k.created_at),
            k.revoked_at.map(time).unwrap_or_default(),
        ]
    };
    const HEADERS: [&str; 6] = ["KEY", "WORKSPACE", "ROLE", "NAME", "CREATED (UTC)", "REVOKED (UTC)"];
    match cmd {
        Keys::Create { name, role, workspace } => {
            let req = CreateKeyRequest {
                name,
                role: parse("role", &role)?,
                workspace: Some(workspace),
            };
            let created = c.key_create(&req).await?;
            if as_json {
                return print_json(&created);
            }
            // The token alone on stdout: `TOKEN=$(relayctl keys create …)` takes it as it is.
            let k = &created.key;
            eprintln!(
                "relayctl: key {} of workspace {}, role {}, named {}; its token (on stdout) is shown this once, the mesh keeps only its digest",
                k.key_id,
                k.workspace,
                k.role.as_str(),
                k.name
            );
            println!("{}", created.token);
        }
        Keys::List { workspace, all } => {
            let list = c
                .key_list(&ListKeysRequest {
                    workspace,
                    include_revoked: Some(all),
                })
                .await?;
            if as_json {
                return print_json(&list);
            }
            table(&HEADERS, &list.keys.iter().map(row).collect::<Vec<_>>());
        }
        Keys::Revoke { key_id } => {
            let key = c.key_revoke(&KeyRef { key_id }).await?;
            if as_json {
                return print_json(&key);
            }
            table(&HEADERS, &[row(&key)]);
        }
    }
    Ok(())
}

fn auth(cmd: Auth) -> Result<()> {
    let fail = |e: relay_bus::identity::IdentityError| CtlError::Failed(e.to_string());
    match cmd {
        Auth::Init { dir, if_missing } => {
            if dir.join("nats-auth.conf").exists() && if_missing {
                println!("{} already holds an auth setup: kept", dir.display());
                return Ok(());
            }
            if dir.join("nats-auth.conf").exists() {
                return Err(CtlError::Invalid(format!(
                    "{} already holds an auth setup; remove it first to replace every credential",
                    dir.display()
                )));
            }
            let setup = relay_bus::identity::init(&dir).map_err(fail)?;
            println!("wrote {}:", setup.dir.display());
            println!("  nats-auth.conf      include it from nats-server.conf");
            for name in relay_contracts::access::identities() {
                println!(
                    "  {name}.creds{:pad$}RELAY_NATS__CREDS_FILE of {name}",
                    "",
                    pad = 20usize.saturating_sub(name.len() + 6)
                );
            }
            println!("  harness-signer.nk   RELAY_SPAWNER__HARNESS_SIGNER of every agent-spawner");
            println!("  operator.nk, account.nk: keep offline; they re-sign everything");
        }
        Auth::Harness { agent, workspace, dir } => {
            let signer = relay_bus::identity::Setup::at(&dir).signer().map_err(fail)?;
            let creds = signer
                .mint(&agent, &workspace)
                .map_err(|e| CtlError::Invalid(e.to_string()))?;
            print!("{creds}");
        }
    }
    Ok(())
}

async fn sessions(c: &Client, cmd: Sessions, as_json: bool) -> Result<()> {
    match cmd {
        Sessions::List { status, limit } => {
            let list = c
                .session_list(&session::ListRequest {
                    status: Some(parse("status", &status)?),
                    limit: Some(limit),
                    execution_target_id: None,
                    include_preview: None,
                    offset: None,
                })
                .await?;
            if as_json {
                return print_json(&list);
            }
            let rows: Vec<_> = list
                .sessions
                .iter()
                .map(|s| {
                    vec![
                        s.session_id.clone(),
                        wire(&s.status),
                        s.agents.len().to_string(),
                        time(s.last_activity_at),
                        opt(&s.title),
                    ]
                })
                .collect();
            table(&["SESSION", "STATUS", "AGENTS", "LAST ACTIVITY (UTC)", "TITLE"], &rows);
            println!("{} of {} sessions", list.sessions.len(), list.total);
        }
        Sessions::Show { session_id } => {
            let r = session::SessionRef { session_id };
            let got = c.session_get(&r).await?;
            let Some(s) = got.session else {
                return Err(relay_client::Error::Wire(relay_contracts::WireError::new(
                    relay_contracts::ErrorCode::NotFound,
                    format!("no session {}", r.session_id),
                ))
                .into());
            };
            let turns = c.session_turns(&r).await?;
            if as_json {
                return print_json(&serde_json::json!({ "session": s, "turns": turns.turns }));
            }
            println!("session   {}", s.session_id);
            println!("status    {}", wire(&s.status));
            println!("title     {}", opt(&s.title));
            println!("created   {}", time(s.created_at));
            println!("activity  {}", time(s.last_activity_at));
            println!("turns     {}", turns.turns.len());
            println!();
            let rows: Vec<_> = s
                .agents
                .iter()
                .map(|a| {
                    vec![
                        a.agent_id.clone(),
                        a.adapter_name.clone(),
                        wire(&a.status),
                        time(a.last_activity_at),
                    ]
                })
                .collect();
            table(&["AGENT", "ADAPTER", "STATUS", "LAST ACTIVITY (UTC)"], &rows);
        }
        Sessions::Interrupt {
            session_id,
            turn,
            reason,
        } => {
            let req = session::CancelTurnRequest {
                session_id,
                turn_id: turn,
                reason,
            };
            let r = c.session_turn_cancel(&req).await?;
            if as_json {
                return print_json(&r);
            }
            println!("turn {} cancelled", r.turn.turn_id);
            println!("interrupted  {}", r.interrupted.join(", "));
            println!("idle         {}", r.idle.join(", "));
            println!("unreachable  {}", r.unreachable.join(", "));
        }
    }
    Ok(())
}

/// Replays from `--from-seq` (with progress on stderr), then follows until Ctrl-C.
async fn tail(c: &Client, args: TailArgs, as_json: bool) -> Result<()> {
    let some = |v: Vec<String>| (!v.is_empty()).then_some(v);
    let start = start_seq(c, args.from_seq).await?;
    let mut stream = c
        .follow(events::SinceRequest {
            seq: start,
            types: some(args.types),
            agents: some(args.agents),
            session_ids: some(args.sessions),
            limit: None,
        })
        .await?;
    let (mut printed, mut last_progress, mut announced) = (0u64, Instant::now(), args.from_seq.is_none());
    loop {
        if args.count.is_some_and(|n| printed >= n) {
            return Ok(());
        }
        let event = tokio::select! {
            e = stream.next_within(Duration::from_millis(500)) => e?,
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        if let Some(e) = &event {
            if as_json {
                println!("{}", serde_json::to_string(e).unwrap_or_default());
            } else {
                println!("{}", output::event_line(e));
            }
            printed += 1;
        }
        if stream.caught_up() {
            if !announced {
                eprintln!(
                    "relayctl: replayed {printed} events; caught up at seq {}{}",
                    stream.cursor(),
                    if args.no_follow {
                        ""
                    } else {
                        ", following (Ctrl-C to stop)"
                    }
                );
                announced = true;
            }
            if args.no_follow {
                return Ok(());
            }
        } else if last_progress.elapsed() >= Duration::from_secs(1) {
            eprintln!(
                "relayctl: replaying… at seq {} of {} ({printed} events printed)",
                stream.cursor(),
                stream.head_seq()
            );
            last_progress = Instant::now();
        }
    }
}

async fn permissions(c: &Client, cmd: Permissions, as_json: bool) -> Result<()> {
    let decide = |request_id, reason| permission::DecideRequest { request_id, reason };
    let decided = match cmd {
        Permissions::List(filter) => {
            let list = c.permission_list(&filter.request()).await?;
            if as_json {
                return print_json(&list);
            }
            let rows: Vec<_> = list
                .permissions
                .iter()
                .map(|p| {
                    vec![
                        p.request_id.clone(),
                        wire(&p.status),
                        wire(&p.risk_level),
                        p.tool.clone(),
                        p.command.clone().or_else(|| p.file_path.clone()).unwrap_or_default(),
                        p.agent_id.clone(),
                        time(p.requested_at),
                    ]
                })
                .collect();
            table(
                &[
                    "REQUEST",
                    "STATUS",
                    "RISK",
                    "TOOL",
                    "COMMAND / FILE",
                    "AGENT",
                    "REQUESTED (UTC)",
                ],
                &rows,
            );
            return Ok(());
        }
        Permissions::Approve { request_id, reason } => c.permission_approve(&decide(request_id, reason)).await?,
        Permissions::Deny { request_id, reason } => c.permission_deny(&decide(request_id, reason)).await?,
    };
    if as_json {
        return print_json(&decided);
    }
    let p = &decided.permission;
    println!(
        "{} {} ({} {}); harness {}",
        p.request_id,
        wire(&p.status),
        p.tool,
        p.command.as_deref().unwrap_or(""),
        if decided.harness_notified {
            "notified"
        } else {
            "not reachable: it will read the decision when it asks again"
        }
    );
    Ok(())
}

async fn questions(c: &Client, cmd: Questions, as_json: bool) -> Result<()> {
    match cmd {
        Questions::List(filter) => {
            let list = c.question_list(&filter.request()).await?;
            if as_json {
                return print_json(&list);
            }
            let rows: Vec<_> = list
                .questions
                .iter()
                .map(|q| {
                    vec![
                        q.question_id.clone(),
                        wire(&q.status),
                        q.question.clone(),
                        q.options.join("/"),
                        opt(&q.answer),
                    ]
                })
                .collect();
            table(&["QUESTION", "STATUS", "TEXT", "OPTIONS", "ANSWER"], &rows);
        }
        Questions::Answer { question_id, answer } => {
            let r = c
                .question_answer(&permission::AnswerRequest { question_id, answer })
                .await?;
            json(&r);
        }
    }
    Ok(())
}

async fn costs(c: &Client, a: CostArgs, as_json: bool) -> Result<()> {
    let report = c
        .cost_report(&cost::ReportRequest {
            since: a.since,
            until: a.until,
            agent: a.agent,
            session: a.session,
            model: a.model,
        })
        .await?;
    if as_json {
        return print_json(&report);
    }
    let row = |name: &str, b: &cost::Breakdown| {
        vec![
            name.to_string(),
            b.input_tokens.to_string(),
            b.output_tokens.to_string(),
            b.total_tokens.to_string(),
            format!("{:.4}", b.estimated_cost_usd),
        ]
    };
    let headers = ["", "INPUT", "OUTPUT", "TOTAL TOKENS", "USD"];
    table(&headers, &[row("total", &report.total)]);
    for (title, group) in [
        ("by model", &report.by_model),
        ("by session", &report.by_session),
        ("by agent", &report.by_agent),
    ] {
        if group.len() > 1 || (title == "by model" && !group.is_empty()) {
            println!("\n{title}");
            let rows: Vec<_> = group.iter().map(|(k, b)| row(k, b)).collect();
            table(&headers, &rows);
        }
    }
    if !report.unpriced_models.is_empty() {
        println!("\nno price for: {}", report.unpriced_models.join(", "));
    }
    Ok(())
}

fn delivery_row(d: &delivery::Delivery) -> Vec<String> {
    vec![
        d.delivery_id.clone(),
        d.status.as_str().to_string(),
        wire(&d.mode),
        d.attempts.to_string(),
        d.agent_id.clone(),
        d.session_id.clone(),
        time(d.updated_at),
        opt(&d.reason),
    ]
}

const DELIVERY_HEADERS: [&str; 8] = [
    "DELIVERY",
    "STATUS",
    "MODE",
    "TRIES",
    "AGENT",
    "SESSION",
    "UPDATED (UTC)",
    "REASON",
];

async fn deliveries(c: &Client, cmd: Deliveries, as_json: bool) -> Result<()> {
    let one = match cmd {
        Deliveries::List {
            session,
            agent,
            status,
            all,
            limit,
        } => {
            let mut req = delivery::ListDeliveriesRequest {
                session_id: session,
                agent_id: agent,
                message_id: None,
                status: status.as_deref().map(|s| parse("status", s)).transpose()?,
                limit: Some(limit),
                cursor: None,
            };
            let mut found = Vec::new();
            loop {
                let page = c.delivery_list(&req).await?;
                found.extend(page.deliveries);
                match page.next_cursor {
                    Some(next) if all => {
                        eprintln!("relayctl: {} deliveries so far…", found.len());
                        req.cursor = Some(next);
                    }
                    more => {
                        if more.is_some() {
                            eprintln!("relayctl: more deliveries match; --all lists every page");
                        }
                        break;
                    }
                }
            }
            if as_json {
                return print_json(&found);
            }
            let rows: Vec<_> = found.iter().map(delivery_row).collect();
            table(&DELIVERY_HEADERS, &rows);
            return Ok(());
        }
        Deliveries::Show { delivery_id } => c.delivery_get(&delivery::DeliveryRef { delivery_id }).await?,
        Deliveries::Retry { delivery_id } => c.delivery_retry(&delivery::DeliveryRef { delivery_id }).await?,
        Deliveries::Cancel { delivery_id, reason } => {
            c.delivery_cancel(&delivery::CancelDeliveryRequest { delivery_id, reason })
                .await?
        }
    };
    if as_json {
        return print_json(&one);
    }
    table(&DELIVERY_HEADERS, &[delivery_row(&one)]);
    Ok(())
}

/// Every micro service instance that answers `$SRV.STATS` within half a second.
async fn services(c: &Client, as_json: bool) -> Result<()> {
    let nats = c.nats();
    let inbox = nats.new_inbox();
    let unavailable = |e: String| {
        relay_client::Error::Wire(relay_contracts::WireError::new(
            relay_contracts::ErrorCode::Unavailable,
            e,
        ))
    };
    let mut replies = nats
        .subscribe(inbox.clone())
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    nats.publish_with_reply("$SRV.STATS", inbox, "".into())
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    let mut stats = Vec::new();
    while let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(500), replies.next()).await {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&m.payload) {
            stats.push(v);
        }
    }
    stats.sort_by_key(|s| s["name"].as_str().unwrap_or_default().to_string());
    if as_json {
        return print_json(&stats);
    }
    let rows: Vec<_> = stats
        .iter()
        .map(|s| {
            let endpoints = s["endpoints"].as_array().cloned().unwrap_or_default();
            let sum = |k: &str| endpoints.iter().map(|e| e[k].as_u64().unwrap_or(0)).sum::<u64>();
            vec![
                s["name"].as_str().unwrap_or_default().to_string(),
                s["id"].as_str().unwrap_or_default().to_string(),
                s["version"].as_str().unwrap_or_default().to_string(),
                endpoints.len().to_string(),
                sum("num_requests").to_string(),
                sum("num_errors").to_string(),
            ]
        })
        .collect();
    table(
        &["SERVICE", "INSTANCE", "VERSION", "ENDPOINTS", "REQUESTS", "ERRORS"],
        &rows,
    );
    Ok(())
}

/// Applies what is not applied yet, saying which, so a deploy step shows what it did.
async fn migrate(mut db: DatabaseSettings) -> Result<()> {
    db.migrate = false;
    db.max_connections = 2;
    let pool = relay_bus::db::connect(&db).await?;
    let applied = || async {
        sqlx::query_scalar::<_, i64>("SELECT version FROM _sqlx_migrations WHERE success")
            .fetch_all(&pool)
            .await
            .unwrap_or_default() // no table yet: nothing applied
    };
    let before = applied().await;
    let embedded = relay_bus::db::migrator();
    let pending: Vec<_> = embedded.iter().filter(|m| !before.contains(&m.version)).collect();
    println!(
        "{} migrations embedded, {} applied, {} to apply",
        embedded.iter().count(),
        before.len(),
        pending.len()
    );
    let started = Instant::now();
    embedded.run(&pool).await.map_err(relay_bus::db::DbError::Migrate)?;
    for m in pending {
        println!("applied {} {}", m.version, m.description);
    }
    println!("schema is current ({} ms)", started.elapsed().as_millis());
    Ok(())
}
