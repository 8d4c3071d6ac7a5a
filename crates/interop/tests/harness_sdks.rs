//! The Python and TypeScript harness SDKs (`sdks/harness-python`, on nats-py; `sdks/harness-typescript`,
//! on @nats-io/transport-node) against the real mesh with NATS auth on: an agent script on each
//! attaches under its own harness identity (minted as the spawner mints one) and exchanges relay
//! messages with the other and with a fake agent under a PTY harness. The scripts are
//! `sdks/harness-python/tests/interop_agent.py` and `sdks/harness-typescript/test/interop-agent.mjs`;
//! they check what they receive and print "all steps passed" when released. This test plays the
//! person: it says "go", decides their permission requests, re-sends a delivery, stops them, and
//! reads what the mesh recorded (capabilities, receipts, the event log).

mod common;
use relay_testkit::{call_json, expect_ok};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

const NATS_PY: &str = "nats-py==2.16.0";
const NKEYS: &str = "nkeys==0.2.1";

/// One SDK agent script as a child process, its output in files.
struct Script {
    name: &'static str,
    child: tokio::process::Child,
    out: PathBuf,
    err: PathBuf,
}

impl Script {
    fn start(name: &'static str, mut cmd: tokio::process::Command, dir: &Path) -> Script {
        let (out, err) = (dir.join(format!("{name}.out")), dir.join(format!("{name}.err")));
        let child = cmd
            .stdout(Stdio::from(std::fs::File::create(&out).unwrap()))
            .stderr(Stdio::from(std::fs::File::create(&err).unwrap()))
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the {name} agent: {e}"));
        Script { name, child, out, err }
    }

    fn output(&self) -> String {
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        format!(
            "--- {} stdout\n{}--- {} stderr\n{}",
            self.name,
            read(&self.out),
            self.name,
            read(&self.err)
        )
    }

    /// Panics with its output if it already exited: a failed step ends the script.
    fn still_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("the {} agent exited early ({status}):\n{}", self.name, self.output());
        }
    }

    async fn finish(mut self) -> (ExitStatus, String) {
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("the {} agent did not exit once released:\n{}", self.name, self.output()))
            .unwrap();
        (status, self.output())
    }
}

