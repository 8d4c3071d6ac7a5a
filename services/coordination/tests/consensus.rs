//! Consensus over the wire (auth on): a question put to a channel or to named agents, asked
//! with a relay message, voted on by the agents through their harness identities; it resolves
//! at the quorum, expires at its deadline, or is cancelled by its proposer.

mod common;
use relay_contracts::{Caller, RequestContext};
use relay_testkit::{AsAgent, wait_for};
use serde_json::{Value, json};

/// Attaches an agent with `handle` to `session` that sends and receives messages; its id.
async fn attach(m: &common::Mesh, session: &str, handle: &str) -> String {
    let caps = json!({"messaging": {"receive": true, "send": true}, "delivery": {"modes": ["immediate"]},
                      "events": {"emits": ["status.changed"]}, "lifecycle": {"release": true}});
    common::attach(m, session, handle, caps).await
}

/// The types of the events of proposal `id`, in order.
async fn steps(m: &common::Mesh, id: &str) -> Vec<String> {
    common::event_types(m, "proposalId", id).await
}

fn vote(id: &str, choice: &str) -> Value {
    json!({"proposalId": id, "choice": choice})
}

#[tokio::test]
async fn a_proposal_resolves_at_its_quorum_expires_at_its_deadline_or_is_cancelled_by_its_proposer() {
    let m = common::start(1).await;
    let session = common::create(&m).await;
    let mut agents = Vec::new();
    for handle in ["alice", "bob", "carol", "dave"] {
        agents.push(AsAgent::connect(&m.nats, &attach(&m, &session, handle).await).await);
    }
    let [alice, bob, carol, dave] = &agents[..] else {
        unreachable!()
    };
    m.ok("channel.create", json!({"name": "ops"})).await;
    for who in ["@alice", "@bob", "@carol", "@dave"] {
        m.ok("channel.join", json!({"channel": "ops", "agent": who})).await;
    }

    // alice asks #ops: bob, carol and dave vote (not alice); 2 of 3 decide. Each is asked with
    // a relay message from alice.
    let asked =
        json!({"proposalId": "p-ship", "question": "Ship 1.4 today?", "options": ["ship", "wait"], "to": "#ops"});
    let p = alice.ok("consensus.propose", asked.clone()).await;
    assert_eq!(p["status"], "open", "{p}");
    assert_eq!(p["quorum"], 2, "{p}");
    let voters: Vec<&str> = p["voters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["handle"].as_str().unwrap())
        .collect();
    assert_eq!(voters, ["bob", "carol", "dave"], "{p}");
    let message = m.ok("message.get", json!({"messageId": p["messageId"]})).await;
    assert_eq!(message["from"]["handle"], "alice", "{message}");
    assert_eq!(message["recipients"].as_array().unwrap().len(), 3, "{message}");
    assert!(message["text"].as_str().unwrap().contains("relay_vote"), "{message}");
    // Proposing again with the id answers with it (and asks nobody twice).
    let again = alice.ok("consensus.propose", asked).await;
    assert_eq!(again["messageId"], p["messageId"], "{again}");

    let after_one = bob.ok("consensus.vote", vote("p-ship", "ship")).await;
    assert_eq!(after_one["tally"]["ship"], 1, "{after_one}");
    assert!(
        bob.err("consensus.vote", vote("p-ship", "wait"), "conflict")
            .await
            .contains("already voted")
    );
    assert!(
        alice
            .forbidden("consensus.vote", vote("p-ship", "ship"))
            .await
            .contains("not among the voters")
    );
    let bad = carol
        .err("consensus.vote", vote("p-ship", "maybe"), "invalid_request")
        .await;
    assert!(bad.contains("ship | wait"), "{bad}");
    let resolved = carol
        .ok(
            "consensus.vote",
            json!({"proposalId": "p-ship", "choice": "Ship", "reason": "tests pass"}),
        )
        .await;
    assert_eq!(
        (resolved["status"].as_str(), resolved["outcome"].as_str()),
        (Some("resolved"), Some("ship")),
        "{resolved}"
    );
    assert!(
        dave.err("consensus.vote", vote("p-ship", "wait"), "conflict")
            .await
            .contains("resolved")
    );
    assert_eq!(
        steps(&m, "p-ship").await,
        [
            "consensus.proposed",
            "consensus.voted",
            "consensus.voted",
            "consensus.resolved"
        ]
    );

    // An operator's question to two agents, with a short deadline: one vote, then it expires.
    let short = json!({"proposalId": "p-late", "question": "Rotate keys?", "options": ["yes", "no"],
                       "to": ["@bob", "@carol"], "timeoutMs": 400});
    let by_key = RequestContext::new(Caller::Operator("k-ops".into()), "default");
    let p = relay_bus::context::act_as(by_key, m.call("consensus.propose", short))
        .await
        .unwrap();
    assert_eq!(
        (p["proposer"].as_str(), p["quorum"].as_i64()),
        (Some("key:k-ops"), Some(2)),
        "{p}"
    );
    bob.ok("consensus.vote", vote("p-late", "yes")).await;
    let expired = wait_for(|| async {
        let p = m.ok("consensus.get", json!({"proposalId": "p-late"})).await;
        (p["status"] == "expired").then_some(p)
    })
    .await;
    assert_eq!(expired["outcome"], Value::Null, "{expired}");
    assert!(
        expired["reason"].as_str().unwrap().contains("1 of 2 votes"),
        "{expired}"
    );
    carol.err("consensus.vote", vote("p-late", "no"), "conflict").await;
    assert_eq!(
        steps(&m, "p-late").await,
        ["consensus.proposed", "consensus.voted", "consensus.resolved"]
    );

    // Only its proposer (or a person) cancels.
    let p =
        json!({"proposalId": "p-drop", "question": "Freeze main?", "options": ["yes", "no"], "to": ["@bob", "@dave"]});
    alice.ok("consensus.propose", p).await;
    let refused = bob.forbidden("consensus.cancel", json!({"proposalId": "p-drop"})).await;
    assert!(refused.contains("@alice"), "{refused}");
    let cancelled = alice
        .ok(
            "consensus.cancel",
            json!({"proposalId": "p-drop", "reason": "asked the wrong people"}),
        )
        .await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    dave.err("consensus.vote", vote("p-drop", "yes"), "conflict").await;
    let listed = m.ok("consensus.list", json!({"status": "cancelled"})).await;
    let ids: Vec<&str> = listed["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["proposalId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["p-drop"], "{listed}");

    // Bad proposals change nothing.
    for (body, needle) in [
        (json!({"question": "?", "options": ["only"], "to": "#ops"}), "options"),
        (
            json!({"question": " ", "options": ["a", "b"], "to": "#ops"}),
            "question",
        ),
        (json!({"question": "q", "options": ["a", "a"], "to": "#ops"}), "twice"),
        (
            json!({"question": "q", "options": ["a", "b"], "to": "#ops", "quorum": 5}),
            "quorum",
        ),
        (
            json!({"question": "q", "options": ["a", "b"], "to": "#nowhere"}),
            "nowhere",
        ),
    ] {
        let e = m.call("consensus.propose", body).await.unwrap_err();
        assert!(e.error.message.contains(needle), "{needle}: {e:?}");
    }
    assert_eq!(
        m.ok("consensus.list", json!({})).await["proposals"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}
