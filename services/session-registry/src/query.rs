//! Read-only subjects: get, list, getChildren, getStatusCounts, getByAdapterSessionId, search.

use crate::error::{RegistryError, Result};
use crate::{Registry, store};
use relay_contracts::RequestContext;
use relay_contracts::session::*;

pub async fn get(reg: Registry, ctx: RequestContext, req: SessionRef) -> Result<GetResponse> {
    let mut conn = reg.db.acquire().await?;
    // Another workspace's session is as unknown as one that never existed.
    if !crate::scope::sees_session(&mut conn, &ctx, &req.session_id).await? {
        return Ok(GetResponse { session: None });
    }
    Ok(GetResponse {
        session: store::load_session(&mut conn, &req.session_id).await?,
    })
}

fn page(reg: &Registry, limit: Option<i64>, offset: Option<i64>) -> Result<(i64, i64)> {
    let max = reg.settings.max_page_size;
    let limit = limit.unwrap_or(reg.settings.default_page_size);
    if !(1..=max).contains(&limit) {
        return Err(RegistryError::Invalid(format!("limit must be between 1 and {max}")));
    }
    let offset = offset.unwrap_or(0);
    if offset < 0 {
        return Err(RegistryError::Invalid("offset must not be negative".into()));
    }
    Ok((limit, offset))
}

pub async fn list(reg: Registry, ctx: RequestContext, req: ListRequest) -> Result<ListResponse> {
    let (limit, offset) = page(&reg, req.limit, req.offset)?;
    let status = req
        .status
        .unwrap_or_default()
        .status()
        .map(relay_contracts::session::SessionStatus::as_str);
    let mut conn = reg.db.acquire().await?;
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT session_id, count(*) OVER () FROM registry_sessions
         WHERE status <> 'purged' AND ($1::text IS NULL OR status = $1)
           AND ($2::text IS NULL OR execution_target_id = $2)
           AND ($5::text IS NULL OR workspace = $5)
         ORDER BY last_activity_at DESC, session_id LIMIT $3 OFFSET $4",
    )
    .bind(status)
    .bind(&req.execution_target_id)
    .bind(limit)
    .bind(offset)
    .bind(ctx.scope())
    .fetch_all(&mut *conn)
    .await?;
    let total =
        match rows.first() {
            Some((_, total)) => *total,
            // An offset past the end returns no rows, but the total is still asked for.
            None => sqlx::query_scalar(
                "SELECT count(*) FROM registry_sessions WHERE status <> 'purged' AND ($1::text IS NULL OR status = $1)
               AND ($2::text IS NULL OR execution_target_id = $2) AND ($3::text IS NULL OR workspace = $3)",
            )
            .bind(status)
            .bind(&req.execution_target_id)
            .bind(ctx.scope())
            .fetch_one(&mut *conn)
            .await?,
        };
    let ids: Vec<String> = rows.into_iter().map(|(id, _)| id).collect();
    let mut sessions = store::load_sessions(&mut conn, &ids).await?;
    if req.include_preview == Some(true) {
        sessions = store::with_previews(&mut conn, sessions).await?;
    }
    // Fewer than `limit` when they would not fit one NATS message; `total` tells the caller
    // there is more, and the next offset is offset + sessions returned.
    relay_bus::fit_json(&mut sessions, reg.settings.max_reply_bytes);
    Ok(ListResponse { sessions, total })
}

pub async fn get_children(reg: Registry, _ctx: RequestContext, req: SessionRef) -> Result<GetChildrenResponse> {
    let mut conn = reg.db.acquire().await?;
    store::require_session(&mut conn, &req.session_id).await?;
    let ids = store::child_ids(&mut conn, &req.session_id).await?;
    let children = store::load_sessions(&mut conn, &ids).await?;
    let mut previews = store::previews(&mut conn, &ids).await?;
    let mut out = Vec::with_capacity(children.len());
    for child in children {
        let has_children = !store::child_ids(&mut conn, &child.session_id).await?.is_empty();
        out.push(ChildSession {
            message_count: previews.remove(&child.session_id).map_or(0, |p| p.message_count),
            session_id: child.session_id,
            branch_kind: child.branch_kind,
            fork_point_message_id: child.fork_point_message_id,
            has_children,
            title: child.title,
            spawning_tool_call_id: child.spawning_tool_call_id,
        });
    }
    Ok(GetChildrenResponse { children: out })
}

