//! Snapshots: export a session (with ancestors, children, events as asked), validate, import.

use crate::Registry;
use crate::error::{RegistryError, Result};
use crate::lifecycle::{check_id, created_event};
use crate::posting::conversation;
use crate::store::{self, Change, now_ms};
use relay_contracts::RequestContext;
use relay_contracts::session::*;
use serde_json::Value;
use std::collections::HashSet;

/// Block types that carry tool output, left out unless `includeToolOutputs`.
const TOOL_OUTPUT_BLOCKS: &[&str] = &["tool_result", "tool_output"];

pub async fn export(reg: Registry, _ctx: RequestContext, req: ExportRequest) -> Result<ExportResponse> {
    let options = req.options.unwrap_or_default();
    let mut conn = reg.db.acquire().await?;
    let root = store::require_session(&mut conn, &req.session_id).await?;

    // Ancestors first (oldest at the front), then the session, then descendants breadth-first.
    let mut ids = vec![root.session_id.clone()];
    let mut cursor = root.parent_session_id.clone();
    while options.include_ancestors
        && let Some(pid) = cursor
        && !ids.contains(&pid)
    {
        let Some(parent) = store::load_session(&mut conn, &pid).await? else {
            break;
        };
        ids.insert(0, pid);
        cursor = parent.parent_session_id;
    }
    if options.include_children {
        let mut i = ids.len() - 1;
        while i < ids.len() {
            let children = store::child_ids(&mut conn, &ids[i]).await?;
            ids.extend(children);
            i += 1;
        }
    }
    let sessions = store::load_sessions(&mut conn, &ids).await?;
    let mut messages = Vec::new();
    for s in &sessions {
        messages.extend(conversation(&mut conn, s, false).await?);
    }
    if !options.include_tool_outputs {
        for m in &mut messages {
            m.blocks.retain(|b| {
                !b.get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| TOOL_OUTPUT_BLOCKS.contains(&t))
            });
        }
    }
    let turns = store::turns_of(&mut conn, &ids).await?;
    let events = match options.include_events {
        true => Some(store::events_of(&mut conn, &ids).await?),
        false => None,
    };
    let agents = sessions.iter().flat_map(|s| s.agents.clone()).collect();
    Ok(ExportResponse {
        snapshot: Snapshot {
            version: SNAPSHOT_VERSION.into(),
            exported_at: now_ms(),
            options,
            sessions,
            agents,
            messages,
            turns,
            events,
        },
    })
}

/// Every problem with a snapshot, or none: structure, version, duplicate ids, dangling references.
fn problems(snapshot: &Value) -> (Option<Snapshot>, Vec<String>) {
    let snap: Snapshot = match serde_json::from_value(snapshot.clone()) {
        Ok(s) => s,
        Err(e) => {
            return (None, vec![format!("snapshot does not match the schema: {e}")]);
        }
    };
    let mut errors = Vec::new();
    if snap.version != SNAPSHOT_VERSION {
        errors.push(format!(
            "version must be \"{SNAPSHOT_VERSION}\", got \"{}\"",
            snap.version
        ));
    }
    let mut sessions = HashSet::new();
    for s in &snap.sessions {
        if check_id("sessionId", &s.session_id).is_err() {
            errors.push(format!("session id {:?} is empty or too long", s.session_id));
        }
        if !sessions.insert(s.session_id.as_str()) {
            errors.push(format!("session {} appears twice", s.session_id));
        }
    }
    // Parent links inside the snapshot must end (at a session outside it or a root).
    let parents: std::collections::HashMap<&str, &str> = snap
        .sessions
        .iter()
        .filter_map(|s| Some((s.session_id.as_str(), s.parent_session_id.as_deref()?)))
        .collect();
    for start in parents.keys() {
        let (mut at, mut steps) = (*start, 0);
        while let Some(p) = parents.get(at) {
            at = p;
            steps += 1;
            if at == *start || steps > parents.len() {
                errors.push(format!("session {start} is its own ancestor (parentSessionId cycle)"));
                break;
            }
        }
    }
    let mut check_unique = |kind: &str, ids: Vec<(&str, &str)>| {
        let mut seen = HashSet::new();
        for (id, sid) in ids {
            if !seen.insert(id.to_string()) {
                errors.push(format!("{kind} {id} appears twice"));
            }
            if !sessions.contains(sid) {
                errors.push(format!(
                    "{kind} {id} belongs to session {sid}, which is not in the snapshot"
                ));
            }
        }
    };
    check_unique(
        "agent",
        snap.agents
            .iter()
            .map(|a| (a.agent_id.as_str(), a.session_id.as_str()))
            .collect(),
    );
    check_unique(
        "message",
        snap.messages
            .iter()
            .map(|m| (m.message_id.as_str(), m.session_id.as_str()))
            .collect(),
    );
    check_unique(
        "turn",
        snap.turns
            .iter()
            .map(|t| (t.turn_id.as_str(), t.session_id.as_str()))
            .collect(),
    );
    let turns: HashSet<&str> = snap.turns.iter().map(|t| t.turn_id.as_str()).collect();
    for m in &snap.messages {
        if let Some(t) = &m.turn_id
            && !turns.contains(t.as_str())
        {
            errors.push(format!(
                "message {} refers to turn {t}, which is not in the snapshot",
                m.message_id
            ));
        }
    }
    (Some(snap), errors)
}

