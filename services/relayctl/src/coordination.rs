//! `relayctl actions` and `relayctl consensus`: what agents expose and what they decide
//! together, from the operator's terminal, in the workspace named (actions as
//! `admin:relayctl`, consensus as `operator:relayctl`).

use crate::bus::{as_admin, as_operator};
use crate::error::{CtlError, Result, parse};
use crate::output::print_json;
use crate::output::{table, time};
use clap::Subcommand;
use relay_client::Client;
use relay_contracts::actions::*;
use relay_contracts::consensus::*;
use relay_contracts::messaging::To;

const WORKSPACE: &str = relay_contracts::context::DEFAULT_WORKSPACE;

#[derive(Subcommand)]
pub(crate) enum Actions {
    /// The live agents' actions, every one (relayctl acts as an admin, as `GET /actions` with
    /// an admin key: an action's `availableTo` limits agents, operators and viewers).
    List {
        /// Only this agent's (`@handle` or id).
        #[arg(long)]
        agent: Option<String>,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    /// Invokes an action: `relayctl actions invoke @calc add '{"a": 2, "b": 3}'`. A policy may
    /// hold it for a person (`pending`): decide with `permissions approve`, then run the same
    /// command with `--id` to read the outcome.
    Invoke {
        agent: String,
        action: String,
        /// The input as JSON (`{}` when left out).
        input: Option<String>,
        /// An invocation id: the same id again answers with that invocation.
        #[arg(long)]
        id: Option<String>,
        #[arg(long, default_value_t = 30000)]
        timeout_ms: u64,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
}

#[derive(Subcommand)]
pub(crate) enum Consensus {
    /// Puts a question to `#channel` or `@a,@b`: `relayctl consensus propose '#ops' 'Ship?' ship wait`.
    Propose {
        to: String,
        question: String,
        /// Two or more options.
        #[arg(required = true, num_args = 2..)]
        options: Vec<String>,
        /// Votes one option needs (default: a majority of the voters).
        #[arg(long)]
        quorum: Option<u32>,
        /// How long voting stays open, in seconds (default one hour).
        #[arg(long)]
        timeout_secs: Option<u64>,
        #[arg(long)]
        id: Option<String>,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    /// One proposal with its votes.
    Show {
        id: String,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    /// The workspace's proposals, newest first.
    List {
        /// open, resolved, expired or cancelled.
        #[arg(long)]
        status: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: i64,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    Cancel {
        id: String,
        #[arg(long)]
        reason: Option<String>,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
}

pub(crate) async fn actions(c: &Client, cmd: Actions, as_json: bool) -> Result<()> {
    match cmd {
        Actions::List { agent, workspace } => {
            let list = as_admin(&workspace, c.action_list(&ListActionsRequest { agent })).await?;
            if as_json {
                return print_json(&list);
            }
            let rows: Vec<Vec<String>> = list
                .actions
                .iter()
                .map(|a| {
                    vec![
                        format!("@{}", a.handle.as_deref().unwrap_or(&a.agent_id)),
                        a.name.clone(),
                        a.available_to.join(","),
                        a.description.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            table(&["AGENT", "ACTION", "AVAILABLE TO", "DESCRIPTION"], &rows);
        }
        Actions::Invoke {
            agent,
            action,
            input,
            id,
            timeout_ms,
            workspace,
        } => {
            let input = input
                .map(|text| serde_json::from_str(&text))
                .transpose()
                .map_err(|e| CtlError::Invalid(format!("input is not JSON: {e}")))?;
            let req = InvokeRequest {
                agent,
                action,
                input,
                invocation_id: id,
                timeout_ms: Some(timeout_ms as f64),
            };
            // As the admin it lists them as: every action listed can be invoked (the policies
            // still decide).
            let inv = as_admin(&workspace, c.action_invoke(&req)).await?;
            if as_json {
                return print_json(&inv);
            }
            let status = serde_json::to_value(inv.status).unwrap_or_default();
            println!(
                "invocation {}: {}",
                inv.invocation_id,
                status.as_str().unwrap_or_default()
            );
            match (&inv.output, &inv.error) {
                (Some(out), _) => println!("{}", serde_json::to_string_pretty(out).unwrap_or_default()),
                (None, Some(e)) => println!("{e}"),
                _ => {}
            }
            if inv.status == InvocationStatus::Pending {
                println!(
                    "waits for a person: relayctl permissions approve {}",
                    inv.permission_request_id.unwrap_or_default()
                );
            }
        }
    }
    Ok(())
}

fn print_proposal(p: &Proposal, as_json: bool) -> Result<()> {
    if as_json {
        return print_json(p);
    }
    println!(
        "proposal {} ({}) by {} to {}",
        p.proposal_id,
        p.status.as_str(),
        p.proposer,
        p.to
    );
    println!("{}", p.question);
    let tally: Vec<String> = p.tally.iter().map(|(o, n)| format!("{o}: {n}")).collect();
    println!(
        "tally: {} (quorum {} of {} voters)",
        tally.join(", "),
        p.quorum,
        p.voters.len()
    );
    if let Some(reason) = &p.reason {
        println!("{reason}");
    }
    let rows: Vec<Vec<String>> = p
        .votes
        .iter()
        .map(|v| {
            vec![
                time(v.voted_at),
                format!("@{}", v.handle.as_deref().unwrap_or(&v.agent_id)),
                v.choice.clone(),
                v.reason.clone().unwrap_or_default(),
            ]
        })
        .collect();
    if !rows.is_empty() {
        table(&["AT", "VOTER", "CHOICE", "REASON"], &rows);
    }
    Ok(())
}

pub(crate) async fn consensus(c: &Client, cmd: Consensus, as_json: bool) -> Result<()> {
    match cmd {
        Consensus::Propose {
            to,
            question,
            options,
            quorum,
            timeout_secs,
            id,
            workspace,
        } => {
            let to = if to.contains(',') {
                To::Many(to.split(',').map(|h| h.trim().to_string()).collect())
            } else {
                To::One(to)
            };
            let req = ProposeRequest {
                proposal_id: id,
                question,
                options,
                to,
                quorum: quorum.map(f64::from),
                timeout_ms: timeout_secs.map(|s| (s * 1000) as f64),
            };
            print_proposal(&as_operator(&workspace, c.consensus_propose(&req)).await?, as_json)
        }
        Consensus::Show { id, workspace } => {
            let req = ProposalRef { proposal_id: id };
            print_proposal(&as_operator(&workspace, c.consensus_get(&req)).await?, as_json)
        }
        Consensus::Cancel { id, reason, workspace } => {
            let req = CancelRequest {
                proposal_id: id,
                reason,
            };
            print_proposal(&as_operator(&workspace, c.consensus_cancel(&req)).await?, as_json)
        }
        Consensus::List {
            status,
            limit,
            workspace,
        } => {
            let status = status.map(|s| parse("status", &s)).transpose()?;
            let req = ListProposalsRequest {
                status,
                limit: Some(limit),
            };
            let list = as_operator(&workspace, c.consensus_list(&req)).await?;
            if as_json {
                return print_json(&list);
            }
            let rows: Vec<Vec<String>> = list
                .proposals
                .iter()
                .map(|p| {
                    vec![
                        p.proposal_id.clone(),
                        p.status.as_str().to_string(),
                        p.outcome.clone().unwrap_or_default(),
                        p.to.clone(),
                        p.question.replace('\n', " "),
                    ]
                })
                .collect();
            table(&["PROPOSAL", "STATUS", "OUTCOME", "TO", "QUESTION"], &rows);
            Ok(())
        }
    }
}
