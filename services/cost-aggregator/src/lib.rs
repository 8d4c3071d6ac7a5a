//! Cost aggregator (seed 003 §6): `tokens.used` and `usage.updated` events from the event log,
//! priced with the cost models and folded into per-event rows and running totals; cost
//! reports, the session's context window (seed 002) and budgets on top.

mod error;
pub mod fold;
pub mod models;
mod rollup;

pub use error::CostError;

use error::Result;
use relay_bus::outbox::{self, Outbox};
use relay_bus::service::{ServiceError, ServiceHost};
use relay_bus::settings::{DatabaseSettings, NatsSettings, TelemetrySettings};
use relay_contracts::RequestContext;
use relay_contracts::cost::*;
use relay_contracts::rpc;
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use std::sync::Arc;
use tokio::sync::Notify;

pub const SERVICE_NAME: &str = "cost-aggregator";

const OUTBOX: Outbox = Outbox {
    table: "cost_events",
    type_prefix: "",
    verbatim: &[],
    lock_key: 0x7265_6c61_7963_6576, // "relaycev"
    prune: true,
};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub nats: NatsSettings,
    pub database: DatabaseSettings,
    pub telemetry: TelemetrySettings,
    pub costs: CostSettings,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct CostSettings {
    /// Cost models as JSON (seed 003 §6.4); the built-in defaults when the file is absent.
    pub models_path: String,
    /// The model of usage events that name none; unpriced ("unknown") when unset.
    pub default_model: Option<String>,
    /// Context window of models without one.
    pub default_context_window: i64,
    /// Context fill (0–1) from which the level is `warn`, and `critical`.
    pub warn_at: f64,
    pub critical_at: f64,
    pub budgets: Vec<Budget>,
    /// Events folded per transaction.
    pub page: i64,
    pub poll_interval_ms: u64,
    /// Send each session's totals to the registry as `session.usage` (seed 002).
    pub report_session_usage: bool,
    /// Forward `budget.exceeded` to the event log.
    pub forward_events: bool,
    /// Usage older than this is kept per hour instead of per event ([`rollup`]); 0: never.
    pub rollup_after_ms: u64,
}

