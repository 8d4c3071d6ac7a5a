//! The real, pinned agent CLIs in their non-interactive modes against the in-process fake, each in an
//! isolated HOME with telemetry, updates and nonessential traffic off. A missing CLI fails the test
//! (see `fake_model::clis::cli_bin`); it is never skipped.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use fake_model::{FakeModel, Script, Step, clis};
use serde_json::{Value, json};

/// Generous: a cold CLI start is ~1-3 s, but CI shares 2 cores with the build.
const CLI_TIMEOUT: Duration = Duration::from_secs(120);

/// A temp dir with `home/` and `work/`, removed on drop.
struct Sandbox {
    root: PathBuf,
    home: PathBuf,
    work: PathBuf,
}

impl Sandbox {
    fn new(tag: &str) -> Sandbox {
        // Not under /tmp, where a checkout may lie too: Codex refuses to put its sandbox helper
        // (`codex-linux-sandbox`) on PATH for a CODEX_HOME in a temporary directory, and where a
        // system bubblewrap exists its workspace sandbox then cannot start the command at all.
        let root = PathBuf::from("/var/tmp").join(format!("fake-model-{tag}-{}", uuid::Uuid::new_v4().simple()));
        let (home, work) = (root.join("home"), root.join("work"));
        for dir in [&home, &work] {
            std::fs::create_dir_all(dir).expect("create sandbox dir");
        }
        Sandbox { root, home, work }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Kills the CLI's whole process group on drop: node wrappers, shell tool children, anything it left
/// behind. The group is the one `run_cli` created for this run (`process_group(0)`).
struct KillGroup(Option<u32>);

impl Drop for KillGroup {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.take() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pgid}")])
                .stderr(Stdio::null())
                .status();
        }
    }
}

struct CliRun {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl CliRun {
    /// stdout's JSON lines (stream-json / --json); other lines are ignored.
    fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    fn find(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.events()
            .into_iter()
            .find(pred)
            .unwrap_or_else(|| panic!("no {what} in the output\n{self}"))
    }
}

impl std::fmt::Display for CliRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Runs `bin args` in `sandbox.work` with only `env`, stdin closed, output to files; waits for exit
/// up to `CLI_TIMEOUT`, then kills its process group and fails with what it printed.
async fn run_cli(bin: &Path, args: &[&str], env: &[(String, String)], sandbox: &Sandbox) -> CliRun {
    let (out_path, err_path) = (sandbox.root.join("stdout"), sandbox.root.join("stderr"));
    let stdout = std::fs::File::create(&out_path).expect("stdout file");
    let stderr = std::fs::File::create(&err_path).expect("stderr file");
    let mut child = tokio::process::Command::new(bin)
        .args(args)
        .current_dir(&sandbox.work)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", bin.display()));
    let group = KillGroup(child.id());
    let waited = tokio::time::timeout(CLI_TIMEOUT, child.wait()).await;
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    match waited {
        Ok(status) => {
            drop(group);
            CliRun {
                status: status.expect("wait"),
                stdout: read(&out_path),
                stderr: read(&err_path),
            }
        }
        Err(_) => {
            drop(group);
            panic!(
                "{} {args:?} did not exit within {CLI_TIMEOUT:?}; killed.\n--- stdout ---\n{}\n--- stderr ---\n{}",
                bin.display(),
                read(&out_path),
                read(&err_path)
            );
        }
    }
}

fn assert_success(run: &CliRun) {
    assert!(run.status.success(), "CLI failed\n{run}");
}

// ---------------------------------------------------------------------------------------------------
// Claude Code

fn claude_args<'a>(prompt: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["-p", prompt, "--output-format", "stream-json", "--verbose"];
    args.extend_from_slice(extra);
    args
}

#[tokio::test]
async fn claude_print_mode_reports_exactly_the_scripted_usage() {
    let model = FakeModel::start(Script::new().on("SAYHI", [Step::text("Hi from the script").usage(1500, 800)])).await;
    let sandbox = Sandbox::new("claude-text");
    let env = clis::prepare_claude_home(&sandbox.home, &model.url(), &sandbox.work);
    let run = run_cli(&clis::claude_bin(), &claude_args("SAYHI please", &[]), &env, &sandbox).await;
    assert_success(&run);

    let result = run.find("result line", |e| e["type"] == "result");
    assert_eq!(result["result"], "Hi from the script", "{run}");
    assert_eq!(result["usage"]["input_tokens"], 1500, "{run}");
    assert_eq!(result["usage"]["output_tokens"], 800, "{run}");
    assert_eq!(model.user_texts(), ["SAYHI please"]);
    assert_eq!(model.main_requests().len(), 1);
}

