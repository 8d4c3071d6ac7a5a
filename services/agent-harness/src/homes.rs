//! A CLI home the harness prepares itself (`--home DIR`, the spawner's
//! `spawner.agents.<cli>.home`): the settings that let Claude Code, Codex and Gemini CLI start in
//! their cwd with no one at the terminal — onboarding done, the cwd trusted, telemetry, update
//! checks and error reports off, API-key auth when the key is in the environment. Without it a
//! CLI in a new home or cwd stops at a screen only a person can answer (the harness reports such
//! a screen as `blocked`; see the `blocked` pattern in parse.rs).
//!
//! What is there already is kept: each file is merged into, never replaced, so a home a person
//! logged into (`claude /login`, `codex login`) keeps its login and settings. The CLI runs with
//! `HOME` (and Codex with `CODEX_HOME`) pointed at it.
//!
//! Checked against Claude Code 2.1.197 and 2.1.332, Codex 0.171.0 and Gemini CLI 0.61.0.

use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The variables that turn Claude Code's traffic other than the model's off (telemetry, error
/// reports, the auto-updater). Set for the CLI unless its environment sets them already.
const CLAUDE_QUIET: &[(&str, &str)] = &[
    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ("DISABLE_AUTOUPDATER", "1"),
    ("DISABLE_TELEMETRY", "1"),
    ("DISABLE_ERROR_REPORTING", "1"),
];

/// The provider a prepared Codex home uses when `OPENAI_API_KEY` is set and the config names
/// none: OpenAI's Responses API at `OPENAI_BASE_URL` (default below), the key from that variable.
const CODEX_PROVIDER: &str = "relay-openai";
const OPENAI_URL: &str = "https://api.openai.com/v1";

/// Prepares `home` for the CLI whose patterns are `cli` (claude, codex, gemini; any other gets
/// the directory only) to work in `cwd`, and returns the environment to run it with. `var` reads
/// the environment the CLI will have (the keys and base URLs).
pub fn prepare(
    cli: &str,
    home: &Path,
    cwd: &Path,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, String> {
    std::fs::create_dir_all(home).map_err(|e| format!("cannot create the CLI home {}: {e}", home.display()))?;
    let home = home
        .canonicalize()
        .map_err(|e| format!("the CLI home {}: {e}", home.display()))?;
    let _lock = lock(&home)?;
    let mut env = vec![("HOME".to_string(), home.display().to_string())];
    let cwds = spellings(cwd);
    match cli {
        "claude" => {
            claude(&home, &cwds, var)?;
            env.extend(
                CLAUDE_QUIET
                    .iter()
                    .filter(|(name, _)| var(name).is_none())
                    .map(|(name, value)| (name.to_string(), value.to_string())),
            );
        }
        "codex" => {
            let codex_home = home.join(".codex");
            codex(&codex_home, &cwds, var)?;
            env.push(("CODEX_HOME".into(), codex_home.display().to_string()));
        }
        "gemini" => gemini(&home, &cwds, var)?,
        _ => {}
    }
    Ok(env)
}

/// `home/.relay-mesh-home.lock`, held while the files are merged: agents of one workspace may
/// share a home and start at the same moment.
fn lock(home: &Path) -> Result<nix::fcntl::Flock<std::fs::File>, String> {
    let path = home.join(".relay-mesh-home.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| format!("cannot lock {}: {e}", path.display()))
}

/// The cwd as given and as the CLIs record it (symlinks resolved), both when they differ.
fn spellings(cwd: &Path) -> Vec<String> {
    let mut all = vec![cwd.display().to_string()];
    if let Ok(real) = cwd.canonicalize()
        && real != cwd
    {
        all.push(real.display().to_string());
    }
    all
}

/// Claude Code: `~/.claude.json` says onboarding is done (else the TUI checks its connection to
/// api.anthropic.com and stops), the key in `ANTHROPIC_API_KEY` approved (else it asks whether
/// to use it), and the cwd's trust dialog accepted.
fn claude(home: &Path, cwds: &[String], var: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
    let path = home.join(".claude.json");
    let mut state = read_json(&path)?;
    state.entry("hasCompletedOnboarding").or_insert(json!(true));
    state.entry("lastOnboardingVersion").or_insert(json!("2.1.197"));
    state.entry("theme").or_insert(json!("dark"));
    if let Some(key) = var("ANTHROPIC_API_KEY").filter(|k| k.len() >= 20) {
        // Claude Code remembers an approved key by its last 20 characters.
        let tail = json!(key[key.len() - 20..]);
        let responses = object(&mut state, "customApiKeyResponses");
        responses.entry("rejected").or_insert(json!([]));
        let approved = responses.entry("approved").or_insert(json!([]));
        if let Some(list) = approved.as_array_mut()
            && !list.contains(&tail)
        {
            list.push(tail);
        }
    }
    let projects = object(&mut state, "projects");
    for cwd in cwds {
        let project = object(projects, cwd);
        project.insert("hasTrustDialogAccepted".into(), json!(true));
        project.insert("hasCompletedProjectOnboarding".into(), json!(true));
        project.entry("allowedTools").or_insert(json!([]));
    }
    write(&path, &Value::Object(state).to_string())?;
    std::fs::create_dir_all(home.join(".claude")).map_err(|e| format!("{}/.claude: {e}", home.display()))
}

/// Codex: `$CODEX_HOME/config.toml` with the cwd trusted, analytics, feedback and update checks
/// off, the TUI's background daemon and first-run notices off, and — when `OPENAI_API_KEY` is set
/// and no provider is chosen — a provider that reads it (at `OPENAI_BASE_URL` when set).
fn codex(codex_home: &Path, cwds: &[String], var: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
    use toml_edit::{DocumentMut, Item, Table, value};
    let path = codex_home.join("config.toml");
    let text = read_text(&path)?;
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| format!("{} is not TOML: {e}", path.display()))?;
    let table = |doc: &mut DocumentMut, name: &str| -> Result<(), String> {
        if !doc.contains_key(name) {
            doc[name] = Item::Table(Table::new());
        }
        doc[name]
            .as_table_like()
            .map(|_| ())
            .ok_or_else(|| format!("{}: `{name}` is not a table", path.display()))
    };
    if !doc.contains_key("check_for_update_on_startup") {
        doc["check_for_update_on_startup"] = value(false);
    }
    for (section, key, on) in [
        ("analytics", "enabled", false),
        ("feedback", "enabled", false),
        // The TUI otherwise copies itself into the home to run a background app-server.
        ("features", "daemon_auto_start", false),
        ("tui", "screen_reader_detection_done", true),
    ] {
        table(&mut doc, section)?;
        doc[section][key] = value(on);
    }
    if var("OPENAI_API_KEY").is_some() && (!doc.contains_key("model_provider") || own_provider(&doc)) {
        table(&mut doc, "model_providers")?;
        let mut provider = Table::new();
        provider["name"] = value("OpenAI (relay-mesh)");
        provider["base_url"] = value(var("OPENAI_BASE_URL").unwrap_or_else(|| OPENAI_URL.into()));
        provider["env_key"] = value("OPENAI_API_KEY");
        provider["wire_api"] = value("responses");
        doc["model_providers"][CODEX_PROVIDER] = Item::Table(provider);
        doc["model_provider"] = value(CODEX_PROVIDER);
    }
    table(&mut doc, "projects")?;
    for cwd in cwds {
        let mut project = Table::new();
        project["trust_level"] = value("trusted");
        doc["projects"][cwd.as_str()] = Item::Table(project);
    }
    write(&path, &doc.to_string())
}

/// The provider is the one this module wrote (its base URL follows `OPENAI_BASE_URL`).
fn own_provider(doc: &toml_edit::DocumentMut) -> bool {
    doc.get("model_provider").and_then(|p| p.as_str()) == Some(CODEX_PROVIDER)
}

/// Gemini CLI: `~/.gemini/settings.json` with API-key auth when `GEMINI_API_KEY` is set and no
/// auth is chosen, usage statistics, telemetry and updates off; the cwd in
/// `~/.gemini/trustedFolders.json` (else its TUI asks whether to trust the folder).
fn gemini(home: &Path, cwds: &[String], var: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
    let dir = home.join(".gemini");
    let path = dir.join("settings.json");
    let mut settings = read_json(&path)?;
    if var("GEMINI_API_KEY").is_some() {
        let auth = object(object(&mut settings, "security"), "auth");
        auth.entry("selectedType").or_insert(json!("gemini-api-key"));
    }
    object(&mut settings, "privacy").insert("usageStatisticsEnabled".into(), json!(false));
    object(&mut settings, "telemetry").insert("enabled".into(), json!(false));
    let general = object(&mut settings, "general");
    general.insert("disableAutoUpdate".into(), json!(true));
    general.insert("disableUpdateNag".into(), json!(true));
    object(&mut settings, "ui").entry("theme").or_insert(json!("Default"));
    write(&path, &Value::Object(settings).to_string())?;

    let path = dir.join("trustedFolders.json");
    let mut trusted = read_json(&path)?;
    for cwd in cwds {
        trusted.insert(cwd.clone(), json!("TRUST_FOLDER"));
    }
    write(&path, &Value::Object(trusted).to_string())
}

/// `map[key]` as an object, made one when it is missing or something else.
fn object<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = map.entry(key).or_insert_with(|| json!({}));
    if !slot.is_object() {
        *slot = json!({});
    }
    slot.as_object_mut().expect("made an object above")
}

fn read_text(path: &Path) -> Result<String, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// A JSON object file; empty or missing: an empty object. One that is not an object is an
/// error, not something to overwrite (it is the user's).
fn read_json(path: &Path) -> Result<Map<String, Value>, String> {
    let text = read_text(path)?;
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(format!("{} is not a JSON object; fix or remove it", path.display())),
        Err(e) => Err(format!("{} is not JSON ({e}); fix or remove it", path.display())),
    }
}

