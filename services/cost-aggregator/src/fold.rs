//! Folds usage events from the event log into costs.
//!
//! Each page of `tokens.used` / `usage.updated` / `session.compressed` events is folded in one
//! transaction with the cursor, so a crash neither loses nor double counts an event. One
//! replica folds at a time (advisory lock). What must reach other services after the commit
//! (session.usage to the registry, agent.pause to the delivery runner) is kept as state in
//! the same transaction and sent until it is taken.

use crate::models::{self, Tokens};
use crate::{Aggregator, Budget, Scope};
use relay_bus::follow::Follower;
use relay_contracts::cost::{BUDGET_EXCEEDED, BudgetExceeded};
use relay_contracts::delivery::AgentRef;
use relay_contracts::events::Event;
use relay_contracts::rpc;
use relay_contracts::session::UsageRequest;
use relay_contracts::subjects::event as event_subjects;
use relay_contracts::{ErrorCode, WireError};
use serde_json::Value;
use sqlx::PgConnection;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

const TIMEOUT: Duration = Duration::from_secs(5);
const FOLLOWER: Follower = Follower {
    lock_key: 0x7265_6c61_7963_7374, // "relaycst"
    cursor_table: "cost_cursor",
    types: &["tokens.used", "usage.updated", "session.compressed"],
};

/// One usage event, priced.
#[derive(Debug, Clone)]
pub struct Usage {
    pub seq: i64,
    pub ts: i64,
    pub session_id: String,
    pub agent_id: String,
    pub model: String,
    pub tokens: Tokens,
    /// Tokens reported without a split.
    pub other: i64,
    pub cost: f64,
    /// The workspace of its event.
    pub workspace: String,
}

impl Usage {
    fn total(&self) -> i64 {
        let t = self.tokens;
        t.input + t.output + t.cache_read + t.cache_write + self.other
    }
}

fn count(v: &Value, keys: &[&str]) -> Result<i64, String> {
    for k in keys {
        match v.get(*k) {
            None | Some(Value::Null) => continue,
            Some(n) => {
                return match n
                    .as_i64()
                    .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                {
                    Some(n) if n >= 0 => Ok(n),
                    _ => Err(format!("{k} must be a whole number >= 0, got {n}")),
                };
            }
        }
    }
    Ok(0)
}

fn tokens_of(v: &Value) -> Result<Tokens, String> {
    Ok(Tokens {
        input: count(v, &["inputTokens"])?,
        output: count(v, &["outputTokens"])?,
        cache_read: count(v, &["cacheReadTokens", "cacheReadInputTokens"])?,
        cache_write: count(v, &["cacheWriteTokens", "cacheCreationInputTokens"])?,
    })
}

/// The usage an event reports, priced; `Err` says why an event is skipped.
pub fn usage_of(e: &Event, agg: &Aggregator) -> Result<Usage, String> {
    let session_id = e.session_id.clone().ok_or("no sessionId")?;
    let agent_id = e
        .agent_id
        .clone()
        .or_else(|| e.payload.get("agentId").and_then(Value::as_str).map(String::from))
        // Events from outside a harness may name the agent only (seed 003 keys byAgent by name).
        .or_else(|| e.agent_name.clone())
        .unwrap_or_else(|| "unknown".into());
    let str_of = |v: &Value| v.get("model").and_then(Value::as_str).map(String::from);
    let empty = Value::Null;
    let (tokens, other, reported_cost, model) = match e.event_type.as_str() {
        "tokens.used" => (tokens_of(&e.payload)?, 0, None, str_of(&e.payload)),
        // Seed 000: { tokens?, costUsd?, metadata? }; a split, if any, is in the metadata.
        _ => {
            let meta = e.payload.get("metadata").unwrap_or(&empty);
            let t = tokens_of(meta)?;
            let total = count(&e.payload, &["tokens"])?;
            let split = t.input + t.output + t.cache_read + t.cache_write;
            let cost = match e.payload.get("costUsd") {
                None | Some(Value::Null) => None,
                Some(c) => match c.as_f64() {
                    Some(c) if c.is_finite() && c >= 0.0 => Some(c),
                    _ => return Err(format!("costUsd must be a number >= 0, got {c}")),
                },
            };
            (
                t,
                (total - split).max(0),
                cost,
                str_of(meta).or_else(|| str_of(&e.payload)),
            )
        }
    };
    let model = model
        .or_else(|| agg.settings.default_model.clone())
        .unwrap_or_else(|| "unknown".into());
    let cost =
        reported_cost.unwrap_or_else(|| models::find(&agg.models, &model).map_or(0.0, |m| models::cost(m, tokens)));
    Ok(Usage {
        seq: e.seq,
        ts: e.ts,
        session_id,
        agent_id,
        model,
        tokens,
        other,
        cost,
        workspace: e
            .workspace
            .clone()
            .unwrap_or_else(|| relay_contracts::context::DEFAULT_WORKSPACE.into()),
    })
}

