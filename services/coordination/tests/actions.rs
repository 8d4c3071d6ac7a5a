//! Actions over the wire (auth on): an agent exposes them on its own harness subject; each
//! caller lists only those its `availableTo` allows; a released agent's are gone; bad schemas
//! (remote `$ref`s among them) are refused with the reason and change nothing.

mod common;
use relay_contracts::actions::{ActionAnswer, ActionCall};
use relay_contracts::delivery::{MessageContext, Receipt, ReceiptStatus};
use relay_contracts::session::{AgentSelection, Message};
use relay_contracts::{Caller, RequestContext, WireError};
use relay_harness::{AgentSession, AttachOptions, Binding};
use relay_testkit::{AsAgent, ServiceProcess, wait_for};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn caps(expose: bool) -> Value {
    json!({"messaging": {"receive": true}, "delivery": {"modes": ["immediate"]},
           "events": {"emits": ["status.changed"]}, "lifecycle": {"release": true},
           "actions": {"expose": expose, "invoke": true}})
}

/// Attaches an agent with `handle` to `session`; its id.
async fn attach(m: &common::Mesh, session: &str, handle: &str, expose: bool) -> String {
    common::attach(m, session, handle, caps(expose)).await
}

/// The registry with a permission manager whose policies hold `deploy` for a person, refuse
/// `wipe` and let every other action run (each invocation asks them).
async fn mesh() -> (common::Mesh, ServiceProcess) {
    static N: AtomicUsize = AtomicUsize::new(0);
    let m = common::start(1).await;
    let config = std::env::temp_dir().join(format!(
        "relay-action-policies-{}-{}.toml",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let policies = r#"
[[permissions.policies]]
name = "hold-deploy"
tools = ["action"]
command = "^deploy$"
action = "require-human"
risk = "high"

[[permissions.policies]]
name = "no-wipe"
tools = ["action"]
command = "^wipe$"
action = "auto-deny"
risk = "critical"

[[permissions.policies]]
name = "actions"
tools = ["action"]
action = "auto-approve"
risk = "low"
"#;
    std::fs::write(&config, policies).unwrap();
    let config = config.display().to_string();
    let env = [
        ("RELAY_CONFIG", config.as_str()),
        ("RELAY_PERMISSIONS__FORWARD_EVENTS", "false"),
    ];
    let manager = ServiceProcess::spawn(&relay_testkit::bin_path("permission-manager"), &m.nats, &m.db, &env);
    relay_testkit::wait_for_instances(&m.client, "permission-manager", 1).await;
    (m, manager)
}

async fn expose(a: &AsAgent, actions: Value) -> Result<Value, WireError> {
    a.call("action.expose", json!({"agentId": a.agent, "actions": actions}))
        .await
}

/// The names of the actions `a` may invoke.
async fn listed(a: &AsAgent) -> Vec<String> {
    names(&a.call("action.list", json!({})).await.unwrap())
}

fn names(list: &Value) -> Vec<String> {
    list["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_string())
        .collect()
}

/// Six actions of 50 KiB schemas each: every one within the limit, together over it.
fn big_set() -> Value {
    let schema = json!({"type": "object", "description": "x".repeat(50 * 1024)});
    Value::Array(
        (0..6)
            .map(|i| json!({"name": format!("a{i}"), "inputSchema": schema}))
            .collect(),
    )
}

fn object(required: &[&str]) -> Value {
    json!({"type": "object", "required": required, "properties": {"env": {"enum": ["staging", "prod"]}}})
}

#[tokio::test]
async fn exposed_actions_are_listed_to_whom_they_are_available_and_gone_with_their_agent() {
    let m = common::start(1).await;
    let session = common::create(&m).await;
    let alice = attach(&m, &session, "alice", true).await;
    let bob = attach(&m, &session, "bob", false).await;
    let carol = attach(&m, &session, "carol", false).await;
    m.ok("channel.create", json!({"name": "ops"})).await;
    m.ok("channel.join", json!({"channel": "ops", "agent": "@bob"})).await;

    let as_alice = AsAgent::connect(&m.nats, &alice).await;
    let exposed = expose(
        &as_alice,
        json!([
            {"name": "deploy", "description": "Deploys", "inputSchema": object(&["env"]), "availableTo": ["@bob"]},
            {"name": "status", "inputSchema": {"type": "object"}},
            {"name": "rollback", "inputSchema": object(&[]), "availableTo": ["#ops"]},
            {"name": "audit", "inputSchema": {"type": "object", "$defs": {"e": {"type": "string"}},
                                              "properties": {"by": {"$ref": "#/$defs/e"}}},
             "availableTo": ["role:operator"]},
        ]),
    )
    .await
    .unwrap();
    assert_eq!(exposed["actions"][1]["availableTo"], json!(["*"]), "{exposed}");
    assert_eq!(exposed["actions"][0]["handle"], "alice", "{exposed}");

    // Each caller sees what it may invoke: bob by handle and channel, carol what is for all, a
    // person's operator key by role, the operators' tools (admin identity) everything.
    let as_bob = AsAgent::connect(&m.nats, &bob).await;
    assert_eq!(listed(&as_bob).await, ["deploy", "rollback", "status"]);
    let as_carol = AsAgent::connect(&m.nats, &carol).await;
    assert_eq!(listed(&as_carol).await, ["status"]);
    let ctx = RequestContext::new(Caller::Operator("k-test".into()), "default");
    let by_key = relay_bus::context::act_as(ctx, relay_testkit::call_json(&m.client, "action.list", json!({})))
        .await
        .unwrap();
    assert_eq!(names(&by_key), ["audit", "status"]);
    let all = m.ok("action.list", json!({"agent": "@alice"})).await;
    assert_eq!(names(&all), ["audit", "deploy", "rollback", "status"]);

    // The agent's AG-UI document lists them as its tools.
    let agent = m.ok("agent.get", json!({"agent": "@alice"})).await;
    let tools: Vec<&str> = agent["agentCapabilities"]["tools"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["deploy", "status", "rollback", "audit"]);

    // A new set replaces the old; a released agent's actions are gone.
    expose(
        &as_alice,
        json!([{"name": "status", "inputSchema": {"type": "object"}}]),
    )
    .await
    .unwrap();
    assert_eq!(names(&m.ok("action.list", json!({})).await), ["status"]);
    m.ok(
        "session.agent.release",
        json!({"sessionId": session, "agentId": alice, "reason": "done"}),
    )
    .await;
    assert_eq!(names(&m.ok("action.list", json!({})).await), Vec::<String>::new());
}

#[tokio::test]
async fn bad_exposures_are_refused_with_the_reason_and_change_nothing() {
    let m = common::start(1).await;
    let session = common::create(&m).await;
    let alice = attach(&m, &session, "alice", true).await;
    let bob = attach(&m, &session, "bob", false).await;
    let as_alice = AsAgent::connect(&m.nats, &alice).await;
    expose(
        &as_alice,
        json!([{"name": "status", "inputSchema": {"type": "object"}}]),
    )
    .await
    .unwrap();

    // A remote $ref is refused when exposed: the mesh never fetches it (loopback, port 9).
    let remote = expose(
        &as_alice,
        json!([{"name": "fetchy", "inputSchema": {"$ref": "http://127.0.0.1:9/schema.json"}}]),
    )
    .await
    .unwrap_err();
    assert_eq!(remote.error.code.as_str(), "invalid_request", "{remote:?}");
    assert!(remote.error.message.contains("127.0.0.1:9"), "{remote:?}");

    let mut deep = json!({"type": "object"});
    for _ in 0..40 {
        deep = json!({"type": "object", "properties": {"x": deep}});
    }
    let cases = [
        (
            json!([{"name": "bad", "inputSchema": {"type": "nope"}}]),
            "actions[0].inputSchema",
        ),
        (json!([{"name": "9lives", "inputSchema": {}}]), "actions[0].name"),
        (
            json!([{"name": "a", "inputSchema": {}}, {"name": "a", "inputSchema": {}}]),
            "exposed twice",
        ),
        (
            json!([{"name": "a", "inputSchema": {}, "availableTo": ["everyone"]}]),
            "availableTo",
        ),
        (json!([{"name": "a", "inputSchema": deep}]), "deeper than"),
        (json!([{"name": "a", "inputSchema": {}, "extra": 1}]), "extra"),
        (big_set(), "add up to"),
    ];
    for (actions, needle) in cases {
        let e = expose(&as_alice, actions).await.unwrap_err();
        assert_eq!(e.error.code.as_str(), "invalid_request", "{e:?}");
        assert!(e.error.message.contains(needle), "{needle}: {e:?}");
    }

    // bob did not declare actions.expose, and may not expose for alice.
    let as_bob = AsAgent::connect(&m.nats, &bob).await;
    let e = expose(&as_bob, json!([{"name": "a", "inputSchema": {}}]))
        .await
        .unwrap_err();
    assert_eq!(e.error.code.as_str(), "capability_unsupported", "{e:?}");
    let e = as_bob
        .call("action.expose", json!({"agentId": alice, "actions": []}))
        .await
        .unwrap_err();
    assert_eq!(e.error.code.as_str(), "forbidden", "{e:?}");

    // Nothing changed.
    assert_eq!(names(&m.ok("action.list", json!({})).await), ["status"]);
}

/// An in-process agent on the harness SDK serving `add`, `never` (no answer) and `broken`,
/// counting the calls it gets.
#[derive(Default)]
struct Calculator {
    calls: AtomicUsize,
}

impl AgentSession for Calculator {
    async fn receive_message(&self, _message: Message, ctx: MessageContext) -> Receipt {
        relay_harness::receipt(ReceiptStatus::Delivered, &ctx.id)
    }

    async fn invoke_action(&self, call: ActionCall) -> ActionAnswer {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match call.action.as_str() {
            "add" => ActionAnswer {
                output: Some(json!({"sum": call.input["a"].as_i64().unwrap() + call.input["b"].as_i64().unwrap()})),
                error: None,
            },
            "never" => std::future::pending().await,
            "deploy" | "wipe" => ActionAnswer {
                output: Some(json!({"done": call.action, "env": call.input["env"]})),
                error: None,
            },
            _ => ActionAnswer {
                output: None,
                error: Some("the build server is down".into()),
            },
        }
    }

    async fn release(&self, _reason: Option<String>) {}
}

/// `calc`, a harness-SDK agent of `session`, exposing add (for @bob), never, broken, deploy
/// and wipe.
async fn calculator(m: &common::Mesh, session: &str) -> (Arc<Calculator>, Binding) {
    let calc = Arc::new(Calculator::default());
    let opts = AttachOptions::new(
        session,
        AgentSelection::adapter("calc"),
        serde_json::from_value(caps(true)).unwrap(),
    )
    .handle("calc");
    let binding = Binding::attach(m.client.clone(), opts, calc.clone()).await.unwrap();
    let sum = json!({"type": "object", "required": ["a", "b"],
                     "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}});
    let env = json!({"type": "object", "properties": {"env": {"enum": ["staging", "prod"]}}});
    let actions = json!([
        {"name": "add", "inputSchema": sum, "availableTo": ["@bob"]},
        {"name": "never", "inputSchema": {"type": "object"}},
        {"name": "broken", "inputSchema": {"type": "object"}},
        {"name": "deploy", "inputSchema": env},
        {"name": "wipe", "inputSchema": {"type": "object"}},
    ]);
    m.ok(
        "action.expose",
        json!({"agentId": binding.agent_id, "actions": actions}),
    )
    .await;
    (calc, binding)
}

#[tokio::test]
async fn an_invoked_action_is_checked_runs_once_on_its_agent_and_answers_or_fails_plainly() {
    let (m, _policies) = mesh().await;
    let session = common::create(&m).await;
    let (calc, _binding) = calculator(&m, &session).await;
    let bob = AsAgent::connect(&m.nats, &attach(&m, &session, "bob", false).await).await;
    let carol = AsAgent::connect(&m.nats, &attach(&m, &session, "carol", false).await).await;
    let plain = json!({"messaging": {"receive": true}, "delivery": {"modes": ["immediate"]},
                       "events": {"emits": ["status.changed"]}, "lifecycle": {"release": true}});
    let dave = AsAgent::connect(&m.nats, &common::attach(&m, &session, "dave", plain).await).await;
    let invoke = |action: &str, input: Value, id: &str| json!({"agent": "@calc", "action": action, "input": input, "invocationId": id, "timeoutMs": 2000});

    // bob may: it runs on calc, and a retry with the same id answers without running again.
    let done = bob
        .call("action.invoke", invoke("add", json!({"a": 2, "b": 3}), "i-1"))
        .await
        .unwrap();
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"]["sum"], 5, "{done}");
    let again = bob
        .call("action.invoke", invoke("add", json!({"a": 2, "b": 3}), "i-1"))
        .await
        .unwrap();
    assert_eq!(again, done);
    assert_eq!(calc.calls.load(Ordering::SeqCst), 1, "a retried invoke runs once");
    // Even two at once: one runs, the other answers with its outcome or says it is running.
    let twice = invoke("add", json!({"a": 1, "b": 1}), "i-twice");
    let (one, two) = tokio::join!(
        bob.call("action.invoke", twice.clone()),
        bob.call("action.invoke", twice.clone())
    );
    assert_eq!(calc.calls.load(Ordering::SeqCst), 2, "{one:?} {two:?}");
    for done in [one.unwrap(), two.unwrap()] {
        match done["status"].as_str() {
            Some("completed") => assert_eq!(done["output"]["sum"], 2, "{done}"),
            other => assert_eq!(other, Some("running"), "{done}"),
        }
    }

    // Refused before calc is asked: the schema's own message, availableTo, the capability, an
    // unknown action.
    let bad = bob
        .call("action.invoke", invoke("add", json!({"a": "two", "b": 3}), "i-2"))
        .await
        .unwrap_err();
    assert_eq!(bad.error.code.as_str(), "invalid_request", "{bad:?}");
    let details = bad.error.details.clone().unwrap_or_default();
    assert_eq!(details["errors"][0]["path"], "/a", "{bad:?}");
    assert!(bad.error.message.contains("integer"), "{bad:?}");
    let e = carol
        .call("action.invoke", invoke("add", json!({"a": 1, "b": 1}), "i-3"))
        .await
        .unwrap_err();
    assert_eq!(e.error.code.as_str(), "forbidden", "{e:?}");
    assert!(e.error.message.contains("@bob"), "{e:?}");
    let e = dave
        .call("action.invoke", invoke("broken", json!({}), "i-4"))
        .await
        .unwrap_err();
    assert_eq!(e.error.code.as_str(), "capability_unsupported", "{e:?}");
    let e = bob
        .call("action.invoke", invoke("nope", json!({}), "i-5"))
        .await
        .unwrap_err();
    assert_eq!(e.error.code.as_str(), "not_found", "{e:?}");
    assert_eq!(calc.calls.load(Ordering::SeqCst), 2, "none of them reached the agent");

    // An action that fails, and one that never answers, end `failed` with the reason.
    let failed = carol
        .call("action.invoke", invoke("broken", json!({}), "i-6"))
        .await
        .unwrap();
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"], "the build server is down", "{failed}");
    let mut slow = invoke("never", json!({}), "i-7");
    slow["timeoutMs"] = json!(300);
    let timed_out = carol.call("action.invoke", slow).await.unwrap();
    assert_eq!(timed_out["status"], "failed", "{timed_out}");
    assert!(
        timed_out["error"].as_str().unwrap().contains("within 300 ms"),
        "{timed_out}"
    );

    // Each step is an event for the log, in order, with the invocation id.
    let db = m.db.pool().await;
    let types: Vec<String> = sqlx::query_scalar(
        "SELECT type FROM coordination_events WHERE payload->>'invocationId' IN ('i-1', 'i-6') ORDER BY seq",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    assert_eq!(
        types,
        ["action.invoked", "action.completed", "action.invoked", "action.failed"]
    );
}

/// The types of the events of invocation `id`, in order.
async fn steps(m: &common::Mesh, id: &str) -> Vec<String> {
    common::event_types(m, "invocationId", id).await
}

/// The `action-result` messages agent `to` got, oldest first, once there are `n` of them: a
/// result is posted after its invocation's commit, so it may land after the reply.
async fn results_for(m: &common::Mesh, to: &str, n: usize) -> Vec<Value> {
    wait_for(|| async {
        let got = results_now(m, to).await;
        (got.len() >= n).then_some(got)
    })
    .await
}

async fn results_now(m: &common::Mesh, to: &str) -> Vec<Value> {
    sqlx::query_scalar(
        "SELECT doc FROM registry_relay_messages
         WHERE doc->'recipients' @> jsonb_build_array(jsonb_build_object('agentId', $1::text, 'reason', 'action-result'))
         ORDER BY seq",
    )
    .bind(to)
    .fetch_all(&m.db.pool().await)
    .await
    .unwrap()
}

#[tokio::test]
async fn invocations_obey_the_permission_policies_denied_or_held_for_a_person_until_approved() {
    let (m, _policies) = mesh().await;
    let session = common::create(&m).await;
    let (calc, _binding) = calculator(&m, &session).await;
    let bob_id = attach(&m, &session, "bob", false).await;
    let bob = AsAgent::connect(&m.nats, &bob_id).await;
    let invoke = |action: &str, id: &str| json!({"agent": "@calc", "action": action, "input": {"env": "prod"}, "invocationId": id, "timeoutMs": 5000});

    // A policy refuses `wipe`: denied with the policy's name, calc never asked.
    let denied = bob.ok("action.invoke", invoke("wipe", "w-1")).await;
    assert_eq!(denied["status"], "denied", "{denied}");
    assert!(denied["error"].as_str().unwrap().contains("policy:no-wipe"), "{denied}");
    assert_eq!(steps(&m, "w-1").await, ["action.denied"]);

    // `deploy` waits for a person: pending, with the request they decide; asking again
    // answers with the same pending invocation.
    let held = bob.ok("action.invoke", invoke("deploy", "d-1")).await;
    assert_eq!(held["status"], "pending", "{held}");
    let request_id = held["permissionRequestId"].as_str().unwrap().to_string();
    let asked = m.ok("permission.get", json!({ "requestId": request_id })).await;
    assert_eq!(
        (asked["tool"].as_str(), asked["command"].as_str()),
        (Some("action"), Some("deploy")),
        "{asked}"
    );
    assert_eq!(asked["status"], "pending", "{asked}");
    assert_eq!(bob.ok("action.invoke", invoke("deploy", "d-1")).await, held);
    assert_eq!(
        calc.calls.load(Ordering::SeqCst),
        0,
        "nothing ran before a person decided"
    );

    // Approved: it runs once, the retry answers with the outcome, bob gets an action-result.
    m.ok("permission.approve", json!({ "requestId": request_id })).await;
    let done = wait_for(|| async {
        let now = bob.ok("action.invoke", invoke("deploy", "d-1")).await;
        (now["status"] == "completed").then_some(now)
    })
    .await;
    assert_eq!(done["output"]["env"], "prod", "{done}");
    assert_eq!(calc.calls.load(Ordering::SeqCst), 1);
    assert_eq!(steps(&m, "d-1").await, ["action.invoked", "action.completed"]);
    let results = results_for(&m, &bob_id, 2).await;
    assert_eq!(results.len(), 2, "the denial and the completion: {results:?}");
    assert!(
        results[0]["text"].as_str().unwrap().contains("w-1) was denied"),
        "{results:?}"
    );
    assert!(
        results[1]["text"].as_str().unwrap().contains("d-1) completed"),
        "{results:?}"
    );
    assert_eq!(results[1]["from"]["handle"], "calc", "{results:?}");

    // Refused by a person: denied, and it never runs.
    let held = bob.ok("action.invoke", invoke("deploy", "d-2")).await;
    let request_id = held["permissionRequestId"].as_str().unwrap();
    m.ok(
        "permission.deny",
        json!({ "requestId": request_id, "reason": "not on a Friday" }),
    )
    .await;
    let refused = wait_for(|| async {
        let now = bob.ok("action.invoke", invoke("deploy", "d-2")).await;
        (now["status"] == "denied").then_some(now)
    })
    .await;
    assert!(
        refused["error"].as_str().unwrap().contains("not on a Friday"),
        "{refused}"
    );
    assert_eq!(steps(&m, "d-2").await, ["action.denied"]);
    assert_eq!(calc.calls.load(Ordering::SeqCst), 1);
    let results = results_for(&m, &bob_id, 3).await;
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(
        results[2]["text"].as_str().unwrap().contains("d-2) was denied"),
        "{results:?}"
    );
}

#[tokio::test]
async fn an_invocation_fails_at_once_when_its_agent_is_released_mid_call() {
    let (m, _policies) = mesh().await;
    let session = common::create(&m).await;
    let (calc, binding) = calculator(&m, &session).await;
    let bob = AsAgent::connect(&m.nats, &attach(&m, &session, "bob", false).await).await;
    let call = json!({"agent": "@calc", "action": "never", "invocationId": "n-1", "timeoutMs": 30000});
    let pending = tokio::spawn(async move { bob.call("action.invoke", call).await });
    wait_for(|| async { (calc.calls.load(Ordering::SeqCst) == 1).then_some(()) }).await;
    m.ok(
        "session.agent.release",
        json!({"sessionId": session, "agentId": binding.agent_id, "reason": "going away"}),
    )
    .await;
    let failed = pending.await.unwrap().unwrap();
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .contains("@calc was released during the call"),
        "not its 30 s timeout: {failed}"
    );
    assert_eq!(steps(&m, "n-1").await, ["action.invoked", "action.failed"]);
}

/// A registry replica working on its limit of requests (invocations its agent never answers)
/// refuses more at once with `unavailable` instead of queueing them: every request is answered,
/// with its result or `unavailable` (at the limit, or waiting too long for a database
/// connection), none left waiting; it serves again once they are done.
#[tokio::test]
async fn a_replica_at_its_in_flight_limit_refuses_more_at_once_and_serves_again_after() {
    let (m, _policies) = mesh().await;
    let session = common::create(&m).await;
    let (calc, binding) = calculator(&m, &session).await;
    let bob = Arc::new(AsAgent::connect(&m.nats, &attach(&m, &session, "bob", false).await).await);
    let total = relay_bus::service::MAX_IN_FLIGHT as usize * 11 / 10;
    let answered = Arc::new(std::sync::Mutex::new(Vec::new()));
    let calls: Vec<_> = (0..total)
        .map(|i| {
            let (bob, answered) = (bob.clone(), answered.clone());
            tokio::spawn(async move {
                let call = json!({"agent": "@calc", "action": "never", "invocationId": format!("held-{i}"), "timeoutMs": 30000});
                let subject = bob.on("action.invoke");
                let timeout = std::time::Duration::from_secs(90);
                let r: Result<Value, WireError> = relay_bus::client::request(&bob.client, &subject, &call, timeout).await;
                answered.lock().unwrap().push(r);
            })
        })
        .collect();
    // Each request was answered or reached the agent (which holds it): none waits in a queue.
    wait_for(|| async {
        let held = calc.calls.load(Ordering::SeqCst);
        (answered.lock().unwrap().len() + held == total).then_some(())
    })
    .await;
    m.ok(
        "session.agent.release",
        json!({"sessionId": session, "agentId": binding.agent_id, "reason": "done"}),
    )
    .await;
    for c in calls {
        c.await.unwrap();
    }
    let answered = std::mem::take(&mut *answered.lock().unwrap());
    let errors: Vec<&WireError> = answered.iter().filter_map(|r| r.as_ref().err()).collect();
    let at_limit = errors
        .iter()
        .filter(|e| e.error.message.contains("handling its limit"))
        .count();
    assert!(at_limit > 0, "{total} requests at once: none refused at the limit");
    for e in &errors {
        assert_eq!(e.error.code.as_str(), "unavailable", "{e:?}");
    }
    m.ok("session.get", json!({"sessionId": session})).await;
}

/// The worst moment for the invoker: held for a person, and its session purged before the
/// approval. The action still runs once approved, and its row stops waiting to tell an
/// invoker that is gone (else the sweep retried it every second and retention never took it).
#[tokio::test]
async fn an_outcome_whose_invoker_was_purged_is_not_kept_waiting_to_be_told() {
    let (m, _policies) = mesh().await;
    let session = common::create(&m).await;
    let (calc, _binding) = calculator(&m, &session).await;
    let bob_session = common::create(&m).await;
    let bob = AsAgent::connect(&m.nats, &attach(&m, &bob_session, "bob", false).await).await;
    let call = json!({"agent": "@calc", "action": "deploy", "input": {"env": "prod"}, "invocationId": "gone-1", "timeoutMs": 5000});
    let held = bob.ok("action.invoke", call).await;
    assert_eq!(held["status"], "pending", "{held}");
    for step in ["session.close", "session.archive", "session.purge"] {
        m.ok(step, json!({ "sessionId": bob_session })).await;
    }
    m.ok(
        "permission.approve",
        json!({ "requestId": held["permissionRequestId"] }),
    )
    .await;
    let pool = m.db.pool().await;
    let (status, tell_pending) = wait_for(|| async {
        let row: (String, bool) = sqlx::query_as(
            "SELECT doc->>'status', tell_pending FROM coordination_invocations WHERE invocation_id = 'gone-1'",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        (row.0 == "completed" && !row.1).then_some(row)
    })
    .await;
    assert_eq!((status.as_str(), tell_pending), ("completed", false));
    assert_eq!(calc.calls.load(Ordering::SeqCst), 1, "it ran once");
}
