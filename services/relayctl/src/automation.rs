//! `relayctl webhooks …` and `relayctl schedules …`: the automation service's subjects, as an
//! admin (webhooks) or an operator (schedules) named `relayctl`, in `--workspace`.

use crate::bus::as_admin;
use crate::error::{Result, parse};
use crate::output::print_json;
use crate::output::{table, time};
use clap::Subcommand;
use relay_client::Client;
use relay_contracts::automation::*;

const WORKSPACE: &str = relay_contracts::context::DEFAULT_WORKSPACE;

#[derive(Subcommand)]
pub(crate) enum Webhooks {
    /// Subscribes URL to event types (`--event` again for more; `*` for all; the attention
    /// defaults when none). Prints the signing secret once.
    Create {
        url: String,
        #[arg(long = "event")]
        events: Vec<String>,
        /// whsec_ + base64 of 24 to 64 bytes (one is made when absent).
        #[arg(long)]
        secret: Option<String>,
        #[arg(long)]
        description: Option<String>,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    List {
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    /// Enables a subscription again (its held deliveries go), clearing its failure count.
    Enable {
        id: String,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    Disable {
        id: String,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    Delete {
        id: String,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    /// The delivery log, newest first.
    Deliveries {
        id: String,
        /// pending, delivered or failed.
        #[arg(long)]
        status: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: i64,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    /// Posts one delivery again now.
    Replay {
        id: String,
        delivery: String,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
}

pub(crate) async fn webhooks(c: &Client, cmd: Webhooks, as_json: bool) -> Result<()> {
    match cmd {
        Webhooks::Create {
            url,
            events,
            secret,
            description,
            workspace,
        } => {
            let req = CreateWebhookRequest {
                url,
                events: (!events.is_empty()).then_some(events),
                secret,
                description,
                a2a_task: None,
            };
            let w = as_admin(&workspace, c.webhook_create(&req)).await?;
            if as_json {
                return print_json(&w);
            }
            println!("{} {} ({})", w.webhook_id, w.url, w.events.join(", "));
            println!("secret: {}", w.secret.unwrap_or_default());
            Ok(())
        }
        Webhooks::List { workspace } => {
            let list = as_admin(&workspace, c.webhook_list(&ListWebhooksRequest {})).await?;
            if as_json {
                return print_json(&list);
            }
            let rows: Vec<Vec<String>> = list
                .webhooks
                .iter()
                .map(|w| {
                    vec![
                        w.webhook_id.clone(),
                        if w.enabled { "enabled".into() } else { "disabled".into() },
                        w.consecutive_failures.to_string(),
                        w.url.clone(),
                        w.events.join(","),
                    ]
                })
                .collect();
            table(&["WEBHOOK", "STATE", "FAILURES", "URL", "EVENTS"], &rows);
            Ok(())
        }
        Webhooks::Enable { id, workspace } => set_enabled(c, id, workspace, true, as_json).await,
        Webhooks::Disable { id, workspace } => set_enabled(c, id, workspace, false, as_json).await,
        Webhooks::Delete { id, workspace } => {
            let d = as_admin(&workspace, c.webhook_delete(&WebhookRef { webhook_id: id })).await?;
            print_json(&d)
        }
        Webhooks::Deliveries {
            id,
            status,
            limit,
            workspace,
        } => {
            let status = status.map(|s| parse("status", &s)).transpose()?;
            let req = WebhookDeliveriesRequest {
                webhook_id: id,
                status,
                limit: Some(limit),
            };
            let list = as_admin(&workspace, c.webhook_deliveries(&req)).await?;
            if as_json {
                return print_json(&list);
            }
            let rows: Vec<Vec<String>> = list
                .deliveries
                .iter()
                .map(|d| {
                    vec![
                        d.delivery_id.clone(),
                        d.status.as_str().to_string(),
                        d.attempts.to_string(),
                        d.event_type.clone(),
                        d.last_status.map(|s| s.to_string()).unwrap_or_default(),
                        d.last_error.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            table(
                &["DELIVERY", "STATUS", "ATTEMPTS", "EVENT", "HTTP", "LAST ERROR"],
                &rows,
            );
            Ok(())
        }
        Webhooks::Replay {
            id,
            delivery,
            workspace,
        } => {
            let req = ReplayRequest {
                webhook_id: id,
                delivery_id: delivery,
            };
            print_json(&as_admin(&workspace, c.webhook_replay(&req)).await?)
        }
    }
}

async fn set_enabled(c: &Client, id: String, workspace: String, enabled: bool, as_json: bool) -> Result<()> {
    let req = UpdateWebhookRequest {
        webhook_id: id,
        enabled: Some(enabled),
        ..Default::default()
    };
    let w = as_admin(&workspace, c.webhook_update(&req)).await?;
    if as_json {
        return print_json(&w);
    }
    println!("{} {}", w.webhook_id, if w.enabled { "enabled" } else { "disabled" });
    Ok(())
}

#[derive(Subcommand)]
pub(crate) enum Schedules {
    /// Sends TEXT to a session on a cron expression (`--cron '0 9 * * 1-5' --tz Europe/Berlin`)
    /// or once (`--at <Unix ms>`), as `operator:relayctl`.
    Create {
        session: String,
        text: String,
        #[arg(long)]
        cron: Option<String>,
        #[arg(long = "tz")]
        time_zone: Option<String>,
        #[arg(long)]
        at: Option<i64>,
        #[arg(long)]
        id: Option<String>,
        #[arg(long)]
        name: Option<String>,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    List {
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    Show {
        id: String,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    Pause {
        id: String,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    Resume {
        id: String,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    Delete {
        id: String,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
    /// Its runs, newest first.
    Runs {
        id: String,
        #[arg(long, default_value_t = 50)]
        limit: i64,
        #[arg(long, default_value = WORKSPACE)]
        workspace: String,
    },
}

pub(crate) async fn schedules(c: &Client, cmd: Schedules, as_json: bool) -> Result<()> {
    use crate::bus::as_operator;
    let schedule = match cmd {
        Schedules::Create {
            session,
            text,
            cron,
            time_zone,
            at,
            id,
            name,
            workspace,
        } => {
            let req = CreateScheduleRequest {
                schedule_id: id,
                name,
                cron,
                time_zone,
                at: at.map(|a| a as f64),
                action: ScheduleAction::SendMessage {
                    session_id: session,
                    text,
                    mode: None,
                    agent_ids: None,
                    on_busy: None,
                    priority: None,
                    deadline: None,
                },
            };
            as_operator(&workspace, c.schedule_create(&req)).await?
        }
        Schedules::Show { id, workspace } => {
            as_operator(&workspace, c.schedule_get(&ScheduleRef { schedule_id: id })).await?
        }
        Schedules::Pause { id, workspace } => {
            as_operator(&workspace, c.schedule_pause(&ScheduleRef { schedule_id: id })).await?
        }
        Schedules::Resume { id, workspace } => {
            as_operator(&workspace, c.schedule_resume(&ScheduleRef { schedule_id: id })).await?
        }
        Schedules::Delete { id, workspace } => {
            let d = as_operator(&workspace, c.schedule_delete(&ScheduleRef { schedule_id: id })).await?;
            return print_json(&d);
        }
        Schedules::Runs { id, limit, workspace } => {
            let req = ScheduleRunsRequest {
                schedule_id: id,
                limit: Some(limit),
            };
            let runs = as_operator(&workspace, c.schedule_runs(&req)).await?;
            if as_json {
                return print_json(&runs);
            }
            let rows: Vec<Vec<String>> = runs
                .runs
                .iter()
                .map(|r| {
                    vec![
                        time(r.due_at),
                        time(r.fired_at),
                        if r.ok { "ok".into() } else { "failed".into() },
                        r.result.to_string(),
                    ]
                })
                .collect();
            table(&["DUE", "FIRED", "OK", "RESULT"], &rows);
            return Ok(());
        }
        Schedules::List { workspace } => {
            let list = as_operator(&workspace, c.schedule_list(&ListSchedulesRequest::default())).await?;
            if as_json {
                return print_json(&list);
            }
            let rows: Vec<Vec<String>> = list
                .schedules
                .iter()
                .map(|s| {
                    vec![
                        s.schedule_id.clone(),
                        s.status.as_str().to_string(),
                        s.cron.clone().unwrap_or_else(|| s.at.map(time).unwrap_or_default()),
                        s.next_run_at.map(time).unwrap_or_default(),
                        s.runs.to_string(),
                    ]
                })
                .collect();
            table(&["SCHEDULE", "STATUS", "WHEN", "NEXT", "RUNS"], &rows);
            return Ok(());
        }
    };
    if as_json {
        return print_json(&schedule);
    }
    println!(
        "{} {} next {} ({} runs)",
        schedule.schedule_id,
        schedule.status.as_str(),
        schedule.next_run_at.map_or_else(|| "-".into(), time),
        schedule.runs
    );
    Ok(())
}
