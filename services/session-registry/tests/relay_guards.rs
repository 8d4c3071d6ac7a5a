//! The guards of relay messaging, as a sender meets them: a conversation takes at most
//! `messaging.max_per_minute` messages a minute, counted exactly even when the sends race, and
//! the next one is `unavailable` (try again shortly), saying which guard; other conversations are
//! not held up by it, and the conversation takes messages again once the minute has passed.

mod common;
use relay_testkit::Cluster;
use serde_json::json;

const PER_MINUTE: usize = 3;

async fn mesh() -> Cluster {
    let env = [
        ("RELAY_REGISTRY__PURGE_EVENT_LOG", "false"),
        ("RELAY_REGISTRY__FORWARD_EVENTS", "false"),
        ("RELAY_REGISTRY__HAND_OVER_DELIVERIES", "false"),
        ("RELAY_REGISTRY__MESSAGING__MAX_PER_MINUTE", "3"),
    ];
    Cluster::start(common::BIN, "session-registry", 1, &env).await
}

fn note(to: &str, i: usize) -> serde_json::Value {
    json!({"to": to, "text": format!("note {i}")})
}

#[tokio::test]
async fn a_conversation_takes_max_per_minute_messages_even_when_sends_race_then_is_unavailable_until_the_minute_passes()
{
    let m = mesh().await;
    let caps = json!({"messaging": {"receive": true}, "delivery": {"modes": ["immediate"]},
                      "events": {"emits": []}, "lifecycle": {"release": true}});
    for handle in ["reader", "other"] {
        let session = common::create(&m).await;
        common::attach(&m, &session, handle, caps.clone()).await;
    }

    // Ten sends at once to one conversation: the guard counts under the conversation's lock, so
    // exactly its bound get through, whatever the interleaving.
    let sends = (0..10).map(|i| m.call("message.send", note("@reader", i)));
    let results = futures::future::join_all(sends).await;
    let taken = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(taken, PER_MINUTE, "{results:?}");
    for refused in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(refused.code(), relay_contracts::ErrorCode::Unavailable, "{refused}");
        assert!(
            refused.error.message.contains("messaging.max_per_minute is 3"),
            "says which guard: {refused}"
        );
    }
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM registry_relay_messages WHERE conversation LIKE 'dm:%reader%'")
            .fetch_one(&m.db.pool().await)
            .await
            .unwrap();
    assert_eq!(stored, PER_MINUTE as i64, "a refused send stores nothing");

    // Another conversation is not held up by this one.
    m.ok("message.send", note("@other", 0)).await;

    // A minute later (the stored messages made older), the conversation takes messages again.
    sqlx::query(
        "UPDATE registry_relay_messages SET created_at = created_at - 61000 WHERE conversation LIKE 'dm:%reader%'",
    )
    .execute(&m.db.pool().await)
    .await
    .unwrap();
    m.ok("message.send", note("@reader", 10)).await;
}
