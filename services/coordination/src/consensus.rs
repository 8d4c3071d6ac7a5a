//! Consensus (`consensus.*`, seed 003 `consensus.proposed` / `consensus.resolved`): a question
//! put to a channel's members or a list of agents, asked with a relay message, answered with
//! `relay_vote`. A proposal's row is locked for each vote, so the quorum is counted once; one
//! still open at its deadline is expired by [`sweep`].

use crate::change::Change;
use crate::error::{CoordinationError, Result};
use crate::registry::{self, as_caller};
use crate::{Coordination, check_id, check_text, new_id};
use relay_bus::now_ms;
use relay_contracts::consensus::*;
use relay_contracts::messaging::{SendRequest, To};
use relay_contracts::session::events::{ConsensusProposed, ConsensusResolved, ConsensusVoted};
use relay_contracts::session::{Agent, handle_of};
use relay_contracts::{Caller, RequestContext};
use sqlx::PgConnection;
use sqlx::types::Json;

/// The stream its events go to: the channel it was put to (its SSE follows it), else its own.
fn stream(p: &Proposal) -> String {
    if p.to.starts_with('#') {
        p.to.clone()
    } else {
        format!("consensus:{}", p.proposal_id)
    }
}

/// `consensus.propose`: stores the proposal (`consensus.proposed`), then asks the voters with a
/// relay message from the proposer; the same `proposalId` again answers with the stored one.
pub async fn propose(c: Coordination, ctx: RequestContext, req: ProposeRequest) -> Result<Proposal> {
    check_text("question", &req.question, 4000)?;
    if !(2..=MAX_OPTIONS).contains(&req.options.len()) {
        return Err(CoordinationError::Invalid(format!(
            "options: 2 to {MAX_OPTIONS}, got {}",
            req.options.len()
        )));
    }
    for (i, o) in req.options.iter().enumerate() {
        check_text(&format!("options[{i}]"), o, MAX_OPTION_CHARS)?;
        if req.options[..i].contains(o) {
            return Err(CoordinationError::Invalid(format!("option {o:?} is given twice")));
        }
    }
    let timeout_ms = req.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS as f64);
    if !(1.0..=MAX_TIMEOUT_MS as f64).contains(&timeout_ms) {
        return Err(CoordinationError::Invalid(format!(
            "timeoutMs {timeout_ms}: 1 to {MAX_TIMEOUT_MS}"
        )));
    }
    let proposal_id = match &req.proposal_id {
        Some(id) => {
            check_id("proposalId", id)?;
            id.clone()
        }
        None => new_id(),
    };
    let workspace = ctx.workspace.clone();
    let mut change = Change::begin(&c).await?;
    if let Some(Stored {
        p,
        workspace: its_workspace,
        ..
    }) = find(change.conn(), &proposal_id, false).await?
    {
        // Ids are global: one another workspace holds is refused as not found, as its other
        // objects are (never `conflict`, which would say whose it is not).
        if its_workspace != workspace {
            return Err(CoordinationError::NotFound {
                what: "proposal",
                id: proposal_id,
            });
        }
        drop(change);
        return ask_voters(&c, &ctx, p).await;
    }
    let proposer_agent = match &ctx.agent {
        Some(id) => Some(as_caller(&ctx, registry::agent_by_id(&c.nats, id)).await?),
        None => None,
    };
    let own = proposer_agent.as_ref().map(|a| a.agent_id.as_str());
    let (to, voters) = addressees(&c, &ctx, own, &req.to).await?;
    let voters: Vec<_> = voters.into_iter().filter(Agent::is_attached).collect();
    // Who may vote is the state of the channel or session now, not a fault of the request.
    if voters.is_empty() {
        return Err(CoordinationError::Conflict(format!("{to} has no agent to vote")));
    }
    if voters.len() > MAX_VOTERS {
        return Err(CoordinationError::Conflict(format!(
            "{to} has {} voters, at most {MAX_VOTERS}",
            voters.len()
        )));
    }
    let quorum = match req.quorum {
        None => voters.len() as i64 / 2 + 1,
        Some(q) if q.fract() == 0.0 && (1.0..=voters.len() as f64).contains(&q) => q as i64,
        Some(q) => {
            return Err(CoordinationError::Invalid(format!(
                "quorum {q}: a whole number from 1 to the {} voters",
                voters.len()
            )));
        }
    };
    let now = now_ms();
    let p = Proposal {
        proposal_id: proposal_id.clone(),
        question: req.question.clone(),
        options: req.options.clone(),
        proposer: caller_name(&ctx, proposer_agent.as_ref()),
        to,
        voters: voters
            .iter()
            .map(|a| Voter {
                agent_id: a.agent_id.clone(),
                handle: a.handle.clone(),
            })
            .collect(),
        quorum,
        status: ProposalStatus::Open,
        outcome: None,
        reason: None,
        votes: Vec::new(),
        tally: req.options.iter().map(|o| (o.clone(), 0)).collect(),
        message_id: None,
        created_at: now,
        deadline: now + timeout_ms.ceil() as i64,
        resolved_at: None,
    };
    insert(change.conn(), &workspace, &caller_key(&ctx), &p).await?;
    let proposed = ConsensusProposed {
        proposal_id: p.proposal_id.clone(),
        question: p.question.clone(),
        options: p.options.clone(),
        proposer: p.proposer.clone(),
        voters: voters
            .iter()
            .map(|a| a.handle.clone().unwrap_or(a.agent_id.clone()))
            .collect(),
        quorum,
        deadline: p.deadline,
    };
    change.emit(&workspace, &stream(&p), proposed).await?;
    change.commit().await?;
    ask_voters(&c, &ctx, p).await
}