/// Waits until `f` has a value, while both scripts keep running (whichever fails first ends the
/// wait with its output).
async fn until<T, F: std::future::Future<Output = Option<T>>>(
    scripts: &mut [Script; 2],
    what: &str,
    mut f: impl FnMut() -> F,
) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        scripts.iter_mut().for_each(Script::still_running);
        if let Some(v) = f().await {
            return v;
        }
        if Instant::now() > deadline {
            let outputs: Vec<String> = scripts.iter().map(Script::output).collect();
            panic!("{what}: not within 60 s\n{}", outputs.join("\n"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `dist/` of the TypeScript SDK, built from its sources with its pinned compiler.
fn build_typescript_sdk(dir: &Path) {
    assert!(
        dir.join("node_modules/typescript").exists(),
        "{} has no node_modules: run `make interop-deps` (scripts/install-interop-deps.sh)",
        dir.display()
    );
    let out = std::process::Command::new("npm")
        .args(["run", "--silent", "build"])
        .current_dir(dir)
        .output()
        .expect("npm runs");
    assert!(
        out.status.success(),
        "the TypeScript SDK does not build:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Who the SDK agent is and what the script does differently: the person approves the Python
/// agent's Bash request and denies the TypeScript agent's.
struct Agent {
    handle: &'static str,
    peer: &'static str,
    id: String,
    session: String,
    command: &'static str,
    decision: &'static str,
}

impl Agent {
    fn new(handle: &'static str, peer: &'static str, command: &'static str, decision: &'static str) -> Agent {
        Agent {
            handle,
            peer,
            id: uuid::Uuid::new_v4().simple().to_string(),
            session: uuid::Uuid::now_v7().to_string(),
            command,
            decision,
        }
    }

    /// `program` with this agent's environment; its identity is only what the test gives it.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>, nats_url: &str) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(program);
        for var in ["RELAY_NATS__CREDS", "RELAY_NATS__CREDS_FILE", "RELAY_NATS__TLS_CA_FILE"] {
            cmd.env_remove(var);
        }
        cmd.env("RELAY_NATS__URL", nats_url)
            .env("SESSION_ID", &self.session)
            .env("HANDLE", self.handle)
            .env("PEER", self.peer)
            .env("PTY", "pty")
            .env("PERMISSION_COMMAND", self.command)
            .env("EXPECT", self.decision);
        cmd
    }
}

#[tokio::test]
async fn python_and_typescript_agents_attach_through_their_sdks_and_exchange_messages_with_a_pty_agent() {
    // The pins of sdks/harness-python/pyproject.toml; the venv's name changes with them.
    let venv = format!("harness-sdk-{NATS_PY}-{NKEYS}").replace("==", "-");
    let python = relay_testkit::python_venv(&venv, &[NATS_PY, NKEYS]);
    let ts_dir = common::repo().join("sdks/harness-typescript");
    build_typescript_sdk(&ts_dir);

    let m = common::mesh().await;
    let dir = std::env::temp_dir().join(format!("relay-harness-sdks-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    // The PTY agent: the fake claude under a harness, logging every message it is typed.
    let pty_log = dir.join("pty.log");
    std::fs::write(&pty_log, "").unwrap();
    let _spawner = common::spawner(&m, &pty_log).await;
    let pty_session = uuid::Uuid::now_v7().to_string();
    expect_ok(&m.client, "session.create", json!({ "sessionId": pty_session })).await;
    expect_ok(
        &m.client,
        "agent.spawn",
        json!({ "sessionId": pty_session, "cli": "claude", "agentName": "pty" }),
    )
    .await;

    // Each SDK agent gets a harness identity of its own: Python reads it from a .creds file,
    // TypeScript from the environment (how the spawner hands one to its harness).
    let py = Agent::new("py", "ts", "rm -rf build", "approved");
    let ts = Agent::new("ts", "py", "rm -rf dist", "denied");
    let creds_file = dir.join("py.creds");
    std::fs::write(&creds_file, m.nats.harness_creds(&py.id, "default").unwrap()).unwrap();
    let mut py_cmd = py.command(&python, &m.nats.url);
    py_cmd
        .arg("-u")
        .arg(common::repo().join("sdks/harness-python/tests/interop_agent.py"))
        .env("PYTHONPATH", common::repo().join("sdks/harness-python"))
        .env("RELAY_NATS__CREDS_FILE", &creds_file);
    let mut ts_cmd = ts.command("node", &m.nats.url);
    ts_cmd
        .arg(ts_dir.join("test/interop-agent.mjs"))
        .env("RELAY_NATS__CREDS", m.nats.harness_creds(&ts.id, "default").unwrap());
    let mut scripts = [
        Script::start("python", py_cmd, &dir),
        Script::start("typescript", ts_cmd, &dir),
    ];

    // Attached under their own identities, with the handles and capabilities they declared.
    for a in [&py, &ts] {
        let agent = until(&mut scripts, &format!("@{} attached", a.handle), || async {
            call_json(&m.client, "agent.get", json!({ "agent": format!("@{}", a.handle) }))
                .await
                .ok()
        })
        .await;
        assert_eq!(agent["agentId"], a.id.as_str(), "{agent}");
        assert_eq!(agent["sessionId"], a.session.as_str(), "{agent}");
        let caps = expect_ok(&m.client, "session.agent.capabilities", json!({ "agentId": a.id })).await;
        assert_eq!(
            caps["capabilities"]["delivery"]["modes"],
            json!(["immediate", "on-idle"])
        );
        assert_eq!(caps["capabilities"]["messaging"]["send"], true);
        assert_eq!(caps["capabilities"]["lifecycle"]["release"], true);
    }

    for a in [&py, &ts] {
        let sent = expect_ok(
            &m.client,
            "message.send",
            json!({ "to": format!("@{}", a.handle), "text": "go" }),
        )
        .await;
        assert_eq!(sent["recipients"][0]["agentId"], a.id.as_str(), "{sent}");
    }

    // Each asks for Read (a policy approves it at once) and for a destructive Bash command,
    // which waits for a person: approved for Python, denied for TypeScript. The decision reaches
    // the SDK on agent.<id>.permission, which answers it (harnessNotified).
    for a in [&py, &ts] {
        let pending = until(&mut scripts, &format!("@{}'s Bash request", a.handle), || async {
            let list = expect_ok(&m.client, "permission.list", json!({ "agentId": a.id })).await;
            list["permissions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["tool"] == "Bash")
                .cloned()
        })
        .await;
        assert_eq!(pending["command"], a.command);
        assert_eq!(pending["sessionId"], a.session.as_str());
        let verb = if a.decision == "approved" {
            "permission.approve"
        } else {
            "permission.deny"
        };
        let decided = expect_ok(
            &m.client,
            verb,
            json!({ "requestId": pending["requestId"], "reason": "the person decided" }),
        )
        .await;
        assert_eq!(decided["harnessNotified"], true, "{decided}");
        let all = expect_ok(
            &m.client,
            "permission.list",
            json!({ "agentId": a.id, "status": "all" }),
        )
        .await;
        let by_tool = |tool: &str| {
            all["permissions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["tool"] == tool)
                .cloned()
                .unwrap_or_else(|| panic!("no {tool} request in {all}"))
        };
        assert_eq!(by_tool("Read")["status"], "approved");
        assert_eq!(by_tool("Read")["decidedBy"], "policy:read-only-tools");
        assert_eq!(by_tool("Bash")["status"], a.decision);
        assert_eq!(by_tool("Bash")["decidedBy"], "human");
    }

    // The PTY agent was typed what each SDK agent sent it, as a DM from that agent.
    for a in [&py, &ts] {
        let line = until(
            &mut scripts,
            &format!("the PTY agent typed @{}'s hello", a.handle),
            || async {
                std::fs::read_to_string(&pty_log)
                    .unwrap()
                    .lines()
                    .find(|l| l.contains(&format!("hello pty from {}", a.handle)))
                    .map(str::to_string)
            },
        )
        .await;
        assert!(line.contains(&format!("[relay dm from @{}", a.handle)), "{line}");
    }

    // Every delivery to an SDK agent got its `delivered` receipt: "go", three from its peer and
    // one the PTY agent relayed from the peer.
    let mut delivered = Vec::new();
    for a in [&py, &ts] {
        let deliveries = until(&mut scripts, &format!("@{}'s five deliveries", a.handle), || async {
            let list = expect_ok(&m.client, "delivery.list", json!({ "agentId": a.id })).await;
            let all = list["deliveries"].as_array().unwrap().clone();
            (all.len() == 5 && all.iter().all(|d| d["status"] == "delivered")).then_some(all)
        })
        .await;
        delivered.push(deliveries);
    }

    // A delivery sent again (a runner retrying after a lost receipt) is answered with its first
    // receipt and not surfaced again: each script checks it surfaced five distinct deliveries.
    for (a, deliveries) in [&py, &ts].into_iter().zip(&delivered) {
        let messages = expect_ok(&m.client, "session.messages", json!({ "sessionId": a.session })).await;
        let go = messages["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|msg| msg["contentText"] == "go")
            .cloned()
            .unwrap();
        let delivery = deliveries.iter().find(|d| d["messageId"] == go["messageId"]).unwrap();
        let again = json!({
            "context": { "id": delivery["deliveryId"], "mode": delivery["mode"], "reason": "dm" },
            "message": go,
        });
        let r = expect_ok(&m.client, &format!("agent.{}.deliver", a.id), again).await;
        assert_eq!(r["status"], "delivered", "{r}");
        assert_eq!(r["deliveryId"], delivery["deliveryId"], "{r}");
    }

    // Released: each SDK runs its session's release, records it, and its script ends.
    for a in [&py, &ts] {
        until(
            &mut scripts,
            &format!("@{} waits for its release", a.handle),
            || async {
                let log = expect_ok(
                    &m.client,
                    "event.query",
                    json!({ "agents": [a.id], "types": ["log"], "limit": 100 }),
                )
                .await;
                log["events"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|e| e["payload"]["message"].as_str().unwrap().contains("step 6"))
                    .then_some(())
            },
        )
        .await;
        let stopped = expect_ok(
            &m.client,
            "agent.stop",
            json!({ "agentId": a.id, "reason": "the test is done" }),
        )
        .await;
        assert_eq!(stopped["released"], true, "{stopped}");
    }
    let [python_script, typescript_script] = scripts;
    for (script, a) in [(python_script, &py), (typescript_script, &ts)] {
        let (status, output) = script.finish().await;
        println!("{output}");
        assert!(status.success(), "{output}");
        assert!(output.contains(&format!("{}: all steps passed", a.handle)), "{output}");
    }

    // The event log has what each SDK emitted, in the order it emitted it.
    for (a, deliveries) in [&py, &ts].into_iter().zip(&delivered) {
        let page = expect_ok(
            &m.client,
            "event.query",
            json!({
                "agents": [a.id],
                "types": ["session.started", "status.changed", "message.received", "log", "session.released"],
                "limit": 1000,
            }),
        )
        .await;
        let events = page["events"].as_array().unwrap();
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types.first(), Some(&"session.started"), "{types:?}");
        assert_eq!(
            types[types.len() - 2..],
            ["session.released", "status.changed"],
            "{types:?}"
        );
        let of = |t: &'static str| events.iter().filter(move |e| e["type"] == t);
        let steps: Vec<String> = of("log")
            .map(|e| e["payload"]["message"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(steps.len(), 6, "{steps:?}");
        for (n, step) in steps.iter().enumerate() {
            assert!(step.starts_with(&format!("{} step {}:", a.handle, n + 1)), "{steps:?}");
        }
        let statuses: Vec<&str> = of("status.changed")
            .map(|e| e["payload"]["status"].as_str().unwrap())
            .collect();
        assert_eq!(
            statuses,
            ["idle", "blocked", "idle", "blocked", "idle", "releasing", "released"]
        );
        let mut received: Vec<&str> = of("message.received")
            .map(|e| e["payload"]["deliveryId"].as_str().unwrap())
            .collect();
        let mut expected: Vec<&str> = deliveries.iter().map(|d| d["deliveryId"].as_str().unwrap()).collect();
        received.sort_unstable();
        expected.sort_unstable();
        assert_eq!(received, expected, "each delivery surfaced once");
        let released = of("session.released").next().unwrap();
        assert_eq!(released["payload"]["reason"], "the test is done");
        assert!(events.iter().all(|e| e["sessionId"] == a.session.as_str()));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
