//! The real agent CLIs (Claude Code, Codex, Gemini CLI, at the versions
//! `scripts/install-agent-clis.sh` pins) driven through the whole mesh against a scripted fake
//! model on loopback: spawned with `POST /api/v1/sessions`, their permission prompts decided
//! over REST, their usage costed, their turns ending in idle, released with `DELETE`.
//!
//! Every service is the real binary on a private NATS and a fresh database; the CLI is the real
//! one, under the real agent-harness the real agent-spawner starts; only the model is scripted.

use fake_model::{FakeModel, Script, Step, clis};
use relay_testkit::{Database, Nats, ServiceProcess, wait_for};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const SPAWNER: &str = env!("CARGO_BIN_EXE_agent-spawner");

/// One way of running one CLI: the spawner agent name the test world configures for it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Cli {
    Claude,
    Codex,
    Gemini,
    ClaudeTui,
    CodexTui,
    GeminiTui,
    /// Claude Code's TUI in a mode that runs edits without asking (`--permission-mode acceptEdits`).
    ClaudeTuiEdits,
    /// The TUIs in a home the harness prepared itself (`home`), given only a key and a base URL.
    ClaudeHome,
    CodexHome,
    GeminiHome,
}

impl Cli {
    fn name(self) -> &'static str {
        match self {
            Cli::Claude => "claude",
            Cli::Codex => "codex",
            Cli::Gemini => "gemini",
            Cli::ClaudeTui => "claude-tui",
            Cli::CodexTui => "codex-tui",
            Cli::GeminiTui => "gemini-tui",
            Cli::ClaudeTuiEdits => "claude-tui-edits",
            Cli::ClaudeHome => "claude-home",
            Cli::CodexHome => "codex-home",
            Cli::GeminiHome => "gemini-home",
        }
    }

    /// The structured paths report usage; the TUIs show none on their screen.
    fn observes_usage(self) -> bool {
        matches!(self, Cli::Claude | Cli::Codex | Cli::Gemini)
    }

    /// Idle reports before the first turn ends: a TUI is idle once when it first shows its prompt.
    fn idles_before_first_turn(self) -> usize {
        if self.observes_usage() { 0 } else { 1 }
    }
}

/// Real CLIs are heavy (a mesh, a Node or native CLI, a model server each): two worlds at a
/// time on a 2-core machine keep every wait well inside its limit.
static WORLDS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

struct World {
    _slot: tokio::sync::SemaphorePermit<'static>,
    _nats: Nats,
    _db: Database,
    _services: Vec<ServiceProcess>,
    _spawner: ServiceProcess,
    _gateway: ServiceProcess,
    base: String,
    http: reqwest::Client,
    model: FakeModel,
    workdir: PathBuf,
    _scratch: Scratch,
}

/// A temp dir removed at the end.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// TOML for one `[spawner.agents.<name>]` entry.
fn agent_entry(name: &str, command: &[String], protocol: &str, patterns: &str, env: &[(String, String)]) -> String {
    let mut s = format!(
        "[spawner.agents.{name}]\ncommand = {}\nprotocol = {protocol:?}\npatterns = {patterns:?}\n[spawner.agents.{name}.env]\n",
        serde_json::to_string(command).unwrap()
    );
    for (k, v) in env {
        s.push_str(&format!("{k} = {v:?}\n"));
    }
    s
}

/// The mesh, the gateway and a spawner whose agents are the real CLIs pointed at `model`.
async fn world(script: Script) -> World {
    let slot = WORLDS.acquire().await.unwrap();
    let scratch = std::env::temp_dir().join(format!("real-clis-{}", uuid::Uuid::new_v4().simple()));
    let workdir = scratch.join("work");
    std::fs::create_dir_all(&workdir).unwrap();
    let model = FakeModel::start(script).await;
    let url = model.url();

    let claude_env = clis::prepare_claude_home(&scratch.join("home-claude"), &url, &workdir);
    let codex_env = clis::prepare_codex_home(&scratch.join("home-codex"), &url, &workdir);
    let gemini_env = clis::prepare_gemini_home(&scratch.join("home-gemini"), &url, &workdir);
    let bin = |p: PathBuf| p.to_string_lossy().into_owned();
    let mut toml = String::from("[spawner]\nmax_agents = 4\nattach_timeout_ms = 60000\n");
    // Agents start in the work directory (their cwd must lie under the spawner's roots) or,
    // workers spawned without one, in their workspace's directory under the scratch.
    toml += &format!(
        "data_dir = {:?}\ncwd_roots = [{:?}]\n\n",
        scratch.join("data").to_str().unwrap(),
        workdir.to_str().unwrap()
    );
    toml += &agent_entry(
        "claude",
        &[bin(clis::claude_bin())],
        "claude-stream-json",
        "claude",
        &claude_env,
    );
    toml += &agent_entry(
        "codex",
        &[bin(clis::codex_bin())],
        "codex-app-server",
        "codex",
        &codex_env,
    );
    toml += &agent_entry(
        "gemini",
        &[bin(clis::gemini_bin()), "--acp".into()],
        "acp",
        "gemini",
        &gemini_env,
    );
    // A lead that may delegate: it declares AG-UI multiAgent.delegation and may spawn workers.
    toml += &agent_entry(
        "claude-lead",
        &[bin(clis::claude_bin())],
        "claude-stream-json",
        "claude",
        &claude_env,
    )
    .replacen(
        "[spawner.agents.claude-lead.env]",
        "delegate = true\n[spawner.agents.claude-lead.env]",
        1,
    );
    // An agent that serves an action: its harness exposes `lookup` from a file.
    let actions = scratch.join("actions.json");
    let lookup = json!([{"name": "lookup", "description": "What a word means",
                         "inputSchema": {"type": "object", "required": ["word"],
                                         "properties": {"word": {"type": "string"}}}}]);
    std::fs::write(&actions, lookup.to_string()).unwrap();
    toml += &agent_entry(
        "claude-server",
        &[bin(clis::claude_bin())],
        "claude-stream-json",
        "claude",
        &claude_env,
    )
    .replacen(
        "[spawner.agents.claude-server.env]",
        &format!(
            "actions = {:?}\n[spawner.agents.claude-server.env]",
            actions.display().to_string()
        ),
        1,
    );
    // The mode where every tool asks: newer releases start in auto mode, running tools unasked.
    let claude_tui = [bin(clis::claude_bin()), "--permission-mode".into(), "default".into()];
    toml += &agent_entry("claude-tui", &claude_tui, "pty", "claude", &claude_env);
    let claude_tui_edits = [
        bin(clis::claude_bin()),
        "--permission-mode".into(),
        "acceptEdits".into(),
    ];
    toml += &agent_entry("claude-tui-edits", &claude_tui_edits, "pty", "claude", &claude_env);
    toml += &agent_entry("codex-tui", &[bin(clis::codex_bin())], "pty", "codex", &codex_env);
    toml += &agent_entry("gemini-tui", &[bin(clis::gemini_bin())], "pty", "gemini", &gemini_env);
    // The TUIs as a user configures them: a key and a base URL, and a home per workspace and
    // kind that the harness prepares (nothing of the test helpers' homes above).
    let home = "home = \"{data_dir}/homes/{workspace}/{cli}\"\n";
    let keyed = |name: &str, command: &[String], patterns: &str, env: &[(&str, String)]| {
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        agent_entry(name, command, "pty", patterns, &env).replacen(
            &format!("[spawner.agents.{name}.env]"),
            &format!("{home}[spawner.agents.{name}.env]"),
            1,
        )
    };
    toml += &keyed(
        "claude-home",
        &claude_tui,
        "claude",
        &[
            ("ANTHROPIC_API_KEY", clis::FAKE_ANTHROPIC_KEY.into()),
            ("ANTHROPIC_BASE_URL", url.clone()),
        ],
    );
    // The fake speaks gpt-5.5's tools, not the default model's code mode; that model's
    // migration notice (a screen of its own) counts as seen.
    let codex_gpt55 = [
        bin(clis::codex_bin()),
        "-m".into(),
        "gpt-5.5".into(),
        "-c".into(),
        r#"notice.model_migrations={"gpt-5.5"="gpt-6-sol"}"#.into(),
    ];
    toml += &keyed(
        "codex-home",
        &codex_gpt55,
        "codex",
        &[
            ("OPENAI_API_KEY", clis::FAKE_OPENAI_KEY.into()),
            ("OPENAI_BASE_URL", format!("{url}/v1")),
        ],
    );
    toml += &keyed(
        "gemini-home",
        &[bin(clis::gemini_bin())],
        "gemini",
        &[
            ("GEMINI_API_KEY", clis::FAKE_GEMINI_KEY.into()),
            ("GOOGLE_GEMINI_BASE_URL", url.clone()),
        ],
    );
    let config = scratch.join("spawner.toml");
    std::fs::write(&config, toml).unwrap();

    let nats = Nats::start().await;
    let db = Database::create().await;
    let client = nats.client().await;
    let services = relay_testkit::BUS_SERVICES
        .iter()
        .map(|s| ServiceProcess::spawn(&relay_testkit::bin_path(s), &nats, &db, &[]))
        .collect();
    for s in relay_testkit::BUS_SERVICES {
        relay_testkit::wait_for_instances(&client, s, 1).await;
    }
    // As a CI runner would have it: TUIs must still draw (the harness keeps CI markers from
    // them), so these tests behave the same on a laptop and in CI.
    let spawner = ServiceProcess::spawn(
        SPAWNER,
        &nats,
        &db,
        &[
            ("RELAY_CONFIG", config.to_str().unwrap()),
            ("CI", "true"),
            ("GITHUB_ACTIONS", "true"),
            ("CI_JOB_ID", "1"),
        ],
    );
    relay_testkit::wait_for_instances(&client, "agent-spawner", 1).await;
    let listen = format!("127.0.0.1:{}", free_port());
    let gateway = ServiceProcess::spawn(
        &relay_testkit::bin_path("gateway"),
        &nats,
        &db,
        &[
            ("RELAY_GATEWAY__LISTEN", listen.as_str()),
            ("RELAY_API_TOKEN", ""),
            ("RELAY_GATEWAY__OPEN", "true"),
            ("RELAY_GATEWAY__SPAWN_TIMEOUT_MS", "90000"),
        ],
    );
    let w = World {
        _slot: slot,
        _nats: nats,
        _db: db,
        _services: services,
        _spawner: spawner,
        _gateway: gateway,
        base: format!("http://{listen}/api/v1"),
        http: reqwest::Client::new(),
        model,
        workdir,
        _scratch: Scratch(scratch),
    };
    wait_for(|| async {
        w.http
            .get(format!("http://{listen}/healthz"))
            .send()
            .await
            .ok()
            .filter(|r| r.status().is_success())
    })
    .await;
    w
}

