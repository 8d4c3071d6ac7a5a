//! `relayctl send`, `channels` and `tail`: relay messaging from the operator's terminal. Sends
//! go as `operator:relayctl` in the workspace named (the sender is who calls, never a flag).

use crate::bus::as_operator;
use crate::error::{CtlError, Result, parse};
use crate::output::print_json;
use crate::output::{table, time};
use clap::{Args, Subcommand};
use relay_client::Client;
use relay_contracts::events;
use relay_contracts::messaging::*;
use std::time::Duration;

#[derive(Args)]
pub(crate) struct SendArgs {
    /// `@handle`, `#channel` or `@a,@b`; `-` with --thread.
    to: String,
    /// The message (the words are joined with spaces).
    #[arg(required = true)]
    text: Vec<String>,
    /// Reply in the thread of this message.
    #[arg(long)]
    thread: Option<String>,
    /// immediate, next-message, next-tool-call, on-idle or manual.
    #[arg(long)]
    mode: Option<String>,
    /// low, normal, high or urgent.
    #[arg(long)]
    priority: Option<String>,
    #[arg(long, default_value = relay_contracts::context::DEFAULT_WORKSPACE)]
    workspace: String,
}

#[derive(Subcommand)]
pub(crate) enum Channels {
    /// The workspace's channels with their live member counts.
    List {
        #[arg(long, default_value = relay_contracts::context::DEFAULT_WORKSPACE)]
        workspace: String,
    },
    Create {
        name: String,
        #[arg(long)]
        topic: Option<String>,
        #[arg(long, default_value = relay_contracts::context::DEFAULT_WORKSPACE)]
        workspace: String,
    },
    /// Adds an agent (`@handle` or id) to a channel.
    Join {
        channel: String,
        agent: String,
        #[arg(long, default_value = relay_contracts::context::DEFAULT_WORKSPACE)]
        workspace: String,
    },
    Leave {
        channel: String,
        agent: String,
        #[arg(long, default_value = relay_contracts::context::DEFAULT_WORKSPACE)]
        workspace: String,
    },
    Members {
        channel: String,
        #[arg(long, default_value = relay_contracts::context::DEFAULT_WORKSPACE)]
        workspace: String,
    },
    /// A channel's messages in order.
    History {
        channel: String,
        #[arg(long, default_value_t = 50)]
        limit: i64,
        #[arg(long, default_value = relay_contracts::context::DEFAULT_WORKSPACE)]
        workspace: String,
    },
}

#[derive(Args)]
pub(crate) struct TailMessages {
    /// `#channel`, `@handle` or `all`.
    target: String,
    /// Replay the log from this seq (0 = the start) before following.
    #[arg(long)]
    from_seq: Option<i64>,
    /// Stop after this many messages.
    #[arg(long)]
    count: Option<u64>,
}

pub(crate) async fn send(c: &Client, args: SendArgs, as_json: bool) -> Result<()> {
    let to = match (args.to.as_str(), &args.thread) {
        ("-", Some(_)) => None,
        ("-", None) => return Err(CtlError::Invalid("`-` as the target needs --thread".into())),
        (to, _) if to.contains(',') => Some(To::Many(to.split(',').map(|h| h.trim().to_string()).collect())),
        (to, _) => Some(To::One(to.to_string())),
    };
    let req = SendRequest {
        to,
        thread_id: args.thread,
        text: args.text.join(" "),
        delivery_mode: args.mode.map(|m| parse("mode", &m)).transpose()?,
        priority: args.priority.map(|p| parse("priority", &p)).transpose()?,
        ..SendRequest::default()
    };
    let sent = as_operator(&args.workspace, c.message_send(&req)).await?;
    if as_json {
        return print_json(&sent);
    }
    println!("message {} to {}", sent.message_id, sent.conversation);
    let rows: Vec<Vec<String>> = sent
        .recipients
        .iter()
        .map(|r| {
            vec![
                format!("@{}", r.handle),
                r.reason.clone(),
                r.status.clone(),
                r.delivery_id.clone().or_else(|| r.error.clone()).unwrap_or_default(),
            ]
        })
        .collect();
    table(&["RECIPIENT", "REASON", "STATUS", "DELIVERY / ERROR"], &rows);
    Ok(())
}

fn message_rows(messages: &[RelayMessage]) -> Vec<Vec<String>> {
    messages
        .iter()
        .map(|m| {
            vec![
                time(m.created_at),
                m.from.display(),
                m.thread_id.as_deref().map_or("", |_| "↳").to_string(),
                m.text.replace('\n', " "),
                m.message_id.clone(),
            ]
        })
        .collect()
}