pub async fn run(agg: Aggregator) {
    let wake = Arc::new(Notify::new());
    let live = FOLLOWER
        .types
        .iter()
        .map(|t| event_subjects::committed_subject(t))
        .collect();
    tokio::spawn(relay_bus::follow::watch_live(agg.nats.clone(), live, wake.clone()));
    let mut backoff = Duration::from_millis(200);
    let mut passed_on = Instant::now();
    loop {
        let folded = fold_page(&agg).await;
        // Pauses go at once; session usage at most once a second while a backlog is folded.
        let idle = !matches!(folded, Ok(Page { full: true, .. }));
        let exceeded = matches!(folded, Ok(Page { exceeded: true, .. }));
        if idle || exceeded || passed_on.elapsed() >= Duration::from_secs(1) {
            passed_on = Instant::now();
            if let Err(e) = after_commit(&agg).await {
                tracing::warn!(error = %e, "cannot pass usage or budget pauses on yet; retrying");
            }
        }
        match folded {
            Ok(Page { full: true, .. }) => backoff = Duration::from_millis(200),
            Ok(_) => {
                backoff = Duration::from_millis(200);
                tokio::select! {
                    _ = wake.notified() => {}
                    _ = tokio::time::sleep(Duration::from_millis(agg.settings.poll_interval_ms)) => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?backoff, "cannot fold usage events yet");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// What folding a page did.
#[derive(Debug, Default)]
pub struct Page {
    /// The page was full: more may be waiting.
    pub full: bool,
    /// A budget was crossed: its pauses should go now.
    pub exceeded: bool,
}

/// Folds one page of usage events.
pub async fn fold_page(agg: &Aggregator) -> crate::Result<Page> {
    let mut tx = agg.db.begin().await?;
    let Some(page) = FOLLOWER.next_page(&mut tx, &agg.nats, agg.settings.page).await? else {
        return Ok(Page::default());
    };
    let mut usages = Vec::new();
    let mut compressed = Vec::new();
    for e in &page.events {
        if e.event_type == "session.compressed" {
            compressed.push((e.seq, e.session_id.clone().unwrap_or_default()));
            continue;
        }
        match usage_of(e, agg) {
            Ok(u) => usages.push(u),
            Err(reason) => tracing::warn!(seq = e.seq, event_type = e.event_type, reason, "usage event skipped"),
        }
    }
    let folded = insert_usage(&mut tx, &usages).await?;
    let usages: Vec<&Usage> = usages.iter().filter(|u| folded.contains(&u.seq)).collect();
    let totals = add_totals(&mut tx, &usages).await?;
    let requested = update_context(&mut tx, agg, &usages, &compressed).await?;
    let exceeded = check_budgets(&mut tx, agg, &usages, &totals).await?;
    FOLLOWER.advance(&mut tx, page.next_seq).await?;
    tx.commit().await?;
    if !usages.is_empty() {
        tracing::debug!(events = usages.len(), cursor = page.next_seq, "usage folded");
    }
    if requested > 0 {
        tracing::info!(sessions = requested, "context windows critical: compression requested");
        agg.outbox.notify_one();
    }
    if !exceeded.is_empty() {
        agg.outbox.notify_one();
        for b in &exceeded {
            tracing::warn!(
                budget = b.budget,
                scope = b.scope,
                limit_usd = b.limit_usd,
                spent_usd = b.spent_usd,
                "budget exceeded"
            );
            let _ = relay_bus::client::publish(&agg.nats, BUDGET_EXCEEDED.to_string(), b).await;
        }
    }
    Ok(Page {
        full: page.events.len() as i64 >= agg.settings.page,
        exceeded: !exceeded.is_empty(),
    })
}

/// Stores the usage rows; returns the seqs actually inserted (a seq seen before is skipped).
async fn insert_usage(conn: &mut PgConnection, usages: &[Usage]) -> Result<BTreeSet<i64>, sqlx::Error> {
    if usages.is_empty() {
        return Ok(BTreeSet::new());
    }
    let col = |f: fn(&Usage) -> i64| usages.iter().map(f).collect::<Vec<i64>>();
    let text = |f: fn(&Usage) -> &str| usages.iter().map(|u| f(u).to_string()).collect::<Vec<String>>();
    let seqs: Vec<i64> = sqlx::query_scalar(
        "INSERT INTO cost_usage (seq, ts, session_id, agent_id, model, input_tokens, output_tokens,
                                 cache_read_tokens, cache_write_tokens, other_tokens, cost_usd, workspace)
         SELECT seq, ts, s, a, m, i, o, cr, cw, x, c::numeric, w
         FROM UNNEST($1::int8[], $2::int8[], $3::text[], $4::text[], $5::text[], $6::int8[], $7::int8[],
                     $8::int8[], $9::int8[], $10::int8[], $11::float8[], $12::text[])
              AS u(seq, ts, s, a, m, i, o, cr, cw, x, c, w)
         ON CONFLICT (seq) DO NOTHING RETURNING seq",
    )
    .bind(col(|u| u.seq))
    .bind(col(|u| u.ts))
    .bind(text(|u| &u.session_id))
    .bind(text(|u| &u.agent_id))
    .bind(text(|u| &u.model))
    .bind(col(|u| u.tokens.input))
    .bind(col(|u| u.tokens.output))
    .bind(col(|u| u.tokens.cache_read))
    .bind(col(|u| u.tokens.cache_write))
    .bind(col(|u| u.other))
    .bind(usages.iter().map(|u| u.cost).collect::<Vec<f64>>())
    .bind(text(|u| &u.workspace))
    .fetch_all(conn)
    .await?;
    Ok(seqs.into_iter().collect())
}

#[derive(Debug, Default, Clone)]
struct Delta {
    calls: i64,
    input: i64,
    output: i64,
    total: i64,
    cost: f64,
}

/// (scope, key) → spent after this page.
type Spent = BTreeMap<(Scope, String), f64>;

async fn add_totals(conn: &mut PgConnection, usages: &[&Usage]) -> Result<Spent, sqlx::Error> {
    let mut deltas: BTreeMap<(Scope, String), Delta> = BTreeMap::new();
    for u in usages {
        for key in [
            (Scope::Session, u.session_id.clone()),
            (Scope::Agent, u.agent_id.clone()),
        ] {
            let d = deltas.entry(key).or_default();
            d.calls += 1;
            d.input += u.tokens.input;
            d.output += u.tokens.output;
            d.total += u.total();
            d.cost += u.cost;
        }
    }
    if deltas.is_empty() {
        return Ok(Spent::new());
    }
    let pairs: BTreeSet<(&str, &str)> = usages
        .iter()
        .map(|u| (u.session_id.as_str(), u.agent_id.as_str()))
        .collect();
    sqlx::query(
        "INSERT INTO cost_session_agents (session_id, agent_id) SELECT * FROM UNNEST($1::text[], $2::text[])
         ON CONFLICT DO NOTHING",
    )
    .bind(pairs.iter().map(|p| p.0).collect::<Vec<_>>())
    .bind(pairs.iter().map(|p| p.1).collect::<Vec<_>>())
    .execute(&mut *conn)
    .await?;
    let keys: Vec<&(Scope, String)> = deltas.keys().collect();
    let rows: Vec<(String, String, f64)> = sqlx::query_as(
        "INSERT INTO cost_totals (scope, key, calls, input_tokens, output_tokens, total_tokens, cost_usd, usage_dirty)
         SELECT s, k, n, i, o, t, c::numeric, s = 'session'
         FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::int8[], $5::int8[], $6::int8[], $7::float8[]) AS u(s, k, n, i, o, t, c)
         ON CONFLICT (scope, key) DO UPDATE SET
             calls = cost_totals.calls + EXCLUDED.calls,
             input_tokens = cost_totals.input_tokens + EXCLUDED.input_tokens,
             output_tokens = cost_totals.output_tokens + EXCLUDED.output_tokens,
             total_tokens = cost_totals.total_tokens + EXCLUDED.total_tokens,
             cost_usd = cost_totals.cost_usd + EXCLUDED.cost_usd,
             usage_dirty = cost_totals.usage_dirty OR EXCLUDED.usage_dirty
         RETURNING scope, key, cost_usd::float8",
    )
    .bind(keys.iter().map(|k| k.0.as_str()).collect::<Vec<_>>())
    .bind(keys.iter().map(|k| k.1.as_str()).collect::<Vec<_>>())
    .bind(deltas.values().map(|d| d.calls).collect::<Vec<_>>())
    .bind(deltas.values().map(|d| d.input).collect::<Vec<_>>())
    .bind(deltas.values().map(|d| d.output).collect::<Vec<_>>())
    .bind(deltas.values().map(|d| d.total).collect::<Vec<_>>())
    .bind(deltas.values().map(|d| d.cost).collect::<Vec<_>>())
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(s, k, c)| Scope::parse(&s).map(|s| ((s, k), c)))
        .collect())
}

