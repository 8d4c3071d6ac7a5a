//! Which credentials let a Python or TypeScript SDK agent send (`sdks/harness-python`,
//! `sdks/harness-typescript`), against the real mesh with NATS auth on. With the admin's `.creds`
//! (the only ones `make up` names) an agent that declares `messaging.send` is refused at attach,
//! with how to get its own credentials: its messages would otherwise go out from `anonymous`,
//! which nobody can answer. With credentials minted for it, it sends as itself and a person's
//! reply in its thread reaches it. The scripts are `sdks/harness-python/tests/identity_agent.py`
//! and `sdks/harness-typescript/test/identity-agent.mjs`.

mod common;
use relay_testkit::{call_as_key, expect_ok};
use serde_json::json;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

const NATS_PY: &str = "nats-py==2.16.0";
const NKEYS: &str = "nkeys==0.2.1";

fn python() -> std::path::PathBuf {
    // The pins of sdks/harness-python/pyproject.toml, as harness_sdks.rs names the venv.
    let venv = format!("harness-sdk-{NATS_PY}-{NKEYS}").replace("==", "-");
    relay_testkit::python_venv(&venv, &[NATS_PY, NKEYS])
}

/// A script with the mesh's URL, `creds` as its identity and `env`; nothing else of ours.
fn script(
    program: &Path,
    args: &[&Path],
    nats_url: &str,
    creds: &Path,
    env: &[(&str, &str)],
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args);
    for var in ["RELAY_NATS__CREDS", "RELAY_NATS__CREDS_FILE", "RELAY_NATS__TLS_CA_FILE"] {
        cmd.env_remove(var);
    }
    cmd.env("RELAY_NATS__URL", nats_url)
        .env("RELAY_NATS__CREDS_FILE", creds)
        .env("PYTHONPATH", common::repo().join("sdks/harness-python"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn build_typescript_sdk(dir: &Path) {
    assert!(
        dir.join("node_modules/typescript").exists(),
        "{} has no node_modules: run `make interop-deps`",
        dir.display()
    );
    let out = std::process::Command::new("npm")
        .args(["run", "--silent", "build"])
        .current_dir(dir)
        .output()
        .expect("npm runs");
    assert!(out.status.success(), "the TypeScript SDK does not build: {out:?}");
}

#[tokio::test]
async fn sdk_agents_with_the_admin_credentials_are_refused_and_with_their_own_are_answered() {
    let python = python();
    let ts_dir = common::repo().join("sdks/harness-typescript");
    build_typescript_sdk(&ts_dir);
    let m = common::mesh().await;
    let admin = m.nats.creds(relay_contracts::access::ADMIN).expect("auth on");
    let session = uuid::Uuid::now_v7().to_string();
    expect_ok(&m.client, "session.create", json!({ "sessionId": session })).await;
    let caps = json!({"messaging": {"receive": true}, "delivery": {"modes": ["immediate"]},
                      "events": {"emits": []}, "lifecycle": {"release": true}});
    let body = json!({"sessionId": session, "agent": {"kind": "adapter", "adapterName": "claude"},
                      "handle": "bob", "capabilities": caps});
    expect_ok(&m.client, "session.agent.attach", body).await;

    // The admin's credentials: refused at attach, saying how to get the agent's own.
    let py_script = common::repo().join("sdks/harness-python/tests/identity_agent.py");
    let ts_script = ts_dir.join("test/identity-agent.mjs");
    let refused = [
        ("SESSION_ID", session.as_str()),
        ("HANDLE", "lost"),
        ("MODE", "refused"),
    ];
    let said = [
        common::run_script(&mut script(&python, &[&py_script], &m.nats.url, &admin, &refused)).await,
        common::run_script(&mut script(
            Path::new("node"),
            &[&ts_script],
            &m.nats.url,
            &admin,
            &refused,
        ))
        .await,
    ];
    for out in &said {
        assert!(out.contains("REFUSED forbidden: "), "{out}");
        assert!(
            out.contains("relayctl auth harness"),
            "says how to get agent credentials: {out}"
        );
    }
    let attached = expect_ok(&m.client, "agent.list", json!({})).await;
    assert!(
        !attached.to_string().contains("\"lost\""),
        "nothing attached: {attached}"
    );

    // Credentials minted for the agent: it attaches as itself, its DM is from it, and a
    // person's reply in the thread is delivered to it.
    let id = uuid::Uuid::new_v4().simple().to_string();
    let dir = std::env::temp_dir().join(format!("relay-sdk-identity-{id}"));
    std::fs::create_dir_all(&dir).unwrap();
    let creds = dir.join("found.creds");
    std::fs::write(&creds, m.nats.harness_creds(&id, "default").unwrap()).unwrap();
    let answered = [
        ("SESSION_ID", session.as_str()),
        ("HANDLE", "found"),
        ("PEER", "bob"),
        ("MODE", "answered"),
    ];
    let out = dir.join("python.out");
    let mut child = script(&python, &[&py_script], &m.nats.url, &creds, &answered)
        .stdout(Stdio::from(std::fs::File::create(&out).unwrap()))
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let message_id = relay_testkit::wait_for_within(Duration::from_secs(60), || async {
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        text.lines()
            .find_map(|l| l.strip_prefix("SENT "))
            .map(|id| id.trim().to_string())
    })
    .await;
    let stored = call_as_key(
        &m.nats,
        "operator:k1",
        "default",
        "message.get",
        json!({"messageId": message_id}),
    )
    .await;
    assert_eq!(stored["from"]["kind"], "agent", "{stored}");
    assert_eq!(stored["from"]["id"], id.as_str(), "{stored}");
    assert_eq!(stored["from"]["handle"], "found", "{stored}");
    let reply = call_as_key(
        &m.nats,
        "operator:k1",
        "default",
        "message.send",
        json!({"threadId": message_id, "text": "got it: green"}),
    )
    .await;
    assert!(reply["recipients"].to_string().contains(&id), "{reply}");
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .expect("the agent got the reply and exited")
        .unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(status.success(), "{text}");
    assert!(text.contains("GOT got it: green"), "{text}");
}