pub async fn validate(_reg: Registry, _ctx: RequestContext, req: ValidateRequest) -> Result<ValidateResponse> {
    let (_, errors) = problems(&req.snapshot);
    Ok(ValidateResponse {
        valid: errors.is_empty(),
        errors,
    })
}

/// Imports every session of a snapshot in one transaction. `fail` (default) imports nothing if
/// any session exists; `skip` leaves existing ones alone; `overwrite` replaces them. A session
/// that cannot be written (e.g. a message id already used elsewhere) is reported in `errors`
/// and rolled back on its own savepoint; the others still land.
pub async fn import(reg: Registry, ctx: RequestContext, req: ImportRequest) -> Result<ImportResponse> {
    let raw = serde_json::to_value(&req.snapshot).map_err(|e| RegistryError::Invalid(e.to_string()))?;
    let (_, errors) = problems(&raw);
    if !errors.is_empty() {
        return Err(RegistryError::InvalidWith {
            message: format!("snapshot is invalid: {}", errors.join("; ")),
            details: serde_json::json!({ "errors": errors }),
        });
    }
    let snap = req.snapshot;
    let mut change = Change::begin(&reg).await?;
    let mut out = ImportResponse::default();
    let mut existing = Vec::new();
    // Locked in id order, as merge does, so concurrent imports and merges cannot deadlock.
    let mut ids: Vec<&str> = snap.sessions.iter().map(|s| s.session_id.as_str()).collect();
    ids.sort_unstable();
    let (mut purged, mut elsewhere) = (Vec::new(), Vec::new());
    for id in ids {
        match store::lock_session(change.conn(), id).await? {
            // Ids are global: one taken in another workspace is never overwritten from here.
            Some(_) if !crate::scope::sees_session(change.conn(), &ctx, id).await? => elsewhere.push(id.to_string()),
            Some(store::Stored::Purged) => purged.push(id.to_string()),
            Some(store::Stored::Live(_)) => existing.push(id.to_string()),
            None => {}
        }
    }
    if req.on_conflict == OnConflict::Fail && !existing.is_empty() {
        return Err(RegistryError::Conflict(format!(
            "sessions already exist: {} (use onConflict skip or overwrite)",
            existing.join(", ")
        )));
    }
    for s in &snap.sessions {
        // A purged id stays taken: not even overwrite brings it back.
        if purged.contains(&s.session_id) || elsewhere.contains(&s.session_id) {
            let error = match purged.contains(&s.session_id) {
                true => format!("session {} was purged; its id cannot be reused", s.session_id),
                false => format!("session id {} is taken", s.session_id),
            };
            out.errors.push(ImportError {
                session_id: s.session_id.clone(),
                error,
            });
            continue;
        }
        let exists = existing.contains(&s.session_id);
        if exists && req.on_conflict == OnConflict::Skip {
            out.skipped.push(s.session_id.clone());
            continue;
        }
        // What the runner holds for the session this one replaces goes once the import worked;
        // the imported session's own entries come after this mark.
        let replaced_through = match exists {
            true => Some(crate::handoff::watermark(change.conn()).await?),
            false => None,
        };
        let workspace = change.workspace.clone();
        let mut sp = sqlx::Connection::begin(change.conn()).await?;
        match import_one(&mut sp, &snap, s, exists, &workspace).await {
            Ok(()) => {
                sp.commit().await?;
                if let Some(through_seq) = replaced_through {
                    crate::lifecycle::purge_deliveries(&reg, change.conn(), &s.session_id, through_seq).await?;
                }
                out.imported.push(s.session_id.clone());
            }
            Err(e) => {
                sp.rollback().await?;
                out.errors.push(ImportError {
                    session_id: s.session_id.clone(),
                    error: e.to_string(),
                });
            }
        }
    }
    for s in snap.sessions.iter().filter(|s| out.imported.contains(&s.session_id)) {
        let created = created_event(s);
        change.emit(&s.session_id, created).await?;
    }
    change.commit().await?;
    Ok(out)
}

async fn import_one(
    conn: &mut sqlx::PgConnection,
    snap: &Snapshot,
    s: &Session,
    replace: bool,
    workspace: &str,
) -> Result<()> {
    if replace {
        store::delete_session(conn, &s.session_id).await?;
    }
    let mut session = s.clone();
    session.is_imported = Some(true);
    session.preview = None;
    store::insert_session(conn, &session, workspace).await?;
    let agents = snap.agents.iter().filter(|a| a.session_id == s.session_id);
    for agent in s.agents.iter().chain(agents).fold(Vec::<&Agent>::new(), |mut v, a| {
        if !v.iter().any(|x| x.agent_id == a.agent_id) {
            v.push(a);
        }
        v
    }) {
        store::insert_agent(conn, agent).await?;
    }
    for turn in snap.turns.iter().filter(|t| t.session_id == s.session_id) {
        store::insert_turn(conn, turn).await?;
    }
    for message in snap.messages.iter().filter(|m| m.session_id == s.session_id) {
        store::insert_message(conn, message, &[]).await?;
    }
    for e in snap.events.iter().flatten().filter(|e| e.session_id == s.session_id) {
        sqlx::query(
            "INSERT INTO registry_events (event_id, session_id, type, ts, payload) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (event_id) DO NOTHING",
        )
        .bind(&e.event_id)
        .bind(&e.session_id)
        .bind(&e.event_type)
        .bind(e.timestamp)
        .bind(&e.payload)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}
