//! Postgres: one pool per service, created with retries, and the embedded migrations.
//!
//! All services share `migrations/` (one schema, tables prefixed by their owner); each runs the
//! migrator at start. sqlx takes an advisory lock, so replicas starting together are safe.

use crate::settings::DatabaseSettings;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use std::time::Duration;

pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

/// The migrations of this build, as every service and `relayctl migrate` run them. A database a
/// newer build has migrated further is accepted: during a rolling upgrade, an older replica
/// that restarts must not refuse to start because a newer one migrated first (migrations only
/// add, so the old code still fits the schema).
pub fn migrator() -> sqlx::migrate::Migrator {
    let mut m = sqlx::migrate!("../../migrations");
    m.set_ignore_missing(true);
    m
}

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("cannot connect to Postgres at {url}: {source}")]
    Connect { url: String, source: sqlx::Error },
    #[error("migrations failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// Opens the pool, waiting for Postgres to come up, and migrates when configured to.
pub async fn connect(settings: &DatabaseSettings) -> Result<PgPool, DbError> {
    let invalid = |source| DbError::Connect {
        url: redact(&settings.url),
        source,
    };
    let options = connect_options(&settings.url).map_err(invalid)?;
    let mut attempt = 1u32;
    let pool = loop {
        let opened = PgPoolOptions::new()
            .max_connections(settings.max_connections)
            .acquire_timeout(Duration::from_secs(5))
            .after_connect(|conn, _| Box::pin(refuse_read_only(conn)))
            .connect_with(options.clone())
            .await;
        match opened {
            Ok(pool) => break pool,
            Err(source) if attempt >= settings.connect_attempts => {
                return Err(DbError::Connect {
                    url: redact(&settings.url),
                    source,
                });
            }
            Err(e) => {
                tracing::warn!(url = %redact(&settings.url), error = %e, attempt, "Postgres not reachable yet, retrying")
            }
        }
        attempt += 1;
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    if settings.migrate {
        migrator().run(&pool).await?;
        tracing::info!(migrations = MIGRATOR.iter().count(), "database schema is current");
    }
    Ok(pool)
}

/// Whether the server takes writes: not a standby in recovery, nor read-only by default.
pub async fn is_writable(conn: &mut sqlx::PgConnection) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT NOT (pg_is_in_recovery() OR current_setting('default_transaction_read_only')::bool)")
        .fetch_one(conn)
        .await
}

/// A read-only server (a standby, say, reached before a failover moved the address) is not the
/// database: its connection is refused, so the pool connects again (and, through an address
/// that follows the primary, finds the promoted one) instead of failing every write.
async fn refuse_read_only(conn: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
    if is_writable(conn).await? {
        return Ok(());
    }
    Err(sqlx::Error::Configuration(
        "the server is read-only (a standby in recovery, or default_transaction_read_only): relay-mesh needs the primary".into(),
    ))
}

/// Connection options for `url` with the session settings every service runs with.
pub fn connect_options(url: &str) -> Result<PgConnectOptions, sqlx::Error> {
    let options: PgConnectOptions = url.parse()?;
    // Planner costs for SSD storage (what managed Postgres runs on). With the default 4.0 the
    // planner walks the whole `seq` index past every delivered row instead of the small
    // partial index of waiting deliveries (40× slower at 20,000 rows, worse as the table grows).
    Ok(options.options([("random_page_cost", "1.1")]))
}

/// Hides a password in a connection URL before it reaches a log line.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => match url[s + 3..at].find(':') {
            Some(colon) => format!("{}:***{}", &url[..s + 3 + colon], &url[at..]),
            None => url.to_string(),
        },
        _ => url.to_string(),
    }
}

