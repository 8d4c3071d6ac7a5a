//! Fork, merge, abandon, children, and snapshots (export, validate, import).

mod common;
use common::Mesh;
use serde_json::{Value, json};

fn claude() -> Value {
    json!({"kind": "adapter", "adapterName": "claude"})
}

async fn say(m: &Mesh, session: &str, text: &str) -> String {
    let body = json!({"sessionId": session, "agent": claude(), "message": text});
    m.ok("session.sendMessage", body).await["messageId"]
        .as_str()
        .unwrap()
        .to_string()
}

fn texts(messages: &Value) -> Vec<String> {
    messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["contentText"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn fork_references_the_parent_without_copying_messages() {
    let m = common::start(1).await;
    let one = say(&m, "main", "one").await;
    say(&m, "main", "two").await;

    let whole = m
        .ok(
            "session.fork",
            json!({"sourceSessionId": "main", "name": "Alternative"}),
        )
        .await["sessionId"]
        .clone();
    let early = m
        .ok("session.fork", json!({"sourceSessionId": "main", "fromMessageId": one, "branchKind": "aside", "existingSessionId": "early"}))
        .await["sessionId"]
        .clone();
    assert_eq!(early, "early");
    // Later messages in the parent do not leak into forks made before them.
    say(&m, "main", "three").await;

    let child = m.ok("session.get", json!({"sessionId": whole})).await["session"].clone();
    assert_eq!(child["parentSessionId"], "main");
    assert_eq!(child["rootSessionId"], "main");
    assert_eq!(child["branchKind"], "fork");
    assert_eq!(child["title"], "Alternative");
    assert_eq!(child["agents"], json!([]), "a fork starts with no agents");

    assert_eq!(
        texts(&m.ok("session.messages", json!({"sessionId": whole})).await),
        ["one", "two"]
    );
    assert_eq!(
        texts(&m.ok("session.messages", json!({"sessionId": "early"})).await),
        ["one"]
    );
    assert_eq!(
        texts(
            &m.ok(
                "session.messages",
                json!({"sessionId": "early", "includeAncestors": false})
            )
            .await
        ),
        Vec::<String>::new()
    );

    // Continue the fork, then fork the fork: the chain is walked up to the root.
    m.ok("session.agent.attach", json!({"sessionId": whole, "agent": claude()}))
        .await;
    say(&m, whole.as_str().unwrap(), "branch-a").await;
    let grandchild = m.ok("session.fork", json!({"sourceSessionId": whole})).await["sessionId"].clone();
    let g = m.ok("session.get", json!({"sessionId": grandchild})).await["session"].clone();
    assert_eq!(g["rootSessionId"], "main");
    assert_eq!(
        texts(&m.ok("session.messages", json!({"sessionId": grandchild})).await),
        ["one", "two", "branch-a"]
    );

    // The source's storage was not copied into.
    assert_eq!(
        texts(&m.ok("session.messages", json!({"sessionId": "main"})).await),
        ["one", "two", "three"]
    );

    let kids = m.ok("session.getChildren", json!({"sessionId": "main"})).await["children"].clone();
    assert_eq!(kids.as_array().unwrap().len(), 2);
    let w = kids
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["sessionId"] == whole)
        .unwrap();
    assert_eq!(w["hasChildren"], true);
    assert_eq!(w["messageCount"], 1);
    assert_eq!(w["branchKind"], "fork");
    let e = kids
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["sessionId"] == "early")
        .unwrap();
    assert_eq!(e["hasChildren"], false);
    assert_eq!(e["branchKind"], "aside");
    assert_eq!(e["forkPointMessageId"], json!(one));

    m.err("session.fork", json!({"sourceSessionId": "ghost"}), "not_found")
        .await;
    m.err(
        "session.fork",
        json!({"sourceSessionId": "main", "fromMessageId": "ghost"}),
        "not_found",
    )
    .await;
    m.err(
        "session.fork",
        json!({"sourceSessionId": "main", "existingSessionId": "early"}),
        "conflict",
    )
    .await;
    m.err(
        "session.fork",
        json!({"sourceSessionId": "main", "branchKind": "subagent"}),
        "invalid_request",
    )
    .await;
}