/// The latest context size per agent: the prompt and reply of its last usage event. A
/// compression resets the session's window. A session whose window turns critical gets one
/// seed 002 `session.compressionRequested` (again only after it was compressed); returns how
/// many did.
async fn update_context(
    conn: &mut PgConnection,
    agg: &Aggregator,
    usages: &[&Usage],
    compressed: &[(i64, String)],
) -> Result<u64, sqlx::Error> {
    let mut latest: HashMap<(String, String), &Usage> = HashMap::new();
    let mut cleared: Vec<&String> = Vec::new();
    let mut events: Vec<(i64, Option<&Usage>, Option<&String>)> =
        usages.iter().map(|u| (u.seq, Some(*u), None)).collect();
    events.extend(compressed.iter().map(|(seq, s)| (*seq, None, Some(s))));
    events.sort_by_key(|e| e.0);
    for (_, usage, session) in events {
        match (usage, session) {
            (Some(u), _) if u.tokens != Tokens::default() => {
                latest.insert((u.session_id.clone(), u.agent_id.clone()), u);
            }
            (_, Some(s)) => {
                latest.retain(|k, _| &k.0 != s);
                cleared.push(s);
            }
            _ => {}
        }
    }
    if !cleared.is_empty() {
        sqlx::query("DELETE FROM cost_context WHERE session_id = ANY($1)")
            .bind(&cleared)
            .execute(&mut *conn)
            .await?;
        sqlx::query("DELETE FROM cost_compression_requests WHERE session_id = ANY($1)")
            .bind(&cleared)
            .execute(&mut *conn)
            .await?;
    }
    if latest.is_empty() {
        return Ok(0);
    }
    let rows: Vec<(&(String, String), &&Usage)> = latest.iter().collect();
    let window = |u: &Usage| {
        models::find(&agg.models, &u.model)
            .and_then(|m| m.context_window)
            .unwrap_or(agg.settings.default_context_window)
    };
    sqlx::query(
        "INSERT INTO cost_context (session_id, agent_id, current_tokens, max_tokens, updated_at)
         SELECT * FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::int8[], $5::int8[])
         ON CONFLICT (session_id, agent_id) DO UPDATE SET current_tokens = EXCLUDED.current_tokens,
             max_tokens = EXCLUDED.max_tokens, updated_at = EXCLUDED.updated_at",
    )
    .bind(rows.iter().map(|(k, _)| k.0.as_str()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(k, _)| k.1.as_str()).collect::<Vec<_>>())
    .bind(
        rows.iter()
            .map(|(_, u)| u.tokens.input + u.tokens.cache_read + u.tokens.cache_write + u.tokens.output)
            .collect::<Vec<_>>(),
    )
    .bind(rows.iter().map(|(_, u)| window(u)).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, u)| u.ts).collect::<Vec<_>>())
    .execute(&mut *conn)
    .await?;
    // Each session with the workspace of its usage: the request is that workspace's event.
    let sessions: Vec<&str> = rows.iter().map(|(k, _)| k.0.as_str()).collect();
    let workspaces: Vec<&str> = rows.iter().map(|(_, u)| u.workspace.as_str()).collect();
    let requested = sqlx::query(
        "WITH named AS (
             SELECT DISTINCT ON (session_id) session_id, workspace
             FROM UNNEST($1::text[], $4::text[]) AS n(session_id, workspace)
         ), critical AS (
             SELECT c.session_id, n.workspace, max(c.current_tokens::float8 / greatest(c.max_tokens, 1)) AS fill
             FROM cost_context c JOIN named n USING (session_id) GROUP BY c.session_id, n.workspace
             HAVING max(c.current_tokens::float8 / greatest(c.max_tokens, 1)) >= $2
         ), flagged AS (
             INSERT INTO cost_compression_requests (session_id, requested_at, fill)
             SELECT session_id, $3, fill FROM critical ON CONFLICT (session_id) DO NOTHING
             RETURNING session_id, fill
         )
         INSERT INTO cost_events (event_id, session_id, type, ts, payload, workspace)
         SELECT gen_random_uuid()::text, f.session_id, 'session.compressionRequested', $3,
                jsonb_build_object('sessionId', f.session_id, 'source', 'system',
                    'reason', format('the context window is %s%% full (critical from %s%%)',
                                     round((f.fill * 100)::numeric, 1), round(($2 * 100)::numeric))),
                c.workspace
         FROM flagged f JOIN critical c USING (session_id)",
    )
    .bind(&sessions)
    .bind(agg.settings.critical_at)
    .bind(relay_bus::now_ms())
    .bind(&workspaces)
    .execute(conn)
    .await?
    .rows_affected();
    Ok(requested)
}

