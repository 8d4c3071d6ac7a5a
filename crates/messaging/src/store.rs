//! SQL for relay messaging (migrations/20261124000007_relay_messaging.sql): channels, their
//! members, and relay messages. The tables are the host's (the session registry's), and
//! members are its agents.

use crate::error::Result;
use relay_contracts::messaging::{Channel, GENERAL, Member, RelayMessage};
use relay_contracts::session::Agent;
use sqlx::PgConnection;
use sqlx::types::Json;

/// Serialises sends in one conversation until the transaction ends: every recipient sees the
/// conversation's messages in one order, and the rate guard counts what was really sent.
pub async fn lock_conversation(conn: &mut PgConnection, workspace: &str, conversation: &str) -> Result<()> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('relay-conversation:' || $1 || '/' || $2))")
        .bind(workspace)
        .bind(conversation)
        .execute(conn)
        .await?;
    Ok(())
}

/// Messages of a conversation sent since `since_ms`, counted up to `limit` (the guard's bound:
/// past it the answer is the same, and a busy conversation is not counted row by row).
pub async fn recent_count(
    conn: &mut PgConnection,
    workspace: &str,
    conversation: &str,
    since_ms: i64,
    limit: i64,
) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT 1 FROM registry_relay_messages
                               WHERE workspace = $1 AND conversation = $2 AND created_at >= $3 LIMIT $4) recent",
    )
    .bind(workspace)
    .bind(conversation)
    .bind(since_ms)
    // A guard of 0 or less refuses every message, as before; LIMIT may not be negative.
    .bind(limit.max(0))
    .fetch_one(conn)
    .await?)
}

pub async fn insert_message(
    conn: &mut PgConnection,
    workspace: &str,
    sender: &str,
    key: Option<&str>,
    m: &RelayMessage,
) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO registry_relay_messages
             (message_id, workspace, conversation, channel, thread_id, sender, idempotency_key, body, doc, hop, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING seq",
    )
    .bind(&m.message_id)
    .bind(workspace)
    .bind(&m.conversation)
    .bind(&m.channel)
    .bind(&m.thread_id)
    .bind(sender)
    .bind(key)
    .bind(&m.text)
    .bind(Json(m))
    .bind(m.hop as i32)
    .bind(m.created_at)
    .fetch_one(conn)
    .await?)
}

fn with_seq((Json(mut m), seq): (Json<RelayMessage>, i64)) -> RelayMessage {
    m.seq = seq;
    m
}

pub async fn by_key(conn: &mut PgConnection, workspace: &str, sender: &str, key: &str) -> Result<Option<RelayMessage>> {
    let row: Option<(Json<RelayMessage>, i64)> = sqlx::query_as(
        "SELECT doc, seq FROM registry_relay_messages WHERE workspace = $1 AND sender = $2 AND idempotency_key = $3",
    )
    .bind(workspace)
    .bind(sender)
    .bind(key)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(with_seq))
}

/// A message by id with its workspace.
pub async fn find(conn: &mut PgConnection, message_id: &str) -> Result<Option<(RelayMessage, String)>> {
    let row: Option<(Json<RelayMessage>, i64, String)> =
        sqlx::query_as("SELECT doc, seq, workspace FROM registry_relay_messages WHERE message_id = $1")
            .bind(message_id)
            .fetch_optional(conn)
            .await?;
    Ok(row.map(|(doc, seq, w)| (with_seq((doc, seq)), w)))
}

/// A thread's replies, oldest first.
pub async fn replies(conn: &mut PgConnection, thread_id: &str) -> Result<Vec<RelayMessage>> {
    let rows: Vec<(Json<RelayMessage>, i64)> =
        sqlx::query_as("SELECT doc, seq FROM registry_relay_messages WHERE thread_id = $1 ORDER BY seq")
            .bind(thread_id)
            .fetch_all(conn)
            .await?;
    Ok(rows.into_iter().map(with_seq).collect())
}

/// What an agent may read: channel messages, and DMs it sent or got. `None` sees everything.
const VISIBLE: &str = "($1::text IS NULL OR channel IS NOT NULL OR sender = 'agent:' || $1
                       OR doc->'recipients' @> jsonb_build_array(jsonb_build_object('agentId', $1::text)))";

pub async fn history(
    conn: &mut PgConnection,
    workspace: &str,
    channel: &str,
    after: i64,
    limit: i64,
) -> Result<Vec<RelayMessage>> {
    let rows: Vec<(Json<RelayMessage>, i64)> = sqlx::query_as(
        "SELECT doc, seq FROM registry_relay_messages
         WHERE workspace = $1 AND conversation = '#' || $2 AND seq > $3 ORDER BY seq LIMIT $4",
    )
    .bind(workspace)
    .bind(channel)
    .bind(after)
    .bind(limit)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(with_seq).collect())
}

pub async fn search(
    conn: &mut PgConnection,
    viewer: Option<&str>,
    workspace: &str,
    query: &str,
    channel: Option<&str>,
    limit: i64,
) -> Result<Vec<RelayMessage>> {
    let rows: Vec<(Json<RelayMessage>, i64)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT doc, seq FROM registry_relay_messages
         WHERE {VISIBLE} AND workspace = $2 AND search @@ websearch_to_tsquery('english', $3)
           AND ($4::text IS NULL OR channel = $4)
         ORDER BY seq DESC LIMIT $5"
    )))
    .bind(viewer)
    .bind(workspace)
    .bind(query)
    .bind(channel)
    .bind(limit)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(with_seq).collect())
}