impl World {
    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut r = self.http.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    async fn ok(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let (status, v) = self.send(method, path, body).await;
        assert!((200..300).contains(&status), "{path}: {status} {v}");
        v
    }

    /// `POST /sessions` with the CLI and the task; (sessionId, agentId).
    async fn spawn(&self, cli: Cli, task: &str) -> (String, String) {
        let body = json!({ "cli": cli.name(), "task": task, "cwd": self.workdir.to_str().unwrap() });
        let v = self.ok(reqwest::Method::POST, "/sessions", Some(body)).await;
        (
            v["sessionId"].as_str().unwrap().to_string(),
            v["agentId"].as_str().unwrap().to_string(),
        )
    }

    /// `POST /sessions` with a handle; (sessionId, agentId).
    async fn spawn_as(&self, cli: Cli, handle: &str, task: &str) -> (String, String) {
        let body = json!({ "cli": cli.name(), "agent": handle, "task": task, "cwd": self.workdir.to_str().unwrap() });
        let v = self.ok(reqwest::Method::POST, "/sessions", Some(body)).await;
        (
            v["sessionId"].as_str().unwrap().to_string(),
            v["agentId"].as_str().unwrap().to_string(),
        )
    }

    /// The relay messages found by full-text search, newest first.
    async fn relay_messages(&self, q: &str) -> Vec<Value> {
        let v = self.ok(reqwest::Method::GET, &format!("/messages?q={q}"), None).await;
        v["messages"].as_array().cloned().unwrap_or_default()
    }

    /// A delivery's status; empty until the runner has it (the registry names its id first).
    async fn delivery_status(&self, delivery_id: &str) -> String {
        let (status, v) = self
            .send(reqwest::Method::GET, &format!("/deliveries/{delivery_id}"), None)
            .await;
        if status == 404 {
            return String::new();
        }
        assert_eq!(status, 200, "{v}");
        v["status"].as_str().unwrap_or_default().to_string()
    }

    /// The agent's one pending permission request, once it shows (a CLI's first start in a
    /// fresh home can take a while on a loaded machine; a timeout shows the last screen).
    async fn pending_permission(&self, agent: &str) -> Value {
        self.wait_long(agent, || async {
            let v = self
                .ok(reqwest::Method::GET, &format!("/agents/{agent}/permissions"), None)
                .await;
            v["permissions"].as_array().and_then(|p| p.first().cloned())
        })
        .await
    }

    /// The agent's events of `kind` so far, from the event log.
    async fn events(&self, agent: &str, kind: &str) -> Vec<Value> {
        let v = self
            .ok(
                reqwest::Method::GET,
                &format!("/events?types={kind}&agent={agent}&limit=1000"),
                None,
            )
            .await;
        v["events"].as_array().cloned().unwrap_or_default()
    }

    /// How often the agent has reported `status` so far.
    async fn status_count(&self, agent: &str, status: &str) -> usize {
        self.events(agent, "status.changed")
            .await
            .into_iter()
            .filter(|e| e["payload"]["status"] == status)
            .count()
    }

    /// Waits until the agent has reported `idle` at least `n` times. (A terminal agent reports
    /// idle once before its first message, when the CLI first shows its ready prompt.)
    async fn idle_times(&self, agent: &str, n: usize) {
        self.wait_long(agent, || async {
            (self.status_count(agent, "idle").await >= n).then_some(())
        })
        .await;
    }

    /// The agent's idle count once it is blocked on a permission prompt: every earlier status
    /// is in the log by then (one harness logs them in order).
    async fn idles_when_blocked(&self, agent: &str) -> usize {
        wait_for(|| async { (self.status_count(agent, "blocked").await > 0).then_some(()) }).await;
        self.status_count(agent, "idle").await
    }

    /// The agent's declared capabilities, as the registry lists them.
    async fn capabilities(&self, session: &str, agent: &str) -> Value {
        let v = self
            .ok(reqwest::Method::GET, &format!("/sessions/{session}"), None)
            .await;
        let agents = v["agents"].as_array().cloned().unwrap_or_default();
        agents
            .into_iter()
            .find(|a| a["agentId"] == agent)
            .map(|a| a["capabilities"].clone())
            .unwrap_or_default()
    }

    async fn agent_status(&self, session: &str, agent: &str) -> String {
        let v = self
            .ok(reqwest::Method::GET, &format!("/sessions/{session}"), None)
            .await;
        let agents = v["agents"].as_array().cloned().unwrap_or_default();
        agents
            .iter()
            .find(|a| a["agentId"] == agent)
            .map(|a| a["status"].as_str().unwrap_or_default().to_string())
            .unwrap_or_default()
    }

    /// The session's cost totals once they reach `input` tokens (the aggregator folds the log
    /// asynchronously).
    async fn costs(&self, session: &str, input: i64) -> Value {
        wait_for(|| async {
            let v = self
                .ok(reqwest::Method::GET, &format!("/costs?session={session}"), None)
                .await;
            (v["total"]["inputTokens"].as_i64().unwrap_or(0) >= input).then_some(v)
        })
        .await
    }
}

fn exists(dir: &Path, name: &str) -> bool {
    dir.join(name).exists()
}

/// The tool scenario: the model asks to run `touch ran.txt`, then answers.
fn tool_script() -> Script {
    Script::new()
        .on(
            "RUNTOOL",
            [
                Step::shell("touch ran.txt").usage(1500, 800),
                Step::text("Tool finished. DONE.").usage(100, 20),
            ],
        )
        .on("SECOND", [Step::text("second answer").usage(10, 5)])
}

/// The relay scenario: alpha DMs beta with `relay_send`, beta answers with `relay_reply`; gamma
/// is blocked on a permission when a message for it comes and reads it with `relay_inbox`.
fn relay_script() -> Script {
    Script::new()
        .on(
            "RELAYSEND",
            [
                Step::tool(
                    "mcp__relay__relay_send",
                    json!({"to": "@beta", "text": "PONGME please"}),
                ),
                Step::text("Sent. DONE."),
            ],
        )
        .on(
            "PONGME",
            [
                Step::tool("mcp__relay__relay_reply", json!({"text": "pong from beta"})),
                Step::text("Replied. DONE."),
            ],
        )
        .on(
            "INBOXWAIT",
            [
                Step::shell("touch waited.txt"),
                Step::tool("mcp__relay__relay_inbox", json!({})),
                Step::text("Read my inbox. DONE."),
            ],
        )
}

