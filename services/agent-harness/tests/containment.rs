//! An agent is only itself: one agent's process cannot use another agent's relay tools socket,
//! finds no bus credentials in its environment, and no agent starts outside the roots its host
//! allows. Real mesh (NATS with auth on, Postgres), real spawner, harnesses and `relay-mcp`; the
//! CLI is the fake agent, whose `exec` runs a real program as a model's shell command would.

use relay_bus::Caller;
use relay_contracts::RequestContext;
use relay_testkit::{Cluster, ServiceProcess, wait_for};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const SPAWNER: &str = env!("CARGO_BIN_EXE_agent-spawner");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");
const RELAY_MCP: &str = env!("CARGO_BIN_EXE_relay-mcp");

/// A fresh directory in the temp dir, symlinks resolved (the spawner reports resolved paths).
fn scratch(stem: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{stem}-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

/// The pid and arguments of the one process whose argv[0] is `program` and whose command line
/// holds `needle`.
fn process(program: &str, needle: &str) -> Option<(u32, Vec<String>)> {
    std::fs::read_dir("/proc").ok()?.find_map(|e| {
        let e = e.ok()?;
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let raw = std::fs::read(e.path().join("cmdline")).ok()?;
        let args: Vec<String> = raw
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        (args.first().map(String::as_str) == Some(program) && args.iter().any(|a| a.contains(needle)))
            .then_some((pid, args))
    })
}

/// The relay tools socket a CLI was given (`--mcp-config={"mcpServers":{"relay":{"args":
/// ["--socket", PATH]}}}`).
fn socket_of(cli_args: &[String]) -> PathBuf {
    let config = cli_args
        .iter()
        .find_map(|a| a.strip_prefix("--mcp-config="))
        .expect("the CLI was given the relay tools");
    let config: Value = serde_json::from_str(config).unwrap();
    PathBuf::from(config["mcpServers"]["relay"]["args"][1].as_str().unwrap())
}

/// `NAME=value` entries of a process's environment.
fn environ(pid: u32) -> Vec<String> {
    let raw = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    raw.split(|b| *b == 0)
        .filter(|e| !e.is_empty())
        .map(|e| String::from_utf8_lossy(e).into_owned())
        .collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[tokio::test]
async fn one_agents_process_cannot_use_another_agents_tools_socket_read_bus_credentials_or_start_outside_the_roots() {
    let m = Cluster::start(&relay_testkit::bin_path("delivery-runner"), "delivery-runner", 1, &[]).await;
    let _services = [
        ServiceProcess::spawn(&relay_testkit::bin_path("session-registry"), &m.nats, &m.db, &[]),
        ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &m.nats, &m.db, &[]),
    ];
    for name in ["session-registry", "event-ingest"] {
        relay_testkit::wait_for_instances(&m.client, name, 1).await;
    }
    let dir = scratch("containment");
    let (data, allowed) = (dir.join("data"), dir.join("allowed"));
    std::fs::create_dir_all(allowed.join("project")).unwrap();
    // Inside an allowed root, pointing out of it.
    std::os::unix::fs::symlink("/etc", allowed.join("escape")).unwrap();
    let (log_a, log_b, log_c) = (dir.join("a.log"), dir.join("b.log"), dir.join("c.log"));
    // Two kinds of agent, each the fake CLI in Claude's style (so it is given the relay tools
    // and starts relay-mcp), each with its own log.
    let entry = |name: &str, log: &Path| {
        format!(
            "[spawner.agents.{name}]\ncommand = [{FAKE:?}, \"--style\", \"claude\", \"--log\", {:?}]\npatterns = \"claude\"\n",
            log.to_str().unwrap()
        )
    };
    let config = dir.join("spawner.toml");
    let toml = format!(
        "[spawner]\nmax_agents = 4\nattach_timeout_ms = 20000\ndata_dir = {:?}\ncwd_roots = [{:?}]\n\n{}{}{}",
        data.to_str().unwrap(),
        allowed.to_str().unwrap(),
        entry("alpha", &log_a),
        entry("beta", &log_b),
        entry("gamma", &log_c),
    );
    std::fs::write(&config, toml).unwrap();
    let spawner = ServiceProcess::spawn(SPAWNER, &m.nats, &m.db, &[("RELAY_CONFIG", config.to_str().unwrap())]);
    relay_testkit::wait_for_instances(&m.client, "agent-spawner", 1).await;

    let session = m.ok("session.create", json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();

    // cwd: outside the roots, by path, by `..` and by a symlink, is refused naming the roots.
    let workspace_dir = data.join("workspaces/default");
    for outside in [
        "/etc".to_string(),
        "/root".to_string(),
        "/".to_string(),
        "../../..".to_string(),
        allowed.join("escape").display().to_string(),
        allowed.join("project/../..").display().to_string(),
    ] {
        let refused = m
            .err(
                "agent.spawn",
                json!({"sessionId": session, "cli": "alpha", "cwd": outside}),
                "invalid_request",
            )
            .await;
        let message = &refused.error.message;
        assert!(message.contains("outside"), "{outside}: {message}");
        for root in [&workspace_dir, &allowed] {
            assert!(message.contains(root.to_str().unwrap()), "{outside}: {message}");
        }
    }

    // Inside the roots it starts, in the resolved directory; with no cwd, in its workspace's
    // own directory, created on demand.
    let a = m
        .ok(
            "agent.spawn",
            json!({"sessionId": session, "cli": "alpha", "agentName": "ana", "cwd": allowed.join("project")}),
        )
        .await;
    let b = m
        .ok(
            "agent.spawn",
            json!({"sessionId": session, "cli": "beta", "agentName": "bob"}),
        )
        .await;
    let (a_id, b_id) = (a["agentId"].as_str().unwrap(), b["agentId"].as_str().unwrap());
    let (a_cli, a_args) = wait_for(|| async { process(FAKE, log_a.to_str().unwrap()) }).await;
    let (b_cli, b_args) = wait_for(|| async { process(FAKE, log_b.to_str().unwrap()) }).await;
    let cwd = |pid: u32| std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap();
    assert_eq!(cwd(a_cli), allowed.join("project"));
    assert_eq!(cwd(b_cli), workspace_dir);

    // An agent of another workspace: in that workspace's own directory, and not in this one's.
    m.ok("workspace.create", json!({"name": "acme"})).await;
    let in_acme = |subject: &'static str, body: Value| {
        let ctx = RequestContext::new(Caller::Operator("k-acme".into()), "acme");
        relay_bus::context::act_as(ctx, relay_testkit::call_json(&m.client, subject, body))
    };
    let acme_session = in_acme("session.create", json!({})).await.unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let theirs = json!({"sessionId": acme_session, "cli": "gamma", "cwd": workspace_dir});
    let refused = in_acme("agent.spawn", theirs).await.unwrap_err();
    assert_eq!(refused.error.code.as_str(), "invalid_request", "{refused:?}");
    assert!(
        refused
            .error
            .message
            .contains(data.join("workspaces/acme").to_str().unwrap()),
        "{refused:?}"
    );
    in_acme(
        "agent.spawn",
        json!({"sessionId": acme_session, "cli": "gamma", "agentName": "cat"}),
    )
    .await
    .unwrap();
    let (c_cli, c_args) = wait_for(|| async { process(FAKE, log_c.to_str().unwrap()) }).await;
    assert_eq!(cwd(c_cli), data.join("workspaces/acme"));

    // Bus credentials stay in the harness (auth is on: each harness got its own): nothing of
    // the harness's settings is in its CLI's environment, nor in the relay-mcp it started.
    let a_bridge = wait_for(|| async { process(RELAY_MCP, &socket_of(&a_args).display().to_string()) }).await;
    for pid in [a_cli, b_cli, a_bridge.0] {
        let leaked: Vec<String> = environ(pid)
            .into_iter()
            .filter(|e| e.starts_with("RELAY_") && !e.starts_with("RELAY_TRACEPARENT="))
            .collect();
        assert!(leaked.is_empty(), "process {pid} inherited {leaked:?}");
    }
    // The harness itself had them: they were taken out, not never given.
    if nix::unistd::Uid::effective().is_root() {
        let own = environ(parent_of(a_cli));
        assert!(own.iter().any(|e| e.starts_with("RELAY_NATS__CREDS=")), "{own:?}");
    } else {
        // Not dumpable: another process of the same user cannot read what it was started with.
        assert!(std::fs::read(format!("/proc/{}/environ", parent_of(a_cli))).is_err());
    }

    // A's shell command uses A's own socket: it is A's CLI's, so it acts as A.
    let (a_socket, b_socket) = (socket_of(&a_args), socket_of(&b_args));
    let send = |session: &str, agent: &str, text: String| {
        let m = &m;
        let body = json!({"sessionId": session, "agentIds": [agent], "message": text});
        async move { m.ok("session.sendMessage", body).await }
    };
    send(
        &session,
        a_id,
        format!("exec {RELAY_MCP} --socket {} --call who", a_socket.display()),
    )
    .await;
    wait_for(|| async { read(&log_a).contains(&format!("agent {b_id}")).then_some(()) }).await;

    // A's shell command tries B's socket, to send as B: refused, nothing sent.
    let forged = json!({"to": "@ana", "text": "forged-as-bob"}).to_string();
    send(
        &session,
        a_id,
        format!("exec {RELAY_MCP} --socket {} --call send {forged}", b_socket.display()),
    )
    .await;
    let refusal = wait_for(|| async {
        let log = read(&log_a);
        log.lines().find(|l| l.starts_with("refused")).map(String::from)
    })
    .await;
    assert!(
        refusal.contains("serves only its own agent's CLI") && refusal.contains(&b_cli.to_string()),
        "{refusal}"
    );
    // And its try at the other workspace's agent's socket.
    send(
        &session,
        a_id,
        format!("exec {RELAY_MCP} --socket {} --call who", socket_of(&c_args).display()),
    )
    .await;
    let refusal = wait_for(|| async {
        let log = read(&log_a);
        log.lines()
            .filter(|l| l.starts_with("refused"))
            .nth(1)
            .map(String::from)
    })
    .await;
    assert!(refusal.contains(&c_cli.to_string()), "{refusal}");
    assert!(!read(&log_a).contains("@cat"), "nothing of acme's agents was listed");
    // So is any other process of the user (here the test itself).
    let call = agent_harness::relay::ToolCall {
        tool: "who".into(),
        args: json!({}),
    };
    let answer = agent_harness::relay::ask(&b_socket, &call).await;
    assert!(!answer.ok && answer.text.starts_with("refused"), "{}", answer.text);
    // B's harness says so in its log (the spawner's output).
    wait_for(|| async {
        read(&spawner.log)
            .contains("relay tools socket: connection refused")
            .then_some(())
    })
    .await;

    // B's own CLI still uses its socket; and the forged message never reached A: the one
    // B's CLI sends now arrives, the forged one before it did not.
    send(
        &session,
        b_id,
        format!(
            "exec {RELAY_MCP} --socket {} --call send {}",
            b_socket.display(),
            json!({"to": "@ana", "text": "really-from-bob"})
        ),
    )
    .await;
    wait_for(|| async { read(&log_a).contains("really-from-bob").then_some(()) }).await;
    assert!(!read(&log_a).contains("forged-as-bob"), "{}", read(&log_a));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The parent pid of `pid` (the harness of a CLI).
fn parent_of(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 1..];
    after_name.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// With `spawner.sandbox = "bwrap"`, an agent's commands run inside bubblewrap: another
/// workspace's directory, the other agents' directories, the spawner's configuration,
/// credentials and signer are out of sight, everything but its own cwd (and home, socket) is
/// read-only, and only its own processes show; its relay tools and the messages typed into
/// its terminal still work, and a stop still ends everything it started.
#[tokio::test]
async fn an_agent_in_the_bubblewrap_sandbox_sees_only_its_own_directory_and_processes_and_still_reaches_its_tools() {
    assert!(
        std::path::Path::new("/usr/bin/bwrap").exists(),
        "this test needs bubblewrap (apt-get install bubblewrap)"
    );
    let m = Cluster::start(&relay_testkit::bin_path("delivery-runner"), "delivery-runner", 1, &[]).await;
    let _services = [
        ServiceProcess::spawn(&relay_testkit::bin_path("session-registry"), &m.nats, &m.db, &[]),
        ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &m.nats, &m.db, &[]),
    ];
    for name in ["session-registry", "event-ingest"] {
        relay_testkit::wait_for_instances(&m.client, name, 1).await;
    }
    // Not under /tmp (each sandbox has its own), nor in the checkout (which may be under /tmp,
    // or in a home the sandbox lets the CLI write): here the host's files show, read-only.
    let dir = std::path::Path::new("/var/tmp").join(format!("relay-sandbox-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    let data = dir.join("data");
    let (ana_dir, bob_dir, acme_dir) = (
        data.join("workspaces/default/ana"),
        data.join("workspaces/default/bob"),
        data.join("workspaces/acme"),
    );
    for d in [&ana_dir, &bob_dir, &acme_dir] {
        std::fs::create_dir_all(d).unwrap();
    }
    let secret = acme_dir.join("secret.txt");
    std::fs::write(&secret, "acme-secret").unwrap();
    // Each agent logs into its own cwd: the one place it may write.
    let (log_a, log_b) = (ana_dir.join("ana.log"), bob_dir.join("bob.log"));
    let entry = |name: &str, log: &Path| {
        format!(
            "[spawner.agents.{name}]\ncommand = [{FAKE:?}, \"--style\", \"claude\", \"--log\", {:?}]\npatterns = \"claude\"\n",
            log.to_str().unwrap()
        )
    };
    let config = dir.join("spawner.toml");
    let toml = format!(
        "[spawner]\nmax_agents = 4\nattach_timeout_ms = 20000\nsandbox = \"bwrap\"\ndata_dir = {:?}\n\n{}{}",
        data.to_str().unwrap(),
        entry("alpha", &log_a),
        entry("beta", &log_b),
    );
    std::fs::write(&config, toml).unwrap();
    let _spawner = ServiceProcess::spawn(SPAWNER, &m.nats, &m.db, &[("RELAY_CONFIG", config.to_str().unwrap())]);
    relay_testkit::wait_for_instances(&m.client, "agent-spawner", 1).await;
    // The spawner's credentials and the harness signer (auth is on).
    let env = m.nats.env_for("agent-spawner");
    let setting = |name: &str| PathBuf::from(&env.iter().find(|(k, _)| k == name).expect(name).1);
    let (creds, signer) = (
        setting("RELAY_NATS__CREDS_FILE"),
        setting("RELAY_SPAWNER__HARNESS_SIGNER"),
    );

    let session = m.ok("session.create", json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let spawn = |cli: &str, name: &str, cwd: &str| {
        let body = json!({"sessionId": session, "cli": cli, "agentName": name, "cwd": cwd});
        let m = &m;
        async move { m.ok("agent.spawn", body).await["agentId"].as_str().unwrap().to_string() }
    };
    let a_id = spawn("alpha", "ana", "ana").await;
    let b_id = spawn("beta", "bob", "bob").await;
    let (a_cli, a_args) = wait_for(|| async { process(FAKE, log_a.to_str().unwrap()) }).await;
    let (b_cli, b_args) = wait_for(|| async { process(FAKE, log_b.to_str().unwrap()) }).await;
    // Each CLI is in a PID namespace of its own, under bwrap (the pid its harness knows).
    let ns = |pid: &str| std::fs::read_link(format!("/proc/{pid}/ns/pid")).unwrap();
    for cli in [a_cli, b_cli] {
        assert_ne!(ns(&cli.to_string()), ns("self"));
        let bwrap = std::fs::read(format!("/proc/{}/cmdline", parent_of(parent_of(cli)))).unwrap();
        assert!(bwrap.starts_with(b"bwrap\0"), "{}", String::from_utf8_lossy(&bwrap));
    }
    assert_ne!(ns(&a_cli.to_string()), ns(&b_cli.to_string()));

    // What ana's commands get: each one's output is the next line of its log.
    let run = |command: String| {
        let (m, session, a_id, log_a) = (&m, &session, &a_id, &log_a);
        async move {
            let before = read(log_a).lines().count();
            let body = json!({"sessionId": session, "agentIds": [a_id], "message": command});
            m.ok("session.sendMessage", body).await;
            wait_for(|| async { read(log_a).lines().nth(before).map(String::from) }).await
        }
    };
    let show = |p: &Path| p.display().to_string();

    // Another workspace's directory, another agent's of its own workspace: not there.
    let out = run(format!("exec cat {}", show(&secret))).await;
    assert!(out.contains("No such file or directory"), "{out}");
    let out = run(format!("exec ls -A {}", show(&data.join("workspaces/default")))).await;
    assert_eq!(out, "ana", "only its own directory is in the workspaces' directory");
    let out = run(format!("exec ls -A {}", show(&bob_dir))).await;
    assert!(out.contains("No such file or directory"), "{out}");
    // The spawner's configuration cannot be opened; its credentials and the signer are not
    // there.
    let out = run(format!("exec wc -c {}", show(&config))).await;
    assert!(out.contains("Permission denied"), "{out}");
    for file in [&creds, &signer] {
        let out = run(format!("exec wc -c {}", show(file))).await;
        assert!(out.contains("No such file or directory"), "{}: {out}", file.display());
    }
    // Read-only outside its cwd; its cwd is its own.
    let outside = dir.join("outside.txt");
    let out = run(format!("exec touch {}", show(&outside))).await;
    assert!(out.contains("Read-only file system"), "{out}");
    assert!(!outside.exists());
    let out = run(format!("exec touch {}", show(&ana_dir.join("inside.txt")))).await;
    assert_eq!(out, "");
    assert!(ana_dir.join("inside.txt").exists());
    // Only its own processes: its bwrap, itself, its relay-mcp, the command.
    let out = run("exec ps -eo args".into()).await;
    assert!(
        out.contains(log_a.to_str().unwrap()) && out.contains("ps -eo args"),
        "{out}"
    );
    for other in [
        log_b.to_str().unwrap(),
        "agent-harness",
        "agent-spawner",
        "session-registry",
    ] {
        assert!(!out.contains(other), "{other} is visible: {out}");
    }

    // Its relay tools work through the PID namespace: the socket's peer (relay-mcp, its pid
    // as the harness sees it) descends from the bwrap its harness started.
    let (a_socket, b_socket) = (socket_of(&a_args), socket_of(&b_args));
    let out = run(format!("exec {RELAY_MCP} --socket {} --call who", show(&a_socket))).await;
    assert!(out.contains(&format!("agent {b_id}")), "{out}");
    // Bob's socket is not even there.
    let out = run(format!("exec {RELAY_MCP} --socket {} --call who", show(&b_socket))).await;
    assert!(out.contains("not reachable") && out.contains("No such file"), "{out}");
    // A message typed into its terminal arrives.
    run("hello-into-the-sandbox".into()).await;
    assert!(read(&log_a).contains("hello-into-the-sandbox"), "{}", read(&log_a));

    // A stop ends everything in it, what the CLI left running included; bob runs on.
    let body = json!({"sessionId": session, "agentIds": [a_id], "message": "spawn sleep 987654"});
    m.ok("session.sendMessage", body).await;
    let sleeper = wait_for(|| async { process("sleep", "987654") }).await.0;
    let bwrap = parent_of(parent_of(a_cli));
    m.ok("agent.stop", json!({"agentId": a_id})).await;
    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| stat.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
            .unwrap_or(false)
    };
    wait_for(|| async { [a_cli, sleeper, bwrap].iter().all(|p| !alive(*p)).then_some(()) }).await;
    assert!(alive(b_cli));
    let _ = std::fs::remove_dir_all(&dir);
}