#[tokio::test]
async fn claude_print_mode_runs_the_scripted_bash_command_when_bash_is_allowed() {
    let script = Script::new().on(
        "RUNTOOL",
        [
            Step::shell("touch ran.txt").usage(1500, 800),
            Step::text("done").usage(100, 20),
        ],
    );
    let model = FakeModel::start(script).await;
    let sandbox = Sandbox::new("claude-shell");
    let env = clis::prepare_claude_home(&sandbox.home, &model.url(), &sandbox.work);
    // bypassPermissions is refused when running as root; allowing Bash is enough for -p.
    let args = claude_args("RUNTOOL please", &["--allowedTools", "Bash"]);
    let run = run_cli(&clis::claude_bin(), &args, &env, &sandbox).await;
    assert_success(&run);

    assert!(
        sandbox.work.join("ran.txt").exists(),
        "the Bash tool did not create ran.txt\n{run}"
    );
    let result = run.find("result line", |e| e["type"] == "result");
    assert_eq!(result["result"], "done");
    assert_eq!(
        (
            result["usage"]["input_tokens"].as_u64(),
            result["usage"]["output_tokens"].as_u64()
        ),
        (Some(1600), Some(820))
    );
    assert_eq!(model.main_requests().len(), 2);
}

#[tokio::test]
async fn claude_print_mode_calls_a_scripted_mcp_tool() {
    let script = Script::new().on(
        "MCPTOOL",
        [
            Step::tool("mcp__fake__echo", json!({"text": "ping"})),
            Step::text("mcp done"),
        ],
    );
    let model = FakeModel::start(script).await;
    let sandbox = Sandbox::new("claude-mcp");
    let env = clis::prepare_claude_home(&sandbox.home, &model.url(), &sandbox.work);
    let config = sandbox.root.join("mcp.json");
    let servers =
        json!({"mcpServers": {"fake": {"command": env!("CARGO_BIN_EXE_fake-model"), "args": ["--mcp-echo"]}}});
    std::fs::write(&config, servers.to_string()).expect("write mcp config");
    let config = config.display().to_string();
    let args = claude_args(
        "MCPTOOL please",
        &["--mcp-config", &config, "--allowedTools", "mcp__fake__echo"],
    );
    let run = run_cli(&clis::claude_bin(), &args, &env, &sandbox).await;
    assert_success(&run);

    assert_eq!(run.find("result line", |e| e["type"] == "result")["result"], "mcp done");
    // Claude Code 2.1.33x loads the deferred MCP tool with ToolSearch first (another user event).
    let results: Vec<String> = run
        .events()
        .iter()
        .filter(|e| e["type"] == "user")
        .map(Value::to_string)
        .collect();
    assert!(results.iter().any(|r| r.contains("echo: ping")), "{run}");
}

// ---------------------------------------------------------------------------------------------------
// Codex

fn codex_args<'a>(sandbox: &'a Sandbox, prompt: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let work = sandbox.work.to_str().expect("utf-8 temp path");
    let mut args = vec!["exec", "--json", "--skip-git-repo-check", "-C", work];
    args.extend_from_slice(extra);
    args.push(prompt);
    args
}

#[tokio::test]
async fn codex_exec_reports_the_scripted_text_and_exact_usage() {
    let model = FakeModel::start(Script::new().on("SAYHI", [Step::text("Hi from the script").usage(1500, 800)])).await;
    let sandbox = Sandbox::new("codex-text");
    let env = clis::prepare_codex_home(&sandbox.home, &model.url(), &sandbox.work);
    let run = run_cli(
        &clis::codex_bin(),
        &codex_args(&sandbox, "SAYHI please", &[]),
        &env,
        &sandbox,
    )
    .await;
    assert_success(&run);

    let message = run.find("agent_message", |e| e["item"]["type"] == "agent_message");
    assert_eq!(message["item"]["text"], "Hi from the script");
    let usage = run.find("turn.completed", |e| e["type"] == "turn.completed")["usage"].clone();
    assert_eq!(
        (usage["input_tokens"].as_u64(), usage["output_tokens"].as_u64()),
        (Some(1500), Some(800)),
        "{run}"
    );
    assert_eq!(model.user_texts(), ["SAYHI please"]);
}

#[tokio::test]
async fn codex_exec_runs_the_scripted_shell_command_in_its_workspace_sandbox() {
    let script = Script::new().on(
        "RUNTOOL",
        [
            Step::shell("touch ran.txt").usage(1500, 800),
            Step::text("done").usage(100, 20),
        ],
    );
    let model = FakeModel::start(script).await;
    let sandbox = Sandbox::new("codex-shell");
    let env = clis::prepare_codex_home(&sandbox.home, &model.url(), &sandbox.work);
    // exec forces approval policy never: the fake then leaves out `require_escalated` (as Codex's
    // instructions demand) and the command runs in the workspace-write sandbox.
    let run = run_cli(
        &clis::codex_bin(),
        &codex_args(&sandbox, "RUNTOOL please", &[]),
        &env,
        &sandbox,
    )
    .await;
    assert_success(&run);

    assert!(
        sandbox.work.join("ran.txt").exists(),
        "exec_command did not create ran.txt\n{run}"
    );
    let command = run.find("completed command", |e| {
        e["type"] == "item.completed" && e["item"]["type"] == "command_execution"
    });
    assert_eq!(command["item"]["exit_code"], 0);
    let usage = run.find("turn.completed", |e| e["type"] == "turn.completed")["usage"].clone();
    assert_eq!(
        (usage["input_tokens"].as_u64(), usage["output_tokens"].as_u64()),
        (Some(1600), Some(820))
    );
}