/// Sends the voters the question (once: the message's idempotency key is the proposal's).
async fn ask_voters(c: &Coordination, ctx: &RequestContext, mut p: Proposal) -> Result<Proposal> {
    if p.status != ProposalStatus::Open {
        return Ok(p);
    }
    let to = match p.to.strip_prefix('#') {
        Some(_) => To::One(p.to.clone()),
        None => To::Many(
            p.voters
                .iter()
                .map(|v| format!("@{}", v.handle.as_deref().unwrap_or(&v.agent_id)))
                .collect(),
        ),
    };
    let text = format!(
        "Vote, please: {}\nOptions: {}\nAnswer with relay_vote (proposalId {}, choice one of the options); {} of {} votes for one option decide; voting closes at {} (Unix ms).",
        p.question,
        p.options.join(" | "),
        p.proposal_id,
        p.quorum,
        p.voters.len(),
        p.deadline
    );
    let send = SendRequest {
        to: Some(to),
        text,
        idempotency_key: Some(format!("consensus:{}", p.proposal_id)),
        ..SendRequest::default()
    };
    let sent = registry::send_for(&c.nats, ctx, send).await?;
    if p.message_id.as_deref() != Some(&sent.message_id) {
        p.message_id = Some(sent.message_id);
        let mut conn = c.db.acquire().await?;
        sqlx::query("UPDATE coordination_proposals SET doc = jsonb_set(doc, '{messageId}', to_jsonb($2::text)) WHERE proposal_id = $1")
            .bind(&p.proposal_id)
            .bind(&p.message_id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(p)
}

/// `consensus.vote`: the calling agent's one vote, counted under the proposal's row lock.
pub async fn vote(c: Coordination, ctx: RequestContext, req: VoteRequest) -> Result<Proposal> {
    let Some(agent_id) = ctx.agent.clone() else {
        return Err(CoordinationError::Forbidden(
            "only agents vote, through their harness (relay_vote)".into(),
        ));
    };
    if let Some(reason) = &req.reason {
        check_text("reason", reason, 2000)?;
    }
    let mut change = Change::begin(&c).await?;
    let Stored { mut p, workspace, .. } = existing(change.conn(), &ctx, &req.proposal_id, true).await?;
    if p.status != ProposalStatus::Open {
        return Err(CoordinationError::Conflict(format!(
            "proposal {} is {}: voting is over",
            p.proposal_id,
            p.status.as_str()
        )));
    }
    let now = now_ms();
    if now >= p.deadline {
        return Err(CoordinationError::Conflict(format!(
            "proposal {} closed at its deadline",
            p.proposal_id
        )));
    }
    let Some(voter) = p.voters.iter().find(|v| v.agent_id == agent_id).cloned() else {
        return Err(CoordinationError::Forbidden(format!(
            "this agent is not among the voters of proposal {}",
            p.proposal_id
        )));
    };
    if p.votes.iter().any(|v| v.agent_id == agent_id) {
        return Err(CoordinationError::Conflict(format!(
            "this agent already voted on proposal {}",
            p.proposal_id
        )));
    }
    // The option as written, else the one option it names whatever the case.
    let given = req.choice.trim();
    let loose: Vec<&String> = p.options.iter().filter(|o| o.eq_ignore_ascii_case(given)).collect();
    let found = p.options.iter().find(|o| *o == given).or(match loose[..] {
        [one] => Some(one),
        _ => None,
    });
    let Some(choice) = found.cloned() else {
        return Err(CoordinationError::Invalid(format!(
            "choice {:?} is not an option: {}",
            req.choice,
            p.options.join(" | ")
        )));
    };
    p.votes.push(Vote {
        agent_id,
        handle: voter.handle.clone(),
        choice: choice.clone(),
        reason: req.reason,
        voted_at: now,
    });
    *p.tally.entry(choice.clone()).or_default() += 1;
    let voted = ConsensusVoted {
        proposal_id: p.proposal_id.clone(),
        voter: voter.handle.map(|h| format!("@{h}")).unwrap_or(voter.agent_id),
        choice: choice.clone(),
    };
    change.emit(&workspace, &stream(&p), voted).await?;
    if p.tally[&choice] >= p.quorum {
        let why = format!("{choice} reached the quorum of {}", p.quorum);
        resolve(
            &mut change,
            &workspace,
            &mut p,
            ProposalStatus::Resolved,
            Some(choice),
            why,
        )
        .await?;
    } else if p.votes.len() == p.voters.len() {
        let why = format!("every voter voted; no option reached the quorum of {}", p.quorum);
        resolve(&mut change, &workspace, &mut p, ProposalStatus::Resolved, None, why).await?;
    } else {
        save(change.conn(), &p).await?;
    }
    change.commit().await?;
    Ok(p)
}

/// `consensus.cancel`: its proposer, or a person or service (not another agent).
pub async fn cancel(c: Coordination, ctx: RequestContext, mut req: CancelRequest) -> Result<Proposal> {
    // A blank reason is none.
    req.reason = req.reason.filter(|r| !r.trim().is_empty());
    if let Some(reason) = &req.reason
        && (reason.len() > 64 * 1024 || reason.contains('\0'))
    {
        return Err(CoordinationError::Invalid("reason: at most 64 KiB, without NUL".into()));
    }
    let mut change = Change::begin(&c).await?;
    let Stored {
        mut p,
        workspace,
        proposer,
    } = existing(change.conn(), &ctx, &req.proposal_id, true).await?;
    if ctx.agent.is_some() && proposer != caller_key(&ctx) {
        return Err(CoordinationError::Forbidden(format!(
            "only its proposer ({}) or an operator may cancel proposal {}",
            p.proposer, p.proposal_id
        )));
    }
    if matches!(ctx.caller, Caller::Viewer(_)) {
        return Err(CoordinationError::Forbidden("a viewer key cannot cancel".into()));
    }
    if p.status != ProposalStatus::Open {
        return Err(CoordinationError::Conflict(format!(
            "proposal {} is already {}",
            p.proposal_id,
            p.status.as_str()
        )));
    }
    let who = caller_name(&ctx, None);
    let why = match req.reason {
        Some(r) => format!("cancelled by {who}: {r}"),
        None => format!("cancelled by {who}"),
    };
    resolve(&mut change, &workspace, &mut p, ProposalStatus::Cancelled, None, why).await?;
    change.commit().await?;
    Ok(p)
}

pub async fn get(c: Coordination, ctx: RequestContext, req: ProposalRef) -> Result<Proposal> {
    let mut conn = c.db.acquire().await?;
    Ok(existing(&mut conn, &ctx, &req.proposal_id, false).await?.p)
}

pub async fn list(c: Coordination, ctx: RequestContext, req: ListProposalsRequest) -> Result<ProposalList> {
    let limit = req.limit.unwrap_or(50);
    if !(1..=500).contains(&limit) {
        return Err(CoordinationError::Invalid(format!("limit {limit}: 1 to 500")));
    }
    let rows: Vec<Json<Proposal>> = sqlx::query_scalar(
        "SELECT doc FROM coordination_proposals WHERE ($1::text IS NULL OR workspace = $1)
         AND ($2::text IS NULL OR status = $2) ORDER BY created_at DESC, proposal_id LIMIT $3",
    )
    .bind(ctx.scope())
    .bind(req.status.map(ProposalStatus::as_str))
    .bind(limit)
    .fetch_all(&mut *c.db.acquire().await?)
    .await?;
    Ok(ProposalList {
        proposals: rows.into_iter().map(|Json(p)| p).collect(),
    })
}

async fn resolve(
    change: &mut Change,
    workspace: &str,
    p: &mut Proposal,
    status: ProposalStatus,
    outcome: Option<String>,
    reason: String,
) -> Result<()> {
    p.status = status;
    p.outcome = outcome;
    p.reason = Some(reason);
    p.resolved_at = Some(now_ms());
    save(change.conn(), p).await?;
    let resolved = ConsensusResolved {
        proposal_id: p.proposal_id.clone(),
        status: status.as_str().into(),
        outcome: p.outcome.clone(),
        tally: p.tally.clone(),
        reason: p.reason.clone(),
    };
    change.emit(workspace, &stream(p), resolved).await
}

/// Expires the open proposals past their deadline, a batch at a time (any replica; each row
/// is taken by one).
pub async fn sweep(c: &Coordination) -> Result<()> {
    let mut change = Change::begin(c).await?;
    let due: Vec<(Json<Proposal>, String)> = sqlx::query_as(
        "SELECT doc, workspace FROM coordination_proposals WHERE status = 'open' AND deadline <= $1
         ORDER BY deadline LIMIT 100 FOR UPDATE SKIP LOCKED",
    )
    .bind(now_ms())
    .fetch_all(change.conn())
    .await?;
    if due.is_empty() {
        return Ok(());
    }
    for (Json(mut p), workspace) in due {
        let why = format!(
            "the deadline passed with {} of {} votes; no option reached the quorum of {}",
            p.votes.len(),
            p.voters.len(),
            p.quorum
        );
        resolve(&mut change, &workspace, &mut p, ProposalStatus::Expired, None, why).await?;
    }
    change.commit().await
}

/// Whom `to` names, for a proposal: a channel's members or the listed handles' agents, never
/// `own` (the caller's agent); with `to` as written back (`#ops`, `@a,@b`). The registry,
/// which owns agents and channels, answers in the caller's scope.
async fn addressees(
    c: &Coordination,
    ctx: &RequestContext,
    own: Option<&str>,
    to: &To,
) -> Result<(String, Vec<Agent>)> {
    let names = match to {
        To::One(name) if name.starts_with('#') => {
            let list = registry::members(&c.nats, name).await?;
            let channel = list.channel.trim_start_matches('#').to_string();
            let mut voters = Vec::new();
            for member in list.members {
                if Some(member.agent_id.as_str()) != own {
                    voters.push(as_caller(ctx, registry::agent_by_id(&c.nats, &member.agent_id)).await?);
                }
            }
            return Ok((format!("#{channel}"), voters));
        }
        To::One(name) => vec![name.clone()],
        To::Many(names) => names.clone(),
    };
    let mut agents: Vec<Agent> = Vec::new();
    for name in &names {
        let handle = name
            .strip_prefix('@')
            .and_then(handle_of)
            .ok_or_else(|| CoordinationError::Invalid(format!("{name:?} is not a handle (`@name`)")))?;
        let agent = as_caller(ctx, registry::agent(&c.nats, &format!("@{handle}"))).await?;
        if Some(agent.agent_id.as_str()) != own && !agents.iter().any(|a| a.agent_id == agent.agent_id) {
            agents.push(agent);
        }
    }
    Ok((
        agents.iter().map(Agent::participant).collect::<Vec<_>>().join(","),
        agents,
    ))
}

/// How the caller is named to others: `@handle`, `key:<id>` or `service:<name>`.
fn caller_name(ctx: &RequestContext, agent: Option<&Agent>) -> String {
    match agent {
        Some(a) => a.participant(),
        None => match &ctx.caller {
            Caller::Admin(k) | Caller::Operator(k) | Caller::Viewer(k) => format!("key:{k}"),
            Caller::Service(name) => format!("service:{name}"),
            Caller::Agent(_) | Caller::Anonymous => "anonymous".into(),
        },
    }
}

/// Who proposed it, as stored: `agent:<id>`, `key:<id>` or `service:<name>`.
fn caller_key(ctx: &RequestContext) -> String {
    match (&ctx.agent, &ctx.caller) {
        (Some(a), _) => format!("agent:{a}"),
        (None, Caller::Admin(k) | Caller::Operator(k) | Caller::Viewer(k)) => format!("key:{k}"),
        (None, Caller::Service(s)) => format!("service:{s}"),
        (None, _) => "anonymous".into(),
    }
}

// ---- SQL (coordination_proposals) -------------------------------------------------------------

/// A stored proposal with the columns kept beside its document.
struct Stored {
    p: Proposal,
    workspace: String,
    /// Who proposed it, as [`caller_key`] names callers.
    proposer: String,
}

/// A proposal the caller may see (its workspace's); `not_found` otherwise.
async fn existing(conn: &mut PgConnection, ctx: &RequestContext, id: &str, lock: bool) -> Result<Stored> {
    check_id("proposalId", id)?;
    match find(conn, id, lock).await? {
        Some(stored) if ctx.scope().is_none_or(|own| own == stored.workspace) => Ok(stored),
        _ => Err(CoordinationError::NotFound {
            what: "proposal",
            id: id.to_string(),
        }),
    }
}

async fn find(conn: &mut PgConnection, id: &str, lock: bool) -> Result<Option<Stored>> {
    let sql = if lock {
        "SELECT doc, workspace, proposer FROM coordination_proposals WHERE proposal_id = $1 FOR UPDATE"
    } else {
        "SELECT doc, workspace, proposer FROM coordination_proposals WHERE proposal_id = $1"
    };
    let row: Option<(Json<Proposal>, String, String)> = sqlx::query_as(sql).bind(id).fetch_optional(conn).await?;
    Ok(row.map(|(Json(p), workspace, proposer)| Stored { p, workspace, proposer }))
}

async fn insert(conn: &mut PgConnection, workspace: &str, proposer: &str, p: &Proposal) -> Result<()> {
    let done = sqlx::query(
        "INSERT INTO coordination_proposals (proposal_id, workspace, proposer, status, deadline, created_at, doc)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (proposal_id) DO NOTHING",
    )
    .bind(&p.proposal_id)
    .bind(workspace)
    .bind(proposer)
    .bind(p.status.as_str())
    .bind(p.deadline)
    .bind(p.created_at)
    .bind(Json(p))
    .execute(conn)
    .await?;
    if done.rows_affected() == 0 {
        return Err(CoordinationError::Conflict(format!(
            "proposal id {} was just taken by another call; ask again to read it",
            p.proposal_id
        )));
    }
    Ok(())
}

async fn save(conn: &mut PgConnection, p: &Proposal) -> Result<()> {
    sqlx::query("UPDATE coordination_proposals SET status = $2, doc = $3 WHERE proposal_id = $1")
        .bind(&p.proposal_id)
        .bind(p.status.as_str())
        .bind(Json(p))
        .execute(conn)
        .await?;
    Ok(())
}