fn applies(b: &Budget, scope: Scope, key: &str) -> bool {
    b.scope == scope && b.id.as_deref().is_none_or(|id| id == key)
}

/// Records each budget crossed for the first time (and the pauses it asks for) with its
/// `budget.exceeded` event; returns those events.
async fn check_budgets(
    conn: &mut PgConnection,
    agg: &Aggregator,
    usages: &[&Usage],
    spent: &Spent,
) -> Result<Vec<BudgetExceeded>, sqlx::Error> {
    let mut exceeded = Vec::new();
    for ((scope, key), cost) in spent {
        for b in agg
            .settings
            .budgets
            .iter()
            .filter(|b| applies(b, *scope, key) && *cost >= b.limit_usd)
        {
            let hit: Option<String> = sqlx::query_scalar(
                "INSERT INTO cost_budget_hits (budget, scope, key, spent_usd, hit_at) VALUES ($1, $2, $3, $4::numeric, $5)
                 ON CONFLICT DO NOTHING RETURNING budget",
            )
            .bind(&b.name)
            .bind(scope.as_str())
            .bind(key)
            .bind(cost)
            .bind(relay_bus::now_ms())
            .fetch_optional(&mut *conn)
            .await?;
            if hit.is_none() {
                continue;
            }
            let agents: Vec<String> = match (b.pause, scope) {
                (false, _) => vec![],
                (true, Scope::Agent) => vec![key.clone()],
                (true, Scope::Session) => {
                    sqlx::query_scalar("SELECT agent_id FROM cost_session_agents WHERE session_id = $1 ORDER BY 1")
                        .bind(key)
                        .fetch_all(&mut *conn)
                        .await?
                }
            };
            if !agents.is_empty() {
                sqlx::query(
                    "UPDATE cost_budget_hits SET pause_agents = $4, pause_pending = true
                     WHERE budget = $1 AND scope = $2 AND key = $3",
                )
                .bind(&b.name)
                .bind(scope.as_str())
                .bind(key)
                .bind(&agents)
                .execute(&mut *conn)
                .await?;
            }
            // The event belongs to the workspace whose spend crossed the budget: the latest
            // usage of the session or agent says which.
            let last = usages.iter().rev().find(|u| match scope {
                Scope::Session => &u.session_id == key,
                Scope::Agent => &u.agent_id == key,
            });
            let session_id = match scope {
                Scope::Session => key.clone(),
                Scope::Agent => last.map_or_else(String::new, |u| u.session_id.clone()),
            };
            let workspace = last.map_or(relay_contracts::context::DEFAULT_WORKSPACE, |u| u.workspace.as_str());
            let event = BudgetExceeded {
                budget: b.name.clone(),
                scope: scope.as_str().into(),
                session_id: Some(session_id.clone()),
                agent_id: (*scope == Scope::Agent).then(|| key.clone()),
                limit_usd: b.limit_usd,
                spent_usd: *cost,
                paused_agents: agents,
            };
            sqlx::query(
                "INSERT INTO cost_events (event_id, session_id, type, ts, payload, workspace)
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(uuid::Uuid::now_v7().to_string())
            .bind(&session_id)
            .bind(BUDGET_EXCEEDED)
            .bind(relay_bus::now_ms())
            .bind(serde_json::to_value(&event).unwrap_or_default())
            .bind(workspace)
            .execute(&mut *conn)
            .await?;
            exceeded.push(event);
        }
    }
    Ok(exceeded)
}

/// Upstream refusals that retrying will not change: the state is dropped with a warning.
fn gives_up(e: &WireError) -> bool {
    matches!(
        e.code(),
        ErrorCode::NotFound | ErrorCode::InvalidRequest | ErrorCode::Conflict
    )
}

/// Sends what the commits left to send: budget pauses, then session usage.
pub async fn after_commit(agg: &Aggregator) -> crate::Result<()> {
    let pauses: Vec<(String, String, String, Vec<String>)> =
        sqlx::query_as("SELECT budget, scope, key, pause_agents FROM cost_budget_hits WHERE pause_pending LIMIT 100")
            .fetch_all(&agg.db)
            .await?;
    for (budget, scope, key, agents) in pauses {
        let mut done = true;
        for agent_id in agents {
            let req = AgentRef {
                agent_id: agent_id.clone(),
            };
            let r = relay_bus::client::call::<rpc::AgentPause>(&agg.nats, &req, TIMEOUT).await;
            match r {
                Ok(_) => tracing::info!(budget, agent_id, "agent paused: budget exceeded"),
                Err(e) if gives_up(&e) => {
                    tracing::warn!(budget, agent_id, error = %e, "cannot pause agent for its budget")
                }
                Err(e) => {
                    tracing::warn!(budget, agent_id, error = %e, "cannot pause agent yet; retrying");
                    done = false;
                }
            }
        }
        if done {
            sqlx::query(
                "UPDATE cost_budget_hits SET pause_pending = false WHERE budget = $1 AND scope = $2 AND key = $3",
            )
            .bind(&budget)
            .bind(&scope)
            .bind(&key)
            .execute(&agg.db)
            .await?;
        }
    }
    if !agg.settings.report_session_usage {
        return Ok(());
    }
    let dirty: Vec<(String, i64, i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT key, calls, input_tokens, output_tokens, total_tokens,
                (SELECT count(*) FROM cost_session_agents a WHERE a.session_id = t.key)
         FROM cost_totals t WHERE scope = 'session' AND usage_dirty LIMIT 100",
    )
    .fetch_all(&agg.db)
    .await?;
    for (session_id, calls, input, output, total, agents) in dirty {
        let req = UsageRequest {
            session_id: session_id.clone(),
            adapter_count: agents,
            total_calls: calls,
            total_input_tokens: input,
            total_output_tokens: output,
            total_tokens: total,
        };
        let r = relay_bus::client::call::<rpc::SessionUsage>(&agg.nats, &req, TIMEOUT).await;
        match r {
            Ok(_) => {}
            Err(e) if gives_up(&e) => tracing::debug!(session_id, error = %e, "registry did not take session usage"),
            Err(e) => return Err(crate::CostError::Upstream(e)),
        }
        // Only when no fold changed it meanwhile; else it goes again with the new totals.
        sqlx::query("UPDATE cost_totals SET usage_dirty = false WHERE scope = 'session' AND key = $1 AND calls = $2")
            .bind(&session_id)
            .bind(calls)
            .execute(&agg.db)
            .await?;
    }
    Ok(())
}