#[tokio::test]
async fn codex_exec_calls_an_mcp_tool_found_through_tool_search() {
    let script = Script::new().on(
        "MCPTOOL",
        [
            Step::tool("mcp__fake__echo", json!({"text": "ping"})),
            Step::text("mcp done"),
        ],
    );
    let model = FakeModel::start(script).await;
    let sandbox = Sandbox::new("codex-mcp");
    let env = clis::prepare_codex_home(&sandbox.home, &model.url(), &sandbox.work);
    let config_path = sandbox.home.join(".codex/config.toml");
    let mut config = std::fs::read_to_string(&config_path).expect("config.toml");
    let server = serde_json::to_string(env!("CARGO_BIN_EXE_fake-model")).expect("quote");
    config.push_str(&format!(
        "\n[mcp_servers.fake]\ncommand = {server}\nargs = [\"--mcp-echo\"]\n"
    ));
    std::fs::write(&config_path, config).expect("write config.toml");
    // MCP tool calls need approval, which exec (policy never) rejects; bypass it.
    let args = codex_args(
        &sandbox,
        "MCPTOOL please",
        &["--dangerously-bypass-approvals-and-sandbox"],
    );
    let run = run_cli(&clis::codex_bin(), &args, &env, &sandbox).await;
    assert_success(&run);

    let call = run.find("completed mcp_tool_call", |e| {
        e["type"] == "item.completed" && e["item"]["type"] == "mcp_tool_call"
    });
    assert_eq!(call["item"]["status"], "completed", "{run}");
    assert_eq!(call["item"]["result"]["content"][0]["text"], "echo: ping");
    assert_eq!(
        run.find("agent_message", |e| e["item"]["type"] == "agent_message")["item"]["text"],
        "mcp done"
    );
    // search, call, final answer
    assert_eq!(model.main_requests().len(), 3);
}

// ---------------------------------------------------------------------------------------------------
// Gemini CLI

#[tokio::test]
async fn gemini_print_mode_reports_exactly_the_scripted_usage() {
    let model = FakeModel::start(Script::new().on("SAYHI", [Step::text("Hi from the script").usage(1500, 800)])).await;
    let sandbox = Sandbox::new("gemini-text");
    let env = clis::prepare_gemini_home(&sandbox.home, &model.url(), &sandbox.work);
    let args = ["-p", "SAYHI please", "--output-format", "stream-json"];
    let run = run_cli(&clis::gemini_bin(), &args, &env, &sandbox).await;
    assert_success(&run);

    let text: String = run
        .events()
        .iter()
        .filter(|e| e["type"] == "message" && e["role"] == "assistant")
        .filter_map(|e| e["content"].as_str().map(str::to_string))
        .collect();
    assert_eq!(text, "Hi from the script", "{run}");
    let stats = run.find("result line", |e| e["type"] == "result")["stats"].clone();
    assert_eq!(
        (stats["input_tokens"].as_u64(), stats["output_tokens"].as_u64()),
        (Some(1500), Some(800)),
        "{run}"
    );
    assert_eq!(stats["total_tokens"], 2300);
    // The router side call happened and counted nothing.
    assert!(
        model
            .requests()
            .iter()
            .any(|r| !r.main && r.path.ends_with(":generateContent"))
    );
    assert_eq!(model.main_requests().len(), 1);
}

#[tokio::test]
async fn gemini_yolo_mode_runs_the_scripted_shell_command() {
    let script = Script::new().on(
        "RUNTOOL",
        [
            Step::shell("touch ran.txt").usage(1500, 800),
            Step::text("done").usage(100, 20),
        ],
    );
    let model = FakeModel::start(script).await;
    let sandbox = Sandbox::new("gemini-shell");
    let env = clis::prepare_gemini_home(&sandbox.home, &model.url(), &sandbox.work);
    // -p leaves run_shell_command out of the tool list unless --yolo.
    let args = ["-p", "RUNTOOL please", "--yolo", "--output-format", "stream-json"];
    let run = run_cli(&clis::gemini_bin(), &args, &env, &sandbox).await;
    assert_success(&run);

    assert!(
        sandbox.work.join("ran.txt").exists(),
        "run_shell_command did not create ran.txt\n{run}"
    );
    assert_eq!(
        run.find("tool_result", |e| e["type"] == "tool_result")["status"],
        "success"
    );
    let stats = run.find("result line", |e| e["type"] == "result")["stats"].clone();
    assert_eq!(
        (stats["input_tokens"].as_u64(), stats["output_tokens"].as_u64()),
        (Some(1600), Some(820))
    );
}
