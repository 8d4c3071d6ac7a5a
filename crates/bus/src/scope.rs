//! Workspace isolation for handlers that take ids: a caller confined to a workspace (a key
//! through the gateway, an agent) gets `not_found` for anything of another workspace, exactly
//! as for something that never existed. A service says where each kind of id lives
//! ([`Scope::workspace_of`]); [`scoped`] checks the ids a request names before its handler runs.
//! Lists filter in their own SQL.

use crate::service::Handler;
use relay_contracts::{ErrorCode, RequestContext, Rpc, WireError};
use std::future::Future;

/// Where the things a service's requests name by id live.
pub trait Scope: Clone + Send + Sync + 'static {
    /// The workspace of what a field of kind `field` (`sessionId`, `agentId`, `deliveryId`, …)
    /// names; `None` when unknown here (the handler then answers as it does for unknown ids) or
    /// when the kind is not one this service scopes. A qualified field is asked by its kind
    /// ([`kind`]): `sourceSessionId` and `parentSessionId` as `sessionId`.
    fn workspace_of(&self, field: &str, id: &str) -> impl Future<Output = Result<Option<String>, WireError>> + Send;

    /// What this service's own not-found errors call a thing of kind `kind` (`sessionId` →
    /// `session`): the refusal of another workspace's id must read exactly as the handler's
    /// answer for an unknown one.
    fn noun(&self, kind: &str) -> String {
        kind.trim_end_matches("Id").to_string()
    }
}

/// `not_found` when the request names, at its top level, something of another workspace.
pub async fn check<S: Scope, T: serde::Serialize>(state: &S, ctx: &RequestContext, req: &T) -> Result<(), WireError> {
    let Some(scope) = ctx.scope() else {
        return Ok(());
    };
    let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(req) else {
        return Ok(());
    };
    for (field, value) in &fields {
        let Some(id) = value.as_str().filter(|_| field.ends_with("Id")) else {
            continue;
        };
        let kind = kind(field);
        if let Some(w) = state.workspace_of(&kind, id).await?
            && w != scope
        {
            let what = state.noun(&kind);
            return Err(WireError::new(ErrorCode::NotFound, format!("{what} {id} not found")));
        }
    }
    Ok(())
}

/// Fields that read like an id of the mesh but name something outside it, never checked: the
/// agent CLI's own session (`adapterSessionId`).
const FOREIGN: &[&str] = &["adapterSessionId"];

/// The kind of id a field holds: its last camelCase word and `Id` (`sourceSessionId` →
/// `sessionId`), so a field a service did not foresee is still checked as what it names.
pub fn kind(field: &str) -> String {
    if FOREIGN.contains(&field) {
        return field.to_string();
    }
    let stem = field.strip_suffix("Id").unwrap_or(field);
    match stem.rfind(|c: char| c.is_ascii_uppercase()) {
        Some(i) => {
            let (first, rest) = stem[i..].split_at(1);
            format!("{}{rest}Id", first.to_ascii_lowercase())
        }
        None => field.to_string(),
    }
}

/// `handler`, behind [`check`].
pub fn scoped<R: Rpc, S: Scope, H: Handler<R, S>>(handler: H) -> impl Handler<R, S> {
    move |state: S, ctx: RequestContext, req: R::Request| {
        let handler = handler.clone();
        async move {
            check(&state, &ctx, &req).await?;
            handler.call(state, ctx, req).await.map_err(Into::into)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_qualified_id_field_is_checked_as_the_kind_it_names() {
        for (field, kind) in [
            ("sessionId", "sessionId"),
            ("sourceSessionId", "sessionId"),
            ("parentSessionId", "sessionId"),
            ("targetAgentId", "agentId"),
            ("deliveryId", "deliveryId"),
            ("adapterSessionId", "adapterSessionId"),
        ] {
            assert_eq!(super::kind(field), kind);
        }
    }
}