impl Default for CostSettings {
    fn default() -> Self {
        CostSettings {
            models_path: "~/.relay-mesh/cost-models.json".into(),
            default_model: None,
            default_context_window: 200_000,
            warn_at: 0.75,
            critical_at: 0.90,
            budgets: Vec::new(),
            page: 1000,
            poll_interval_ms: 1000,
            report_session_usage: true,
            forward_events: true,
            rollup_after_ms: 86_400_000,
        }
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Scope {
    Session,
    Agent,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    fn parse(s: &str) -> Option<Scope> {
        s.parse().ok()
    }
}

/// A spending limit (`[[costs.budgets]]`): for one session or agent (`id`), or for each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    pub name: String,
    pub scope: Scope,
    pub id: Option<String>,
    pub limit_usd: f64,
    /// Pause the agent's deliveries (every agent of the session, for a session budget).
    #[serde(default)]
    pub pause: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Models(#[from] models::ModelsError),
    #[error("costs: {0}")]
    Settings(String),
}

/// Handler and fold state.
#[derive(Clone)]
pub struct Aggregator {
    db: PgPool,
    nats: async_nats::Client,
    models: Arc<Vec<CostModel>>,
    models_source: Arc<String>,
    settings: Arc<CostSettings>,
    outbox: Arc<Notify>,
}

impl Aggregator {
    /// Loads the cost models, starts the fold and the outbox forwarder.
    pub fn start(
        db: PgPool,
        nats: async_nats::Client,
        settings: CostSettings,
    ) -> std::result::Result<Self, StartError> {
        let (models, source) = models::load(&settings.models_path)?;
        if !(0.0 < settings.warn_at && settings.warn_at <= settings.critical_at) {
            return Err(StartError::Settings("need 0 < warn_at <= critical_at".into()));
        }
        if settings.page < 1 {
            return Err(StartError::Settings("page must be at least 1".into()));
        }
        for b in &settings.budgets {
            if b.name.trim().is_empty() || !b.limit_usd.is_finite() || b.limit_usd < 0.0 {
                return Err(StartError::Settings(format!(
                    "budget {:?} needs a name and limit_usd >= 0",
                    b.name
                )));
            }
        }
        tracing::info!(
            models = models.len(),
            source,
            budgets = settings.budgets.len(),
            "cost models loaded"
        );
        let outbox = outbox::start(OUTBOX, &db, &nats, settings.forward_events);
        let agg = Aggregator {
            db,
            nats,
            models: Arc::new(models),
            models_source: Arc::new(source),
            settings: Arc::new(settings),
            outbox,
        };
        tokio::spawn(fold::run(agg.clone()));
        if agg.settings.rollup_after_ms > 0 {
            rollup::start(&agg);
        }
        Ok(agg)
    }
}

pub async fn serve(
    nats: async_nats::Client,
    agg: Aggregator,
) -> std::result::Result<ServiceHost<Aggregator>, ServiceError> {
    let mut host = ServiceHost::start(
        nats,
        SERVICE_NAME,
        env!("CARGO_PKG_VERSION"),
        "Token usage and cost (cost.*, session.getContextWindowState)",
        agg,
    )
    .await?;
    host.serve::<rpc::CostReport>(report).await?;
    host.serve::<rpc::CostModels>(list_models).await?;
    host.serve::<rpc::SessionGetContextWindowState>(relay_bus::scope::scoped(context_window))
        .await?;
    host.serve::<rpc::CostBudgets>(budgets).await?;
    Ok(host)
}

type BreakdownRow = (String, String, i64, i64, i64, i64, i64, f64, i64);

/// `cost.report`: totals over the usage events with `since <= ts < until` matching the filters
/// (an `until` before `since` holds none).
/// A caller confined to a workspace sees its own sessions' windows only.
impl relay_bus::scope::Scope for Aggregator {
    async fn workspace_of(
        &self,
        field: &str,
        id: &str,
    ) -> std::result::Result<Option<String>, relay_contracts::WireError> {
        if field != "sessionId" {
            return Ok(None);
        }
        sqlx::query_scalar("SELECT workspace FROM cost_usage WHERE session_id = $1 LIMIT 1")
            .bind(id)
            .fetch_optional(&self.db)
            .await
            .map_err(|e| CostError::Db(e).into())
    }
}

pub async fn report(agg: Aggregator, ctx: RequestContext, req: ReportRequest) -> Result<Report> {
    let rows: Vec<BreakdownRow> = sqlx::query_as(
        "SELECT CASE WHEN GROUPING(agent_id) = 0 THEN 'agent' WHEN GROUPING(model) = 0 THEN 'model'
                     WHEN GROUPING(session_id) = 0 THEN 'session' ELSE 'total' END,
                COALESCE(agent_id, model, session_id, ''),
                COALESCE(sum(input_tokens), 0)::int8, COALESCE(sum(output_tokens), 0)::int8,
                COALESCE(sum(cache_read_tokens), 0)::int8, COALESCE(sum(cache_write_tokens), 0)::int8,
                COALESCE(sum(input_tokens + output_tokens + cache_read_tokens + cache_write_tokens + other_tokens), 0)::int8,
                COALESCE(sum(cost_usd), 0)::float8, COALESCE(sum(calls), 0)::int8
         FROM cost_usage
         WHERE ($1::int8 IS NULL OR ts >= $1) AND ($2::int8 IS NULL OR ts < $2)
           AND ($3::text IS NULL OR agent_id = $3) AND ($4::text IS NULL OR session_id = $4)
           AND ($5::text IS NULL OR model = $5) AND ($6::text IS NULL OR workspace = $6)
         GROUP BY GROUPING SETS ((), (agent_id), (model), (session_id))",
    )
    .bind(req.since)
    .bind(req.until)
    .bind(&req.agent)
    .bind(&req.session)
    .bind(&req.model)
    .bind(ctx.scope())
    .fetch_all(&agg.db)
    .await?;
    let mut r = Report::default();
    for (group, key, input, output, cache_read, cache_write, total, cost, events) in rows {
        let b = Breakdown {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
            total_tokens: total,
            estimated_cost_usd: cost,
            events,
        };
        match group.as_str() {
            "agent" => r.by_agent.insert(key, b),
            "model" => r.by_model.insert(key, b),
            "session" => r.by_session.insert(key, b),
            _ => Some(std::mem::replace(&mut r.total, b)),
        };
    }
    r.unpriced_models = r
        .by_model
        .keys()
        .filter(|m| models::find(&agg.models, m).is_none())
        .cloned()
        .collect();
    Ok(r)
}

pub async fn list_models(agg: Aggregator, _ctx: RequestContext, _req: ModelsRequest) -> Result<ModelsResponse> {
    Ok(ModelsResponse {
        models: agg.models.as_ref().clone(),
        source: agg.models_source.as_ref().clone(),
    })
}

/// `cost.budgets`: each configured budget with the largest spends under it in the caller's
/// workspace, and when each crossed it.
pub async fn budgets(agg: Aggregator, ctx: RequestContext, _req: BudgetsRequest) -> Result<BudgetsResponse> {
    let mut out = Vec::with_capacity(agg.settings.budgets.len());
    for b in &agg.settings.budgets {
        // One query per scope, so that the workspace check uses that column's index.
        macro_rules! spend {
            ($column:literal) => {
                concat!(
                    "SELECT t.key, t.cost_usd::float8, h.hit_at
                     FROM cost_totals t
                     LEFT JOIN cost_budget_hits h ON h.budget = $1 AND h.scope = t.scope AND h.key = t.key
                     WHERE t.scope = $2 AND ($3::text IS NULL OR t.key = $3)
                       AND ($4::text IS NULL OR EXISTS (
                           SELECT 1 FROM cost_usage u WHERE u.",
                    $column,
                    " = t.key AND u.workspace = $4))
                     ORDER BY t.cost_usd DESC, t.key LIMIT 20"
                )
            };
        }
        let sql = match b.scope {
            Scope::Session => spend!("session_id"),
            Scope::Agent => spend!("agent_id"),
        };
        let rows: Vec<(String, f64, Option<i64>)> = sqlx::query_as(sql)
            .bind(&b.name)
            .bind(b.scope.as_str())
            .bind(&b.id)
            .bind(ctx.scope())
            .fetch_all(&agg.db)
            .await?;
        let fraction = |spent: f64| match b.limit_usd {
            0.0 => f64::from(u8::from(spent > 0.0)),
            limit => spent / limit,
        };
        out.push(BudgetStatus {
            name: b.name.clone(),
            scope: b.scope.as_str().into(),
            id: b.id.clone(),
            limit_usd: b.limit_usd,
            pause: b.pause,
            spending: rows
                .into_iter()
                .map(|(key, spent_usd, exceeded_at)| BudgetSpend {
                    key,
                    spent_usd,
                    fraction: fraction(spent_usd),
                    exceeded_at,
                })
                .collect(),
        });
    }
    Ok(BudgetsResponse { budgets: out })
}

/// `session.getContextWindowState`: the fullest agent of the session ("worst agent").
pub async fn context_window(
    agg: Aggregator,
    _ctx: RequestContext,
    req: ContextWindowRequest,
) -> Result<ContextWindowResponse> {
    if req.session_id.trim().is_empty() {
        return Err(CostError::Invalid("sessionId must not be empty".into()));
    }
    let rows: Vec<(i64, i64, i64)> =
        sqlx::query_as("SELECT current_tokens, max_tokens, updated_at FROM cost_context WHERE session_id = $1")
            .bind(&req.session_id)
            .fetch_all(&agg.db)
            .await?;
    let fill = |(current, max, _): &(i64, i64, i64)| *current as f64 / (*max).max(1) as f64;
    let state = rows.iter().max_by(|a, b| fill(a).total_cmp(&fill(b))).map(|row| {
        let f = fill(row);
        ContextWindowState {
            current_tokens: row.0,
            max_tokens: row.1,
            last_updated_at: row.2,
            percentage: (f * 10_000.0).round() / 100.0,
            level: match f {
                f if f >= agg.settings.critical_at => ContextLevel::Critical,
                f if f >= agg.settings.warn_at => ContextLevel::Warn,
                _ => ContextLevel::Ok,
            },
        }
    });
    Ok(ContextWindowResponse { state })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_config_file_loads_with_the_default_cost_settings() {
        let loaded: Settings = relay_bus::settings::load_example().unwrap();
        let (c, d) = (loaded.costs, CostSettings::default());
        assert_eq!(
            (c.models_path, c.default_model, c.page),
            (d.models_path, d.default_model, d.page)
        );
        assert_eq!(
            (c.warn_at, c.critical_at, c.default_context_window),
            (d.warn_at, d.critical_at, d.default_context_window)
        );
        assert!(c.budgets.is_empty());
    }
}