/// Makes sure the workspace has #general.
pub async fn ensure_general(conn: &mut PgConnection, workspace: &str) -> Result<()> {
    sqlx::query(
        "INSERT INTO registry_channels (workspace, name, topic, created_by, created_at)
         VALUES ($1, $2, 'Every agent of the workspace', 'relay', $3) ON CONFLICT DO NOTHING",
    )
    .bind(workspace)
    .bind(GENERAL)
    .bind(relay_bus::now_ms())
    .execute(conn)
    .await?;
    Ok(())
}

/// `false` when the name is taken.
pub async fn insert_channel(conn: &mut PgConnection, workspace: &str, c: &Channel) -> Result<bool> {
    Ok(sqlx::query(
        "INSERT INTO registry_channels (workspace, name, topic, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
    )
    .bind(workspace)
    .bind(&c.name)
    .bind(&c.topic)
    .bind(&c.created_by)
    .bind(c.created_at)
    .execute(conn)
    .await?
    .rows_affected()
        == 1)
}

const CHANNEL_COLUMNS: &str = "c.name, c.topic, c.created_by, c.created_at,
    CASE WHEN c.name = 'general'
         THEN (SELECT count(*) FROM registry_agents a WHERE a.workspace = c.workspace AND a.live)
         ELSE (SELECT count(*) FROM registry_channel_members m JOIN registry_agents a ON a.agent_id = m.agent_id
               WHERE m.workspace = c.workspace AND m.channel = c.name AND a.live) END";

type ChannelRow = (String, Option<String>, String, i64, i64);

fn channel((name, topic, created_by, created_at, members): ChannelRow) -> Channel {
    Channel {
        name,
        topic,
        created_by,
        created_at,
        members,
    }
}

pub async fn channels(conn: &mut PgConnection, workspace: &str) -> Result<Vec<Channel>> {
    let rows: Vec<ChannelRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {CHANNEL_COLUMNS} FROM registry_channels c WHERE c.workspace = $1
         ORDER BY c.name <> 'general', c.name"
    )))
    .bind(workspace)
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(channel).collect())
}

pub async fn channel_by_name(conn: &mut PgConnection, workspace: &str, name: &str) -> Result<Option<Channel>> {
    let row: Option<ChannelRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {CHANNEL_COLUMNS} FROM registry_channels c WHERE c.workspace = $1 AND c.name = $2"
    )))
    .bind(workspace)
    .bind(name)
    .fetch_optional(conn)
    .await?;
    Ok(row.map(channel))
}

/// The live member agents of a channel, in the order they joined (#general: every live agent).
pub async fn member_agents(conn: &mut PgConnection, workspace: &str, name: &str) -> Result<Vec<(Agent, i64)>> {
    let rows: Vec<(Json<Agent>, i64)> = if name == GENERAL {
        sqlx::query_as(
            "SELECT doc, (doc->>'createdAt')::bigint FROM registry_agents
             WHERE workspace = $1 AND live ORDER BY attach_seq",
        )
        .bind(workspace)
        .fetch_all(conn)
        .await?
    } else {
        sqlx::query_as(
            "SELECT a.doc, m.joined_at FROM registry_channel_members m JOIN registry_agents a ON a.agent_id = m.agent_id
             WHERE m.workspace = $1 AND m.channel = $2 AND a.live ORDER BY m.joined_at, a.agent_id",
        )
        .bind(workspace)
        .bind(name)
        .fetch_all(conn)
        .await?
    };
    Ok(rows.into_iter().map(|(Json(a), at)| (a, at)).collect())
}

pub fn members(rows: Vec<(Agent, i64)>) -> Vec<Member> {
    rows.into_iter()
        .map(|(a, joined_at)| Member {
            handle: a.handle.unwrap_or_default(),
            agent_id: a.agent_id,
            joined_at,
        })
        .collect()
}

pub async fn join(conn: &mut PgConnection, workspace: &str, name: &str, agent_id: &str) -> Result<()> {
    sqlx::query(
        "INSERT INTO registry_channel_members (workspace, channel, agent_id, joined_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING",
    )
    .bind(workspace)
    .bind(name)
    .bind(agent_id)
    .bind(relay_bus::now_ms())
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn leave(conn: &mut PgConnection, workspace: &str, name: &str, agent_id: &str) -> Result<()> {
    sqlx::query("DELETE FROM registry_channel_members WHERE workspace = $1 AND channel = $2 AND agent_id = $3")
        .bind(workspace)
        .bind(name)
        .bind(agent_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Retention of relay messages (`registry.retention.keep_ms`), run by the host: a thread goes
/// whole, once its latest message is past the window, its replies before its root (newest
/// first), so a reply is never left without it. `$1` is the cut-off, `$2` the batch.
pub const RETENTION: &str = "DELETE FROM registry_relay_messages WHERE seq IN (
   SELECT m.seq FROM registry_relay_messages m
   WHERE m.created_at < $1 AND NOT EXISTS (
       SELECT 1 FROM registry_relay_messages r
       WHERE (r.thread_id = coalesce(m.thread_id, m.message_id)
              OR r.message_id = coalesce(m.thread_id, m.message_id))
         AND r.created_at >= $1)
   ORDER BY m.created_at DESC LIMIT $2)";
