//! Where the pinned real CLIs live and how to give each one an isolated, offline home pointed at a
//! [`FakeModel`](crate::FakeModel). Shared by this crate's tests and the agent-harness tests.
//!
//! Each `prepare_*_home` writes the CLI's config under `home` and returns the environment to run it
//! with. Run the CLI with `env_clear()` plus that environment, so nothing from the developer's own
//! setup (API keys, config dirs) leaks in.

use std::path::{Path, PathBuf};

use serde_json::json;

/// The pinned versions; `scripts/install-agent-clis.sh` installs exactly these. `RELAY_CLAUDE_VERSION`,
/// `RELAY_CODEX_VERSION` and `RELAY_GEMINI_VERSION` pick another installed one (`latest`, as
/// `install-agent-clis.sh --latest` installs it, for `make test-latest-clis`).
pub const CLAUDE_VERSION: &str = "2.1.197";
pub const CODEX_VERSION: &str = "0.171.0";
pub const GEMINI_VERSION: &str = "0.61.0";

/// Any string works as a key against the fake; it is sent but never checked.
pub const FAKE_ANTHROPIC_KEY: &str = "sk-ant-api03-relay-mesh-fake-model-key-0000000000000000AA";
pub const FAKE_OPENAI_KEY: &str = "sk-relay-mesh-fake";
pub const FAKE_GEMINI_KEY: &str = "relay-mesh-fake-gemini-key";

/// `$RELAY_AGENT_CLIS`, default `$HOME/.cache/relay-mesh/agent-clis`.
pub fn clis_dir() -> PathBuf {
    match std::env::var_os("RELAY_AGENT_CLIS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/relay-mesh/agent-clis"),
    }
}

/// `<clis_dir>/<name>-<version>/node_modules/.bin/<name>`; panics when it is not installed.
pub fn cli_bin(name: &str, version: &str) -> PathBuf {
    let bin = clis_dir()
        .join(format!("{name}-{version}"))
        .join("node_modules/.bin")
        .join(name);
    if !bin.exists() {
        panic!(
            "{name} {version} is not installed at {}: run scripts/install-agent-clis.sh (it honours RELAY_AGENT_CLIS)",
            bin.display()
        );
    }
    bin
}

pub fn claude_bin() -> PathBuf {
    cli_bin("claude", &version("claude", CLAUDE_VERSION))
}

pub fn codex_bin() -> PathBuf {
    cli_bin("codex", &version("codex", CODEX_VERSION))
}

pub fn gemini_bin() -> PathBuf {
    cli_bin("gemini", &version("gemini", GEMINI_VERSION))
}

/// `RELAY_<NAME>_VERSION`, else the pinned version.
fn version(name: &str, pinned: &str) -> String {
    let var = format!("RELAY_{}_VERSION", name.to_uppercase());
    std::env::var(var)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| pinned.to_string())
}

/// What every CLI needs from the outer environment: PATH (node for Gemini and Codex's wrapper) and a locale.
fn base_env(home: &Path) -> Vec<(String, String)> {
    let mut env = vec![
        ("HOME".to_string(), home.display().to_string()),
        ("LANG".into(), "C.UTF-8".into()),
    ];
    if let Some(path) = std::env::var_os("PATH") {
        env.push(("PATH".into(), path.to_string_lossy().into_owned()));
    }
    env
}

fn write(path: &Path, contents: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    }
    std::fs::write(path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// The workdir as the CLIs record it (they resolve symlinks); both spellings when they differ.
fn workdir_keys(workdir: &Path) -> Vec<String> {
    let mut keys = vec![workdir.display().to_string()];
    if let Ok(real) = workdir.canonicalize()
        && real != workdir
    {
        keys.push(real.display().to_string());
    }
    keys
}

/// Claude Code: `~/.claude.json` pre-seeded so the TUI skips onboarding (which otherwise checks
/// connectivity to api.anthropic.com and exits), the API-key prompt and the trust dialog for `workdir`.
/// `-p` needs none of it, but it does no harm.
pub fn prepare_claude_home(home: &Path, url: &str, workdir: &Path) -> Vec<(String, String)> {
    let key_tail = &FAKE_ANTHROPIC_KEY[FAKE_ANTHROPIC_KEY.len() - 20..];
    let project = json!({"hasTrustDialogAccepted": true, "allowedTools": [], "hasCompletedProjectOnboarding": true});
    let projects: serde_json::Map<String, serde_json::Value> = workdir_keys(workdir)
        .into_iter()
        .map(|k| (k, project.clone()))
        .collect();
    let state = json!({
        "hasCompletedOnboarding": true,
        "lastOnboardingVersion": CLAUDE_VERSION,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [key_tail], "rejected": []},
        "projects": projects,
    });
    write(&home.join(".claude.json"), &state.to_string());
    std::fs::create_dir_all(home.join(".claude")).unwrap_or_else(|e| panic!("create ~/.claude: {e}"));
    let mut env = base_env(home);
    env.extend(
        [
            ("ANTHROPIC_BASE_URL", url),
            ("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_KEY),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    env
}

/// Codex: `$CODEX_HOME/config.toml` (= `home/.codex`) with a custom provider at `url/v1` (Responses
/// wire API, key from an env var, no retries), `workdir` trusted, the model-upgrade NUX already seen,
/// analytics/feedback/update checks and plugins off, questions allowed in the default mode, and the
/// TUI's background app-server daemon disabled.
pub fn prepare_codex_home(home: &Path, url: &str, workdir: &Path) -> Vec<(String, String)> {
    let codex_home = home.join(".codex");
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()); // JSON strings are TOML basic strings
    let projects: String = workdir_keys(workdir)
        .iter()
        .map(|k| format!("[projects.{}]\ntrust_level = \"trusted\"\n\n", quote(k)))
        .collect();
    let config = format!(
        r#"model = "gpt-5.5"
model_provider = "fake"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake"
base_url = {base_url}
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[features]
daemon_auto_start = false
# Its plugin marketplace looks up github.com and chatgpt.com: tests reach nothing but loopback.
plugins = false
# request_user_input (Codex's question to the user) is otherwise only offered in Plan mode.
default_mode_request_user_input = true

# Codex writes this key into its [tui] table itself; a second [tui] table would not parse.
[tui]
screen_reader_detection_done = true

[tui.model_availability_nux]
"gpt-6.1-sol" = 1

[notice.model_migrations]
"gpt-5.5" = "gpt-6-sol"

{projects}"#,
        base_url = quote(&format!("{url}/v1")),
    );
    write(&codex_home.join("config.toml"), &config);
    let mut env = base_env(home);
    env.push(("CODEX_HOME".into(), codex_home.display().to_string()));
    env.push(("FAKE_OPENAI_KEY".into(), FAKE_OPENAI_KEY.into()));
    env
}

/// Gemini CLI: `~/.gemini/settings.json` selecting API-key auth, folder trust off, telemetry, usage
/// statistics and auto-update off. The base URL and key come from the environment.
pub fn prepare_gemini_home(home: &Path, url: &str, _workdir: &Path) -> Vec<(String, String)> {
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
        "ui": {"theme": "Default"},
    });
    write(&home.join(".gemini/settings.json"), &settings.to_string());
    let mut env = base_env(home);
    env.extend(
        [
            ("GEMINI_API_KEY", FAKE_GEMINI_KEY),
            ("GOOGLE_GEMINI_BASE_URL", url),
            // Gemini re-executes itself under a bigger heap by default; one process is easier to own and kill.
            ("GEMINI_CLI_NO_RELAUNCH", "1"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    env
}