/// The wire error for a database error, the same in every service: `unavailable` when a retry
/// may succeed, `invalid_request` for text Postgres cannot store (a NUL character, which JSON
/// allows as `\u0000`), else `internal`, logged here since the caller only sees the code.
pub fn wire_error(e: &sqlx::Error) -> relay_contracts::WireError {
    use relay_contracts::{ErrorCode, WireError};
    match e {
        e if is_transient(e) => WireError::new(ErrorCode::Unavailable, "database unavailable or busy, retry"),
        // 22021: a NUL in a text parameter; 22P05: a \u0000 inside jsonb.
        sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("22021" | "22P05")) => WireError::new(
            ErrorCode::InvalidRequest,
            "strings must not contain the NUL character (\\u0000)",
        ),
        _ => {
            tracing::error!(error = %e, "database error");
            WireError::new(ErrorCode::Internal, "internal database error")
        }
    }
}

/// [`wire_error`], but a unique violation is `conflict`: two replicas raced to create the same
/// row, and the loser reports what a caller can act on.
pub fn wire_error_or_conflict(e: &sqlx::Error) -> relay_contracts::WireError {
    match e {
        sqlx::Error::Database(db) if db.is_unique_violation() => relay_contracts::WireError::new(
            relay_contracts::ErrorCode::Conflict,
            format!("already exists ({})", db.constraint().unwrap_or("unique")),
        ),
        e => wire_error(e),
    }
}

/// Whether a database error may go away on retry: Postgres down or busy, or a deadlock or
/// serialization failure that rolled this transaction back. Such errors map to `unavailable`.
///
/// A failover adds its own: the server shutting down or starting (57P01-57P03), a connection
/// lost or refused (class 08, but for a protocol violation, 08P01, which is a bug, and an
/// unknown commit outcome, 08007, which a retry could apply twice), a write that reached the old
/// primary as it became read-only (25006), and a proxy in front of the servers that accepts a
/// connection while no primary is there and closes it before the server's first byte (sqlx:
/// "unexpected response from SSLRequest"). Other protocol errors are bugs, not transient.
pub fn is_transient(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::PoolClosed => true,
        sqlx::Error::Protocol(m) => m.contains("SSLRequest"),
        sqlx::Error::Database(db) => db.code().is_some_and(|c| {
            matches!(c.as_ref(), "40P01" | "40001" | "57P01" | "57P02" | "57P03" | "25006")
                || (c.starts_with("08") && !matches!(c.as_ref(), "08P01" | "08007"))
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_connection_closed_before_the_server_answered_is_transient_other_protocol_errors_are_not() {
        let closed = sqlx::Error::Protocol("unexpected response from SSLRequest: 0x00".into());
        assert!(super::is_transient(&closed));
        assert!(!super::is_transient(&sqlx::Error::Protocol(
            "unknown message type: 'x'".into()
        )));
    }

    #[test]
    fn redact_hides_only_the_password() {
        assert_eq!(super::redact("postgres://u:secret@h/db"), "postgres://u:***@h/db");
        assert_eq!(super::redact("postgres://u@h/db"), "postgres://u@h/db");
    }
}

/// A text column holding an enum by its wire name (`pending`, `next-tool-call`, `critical`):
/// decoded with the enum's serde names. An unknown value is a decode error (the request
/// answers `internal` and the log names the value), never a silent default. The one way every
/// service turns text columns into enums, in `#[derive(sqlx::FromRow)]` rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextEnum<T>(pub T);

impl<T> sqlx::Type<sqlx::Postgres> for TextEnum<T> {
    fn type_info() -> sqlx::postgres::PgTypeInfo {
        <String as sqlx::Type<sqlx::Postgres>>::type_info()
    }

    fn compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
        <String as sqlx::Type<sqlx::Postgres>>::compatible(ty)
    }
}

impl<'r, T: serde::de::DeserializeOwned> sqlx::Decode<'r, sqlx::Postgres> for TextEnum<T> {
    fn decode(value: sqlx::postgres::PgValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        let text = <&str as sqlx::Decode<sqlx::Postgres>>::decode(value)?;
        serde_json::from_value(serde_json::Value::String(text.to_owned()))
            .map(TextEnum)
            .map_err(|e| format!("unknown value {text:?} ({}): {e}", std::any::type_name::<T>()).into())
    }
}