/// Written whole or not at all (a CLI reading it at the same moment sees the old or the new).
fn write(path: &Path, contents: &str) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let tmp: PathBuf = dir.join(format!(
        ".{}.relay-mesh.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file")
    ));
    std::fs::write(&tmp, contents).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("relay-homes-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn json_file(path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn keys(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn a_claude_home_keeps_what_it_had_and_gains_onboarding_the_key_and_the_cwds_trust() {
        let home = scratch("claude");
        let cwd = home.join("work");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::write(
            home.join(".claude.json"),
            r#"{"oauthAccount":{"email":"a@b"},"theme":"light","projects":{"/other":{"x":1}}}"#,
        )
        .unwrap();
        let env = prepare(
            "claude",
            &home,
            &cwd,
            &keys(&[("ANTHROPIC_API_KEY", "sk-ant-0123456789abcdefghijKLMNOPQRSTUVWXYZ")]),
        )
        .unwrap();
        let state: Value = json_file(&home.join(".claude.json"));
        assert_eq!(state["oauthAccount"]["email"], "a@b", "a login is kept");
        assert_eq!(state["theme"], "light", "a setting is kept");
        assert_eq!(state["projects"]["/other"]["x"], 1);
        assert_eq!(state["hasCompletedOnboarding"], true);
        assert_eq!(
            state["customApiKeyResponses"]["approved"],
            json!(["ghijKLMNOPQRSTUVWXYZ"])
        );
        let real = cwd.canonicalize().unwrap().display().to_string();
        assert_eq!(state["projects"][&real]["hasTrustDialogAccepted"], true);
        let real_home = home.canonicalize().unwrap().display().to_string();
        assert!(env.contains(&("HOME".into(), real_home)), "{env:?}");
        assert!(env.contains(&("DISABLE_TELEMETRY".into(), "1".into())), "{env:?}");
        // Twice: the same file, the key approved once.
        prepare(
            "claude",
            &home,
            &cwd,
            &keys(&[("ANTHROPIC_API_KEY", "sk-ant-0123456789abcdefghijKLMNOPQRSTUVWXYZ")]),
        )
        .unwrap();
        let again: Value = json_file(&home.join(".claude.json"));
        assert_eq!(again, state);
    }

    #[test]
    fn a_codex_home_trusts_the_cwd_and_reads_the_key_from_the_environment_without_losing_comments() {
        let home = scratch("codex");
        let cwd = home.join("work");
        std::fs::create_dir_all(home.join(".codex")).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::write(home.join(".codex/config.toml"), "# mine\nmodel = \"gpt-5.5\"\n").unwrap();
        let env = prepare(
            "codex",
            &home,
            &cwd,
            &keys(&[("OPENAI_API_KEY", "sk-x"), ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")]),
        )
        .unwrap();
        let text = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap();
        assert!(text.starts_with("# mine\nmodel = \"gpt-5.5\""), "{text}");
        let doc: toml_edit::DocumentMut = text.parse().unwrap();
        assert_eq!(doc["model_provider"].as_str(), Some(CODEX_PROVIDER));
        assert_eq!(
            doc["model_providers"][CODEX_PROVIDER]["base_url"].as_str(),
            Some("http://127.0.0.1:9/v1")
        );
        let real = cwd.canonicalize().unwrap().display().to_string();
        assert_eq!(doc["projects"][real.as_str()]["trust_level"].as_str(), Some("trusted"));
        assert_eq!(doc["analytics"]["enabled"].as_bool(), Some(false));
        assert!(
            env.iter().any(|(k, v)| k == "CODEX_HOME" && v.ends_with("/.codex")),
            "{env:?}"
        );
    }

    #[test]
    fn a_codex_home_with_a_provider_of_its_own_keeps_it() {
        let home = scratch("codex-own");
        std::fs::create_dir_all(home.join(".codex")).unwrap();
        std::fs::write(home.join(".codex/config.toml"), "model_provider = \"azure\"\n").unwrap();
        prepare("codex", &home, &home, &keys(&[("OPENAI_API_KEY", "sk-x")])).unwrap();
        let doc: toml_edit::DocumentMut = std::fs::read_to_string(home.join(".codex/config.toml"))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(doc["model_provider"].as_str(), Some("azure"));
        assert!(doc.get("model_providers").is_none());
    }

    #[test]
    fn a_gemini_home_trusts_the_cwd_and_uses_the_api_key() {
        let home = scratch("gemini");
        prepare("gemini", &home, &home, &keys(&[("GEMINI_API_KEY", "k")])).unwrap();
        let settings: Value = json_file(&home.join(".gemini/settings.json"));
        assert_eq!(settings["security"]["auth"]["selectedType"], "gemini-api-key");
        assert_eq!(settings["telemetry"]["enabled"], false);
        let trusted: Value = json_file(&home.join(".gemini/trustedFolders.json"));
        let real = home.canonicalize().unwrap().display().to_string();
        assert_eq!(trusted[&real], "TRUST_FOLDER");
    }

    #[test]
    fn a_settings_file_that_is_not_json_is_an_error_naming_it_not_overwritten() {
        let home = scratch("broken");
        std::fs::write(home.join(".claude.json"), "{not json").unwrap();
        let err = prepare("claude", &home, &home, &keys(&[])).unwrap_err();
        assert!(err.contains(".claude.json is not JSON"), "{err}");
        assert_eq!(std::fs::read_to_string(home.join(".claude.json")).unwrap(), "{not json");
    }
}