/// Agents talk through the relay tools (MCP, served by the harness): a DM with relay_send, a
/// thread reply with relay_reply, each from the authenticated agent; a message held while the
/// agent is busy is read with relay_inbox, delivered then, and never typed in as a turn.
async fn agents_talk_through_the_relay_tools(cli: Cli) {
    let w = world(relay_script()).await;
    let (_, beta) = w.spawn_as(cli, "beta", "hello").await;
    w.idle_times(&beta, 1 + cli.idles_before_first_turn()).await;
    let (_, alpha) = w.spawn_as(cli, "alpha", "RELAYSEND now").await;
    // A cold CLI start under load is most of the wait: first the model gets alpha's turn...
    wait_for(|| async {
        let asked = w.model.heard("RELAYSEND");
        asked.then_some(())
    })
    .await;

    // ...then alpha's DM reaches beta from @alpha (the harness's identity, not a field anyone
    // wrote). Should it not, the model's requests say whether the CLI offered the relay tools.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let dm = loop {
        if let Some(dm) = w.relay_messages("PONGME").await.into_iter().next() {
            break dm;
        }
        if std::time::Instant::now() > deadline {
            let requests = w.model.main_requests();
            let offered: Vec<bool> = requests
                .iter()
                .map(|r| r.body.to_string().contains("relay_send"))
                .collect();
            let last = requests
                .last()
                .map(|r| r.body["messages"].to_string())
                .unwrap_or_default();
            panic!(
                "no DM from alpha in 60 s; relay_send offered per model request: {offered:?}; last messages: {last}"
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(dm["from"]["kind"], "agent", "{dm}");
    assert_eq!(dm["from"]["id"], alpha.as_str(), "{dm}");
    assert_eq!(dm["recipients"][0]["agentId"], beta.as_str(), "{dm}");
    assert_eq!(dm["recipients"][0]["reason"], "dm", "{dm}");
    // beta answers in its thread; alpha gets the reply, delivered.
    let reply = wait_for(|| async {
        w.relay_messages("pong")
            .await
            .into_iter()
            .find(|m| m["from"]["handle"] == "beta")
    })
    .await;
    assert_eq!(reply["threadId"], dm["messageId"], "{reply}");
    assert_eq!(reply["recipients"][0]["agentId"], alpha.as_str(), "{reply}");
    assert_eq!(reply["recipients"][0]["reason"], "thread-reply", "{reply}");
    let delivery = reply["recipients"][0]["deliveryId"].as_str().unwrap().to_string();
    wait_for(|| async { (w.delivery_status(&delivery).await == "delivered").then_some(()) }).await;
    // The tool result the model got says where it went.
    wait_for(|| async {
        w.model
            .main_requests()
            .iter()
            .any(|r| r.body.to_string().contains("queued for @beta"))
            .then_some(())
    })
    .await;

    // gamma is blocked on a permission when a person's message comes: held, then read with
    // relay_inbox once the command ran; never typed in as a turn of its own.
    let (_, gamma) = w.spawn_as(cli, "gamma", "INBOXWAIT").await;
    let p = w.pending_permission(&gamma).await;
    let idles = w.idles_when_blocked(&gamma).await;
    let sent = w
        .ok(
            reqwest::Method::POST,
            "/messages",
            Some(json!({"to": "@gamma", "text": "NOTEFORGAMMA while you work"})),
        )
        .await;
    let note = sent["recipients"][0]["deliveryId"].as_str().unwrap().to_string();
    wait_for(|| async { (w.delivery_status(&note).await == "accepted").then_some(()) }).await;
    let id = p["requestId"].as_str().unwrap();
    w.ok(
        reqwest::Method::POST,
        &format!("/agents/{gamma}/permissions/{id}/approve"),
        Some(json!({})),
    )
    .await;
    wait_for(|| async { (w.delivery_status(&note).await == "delivered").then_some(()) }).await;
    // The turn ends, and nothing is left to type in after it.
    w.idle_times(&gamma, idles + 1).await;
    let read = w.model.main_requests().iter().any(|r| {
        let body = r.body.to_string();
        body.contains("NOTEFORGAMMA while you work") && body.contains("relay_inbox")
    });
    assert!(read, "the model got the note as relay_inbox's result");
    assert!(
        !w.model.heard("NOTEFORGAMMA"),
        "the note was read with relay_inbox, not typed in: {:?}",
        w.model.user_texts()
    );
}

/// The delegation scenario: the lead hands two files to workers with `relay_map_reduce`; each
/// worker answers its ask with `relay_reply`.
fn delegation_script() -> Script {
    let reply = |text: &str| {
        [
            Step::tool("mcp__relay__relay_reply", json!({ "text": text })),
            Step::text("Replied. DONE."),
        ]
    };
    Script::new()
        .on(
            "DELEGATE",
            [
                Step::tool(
                    "mcp__relay__relay_map_reduce",
                    json!({"task": "Review this file", "items": ["ALPHAFILE", "BETAFILE"], "cli": "claude"}),
                ),
                Step::text("Delegated. DONE."),
            ],
        )
        .on("ALPHAFILE", reply("alpha verdict: fine"))
        .on("BETAFILE", reply("beta verdict: one bug"))
}

/// A lead agent (real Claude Code, allowed to delegate) calls `relay_map_reduce`: its harness
/// spawns one worker per item into the lead's session, asks each with a relay message from the
/// lead, and returns the workers' `relay_reply` messages as the tool's result; the replies are
/// relay messages to the lead in each ask's thread, delivered to it; the workers are released.
#[tokio::test]
async fn claude_stream_json_lead_delegates_with_map_reduce_and_gets_the_workers_replies() {
    let w = world(delegation_script()).await;
    // The lead's kind of agent: the same CLI, with `delegate = true` in its spawner entry.
    let body =
        json!({ "cli": "claude-lead", "agent": "boss", "task": "DELEGATE now", "cwd": w.workdir.to_str().unwrap() });
    let v = w.ok(reqwest::Method::POST, "/sessions", Some(body)).await;
    let session = v["sessionId"].as_str().unwrap().to_string();
    let lead = v["agentId"].as_str().unwrap().to_string();

    // The tool result the lead's model got holds both workers' answers, by item.
    let result = wait_for(|| async {
        w.model.main_requests().iter().find_map(|r| {
            let body = r.body.to_string();
            (body.contains("alpha verdict: fine")
                && body.contains("beta verdict: one bug")
                && body.contains("## ALPHAFILE"))
            .then_some(body)
        })
    })
    .await;
    assert!(result.contains("## BETAFILE"), "{result}");

    // Each ask is a relay message from the lead (its harness's identity) to a worker it spawned.
    let asks = w.relay_messages("ALPHAFILE").await;
    let ask = asks
        .iter()
        .find(|m| m["text"].as_str().unwrap_or_default().contains("Work on: ALPHAFILE"))
        .expect("the ask");
    assert_eq!(ask["from"]["id"], lead.as_str(), "{ask}");
    let worker = ask["recipients"][0]["agentId"].as_str().unwrap().to_string();
    let got = w.ok(reqwest::Method::GET, &format!("/agents/{worker}"), None).await;
    assert_eq!(got["spawnedBy"], lead.as_str(), "{got}");
    assert_eq!(got["sessionId"], session.as_str(), "{got}");

    // Each answer is a reply in its ask's thread, to the lead, delivered to it.
    for verdict in ["alpha verdict", "beta verdict"] {
        let reply = wait_for(|| async {
            w.relay_messages(&verdict.replace(' ', "+"))
                .await
                .into_iter()
                .find(|m| m["threadId"].is_string())
        })
        .await;
        assert_eq!(reply["recipients"][0]["agentId"], lead.as_str(), "{reply}");
        assert_eq!(reply["recipients"][0]["reason"], "thread-reply", "{reply}");
        let delivery = reply["recipients"][0]["deliveryId"].as_str().unwrap().to_string();
        wait_for(|| async { (w.delivery_status(&delivery).await == "delivered").then_some(()) }).await;
    }

    // Both workers were released once they answered.
    wait_for(|| async {
        let all = w.ok(reqwest::Method::GET, "/agents?status=all", None).await;
        let workers: Vec<&Value> = all["agents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["spawnedBy"] == lead.as_str())
            .collect();
        (workers.len() == 2 && workers.iter().all(|a| a["status"] == "disposed")).then_some(())
    })
    .await;
}

/// What an agent attached by the test (not a CLI) declares: it exposes actions.
fn exposing_caps() -> Value {
    json!({"messaging": {"receive": true}, "delivery": {"modes": ["immediate"]},
           "events": {"emits": ["status.changed"]}, "lifecycle": {"release": true},
           "actions": {"expose": true}})
}

/// An agent (real Claude Code) asks which actions it may invoke with `relay_actions`: it sees
/// the one exposed for `#general` and not the one kept for a person's role.
#[tokio::test]
async fn claude_stream_json_lists_the_actions_it_may_invoke_with_relay_actions() {
    let script = Script::new().on(
        "LISTACTIONS",
        [
            Step::tool("mcp__relay__relay_actions", json!({})),
            Step::text("Listed. DONE."),
        ],
    );
    let w = world(script).await;
    // An agent that exposes two actions, attached by the operators' tools (no CLI needed).
    let admin = w._nats.client().await;
    let session = relay_testkit::expect_ok(&admin, "session.create", json!({})).await;
    let caps = exposing_caps();
    let attach = json!({"sessionId": session["sessionId"], "agent": {"kind": "adapter", "adapterName": "ops"},
                        "handle": "opsbot", "capabilities": caps});
    let ops = relay_testkit::expect_ok(&admin, "session.agent.attach", attach).await;
    let actions = json!([
        {"name": "deploy", "description": "Deploys a build", "inputSchema": {"type": "object"}, "availableTo": ["#general"]},
        {"name": "payroll", "inputSchema": {"type": "object"}, "availableTo": ["role:admin"]},
    ]);
    relay_testkit::expect_ok(
        &admin,
        "action.expose",
        json!({"agentId": ops["agentId"], "actions": actions}),
    )
    .await;

    w.spawn(Cli::Claude, "LISTACTIONS now").await;
    let listed = wait_for(|| async {
        w.model
            .main_requests()
            .iter()
            .map(|r| r.body.to_string())
            .find(|b| b.contains("@opsbot deploy"))
    })
    .await;
    assert!(listed.contains("Deploys a build"), "{listed}");
    assert!(
        !listed.contains("payroll"),
        "an action for admins is not listed to an agent: {listed}"
    );
}

/// An agent on the harness SDK that adds two numbers for the others (`add`).
struct Adder;

impl relay_harness::AgentSession for Adder {
    async fn receive_message(
        &self,
        _message: relay_contracts::session::Message,
        ctx: relay_contracts::delivery::MessageContext,
    ) -> relay_contracts::delivery::Receipt {
        relay_harness::receipt(relay_contracts::delivery::ReceiptStatus::Delivered, &ctx.id)
    }

    async fn invoke_action(
        &self,
        call: relay_contracts::actions::ActionCall,
    ) -> relay_contracts::actions::ActionAnswer {
        let sum = call.input["a"].as_i64().unwrap_or(0) + call.input["b"].as_i64().unwrap_or(0);
        relay_contracts::actions::ActionAnswer {
            output: Some(json!({ "sum": sum })),
            error: None,
        }
    }

    async fn release(&self, _reason: Option<String>) {}
}

/// A real CLI (Claude Code) invokes an action another agent exposes, with its `relay_invoke`
/// tool: the mesh checks the input, the exposing agent runs it, the model gets the output.
#[tokio::test]
async fn claude_stream_json_invokes_an_action_with_relay_invoke() {
    let script = Script::new().on(
        "INVOKEADD",
        [
            Step::tool(
                "mcp__relay__relay_invoke",
                json!({"agent": "@adder", "action": "add", "input": {"a": 20, "b": 22}}),
            ),
            Step::text("Invoked. DONE."),
        ],
    );
    let w = world(script).await;
    let admin = w._nats.client().await;
    let session = relay_testkit::expect_ok(&admin, "session.create", json!({})).await;
    let caps = exposing_caps();
    let opts = relay_harness::AttachOptions::new(
        session["sessionId"].as_str().unwrap(),
        relay_contracts::session::AgentSelection::adapter("adder"),
        serde_json::from_value(caps).unwrap(),
    )
    .handle("adder");
    let adder = relay_harness::Binding::attach(admin.clone(), opts, std::sync::Arc::new(Adder))
        .await
        .unwrap();
    let sum = json!({"type": "object", "required": ["a", "b"],
                     "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}});
    relay_testkit::expect_ok(
        &admin,
        "action.expose",
        json!({"agentId": adder.agent_id, "actions": [{"name": "add", "inputSchema": sum}]}),
    )
    .await;

    let (_, agent) = w.spawn(Cli::Claude, "INVOKEADD now").await;
    let answered = wait_for(|| async {
        w.model
            .main_requests()
            .iter()
            .map(|r| r.body.to_string())
            .find(|b| b.contains(r#"{\"sum\":42}"#))
    })
    .await;
    assert!(
        answered.contains("relay_invoke"),
        "the model called the tool: {answered}"
    );
    // The log says who invoked it: the CLI's own agent.
    let invoked = wait_for(|| async {
        let v = w
            .ok(reqwest::Method::GET, "/events?types=action.invoked&limit=10", None)
            .await;
        v["events"].as_array().and_then(|e| e.first().cloned())
    })
    .await;
    assert_eq!(invoked["payload"]["caller"], format!("agent:{agent}"), "{invoked}");
    assert_eq!(invoked["payload"]["agentId"], adder.agent_id.as_str(), "{invoked}");
}

/// A real CLI (Claude Code) serves an action its spawner entry exposes: the call is surfaced to
/// it like a message, and its `relay_answer` is the result the invoker gets.
#[tokio::test]
async fn claude_stream_json_serves_an_action_and_answers_with_relay_answer() {
    let script = Script::new().on(
        "Action call: lookup",
        [
            Step::tool(
                "mcp__relay__relay_answer",
                json!({"invocationId": "inv-cli", "output": {"meaning": "a small dog"}}),
            ),
            Step::text("Answered. DONE."),
        ],
    );
    let w = world(script).await;
    let body =
        json!({ "cli": "claude-server", "agent": "dict", "task": "Say hello.", "cwd": w.workdir.to_str().unwrap() });
    w.ok(reqwest::Method::POST, "/sessions", Some(body)).await;
    wait_for(|| async {
        let v = w.ok(reqwest::Method::GET, "/actions?agent=@dict", None).await;
        (v["actions"][0]["name"] == "lookup").then_some(())
    })
    .await;
    let call = json!({"agent": "@dict", "action": "lookup", "input": {"word": "pug"}, "invocationId": "inv-cli"});
    let done = w.ok(reqwest::Method::POST, "/actions/invoke", Some(call)).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"]["meaning"], "a small dog", "{done}");
    let asked = w
        .model
        .main_requests()
        .iter()
        .map(|r| r.body.to_string())
        .find(|b| b.contains("Action call: lookup"))
        .expect("the model saw the call");
    assert!(asked.contains("pug"), "the call names its input: {asked}");
}

/// A real CLI (Claude Code) asked to vote in a relay message votes with its `relay_vote` tool;
/// the question was put over REST, and with one voter its vote decides it.
#[tokio::test]
async fn claude_stream_json_votes_on_a_proposal_with_relay_vote() {
    let script = Script::new().on(
        "Vote, please",
        [
            Step::tool(
                "mcp__relay__relay_vote",
                json!({"proposalId": "p-cli", "choice": "ship", "reason": "the tests pass"}),
            ),
            Step::text("Voted. DONE."),
        ],
    );
    let w = world(script).await;
    let (_, agent) = w.spawn_as(Cli::Claude, "voter", "Say hello.").await;
    let asked = json!({"proposalId": "p-cli", "question": "Ship 1.4 today?", "options": ["ship", "wait"],
                       "to": ["@voter"]});
    let p = w.ok(reqwest::Method::POST, "/consensus", Some(asked)).await;
    assert_eq!(p["quorum"], 1, "{p}");
    let decided = wait_for(|| async {
        let p = w.ok(reqwest::Method::GET, "/consensus/p-cli", None).await;
        (p["status"] == "resolved").then_some(p)
    })
    .await;
    assert_eq!(decided["outcome"], "ship", "{decided}");
    assert_eq!(decided["votes"][0]["agentId"], agent.as_str(), "{decided}");
    assert_eq!(decided["votes"][0]["reason"], "the tests pass", "{decided}");
}

/// Spawn, approve over REST, the command runs, usage is costed exactly as scripted, the turn
/// ends idle, an on-idle message is delivered after it, DELETE releases the agent.
async fn approved_command_runs_is_costed_and_the_agent_goes_idle(cli: Cli) {
    let w = world(tool_script()).await;
    let (session, agent) = w.spawn(cli, "RUNTOOL please").await;

    let p = w.pending_permission(&agent).await;
    assert_eq!(p["sessionId"], session.as_str());
    assert!(
        p["command"].as_str().unwrap_or_default().contains("touch ran.txt"),
        "the request names the command: {p}"
    );
    assert!(!exists(&w.workdir, "ran.txt"), "nothing runs before the approval");
    let idles = w.idles_when_blocked(&agent).await;
    let id = p["requestId"].as_str().unwrap();
    w.ok(
        reqwest::Method::POST,
        &format!("/agents/{agent}/permissions/{id}/approve"),
        Some(json!({ "reason": "fine" })),
    )
    .await;
    wait_for(|| async { exists(&w.workdir, "ran.txt").then_some(()) }).await;
    w.idle_times(&agent, idles + 1).await;

    let emits = w.capabilities(&session, &agent).await["events"]["emits"].clone();
    let declared = emits.as_array().unwrap().iter().any(|e| e == "usage.updated");
    assert_eq!(
        declared,
        cli.observes_usage(),
        "usage is declared only where it is observed: {emits}"
    );
    if cli.observes_usage() {
        let costs = w.costs(&session, 1600).await;
        assert_eq!(costs["total"]["inputTokens"], 1600, "{costs}");
        assert_eq!(costs["total"]["outputTokens"], 820, "{costs}");
    }

    // After the turn, an on-idle message goes to the idle agent and starts a second turn.
    w.ok(
        reqwest::Method::POST,
        &format!("/sessions/{session}/messages"),
        Some(json!({ "message": "SECOND message", "mode": "on-idle" })),
    )
    .await;
    wait_for(|| async { w.model.heard("SECOND message").then_some(()) }).await;
    w.idle_times(&agent, 2).await;
    if cli.observes_usage() {
        let costs = w.costs(&session, 1610).await;
        assert_eq!(costs["total"]["outputTokens"], 825, "{costs}");
    }

    let (status, _) = w
        .send(reqwest::Method::DELETE, &format!("/sessions/{session}"), None)
        .await;
    assert_eq!(status, 200);
    wait_for(|| async { (w.agent_status(&session, &agent).await == "disposed").then_some(()) }).await;
}

/// The tool scenario with prompt-cache reads, and usage on every side call (titles, Gemini's
/// router): what the session is costed must be what the model reported, request by request.
fn cached_tool_script() -> Script {
    Script::new()
        .on(
            "RUNTOOL",
            [
                Step::shell("touch ran.txt").usage(1500, 800).cached(300),
                Step::text("Tool finished. DONE.").usage(100, 20).cached(50),
            ],
        )
        .on("SECOND", [Step::text("second answer").usage(10, 5).cached(7)])
        .side_usage(40, 4, 6)
}

/// Two turns (one with an approved command), then the session's cost report against the sum
/// of what the fake model reported to every request the CLI made, side calls included: input,
/// cache reads and output each equal, and every model the CLI used is priced.
async fn usage_is_what_the_model_reported_for_every_request(cli: Cli) {
    let w = world(cached_tool_script()).await;
    let (session, agent) = w.spawn(cli, "RUNTOOL please").await;
    let p = w.pending_permission(&agent).await;
    let idles = w.idles_when_blocked(&agent).await;
    let id = p["requestId"].as_str().unwrap();
    w.ok(
        reqwest::Method::POST,
        &format!("/agents/{agent}/permissions/{id}/approve"),
        Some(json!({ "reason": "fine" })),
    )
    .await;
    w.idle_times(&agent, idles + 1).await;
    w.ok(
        reqwest::Method::POST,
        &format!("/sessions/{session}/messages"),
        Some(json!({ "message": "SECOND message", "mode": "on-idle" })),
    )
    .await;
    w.idle_times(&agent, idles + 2).await;

    let reported = w.model.reported_usage();
    let side = w
        .model
        .requests()
        .iter()
        .filter(|r| !r.main && r.usage.is_some())
        .count();
    let totals = |v: &Value| {
        let t = &v["total"];
        let n = |k: &str| t[k].as_u64().unwrap_or(0);
        (n("inputTokens"), n("cacheReadTokens"), n("outputTokens"))
    };
    let expected = (reported.input, reported.cached, reported.output);
    // Usage arrives with or shortly after each turn's end: wait until it is all in (or stops
    // short), then compare exactly.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let costs = loop {
        let v = w
            .ok(reqwest::Method::GET, &format!("/costs?session={session}"), None)
            .await;
        let (input, cached, output) = totals(&v);
        let all_in = input >= expected.0 && cached >= expected.1 && output >= expected.2;
        if all_in || std::time::Instant::now() > deadline {
            break v;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    let models: Vec<String> = w
        .model
        .requests()
        .iter()
        .filter(|r| r.usage.is_some())
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(
        totals(&costs),
        expected,
        "(input, cache reads, output) costed vs reported by the model over {} requests ({side} side calls: {models:?}): {costs}",
        models.len()
    );
    // Gemini CLI routes every prompt through a side call, which its ACP replies leave out;
    // Claude Code (-p) and Codex's app-server make none in these turns.
    if cli == Cli::Gemini {
        assert!(side > 0, "the router's side calls are part of the proof: {models:?}");
    }
    // Every model the CLI used has a price (Claude Code's from its own catalog; Gemini CLI's
    // routed gemini-3.8-flash and gemini-3.5-flash-lite; the tests' Codex model): none is
    // counted at $0.
    let unpriced = costs["unpricedModels"].as_array().cloned().unwrap_or_default();
    assert!(unpriced.is_empty(), "every model {cli:?} used is priced: {costs}");
}

/// A denial over REST: the command never runs, the model is told, the turn still ends idle.
async fn denied_command_does_not_run(cli: Cli) {
    let w = world(tool_script()).await;
    let (_session, agent) = w.spawn(cli, "RUNTOOL please").await;
    let p = w.pending_permission(&agent).await;
    let idles = w.idles_when_blocked(&agent).await;
    let id = p["requestId"].as_str().unwrap();
    w.ok(
        reqwest::Method::POST,
        &format!("/agents/{agent}/permissions/{id}/deny"),
        Some(json!({ "reason": "no" })),
    )
    .await;
    // The turn is over (the structured paths tell the model, which answers; the TUIs stop the
    // turn), so the command will not run later either.
    w.idle_times(&agent, idles + 1).await;
    assert!(!exists(&w.workdir, "ran.txt"), "a denied command did not run");
    // The manager's own event reaches the log through its outbox, on its own time.
    let resolved = wait_for(|| async {
        let r = w.events(&agent, "permission.resolved").await;
        (!r.is_empty()).then_some(r)
    })
    .await;
    assert_eq!(resolved.len(), 1, "{resolved:?}");
    assert_eq!(resolved[0]["payload"]["decision"], "denied");
    if cli.observes_usage() {
        // The structured paths hand the model the denial as the tool's result.
        let asked = w
            .model
            .main_requests()
            .iter()
            .filter(|r| r.user_text.as_deref().is_some_and(|t| t.contains("RUNTOOL")))
            .count();
        assert!(asked >= 2, "the model was told the outcome of the denied call");
    }
}

/// A message sent while the CLI's permission menu shows waits (accepted, not typed: its keys
/// would answer the menu); the human's deny is the only thing typed into the menu; the command
/// never runs and is never reported executed; then the message reaches the model once, after
/// the menu, and only then is it delivered.
async fn message_sent_while_the_menu_is_open_waits_for_the_deny(cli: Cli) {
    let w = world(tool_script()).await;
    let (session, agent) = w.spawn(cli, "RUNTOOL please").await;
    let p = w.pending_permission(&agent).await;
    let idles = w.idles_when_blocked(&agent).await;
    let sent = w
        .ok(
            reqwest::Method::POST,
            &format!("/sessions/{session}/messages"),
            Some(json!({ "message": "thanks, carry on", "mode": "immediate" })),
        )
        .await;
    let delivery = sent["deliveryIds"][0].as_str().expect("one delivery").to_string();
    wait_for(|| async { (w.delivery_status(&delivery).await == "accepted").then_some(()) }).await;
    let id = p["requestId"].as_str().unwrap();
    w.ok(
        reqwest::Method::POST,
        &format!("/agents/{agent}/permissions/{id}/deny"),
        Some(json!({ "reason": "no" })),
    )
    .await;
    w.wait_long(&agent, || async {
        let seen = w.model.heard("thanks, carry on");
        seen.then_some(())
    })
    .await;
    wait_for(|| async { (w.delivery_status(&delivery).await == "delivered").then_some(()) }).await;
    // Its turn ends too (the deny's turn may end with it: the message is typed as soon as the
    // menu is gone): nothing typed later could still run the command.
    w.idle_times(&agent, idles + 1).await;
    w.wait_long(&agent, || async {
        let statuses = w.events(&agent, "status.changed").await;
        (statuses.last()?["payload"]["status"] == "idle").then_some(())
    })
    .await;
    assert!(!exists(&w.workdir, "ran.txt"), "the denied command did not run");
    let executed = w.events(&agent, "command.executed").await;
    assert!(
        executed.is_empty(),
        "a denied command is never reported executed: {executed:?}"
    );
    let turn = w
        .model
        .main_requests()
        .into_iter()
        .rev()
        .find(|r| {
            r.user_text
                .as_deref()
                .is_some_and(|t| t.starts_with("thanks, carry on"))
        })
        .expect("the message is a turn of its own");
    let body = turn.body.to_string();
    assert_eq!(body.matches("thanks, carry on").count(), 1, "typed once: {body}");
}

/// On a structured path (the permission request is a protocol message, not a menu on a screen):
/// a message sent while the request is pending is accepted and held, never handed to the CLI
/// mid-turn; the person's deny is the decision (the record says denied, the command never runs
/// and is never reported executed); then the message reaches the model exactly once, after the
/// denial went back to the model, and only then is its delivery reported delivered.
async fn message_sent_while_a_permission_request_is_pending_waits_for_the_deny(cli: Cli) {
    const MESSAGE: &str = "thanks, carry on";
    let w = world(tool_script()).await;
    let (session, agent) = w.spawn(cli, "RUNTOOL please").await;
    let p = w.pending_permission(&agent).await;
    let idles = w.idles_when_blocked(&agent).await;
    let sent = w
        .ok(
            reqwest::Method::POST,
            &format!("/sessions/{session}/messages"),
            Some(json!({ "message": MESSAGE, "mode": "immediate" })),
        )
        .await;
    let delivery = sent["deliveryIds"][0].as_str().expect("one delivery").to_string();
    wait_for(|| async { (w.delivery_status(&delivery).await == "accepted").then_some(()) }).await;

    // Still pending: the model has not seen the message, nor has the command run.
    let mentions = |requests: &[fake_model::Recorded]| {
        requests
            .iter()
            .filter(|r| r.main && r.body.to_string().contains(MESSAGE))
            .count()
    };
    let before = w.model.requests();
    assert_eq!(mentions(&before), 0, "the message waits while the request is pending");
    assert!(!exists(&w.workdir, "ran.txt"), "nothing runs before the decision");
    let id = p["requestId"].as_str().unwrap();
    w.ok(
        reqwest::Method::POST,
        &format!("/agents/{agent}/permissions/{id}/deny"),
        Some(json!({ "reason": "no" })),
    )
    .await;
    assert_eq!(
        w.delivery_status(&delivery).await,
        "accepted",
        "not delivered before the decision"
    );

    w.wait_long(&agent, || async { w.model.heard(MESSAGE).then_some(()) })
        .await;
    wait_for(|| async { (w.delivery_status(&delivery).await == "delivered").then_some(()) }).await;
    w.idle_times(&agent, idles + 1).await;
    w.wait_long(&agent, || async {
        let statuses = w.events(&agent, "status.changed").await;
        (statuses.last()?["payload"]["status"] == "idle").then_some(())
    })
    .await;

    assert!(!exists(&w.workdir, "ran.txt"), "the denied command did not run");
    let executed = w.events(&agent, "command.executed").await;
    assert!(
        executed.is_empty(),
        "a denied command is never reported executed: {executed:?}"
    );
    let decided = w
        .ok(
            reqwest::Method::GET,
            &format!("/agents/{agent}/permissions?status=all"),
            None,
        )
        .await;
    let record = decided["permissions"]
        .as_array()
        .and_then(|ps| ps.iter().find(|r| r["requestId"] == id))
        .unwrap_or_else(|| panic!("the request is listed: {decided}"));
    assert_eq!(record["status"], "denied", "{record}");

    // Once, after the menu: the request that told the model of the denial (the RUNTOOL turn's
    // second call) comes first; the message is a turn of its own, typed once.
    let requests = w.model.requests();
    let told = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.main && r.user_text.as_deref().is_some_and(|t| t.contains("RUNTOOL")))
        .nth(1)
        .map(|(i, _)| i)
        .expect("the model was told the outcome of the denied call");
    let first = requests
        .iter()
        .position(|r| r.main && r.body.to_string().contains(MESSAGE))
        .expect("the message reached the model");
    assert!(
        told < first,
        "the message reached the model after the denial (requests {told} and {first})"
    );
    assert!(first >= before.len(), "sent only after the decision");
    let with_it: Vec<_> = requests
        .iter()
        .filter(|r| r.main && r.body.to_string().contains(MESSAGE))
        .collect();
    assert!(
        with_it
            .iter()
            .any(|r| r.user_text.as_deref().is_some_and(|t| t.starts_with(MESSAGE))),
        "the message is a turn of its own"
    );
    for r in with_it {
        let body = r.body.to_string();
        assert_eq!(body.matches(MESSAGE).count(), 1, "sent once: {body}");
    }
}

/// A tool the CLI runs with no permission request (Claude Code in a mode that does not ask, as
/// its 2.1.332 release starts in) is never silent: `permission.bypassed`, the agent blocked, and
/// a message sent to it afterwards fails instead of reaching a CLI whose tools are out of control.
#[tokio::test]
async fn claude_tui_a_tool_run_with_no_permission_request_is_reported_bypassed_and_blocks_the_agent() {
    let w = world(Script::new()).await;
    let notes = w.workdir.join("notes.txt");
    let write = Step::tool("Write", json!({ "file_path": notes, "content": "written unasked\n" }));
    w.model
        .set_script(Script::new().on("WRITEFILE", [write, Step::text("Wrote it. DONE.")]));
    let (session, agent) = w.spawn(Cli::ClaudeTuiEdits, "WRITEFILE please").await;
    let bypassed = w
        .wait_long(&agent, || async {
            let e = w.events(&agent, "permission.bypassed").await;
            (!e.is_empty()).then_some(e)
        })
        .await;
    assert!(notes.exists(), "the tool ran: that is what is reported");
    assert_eq!(bypassed.len(), 1, "{bypassed:?}");
    let asked = w
        .ok(reqwest::Method::GET, &format!("/agents/{agent}/permissions"), None)
        .await;
    assert_eq!(
        asked["permissions"],
        json!([]),
        "no permission request was made: {asked}"
    );
    w.wait_long(&agent, || async {
        let statuses = w.events(&agent, "status.changed").await;
        (statuses.last()?["payload"]["status"] == "blocked").then_some(())
    })
    .await;
    let sent = w
        .ok(
            reqwest::Method::POST,
            &format!("/sessions/{session}/messages"),
            Some(json!({ "message": "SECOND message", "mode": "immediate" })),
        )
        .await;
    let delivery = sent["deliveryIds"][0].as_str().expect("one delivery").to_string();
    wait_for(|| async { (w.delivery_status(&delivery).await == "failed").then_some(()) }).await;
    assert!(!w.model.heard("SECOND message"));
}

/// A new cwd behind Claude Code's folder-trust dialog: the agent is `blocked` with the screen
/// (not `starting` for good), a message waits instead of answering the dialog, and a person's
/// Enter over REST trusts the folder, after which the message goes in.
#[tokio::test]
async fn claude_tui_in_a_cwd_it_does_not_trust_is_blocked_with_the_screen_until_a_person_answers() {
    let w = world(Script::new()).await;
    // No cwd: the workspace's own directory, which the test home does not trust.
    let body = json!({ "cli": Cli::ClaudeTui.name() });
    let v = w.ok(reqwest::Method::POST, "/sessions", Some(body)).await;
    let (session, agent) = (v["sessionId"].as_str().unwrap(), v["agentId"].as_str().unwrap());
    let blocked = w
        .wait_long(agent, || async { w.events(agent, "status.blocked").await.pop() })
        .await;
    let screen = blocked["payload"]["screen"].as_str().unwrap_or_default();
    assert!(
        screen.contains("Yes, I trust this folder"),
        "the screen goes with it: {blocked}"
    );
    assert!(
        blocked["payload"]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("home"),
        "it says what to do: {blocked}"
    );
    w.wait_long(agent, || async {
        let v = w.ok(reqwest::Method::GET, &format!("/agents/{agent}"), None).await;
        (v["reportedStatus"] == "blocked").then_some(())
    })
    .await;

    w.ok(
        reqwest::Method::POST,
        &format!("/sessions/{session}/messages"),
        Some(json!({ "message": "HELLO after trust", "mode": "on-idle" })),
    )
    .await;
    // As a person reading that screen would: the cursor (❯) to "Yes, I trust this folder", then
    // Enter. 2.1.197 lists it first; 2.1.332 puts "No, exit" first and highlights it.
    let rows: Vec<&str> = screen.lines().collect();
    let cursor = rows
        .iter()
        .position(|r| r.trim_start().starts_with('❯'))
        .expect("a cursor row");
    let yes = rows
        .iter()
        .position(|r| r.contains("Yes, I trust this folder"))
        .expect("the trust option");
    let moves = if yes >= cursor {
        "\x1b[B".repeat(yes - cursor)
    } else {
        "\x1b[A".repeat(cursor - yes)
    };
    // Two writes, as two key presses reach a terminal: an Enter in the arrows' write could be
    // read before the cursor moved.
    for keys in [moves, "\r".to_string()].into_iter().filter(|k| !k.is_empty()) {
        let input = json!({ "data": keys });
        w.ok(reqwest::Method::POST, &format!("/agents/{agent}/input"), Some(input))
            .await;
    }
    w.wait_long(agent, || async { w.model.heard("HELLO after trust").then_some(()) })
        .await;
    w.idle_times(agent, 2).await;
}

#[tokio::test]
async fn claude_tui_in_a_home_the_harness_prepared_starts_in_a_new_cwd_and_runs_an_approved_command() {
    approved_command_runs_is_costed_and_the_agent_goes_idle(Cli::ClaudeHome).await;
}

#[tokio::test]
async fn codex_tui_in_a_home_the_harness_prepared_starts_in_a_new_cwd_and_runs_an_approved_command() {
    approved_command_runs_is_costed_and_the_agent_goes_idle(Cli::CodexHome).await;
}

#[tokio::test]
async fn gemini_tui_in_a_home_the_harness_prepared_starts_in_a_new_cwd_and_runs_an_approved_command() {
    approved_command_runs_is_costed_and_the_agent_goes_idle(Cli::GeminiHome).await;
}

/// A message with several lines reaches the model as written.
async fn multi_line_message_arrives_intact(cli: Cli) {
    let w = world(Script::new()).await;
    let text = "first line\nsecond line\n\n  indented third";
    let (_session, agent) = w.spawn(cli, text).await;
    let texts = w
        .wait_long(&agent, || async {
            let texts = w.model.user_texts();
            texts.iter().any(|t| unwrap_paste(t) == text).then_some(texts)
        })
        .await;
    // The message with its lines intact, and never a piece of it on its own (a split paste).
    // A CLI's own side requests (Codex's title) quote other text.
    let pieces: Vec<&String> = texts
        .iter()
        .filter(|t| unwrap_paste(t) != text && text.contains(t.trim()))
        .collect();
    assert!(pieces.is_empty(), "{texts:?}");
}

/// Claude Code 2.1.33x hands a multi-line paste to the model as
/// `<pasted_content id="…">\n{text}\n</pasted_content id="…">`: the text inside, else the text.
fn unwrap_paste(t: &str) -> &str {
    let trimmed = t.trim_start_matches('\n');
    let inner = trimmed
        .strip_prefix("<pasted_content")
        .and_then(|rest| rest.split_once(">\n"))
        .and_then(|(_, rest)| rest.trim_end_matches('\n').rsplit_once("\n</pasted_content"))
        .map(|(inner, _)| inner);
    inner.unwrap_or(t)
}

/// The model asks the user a question; it shows in `question.list`, is answered over REST, and
/// the model gets the answer.
async fn question_is_answered_over_rest(cli: Cli) {
    let script = Script::new().on(
        "ASKQ",
        [
            Step::question("Which color do you prefer?", ["Red", "Blue"]).usage(100, 10),
            Step::text("Blue it is.").usage(100, 10),
        ],
    );
    let w = world(script).await;
    let (_session, agent) = w.spawn(cli, "ASKQ please").await;
    // The CLI starts, takes the task and shows its question: a TUI takes its time on a busy machine.
    let q = w
        .wait_long(&agent, || async {
            let v = w
                .ok(reqwest::Method::GET, &format!("/agents/{agent}/questions"), None)
                .await;
            v["questions"].as_array().and_then(|q| q.first().cloned())
        })
        .await;
    assert_eq!(q["question"], "Which color do you prefer?", "{q}");
    let id = q["questionId"].as_str().unwrap();
    w.ok(
        reqwest::Method::POST,
        &format!("/agents/{agent}/questions/{id}/answer"),
        Some(json!({ "answer": "Blue" })),
    )
    .await;
    // The request after the question carries the answer as the tool's result.
    w.wait_long(&agent, || async {
        let answered = w
            .model
            .main_requests()
            .iter()
            .any(|r| r.body.to_string().contains("Blue"));
        answered.then_some(())
    })
    .await;
}

/// The harness is killed with kill -9 after a turn; the spawner starts it again, bound to the
/// same agent, and it resumes the CLI's own session: the next message reaches the model with
/// the earlier conversation, once.
async fn killed_harness_resumes_the_cli_session(cli: Cli) {
    let script = Script::new()
        .on("REMEMBER", [Step::text("I will remember BANANA.").usage(100, 10)])
        .on("AFTER", [Step::text("It was BANANA.").usage(100, 10)]);
    let w = world(script).await;
    let (session, agent) = w.spawn(cli, "REMEMBER the word BANANA").await;
    wait_for(|| async { w.model.heard("REMEMBER").then_some(()) }).await;
    w.idle_times(&agent, cli.idles_before_first_turn() + 1).await;
    let harness = harness_pid(&session).expect("the harness runs");
    // The harness process this test's spawner started.
    let pid = nix::unistd::Pid::from_raw(harness as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).expect("the harness is killed");
    // A message sent while no harness serves the agent waits in the runner and is delivered
    // to the restarted one.
    w.ok(
        reqwest::Method::POST,
        &format!("/sessions/{session}/messages"),
        Some(json!({ "message": "AFTER the crash, which word?" })),
    )
    .await;
    w.wait_long(&agent, || async {
        let seen = w.model.heard("AFTER the crash");
        seen.then_some(())
    })
    .await;
    let resumed = harness_pid(&session).expect("a harness runs again");
    assert_ne!(resumed, harness);
    let events = w.events(&agent, "session.resumed").await;
    assert_eq!(events.len(), 1, "{events:?}");
    // The model saw the earlier turn and the new message once.
    let last = w
        .model
        .main_requests()
        .into_iter()
        .rev()
        // The turn itself: Codex's title request quotes the message too.
        .find(|r| r.user_text.as_deref().is_some_and(|t| t.starts_with("AFTER the crash")))
        .unwrap();
    let body = last.body.to_string();
    assert!(body.contains("REMEMBER the word BANANA"), "history kept: {body}");
    assert_eq!(body.matches("AFTER the crash").count(), 1, "typed once: {body}");
    let deliveries = w
        .ok(reqwest::Method::GET, &format!("/deliveries?sessionId={session}"), None)
        .await;
    let all = deliveries["deliveries"].as_array().cloned().unwrap_or_default();
    assert_eq!(all.len(), 2, "the task and the message after the crash: {deliveries}");
    wait_for(|| async {
        let d = w
            .ok(reqwest::Method::GET, &format!("/deliveries?sessionId={session}"), None)
            .await;
        let all = d["deliveries"].as_array().cloned().unwrap_or_default();
        all.iter().all(|d| d["status"] == "delivered").then_some(())
    })
    .await;
}

/// The pid of the agent-harness process of `session` (Linux /proc).
fn harness_pid(session: &str) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let cmdline = String::from_utf8_lossy(&cmdline);
        (cmdline.contains("agent-harness") && cmdline.contains(session)).then_some(pid)
    })
}

impl World {
    /// `wait_for` with room for a CLI that must wait before it can resume (Gemini: up to a
    /// minute); on failure, what the agent's terminal showed last.
    async fn wait_long<T, F: std::future::Future<Output = Option<T>>>(
        &self,
        agent: &str,
        mut f: impl FnMut() -> F,
    ) -> T {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        loop {
            if let Some(v) = f().await {
                return v;
            }
            if std::time::Instant::now() > deadline {
                let screens = self.events(agent, "terminal.screen").await;
                let last = screens.last().map(|e| e["payload"]["text"].to_string());
                let deliveries = self
                    .ok(reqwest::Method::GET, &format!("/deliveries?agentId={agent}"), None)
                    .await;
                let mut seen = Vec::new();
                for kind in ["delivery.failed", "delivery.delivered", "status.changed"] {
                    for e in self.events(agent, kind).await {
                        seen.push((e["seq"].as_i64(), format!("{} {kind} {}", e["seq"], e["payload"])));
                    }
                }
                seen.sort();
                panic!(
                    "condition not met in 120 s; the agent's last screen: {}\ndeliveries: {deliveries}\nevents:\n{}",
                    last.unwrap_or_default(),
                    seen.into_iter().map(|(_, e)| e).collect::<Vec<_>>().join("\n")
                );
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
}

#[tokio::test]
async fn claude_stream_json_question_is_answered_over_rest() {
    question_is_answered_over_rest(Cli::Claude).await;
}

#[tokio::test]
async fn claude_stream_json_killed_harness_resumes_the_cli_session() {
    killed_harness_resumes_the_cli_session(Cli::Claude).await;
}

#[tokio::test]
async fn codex_app_server_question_is_answered_over_rest() {
    question_is_answered_over_rest(Cli::Codex).await;
}

#[tokio::test]
async fn codex_app_server_killed_harness_resumes_the_cli_session() {
    killed_harness_resumes_the_cli_session(Cli::Codex).await;
}

#[tokio::test]
async fn gemini_acp_killed_harness_resumes_the_cli_session() {
    killed_harness_resumes_the_cli_session(Cli::Gemini).await;
}

#[tokio::test]
async fn claude_stream_json_runs_an_approved_command_costs_it_and_goes_idle() {
    approved_command_runs_is_costed_and_the_agent_goes_idle(Cli::Claude).await;
}

#[tokio::test]
async fn claude_stream_json_usage_is_what_the_model_reported_for_every_request() {
    usage_is_what_the_model_reported_for_every_request(Cli::Claude).await;
}

#[tokio::test]
async fn codex_app_server_usage_is_what_the_model_reported_for_every_request() {
    usage_is_what_the_model_reported_for_every_request(Cli::Codex).await;
}

#[tokio::test]
async fn gemini_acp_usage_is_what_the_model_reported_for_every_request() {
    usage_is_what_the_model_reported_for_every_request(Cli::Gemini).await;
}

#[tokio::test]
async fn claude_stream_json_denied_command_does_not_run() {
    denied_command_does_not_run(Cli::Claude).await;
}

#[tokio::test]
async fn claude_stream_json_multi_line_message_arrives_intact() {
    multi_line_message_arrives_intact(Cli::Claude).await;
}

#[tokio::test]
async fn codex_app_server_runs_an_approved_command_costs_it_and_goes_idle() {
    approved_command_runs_is_costed_and_the_agent_goes_idle(Cli::Codex).await;
}

#[tokio::test]
async fn codex_app_server_denied_command_does_not_run() {
    denied_command_does_not_run(Cli::Codex).await;
}

#[tokio::test]
async fn codex_app_server_multi_line_message_arrives_intact() {
    multi_line_message_arrives_intact(Cli::Codex).await;
}

#[tokio::test]
async fn gemini_acp_runs_an_approved_command_costs_it_and_goes_idle() {
    approved_command_runs_is_costed_and_the_agent_goes_idle(Cli::Gemini).await;
}

#[tokio::test]
async fn gemini_acp_denied_command_does_not_run() {
    denied_command_does_not_run(Cli::Gemini).await;
}

#[tokio::test]
async fn gemini_acp_multi_line_message_arrives_intact() {
    multi_line_message_arrives_intact(Cli::Gemini).await;
}

#[tokio::test]
async fn claude_tui_runs_an_approved_command_and_goes_idle() {
    approved_command_runs_is_costed_and_the_agent_goes_idle(Cli::ClaudeTui).await;
}

#[tokio::test]
async fn claude_tui_denied_command_does_not_run() {
    denied_command_does_not_run(Cli::ClaudeTui).await;
}

#[tokio::test]
async fn claude_tui_question_is_answered_over_rest() {
    question_is_answered_over_rest(Cli::ClaudeTui).await;
}

#[tokio::test]
async fn claude_tui_multi_line_message_arrives_intact() {
    multi_line_message_arrives_intact(Cli::ClaudeTui).await;
}

#[tokio::test]
async fn codex_tui_runs_an_approved_command_and_goes_idle() {
    approved_command_runs_is_costed_and_the_agent_goes_idle(Cli::CodexTui).await;
}

#[tokio::test]
async fn codex_tui_denied_command_does_not_run() {
    denied_command_does_not_run(Cli::CodexTui).await;
}

#[tokio::test]
async fn codex_tui_question_is_answered_over_rest() {
    question_is_answered_over_rest(Cli::CodexTui).await;
}

#[tokio::test]
async fn codex_tui_multi_line_message_arrives_intact() {
    multi_line_message_arrives_intact(Cli::CodexTui).await;
}

#[tokio::test]
async fn gemini_tui_runs_an_approved_command_and_goes_idle() {
    approved_command_runs_is_costed_and_the_agent_goes_idle(Cli::GeminiTui).await;
}

#[tokio::test]
async fn gemini_tui_denied_command_does_not_run() {
    denied_command_does_not_run(Cli::GeminiTui).await;
}

#[tokio::test]
async fn gemini_tui_question_is_answered_over_rest() {
    question_is_answered_over_rest(Cli::GeminiTui).await;
}

#[tokio::test]
async fn gemini_tui_multi_line_message_arrives_intact() {
    multi_line_message_arrives_intact(Cli::GeminiTui).await;
}

#[tokio::test]
async fn claude_tui_a_message_sent_while_the_permission_menu_is_open_waits_and_is_typed_once_after_the_deny() {
    message_sent_while_the_menu_is_open_waits_for_the_deny(Cli::ClaudeTui).await;
}

#[tokio::test]
async fn codex_tui_a_message_sent_while_the_permission_menu_is_open_waits_and_is_typed_once_after_the_deny() {
    message_sent_while_the_menu_is_open_waits_for_the_deny(Cli::CodexTui).await;
}

#[tokio::test]
async fn gemini_tui_a_message_sent_while_the_permission_menu_is_open_waits_and_is_typed_once_after_the_deny() {
    message_sent_while_the_menu_is_open_waits_for_the_deny(Cli::GeminiTui).await;
}

#[tokio::test]
async fn claude_tui_killed_harness_resumes_the_cli_session() {
    killed_harness_resumes_the_cli_session(Cli::ClaudeTui).await;
}

#[tokio::test]
async fn gemini_tui_killed_harness_resumes_the_cli_session() {
    killed_harness_resumes_the_cli_session(Cli::GeminiTui).await;
}

#[tokio::test]
async fn codex_tui_killed_harness_resumes_the_cli_session() {
    killed_harness_resumes_the_cli_session(Cli::CodexTui).await;
}

#[tokio::test]
async fn claude_stream_json_agents_talk_through_the_relay_tools() {
    agents_talk_through_the_relay_tools(Cli::Claude).await;
}

#[tokio::test]
async fn claude_tui_agents_talk_through_the_relay_tools() {
    agents_talk_through_the_relay_tools(Cli::ClaudeTui).await;
}

#[tokio::test]
async fn codex_app_server_agents_talk_through_the_relay_tools() {
    agents_talk_through_the_relay_tools(Cli::Codex).await;
}

#[tokio::test]
async fn codex_tui_agents_talk_through_the_relay_tools() {
    agents_talk_through_the_relay_tools(Cli::CodexTui).await;
}

#[tokio::test]
async fn gemini_acp_agents_talk_through_the_relay_tools() {
    agents_talk_through_the_relay_tools(Cli::Gemini).await;
}

#[tokio::test]
async fn gemini_tui_agents_talk_through_the_relay_tools() {
    agents_talk_through_the_relay_tools(Cli::GeminiTui).await;
}

#[tokio::test]
async fn claude_stream_json_a_message_sent_while_a_permission_request_is_pending_reaches_the_model_once_after_the_deny_and_the_denied_command_never_ran()
 {
    message_sent_while_a_permission_request_is_pending_waits_for_the_deny(Cli::Claude).await;
}

#[tokio::test]
async fn codex_app_server_a_message_sent_while_a_permission_request_is_pending_reaches_the_model_once_after_the_deny_and_the_denied_command_never_ran()
 {
    message_sent_while_a_permission_request_is_pending_waits_for_the_deny(Cli::Codex).await;
}

#[tokio::test]
async fn gemini_acp_a_message_sent_while_a_permission_request_is_pending_reaches_the_model_once_after_the_deny_and_the_denied_command_never_ran()
 {
    message_sent_while_a_permission_request_is_pending_waits_for_the_deny(Cli::Gemini).await;
}
