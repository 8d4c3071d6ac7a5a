//! An agent is only itself: what keeps one agent's CLI from acting as its harness, as another
//! agent, or anywhere on the host.
//!
//! - the harness's bus credentials never reach its CLI: every `RELAY_*` setting is taken out of
//!   the environment the CLI inherits, and the harness's memory and /proc files are closed to
//!   other processes of its user ([`keep_credentials_to_this_process`]);
//! - the relay tools socket answers only the CLI's own processes (`relay::serve`);
//! - an agent's working directory lies under the roots its host's spawner allows
//!   ([`confine_cwd`]).
//!
//! None of this separates agents that run as one Unix user from each other's files: see the
//! docs/security.md.

use std::path::{Path, PathBuf};

/// The one `RELAY_*` variable a CLI may see: the trace its spawn belongs to (no secret; the
/// harness reads it after start-up).
const KEPT: &[&str] = &[crate::handover::TRACEPARENT_ENV];

/// Takes every `RELAY_*` variable but the trace context out of this process's environment (the
/// NATS credentials or their file, the database URL, tokens, the config file's path), so the
/// CLI and every command it runs inherit none of it; and marks this process not dumpable, so
/// another process of the same user can neither ptrace it nor read its /proc/<pid>/environ
/// (which keeps the environment it was started with) or memory.
///
/// Call it once, after the settings are read and before any thread starts.
#[allow(unsafe_code)] // std::env::remove_var: see the SAFETY note.
pub fn keep_credentials_to_this_process() {
    let names: Vec<_> = std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| name.starts_with("RELAY_") && !KEPT.contains(&name.as_str()))
        .collect();
    for name in names {
        // SAFETY: called from main before the runtime (or any other thread) starts: nothing
        // reads the environment concurrently.
        unsafe { std::env::remove_var(name) };
    }
    if let Err(e) = nix::sys::prctl::set_dumpable(false) {
        eprintln!("agent-harness: cannot mark the process not dumpable: {e}");
    }
}

/// The directory agents of `workspace` work in by default: `<data_dir>/workspaces/<workspace>`,
/// created (0700) on demand.
pub fn workspace_dir(data_dir: &Path, workspace: &str) -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    if !relay_contracts::access::is_token(workspace) {
        return Err(format!("workspace {workspace:?} cannot name a directory"));
    }
    let dir = data_dir.join("workspaces").join(workspace);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(&dir)
        .map_err(|e| format!("cannot create the workspace directory {}: {e}", dir.display()))?;
    Ok(dir)
}

/// The directory an agent of `workspace` starts in: `requested` (relative to the workspace's
/// directory when relative), with symlinks and `..` resolved, if it lies under one of the
/// roots; the workspace's directory when nothing is requested. `roots` are the spawner's
/// `cwd_roots`, where `{workspace}` stands for the workspace's name; the workspace's own
/// directory is always a root. The error names the roots.
pub fn confine_cwd(
    data_dir: &Path,
    roots: &[String],
    workspace: &str,
    requested: Option<&str>,
) -> Result<PathBuf, String> {
    let home = workspace_dir(data_dir, workspace)?;
    let configured: Vec<PathBuf> = std::iter::once(home.clone())
        .chain(roots.iter().map(|r| PathBuf::from(r.replace("{workspace}", workspace))))
        .collect();
    let allowed = || {
        configured
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(requested) = requested else {
        return Ok(home);
    };
    let wanted = home.join(requested);
    let resolved = wanted.canonicalize().ok().filter(|p| p.is_dir()).ok_or_else(|| {
        format!(
            "cwd {requested} is not a directory on the agent host; agents here may work under: {}",
            allowed()
        )
    })?;
    // A root that does not exist (yet) allows nothing.
    let inside = configured
        .iter()
        .filter_map(|root| root.canonicalize().ok())
        .any(|root| resolved.starts_with(root));
    if inside {
        Ok(resolved)
    } else {
        Err(format!(
            "cwd {requested} ({}) is outside the directories agents on this host may work in: {} (spawner.cwd_roots)",
            resolved.display(),
            allowed()
        ))
    }
}

/// `spawner.data_dir` when set, else `$XDG_DATA_HOME/relay-mesh`, else
/// `$HOME/.local/share/relay-mesh`.
pub fn data_dir(configured: &str) -> PathBuf {
    if !configured.is_empty() {
        return PathBuf::from(configured);
    }
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("XDG_DATA_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".local/share")))
        .unwrap_or_else(std::env::temp_dir)
        .join("relay-mesh")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("containment-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }

    #[test]
    fn a_cwd_outside_the_roots_is_refused_with_the_roots_named_and_symlinks_are_resolved() {
        let data = scratch();
        let extra = scratch();
        let roots = vec![extra.display().to_string(), "/nonexistent/{workspace}".to_string()];
        let home = data.join("workspaces/ws-1");
        // Nothing asked: the workspace's own directory, created on demand.
        assert_eq!(confine_cwd(&data, &roots, "ws-1", None).unwrap(), home);
        assert!(home.is_dir());
        // Relative: under the workspace's directory.
        std::fs::create_dir(home.join("repo")).unwrap();
        assert_eq!(
            confine_cwd(&data, &roots, "ws-1", Some("repo")).unwrap(),
            home.join("repo")
        );
        assert_eq!(
            confine_cwd(&data, &roots, "ws-1", Some(extra.to_str().unwrap())).unwrap(),
            extra
        );
        std::os::unix::fs::symlink("/etc", home.join("etc-link")).unwrap();
        std::fs::create_dir_all(data.join("workspaces/ws-2")).unwrap();
        for outside in ["/", "/etc", "/root", "../../..", "etc-link", "../ws-2"] {
            let e = confine_cwd(&data, &roots, "ws-1", Some(outside)).unwrap_err();
            assert!(e.contains("outside"), "{outside}: {e}");
            assert!(
                e.contains(home.to_str().unwrap()) && e.contains(extra.to_str().unwrap()),
                "{e}"
            );
            assert!(e.contains("/nonexistent/ws-1"), "{e}");
        }
        let e = confine_cwd(&data, &roots, "ws-1", Some("/no/such/dir")).unwrap_err();
        assert!(
            e.contains("not a directory") && e.contains(home.to_str().unwrap()),
            "{e}"
        );
        assert!(confine_cwd(&data, &roots, "../x", None).is_err());
        let _ = std::fs::remove_dir_all(&data);
        let _ = std::fs::remove_dir_all(&extra);
    }
}