pub async fn status_counts(reg: Registry, ctx: RequestContext, _req: StatusCountsRequest) -> Result<StatusCounts> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT status, count(*) FROM registry_sessions
         WHERE status <> 'purged' AND ($1::text IS NULL OR workspace = $1) GROUP BY status",
    )
    .bind(ctx.scope())
    .fetch_all(&reg.db)
    .await?;
    let mut counts = StatusCounts::default();
    for (status, n) in rows {
        counts.all += n;
        match status.as_str() {
            "active" => counts.active = n,
            "closed" => counts.closed = n,
            "archived" => counts.archived = n,
            "discovered" => counts.discovered = n,
            _ => {}
        }
    }
    Ok(counts)
}

pub async fn get_by_adapter_session_id(
    reg: Registry,
    ctx: RequestContext,
    req: GetByAdapterSessionIdRequest,
) -> Result<GetResponse> {
    let mut conn = reg.db.acquire().await?;
    // The session's own adapter id first, then any agent attached with it.
    let id: Option<String> = sqlx::query_scalar(
        "SELECT session_id FROM (
             SELECT session_id, 0 AS pref, created_at FROM registry_sessions WHERE adapter_session_id = $1 AND status <> 'purged'
             UNION ALL
             SELECT a.session_id, 1, s.created_at FROM registry_agents a JOIN registry_sessions s USING (session_id)
             WHERE a.adapter_session_id = $1 AND s.status <> 'purged'
         ) hits ORDER BY pref, created_at LIMIT 1",
    )
    .bind(&req.adapter_session_id)
    .fetch_optional(&mut *conn)
    .await?;
    let session = match id {
        Some(id) if crate::scope::sees_session(&mut conn, &ctx, &id).await? => {
            store::load_session(&mut conn, &id).await?
        }
        _ => None,
    };
    Ok(GetResponse { session })
}

/// Full-text search over session titles and message content (Postgres `english` text search,
/// web-search syntax: quoted phrases, `or`, `-word`), best match first: a session matches when
/// its title or one of its messages does. Results always carry a preview.
pub async fn search(reg: Registry, ctx: RequestContext, req: SearchRequest) -> Result<ListResponse> {
    if req.query.trim().is_empty() {
        return Err(RegistryError::Invalid("query must not be empty".into()));
    }
    let (limit, offset) = page(&reg, req.limit.or(Some(20)), req.offset)?;
    let status = req
        .status
        .unwrap_or_default()
        .status()
        .map(relay_contracts::session::SessionStatus::as_str);
    let mut conn = reg.db.acquire().await?;
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "WITH q AS (SELECT websearch_to_tsquery('english', $1) AS q),
         hits AS (
             SELECT session_id, max(rank) AS rank FROM (
                 SELECT m.session_id, ts_rank(m.content_tsv, q.q) AS rank
                 FROM registry_messages m, q WHERE m.content_tsv @@ q.q
                 UNION ALL
                 SELECT t.session_id, ts_rank(t.title_tsv, q.q)
                 FROM registry_sessions t, q WHERE t.title_tsv @@ q.q) found
             GROUP BY session_id)
         SELECT s.session_id, count(*) OVER ()
         FROM hits h JOIN registry_sessions s USING (session_id)
         WHERE s.status <> 'purged' AND ($2::text IS NULL OR s.status = $2) AND ($3::bool IS NULL OR s.is_imported = $3)
           AND ($6::text IS NULL OR s.workspace = $6)
         ORDER BY h.rank DESC, s.last_activity_at DESC, s.session_id
         LIMIT $4 OFFSET $5",
    )
    .bind(req.query.trim())
    .bind(status)
    .bind(req.is_imported)
    .bind(limit)
    .bind(offset)
    .bind(ctx.scope())
    .fetch_all(&mut *conn)
    .await?;
    let total = rows.first().map_or(0, |(_, t)| *t);
    let ids: Vec<String> = rows.into_iter().map(|(id, _)| id).collect();
    let sessions = store::load_sessions(&mut conn, &ids).await?;
    let mut sessions = store::with_previews(&mut conn, sessions).await?;
    relay_bus::fit_json(&mut sessions, reg.settings.max_reply_bytes);
    Ok(ListResponse { sessions, total })
}