pub(crate) async fn channels(c: &Client, cmd: Channels, as_json: bool) -> Result<()> {
    match cmd {
        Channels::List { workspace } => {
            let list = as_operator(&workspace, c.channel_list(&ListChannelsRequest {})).await?;
            if as_json {
                return print_json(&list);
            }
            let rows: Vec<Vec<String>> = list
                .channels
                .iter()
                .map(|ch| {
                    vec![
                        format!("#{}", ch.name),
                        ch.members.to_string(),
                        ch.topic.clone().unwrap_or_default(),
                        ch.created_by.clone(),
                    ]
                })
                .collect();
            table(&["CHANNEL", "MEMBERS", "TOPIC", "CREATED BY"], &rows);
        }
        Channels::Create { name, topic, workspace } => {
            let ch = as_operator(&workspace, c.channel_create(&CreateChannelRequest { name, topic })).await?;
            if as_json {
                return print_json(&ch);
            }
            println!("#{} created", ch.name);
        }
        Channels::Join {
            channel,
            agent,
            workspace,
        } => {
            let req = MembershipRequest {
                channel,
                agent: Some(agent),
            };
            print_members(&as_operator(&workspace, c.channel_join(&req)).await?, as_json)?;
        }
        Channels::Leave {
            channel,
            agent,
            workspace,
        } => {
            let req = MembershipRequest {
                channel,
                agent: Some(agent),
            };
            print_members(&as_operator(&workspace, c.channel_leave(&req)).await?, as_json)?;
        }
        Channels::Members { channel, workspace } => {
            let members = as_operator(&workspace, c.channel_members(&ChannelRef { channel })).await?;
            print_members(&members, as_json)?;
        }
        Channels::History {
            channel,
            limit,
            workspace,
        } => {
            let req = HistoryRequest {
                channel,
                after: None,
                limit: Some(limit),
            };
            let page = as_operator(&workspace, c.channel_history(&req)).await?;
            if as_json {
                return print_json(&page);
            }
            table(
                &["SENT (UTC)", "FROM", "", "TEXT", "MESSAGE"],
                &message_rows(&page.messages),
            );
        }
    }
    Ok(())
}

fn print_members(members: &MemberList, as_json: bool) -> Result<()> {
    if as_json {
        return print_json(members);
    }
    let rows: Vec<Vec<String>> = members
        .members
        .iter()
        .map(|m| vec![format!("@{}", m.handle), m.agent_id.clone(), time(m.joined_at)])
        .collect();
    println!("#{}", members.channel);
    table(&["MEMBER", "AGENT", "JOINED (UTC)"], &rows);
    Ok(())
}

/// Follows `message.exchanged` in the event log: a channel's stream, or every message that an
/// agent sent, got or was mentioned in.
pub(crate) async fn tail(c: &Client, args: TailMessages, as_json: bool) -> Result<()> {
    let target = args.target.trim().to_string();
    let (stream, handle) = match target.as_str() {
        "all" => (None, None),
        t if t.starts_with('#') => {
            let name = channel_of(t).ok_or_else(|| CtlError::Invalid(format!("{t:?} is not a channel name")))?;
            (Some(format!("#{name}")), None)
        }
        t if t.starts_with('@') => (None, Some(t.to_ascii_lowercase())),
        t => return Err(CtlError::Invalid(format!("{t:?}: tail #channel, @handle or all"))),
    };
    let start = crate::bus::start_seq(c, args.from_seq).await?;
    let mut events = c
        .follow(events::SinceRequest {
            seq: start,
            types: Some(vec!["message.exchanged".into()]),
            agents: None,
            session_ids: stream.map(|s| vec![s]),
            limit: None,
        })
        .await?;
    let mut printed = 0u64;
    loop {
        if args.count.is_some_and(|n| printed >= n) {
            return Ok(());
        }
        let event = tokio::select! {
            e = events.next_within(Duration::from_millis(500)) => e?,
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        let Some(e) = event else { continue };
        let p = &e.payload;
        let text = |k: &str| p.get(k).and_then(|v| v.as_str()).unwrap_or_default().to_string();
        if let Some(h) = &handle {
            let named = |k: &str| text(k).split(',').any(|x| x.eq_ignore_ascii_case(h));
            let listed = p
                .get("recipients")
                .and_then(|r| r.as_array())
                .is_some_and(|r| r.iter().any(|x| x.as_str().is_some_and(|x| x.eq_ignore_ascii_case(h))));
            if !(named("from") || named("to") || listed) {
                continue;
            }
        }
        if as_json {
            println!("{}", serde_json::to_string(&e).unwrap_or_default());
        } else {
            let thread = if p.get("thread").is_some_and(|t| !t.is_null()) {
                " ↳"
            } else {
                ""
            };
            println!(
                "{}  {}  {} → {}{thread}: {}",
                e.seq,
                time(e.ts),
                text("from"),
                text("to"),
                text("body")
            );
        }
        printed += 1;
    }
}
