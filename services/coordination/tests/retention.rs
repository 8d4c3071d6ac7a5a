//! Bounded growth: finished invocations and decided proposals are deleted `coordination.keep_ms`
//! after they ended; open ones stay, and so does an ended invocation whose invoker is still
//! to be told how it ended.

use relay_testkit::{Database, Nats, ServiceProcess};

#[tokio::test]
async fn finished_invocations_and_decided_proposals_go_after_their_window_and_open_ones_stay() {
    let (nats, db) = (Nats::start().await, Database::create().await);
    let client = nats.client().await;
    // A sweep every 5 s.
    let env = [
        ("RELAY_COORDINATION__FORWARD_EVENTS", "false"),
        ("RELAY_COORDINATION__KEEP_MS", "20000"),
    ];
    let _coordination = ServiceProcess::spawn(env!("CARGO_BIN_EXE_coordination"), &nats, &db, &env);
    relay_testkit::wait_for_instances(&client, "coordination", 1).await;
    let pool = db.pool().await;
    // Long past the window (no API backdates them).
    for q in [
        "INSERT INTO coordination_invocations (workspace, caller, invocation_id, agent_id, doc, tell_pending) VALUES
           ('default', 'key:k', 'done', 'a', '{\"status\": \"completed\", \"completedAt\": 1000}', false),
           ('default', 'agent:b', 'untold', 'a', '{\"status\": \"completed\", \"completedAt\": 1000}', true),
           ('default', 'key:k', 'open', 'a', '{\"status\": \"running\"}', false)",
        "INSERT INTO coordination_proposals (proposal_id, workspace, proposer, status, deadline, created_at, doc) VALUES
           ('decided', 'default', 'key:k', 'resolved', 1000, 900, '{}'),
           ('open', 'default', 'key:k', 'open', 9999999999999, 900, '{}')",
    ] {
        sqlx::query(q).execute(&pool).await.unwrap();
    }
    let left: Vec<String> = relay_testkit::wait_for(|| async {
        let left: Vec<String> = sqlx::query_scalar(
            "SELECT invocation_id FROM coordination_invocations UNION ALL SELECT proposal_id FROM coordination_proposals ORDER BY 1",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        (left.len() == 3).then_some(left)
    })
    .await;
    assert_eq!(
        left,
        ["open", "open", "untold"],
        "finished ones go, open and untold ones stay"
    );
}