#[tokio::test]
async fn merge_hands_off_the_branch_result_and_closes_it() {
    let m = common::start(1).await;
    say(&m, "parent", "plan").await;
    let child = m.ok("session.fork", json!({"sourceSessionId": "parent"})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();

    let merged = m
        .ok(
            "session.merge",
            json!({"parentSessionId": "parent", "childSessionId": child, "summary": "Use approach B"}),
        )
        .await;
    assert_eq!(merged, json!({"success": true, "handoff": "Use approach B"}));
    let c = m.ok("session.get", json!({"sessionId": child})).await["session"].clone();
    assert_eq!(c["status"], "closed");
    assert_eq!(c["summary"], "Use approach B");

    let e = m
        .err(
            "session.merge",
            json!({"parentSessionId": "parent", "childSessionId": child}),
            "conflict",
        )
        .await;
    assert!(e.error.message.contains("already merged"), "{e}");
    m.err(
        "session.abandon",
        json!({"parentSessionId": "parent", "childSessionId": child}),
        "conflict",
    )
    .await;
    m.ok("session.create", json!({"sessionId": "stranger"})).await;
    let e = m
        .err(
            "session.merge",
            json!({"parentSessionId": "parent", "childSessionId": "stranger"}),
            "conflict",
        )
        .await;
    assert!(e.error.message.contains("not a child"), "{e}");
    m.err(
        "session.merge",
        json!({"parentSessionId": "parent", "childSessionId": "ghost"}),
        "not_found",
    )
    .await;
    m.err(
        "session.merge",
        json!({"parentSessionId": "parent", "childSessionId": "parent"}),
        "invalid_request",
    )
    .await;
}

#[tokio::test]
async fn abandon_closes_the_branch_without_a_handoff() {
    let m = common::start(1).await;
    m.ok("session.create", json!({"sessionId": "p"})).await;
    m.ok(
        "session.create",
        json!({"sessionId": "c", "parentSessionId": "p", "branchKind": "subagent"}),
    )
    .await;
    assert_eq!(
        m.ok(
            "session.abandon",
            json!({"parentSessionId": "p", "childSessionId": "c"})
        )
        .await,
        json!({"success": true})
    );
    assert_eq!(
        m.ok("session.get", json!({"sessionId": "c"})).await["session"]["status"],
        "closed"
    );
    m.err(
        "session.merge",
        json!({"parentSessionId": "p", "childSessionId": "c"}),
        "conflict",
    )
    .await;
}

#[tokio::test]
async fn purge_of_a_parent_with_live_children_is_refused() {
    let m = common::start(1).await;
    say(&m, "p", "x").await;
    let c = m.ok("session.fork", json!({"sourceSessionId": "p"})).await["sessionId"].clone();
    m.ok("session.close", json!({"sessionId": "p"})).await;
    m.ok("session.archive", json!({"sessionId": "p"})).await;
    let e = m.err("session.purge", json!({"sessionId": "p"}), "conflict").await;
    assert!(e.error.message.contains("child"), "{e}");
    for step in ["session.close", "session.archive", "session.purge"] {
        m.ok(step, json!({"sessionId": c})).await;
    }
    m.ok("session.purge", json!({"sessionId": "p"})).await;
}

#[tokio::test]
async fn snapshot_export_then_import_elsewhere_restores_the_session() {
    let src = common::start(1).await;
    say(&src, "root", "in the root").await;
    let child = src
        .ok(
            "session.fork",
            json!({"sourceSessionId": "root", "existingSessionId": "kid"}),
        )
        .await["sessionId"]
        .clone();
    src.ok("session.agent.attach", json!({"sessionId": child, "agent": claude()}))
        .await;
    let tool =
        json!({"blocks": [{"type": "text", "text": "with tool"}, {"type": "tool_result", "output": "secret output"}]});
    src.ok("session.sendMessage", json!({"sessionId": child, "message": tool}))
        .await;

    let plain = src.ok("session.snapshot.export", json!({"sessionId": child})).await["snapshot"].clone();
    assert_eq!(plain["version"], "1.0");
    let ids: Vec<_> = plain["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].clone())
        .collect();
    assert_eq!(
        ids,
        vec![json!("root"), json!("kid")],
        "ancestors are included by default, oldest first"
    );
    assert!(plain.get("events").is_none());
    let with_tool = plain["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["contentText"] == "with tool")
        .unwrap();
    assert_eq!(
        with_tool["blocks"].as_array().unwrap().len(),
        1,
        "tool outputs are left out by default"
    );

    let full = src
        .ok("session.snapshot.export", json!({"sessionId": "root", "options": {"includeChildren": true, "includeEvents": true, "includeToolOutputs": true}}))
        .await["snapshot"]
        .clone();
    assert_eq!(full["sessions"].as_array().unwrap().len(), 2);
    assert!(full["events"].as_array().unwrap().iter().any(|e| e["type"] == "forked"));
    assert_eq!(
        src.ok("session.snapshot.validate", json!({"snapshot": full})).await,
        json!({"valid": true, "errors": []})
    );

    let dst = common::start(1).await;
    let imported = dst.ok("session.snapshot.import", json!({"snapshot": full})).await;
    assert_eq!(
        imported,
        json!({"imported": ["root", "kid"], "skipped": [], "errors": []})
    );
    let kid = dst.ok("session.get", json!({"sessionId": "kid"})).await["session"].clone();
    assert_eq!(kid["isImported"], true);
    assert_eq!(kid["agents"].as_array().unwrap().len(), 1);
    assert_eq!(
        texts(&dst.ok("session.messages", json!({"sessionId": "kid"})).await),
        ["in the root", "with tool"]
    );
    assert_eq!(
        dst.ok("session.turns", json!({"sessionId": "kid"})).await["turns"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let found = dst
        .ok("session.search", json!({"query": "root", "isImported": true}))
        .await;
    assert_eq!(found["total"], 1);

    // Conflicts: fail imports nothing, skip leaves existing ones, overwrite replaces them.
    let e = dst
        .err("session.snapshot.import", json!({"snapshot": full}), "conflict")
        .await;
    assert!(
        e.error.message.contains("root") && e.error.message.contains("kid"),
        "{e}"
    );
    let skipped = dst
        .ok(
            "session.snapshot.import",
            json!({"snapshot": full, "onConflict": "skip"}),
        )
        .await;
    assert_eq!(
        skipped,
        json!({"imported": [], "skipped": ["root", "kid"], "errors": []})
    );
    dst.ok(
        "session.update",
        json!({"sessionId": "root", "title": "changed locally"}),
    )
    .await;
    let over = dst
        .ok(
            "session.snapshot.import",
            json!({"snapshot": full, "onConflict": "overwrite"}),
        )
        .await;
    assert_eq!(over["imported"], json!(["root", "kid"]));
    assert!(
        dst.ok("session.get", json!({"sessionId": "root"})).await["session"]
            .get("title")
            .is_none()
    );
    assert_eq!(
        texts(&dst.ok("session.messages", json!({"sessionId": "kid"})).await),
        ["in the root", "with tool"]
    );
}

#[tokio::test]
async fn snapshot_validate_lists_every_problem() {
    let m = common::start(1).await;
    let r = m
        .ok("session.snapshot.validate", json!({"snapshot": {"version": "1.0"}}))
        .await;
    assert_eq!(r["valid"], false);
    assert!(r["errors"][0].as_str().unwrap().contains("missing field"), "{r}");

    say(&m, "s", "hello").await;
    let mut snap = m.ok("session.snapshot.export", json!({"sessionId": "s"})).await["snapshot"].clone();
    snap["version"] = json!("2.0");
    let dup = snap["messages"][0].clone();
    snap["messages"].as_array_mut().unwrap().push(dup);
    snap["turns"] = json!([]);
    let r = m.ok("session.snapshot.validate", json!({"snapshot": snap})).await;
    let errors: Vec<String> = serde_json::from_value(r["errors"].clone()).unwrap();
    assert_eq!(r["valid"], false);
    assert!(errors.iter().any(|e| e.contains("version")), "{errors:?}");
    assert!(errors.iter().any(|e| e.contains("appears twice")), "{errors:?}");
    assert!(errors.iter().any(|e| e.contains("not in the snapshot")), "{errors:?}");

    // Import refuses the same snapshot with the same reasons.
    let e = m
        .err(
            "session.snapshot.import",
            json!({"snapshot": snap, "onConflict": "overwrite"}),
            "invalid_request",
        )
        .await;
    assert_eq!(
        e.error.details.as_ref().unwrap()["errors"].as_array().unwrap().len(),
        errors.len()
    );
    m.err(
        "session.snapshot.import",
        json!({"snapshot": {"version": "1.0"}}),
        "invalid_request",
    )
    .await;
    m.err("session.snapshot.export", json!({"sessionId": "ghost"}), "not_found")
        .await;
}

#[tokio::test]
async fn snapshots_with_parent_cycles_or_purged_ids_are_refused() {
    let m = common::start(1).await;
    say(&m, "a", "hi").await;
    let mut snap = m.ok("session.snapshot.export", json!({"sessionId": "a"})).await["snapshot"].clone();
    snap["sessions"][0]["parentSessionId"] = json!("a");
    let r = m.ok("session.snapshot.validate", json!({"snapshot": snap})).await;
    assert!(
        r["errors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e.as_str().unwrap().contains("own ancestor")),
        "{r}"
    );

    // A purged id stays taken, even for overwrite.
    let clean = m.ok("session.snapshot.export", json!({"sessionId": "a"})).await["snapshot"].clone();
    for step in ["session.close", "session.archive", "session.purge"] {
        m.ok(step, json!({"sessionId": "a"})).await;
    }
    let r = m
        .ok(
            "session.snapshot.import",
            json!({"snapshot": clean, "onConflict": "overwrite"}),
        )
        .await;
    assert_eq!(r["imported"], json!([]));
    assert!(r["errors"][0]["error"].as_str().unwrap().contains("purged"), "{r}");
    assert_eq!(
        m.ok("session.get", json!({"sessionId": "a"})).await,
        json!({"session": null})
    );
}
