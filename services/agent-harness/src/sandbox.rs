//! An OS boundary around one agent's CLI, where the host has one: bubblewrap
//! (`spawner.sandbox = "bwrap"`, per CLI `spawner.agents.<cli>.sandbox`).
//!
//! Inside, the whole filesystem is read-only but for the agent's cwd, the CLI's home and the
//! directory of its relay tools socket; /tmp is its own; the spawner's configuration,
//! credentials and signer, and the workspaces' directories (its own cwd aside), are hidden; it
//! sees only its own processes (a PID namespace) and terminals (its own /dev), and holds no
//! capability, root or not. The network is the host's: the CLI must reach its model's API.
//! What this does not stop: docs/security.md.

use std::path::{Path, PathBuf};

/// The bubblewrap program (Debian package `bubblewrap`), found on PATH.
pub const BWRAP: &str = "bwrap";

/// Environment variables naming a CLI's home: where it keeps its login, settings and
/// transcripts, so it must write there.
const HOMES: &[&str] = &["HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sandbox {
    None,
    Bwrap,
}

impl Sandbox {
    /// `value` of the setting named `setting` ("none", empty, or "bwrap").
    pub fn parse(value: &str, setting: &str) -> Result<Sandbox, String> {
        match value {
            "" | "none" => Ok(Sandbox::None),
            "bwrap" => Ok(Sandbox::Bwrap),
            other => Err(format!("{setting} = {other:?}: it is \"none\" or \"bwrap\"")),
        }
    }

    /// Whether this host can run agents so; the error names `setting`.
    pub fn check(self, setting: &str) -> Result<(), String> {
        if self == Sandbox::Bwrap && !crate::env::runnable(BWRAP) {
            return Err(format!(
                "{setting} = \"bwrap\" but bubblewrap ({BWRAP}) is not installed on this host (Debian, Ubuntu: apt-get install bubblewrap)"
            ));
        }
        Ok(())
    }
}

/// What one sandboxed CLI may reach.
#[derive(Debug, Clone, PartialEq)]
pub struct Jail {
    /// Its working directory: read-write, and where it starts.
    pub cwd: PathBuf,
    /// The CLI's home directories: read-write.
    pub homes: Vec<PathBuf>,
    /// The directory of its relay tools socket: read-write; the sockets beside it (other
    /// agents') are hidden.
    pub socket_dir: PathBuf,
    /// Directories (an empty tmpfs over them) and files (/dev/null over them: bubblewrap binds
    /// without devices, so opening one is refused) it must not see; each exists (bubblewrap
    /// would make a missing one).
    pub hide: Vec<PathBuf>,
    /// Directories of the programs it runs: read-only, shown through whatever hides them.
    pub programs: Vec<PathBuf>,
    /// A session of its own (no controlling terminal): for CLIs on pipes. A PTY CLI keeps the
    /// session of its PTY (its own, made by the harness), whose terminal it needs.
    pub new_session: bool,
}

/// bubblewrap's arguments for `jail`, up to (not including) `--` and the command.
///
/// Mounts are layered by depth, so whatever lies deeper wins: `/` read-only, then (say) the
/// home bound read-write, a tmpfs over the workspaces' directories inside it, and the agent's
/// own cwd bound again inside that. Of one path both hidden and writable, writable wins.
pub fn bwrap_args(jail: &Jail) -> Vec<String> {
    let writable: Vec<&Path> = jail
        .homes
        .iter()
        .map(PathBuf::as_path)
        .chain([jail.cwd.as_path(), jail.socket_dir.as_path()])
        .filter(|p| p.is_absolute() && p.parent().is_some())
        .collect();
    // A private /tmp; and the sockets of the other agents beside this one's.
    let socket_base = jail.socket_dir.parent().filter(|p| p.parent().is_some());
    let mut hidden: Vec<&Path> = [Path::new("/tmp")]
        .into_iter()
        .chain(socket_base)
        .chain(jail.hide.iter().map(PathBuf::as_path))
        .filter(|p| p.is_absolute() && p.parent().is_some())
        .collect();
    hidden.sort();
    hidden.dedup();
    // A hidden path under another with nothing writable between is gone already.
    let under_other = |h: &Path| {
        hidden
            .iter()
            .any(|o| *o != h && h.starts_with(o) && !writable.iter().any(|w| h.starts_with(w) && w.starts_with(o)))
    };
    let mut mounts: Vec<(usize, Vec<String>)> = Vec::new();
    let path = |p: &Path| p.display().to_string();
    for h in hidden.iter().filter(|h| !under_other(h)) {
        let how = if h.is_file() {
            vec!["--ro-bind".into(), "/dev/null".into(), path(h)]
        } else {
            vec!["--tmpfs".into(), path(h)]
        };
        mounts.push((h.components().count(), how));
    }
    for p in jail.programs.iter().filter(|p| p.is_absolute() && p.parent().is_some()) {
        mounts.push((p.components().count(), vec!["--ro-bind".into(), path(p), path(p)]));
    }
    for w in &writable {
        mounts.push((w.components().count(), vec!["--bind".into(), path(w), path(w)]));
    }
    // Stable: at one depth, writable binds (pushed last) stay after the hiding.
    mounts.sort_by_key(|(depth, _)| *depth);
    let mut args: Vec<String> = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        .map(String::from)
        .into();
    args.extend(mounts.into_iter().flat_map(|(_, m)| m));
    args.extend(["--chdir".into(), path(&jail.cwd)]);
    args.extend(
        [
            "--unshare-pid",
            "--unshare-ipc",
            "--die-with-parent",
            "--cap-drop",
            "ALL",
        ]
        .map(String::from),
    );
    if jail.new_session {
        args.push("--new-session".into());
    }
    args
}

/// The CLI's home directories, from the environment it gets (`env`, set for it, over this
/// process's, which it inherits): those that exist, never `/`.
pub fn homes(env: &[(String, String)]) -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = HOMES
        .iter()
        .filter_map(|name| crate::env::cli_var(env, name))
        .filter_map(|dir| PathBuf::from(dir).canonicalize().ok())
        .filter(|dir| dir.is_dir() && dir.parent().is_some())
        .collect();
    homes.sort();
    homes.dedup();
    homes
}

/// Where `program` is: itself when it names a path, else the first match on PATH.
pub fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// `program args…` as the harness starts it: as it is, or inside bubblewrap, in `jail` (made
/// only then). Arguments added after these go to the program.
pub fn wrap(
    sandbox: Sandbox,
    jail: impl FnOnce() -> Result<Jail, String>,
    program: &str,
    args: Vec<String>,
) -> Result<(String, Vec<String>), String> {
    if sandbox == Sandbox::None {
        return Ok((program.to_string(), args));
    }
    sandbox.check("harness.sandbox (agent-harness --sandbox)")?;
    let mut wrapped = bwrap_args(&jail()?);
    wrapped.push("--".into());
    wrapped.push(program.into());
    wrapped.extend(args);
    Ok((BWRAP.into(), wrapped))
}

/// What a spawner hides from the agents it sandboxes, besides what `spawner.sandbox_hide`
/// lists: every workspace's directory (an agent's own cwd is bound again), the part of each
/// per-workspace root (`{workspace}`) above the workspace, the harness signer and its
/// directory (`relayctl auth init`'s, with every identity's `.creds`). Paths that exist only.
pub fn hidden_from_agents(data_dir: &Path, cwd_roots: &[String], signer: &str, listed: &[String]) -> Vec<PathBuf> {
    let per_workspace = cwd_roots.iter().filter_map(|root| {
        let (above, _) = root.split_once("{workspace}")?;
        // "/srv/{workspace}" and "/srv/ws-{workspace}" both hide /srv.
        let dir = match above.strip_suffix('/') {
            Some(dir) => Path::new(dir),
            None => Path::new(above).parent()?,
        };
        Some(dir.to_path_buf())
    });
    let signer = (!signer.is_empty()).then(|| PathBuf::from(signer));
    let signer_dir = signer
        .as_ref()
        .and_then(|s| s.canonicalize().ok()?.parent().map(Path::to_path_buf));
    let mut hidden: Vec<PathBuf> = std::iter::once(data_dir.join("workspaces"))
        .chain(per_workspace)
        .chain(signer)
        .chain(signer_dir)
        .chain(listed.iter().filter(|p| !p.is_empty()).map(PathBuf::from))
        .filter_map(|p| p.canonicalize().ok())
        .filter(|p| p.parent().is_some())
        .collect();
    hidden.sort();
    hidden.dedup();
    hidden
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sandbox-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }

    #[test]
    fn bwrap_binds_the_cwd_home_and_socket_over_what_it_hides_deepest_last() {
        let p = PathBuf::from;
        let jail = Jail {
            cwd: p("/home/u/data/workspaces/w1"),
            homes: vec![p("/home/u")],
            socket_dir: p("/run/user/1/relay-harness-1"),
            hide: vec![
                p("/home/u/data/workspaces"),
                p("/etc/relay"),
                // In a hidden directory, with nothing bound between: gone already.
                p("/etc/relay/harness-signer.nk"),
                // In the cwd: hidden again over it.
                p("/home/u/data/workspaces/w1/.secrets"),
            ],
            // A checkout under /tmp: its programs show through the private /tmp.
            programs: vec![p("/tmp/checkout/target/debug")],
            new_session: false,
        };
        #[rustfmt::skip]
        let expected = [
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            // Depth 1: a private /tmp; 2: hidden before bound; 3: the other agents' sockets.
            "--tmpfs", "/tmp",
            "--tmpfs", "/etc/relay",
            "--bind", "/home/u", "/home/u",
            "--tmpfs", "/run/user/1",
            // 4: the workspaces inside the home, the programs' directory (read-only, through the
            // private /tmp) and this agent's socket.
            "--tmpfs", "/home/u/data/workspaces",
            "--ro-bind", "/tmp/checkout/target/debug", "/tmp/checkout/target/debug",
            "--bind", "/run/user/1/relay-harness-1", "/run/user/1/relay-harness-1",
            // 5: its own workspace inside them; 6: a secret inside that.
            "--bind", "/home/u/data/workspaces/w1", "/home/u/data/workspaces/w1",
            "--tmpfs", "/home/u/data/workspaces/w1/.secrets",
            "--chdir", "/home/u/data/workspaces/w1",
            "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL",
        ];
        assert_eq!(bwrap_args(&jail), expected);

        // On pipes: a session of its own. A file is hidden under /dev/null (that cannot be opened).
        // (A file outside /tmp, which is hidden whole: the checkout may lie under it.)
        let file = p("/etc/passwd");
        let piped = bwrap_args(&Jail {
            new_session: true,
            hide: vec![file.clone()],
            ..jail.clone()
        });
        assert_eq!(piped.last().map(String::as_str), Some("--new-session"));
        let file = file.display().to_string();
        assert!(
            piped.windows(3).any(|w| w == ["--ro-bind", "/dev/null", file.as_str()]),
            "{piped:?}"
        );

        // Wrapped: bwrap … -- program args; no sandbox: as it is.
        let args = vec!["--style".to_string(), "claude".to_string()];
        let plain = wrap(Sandbox::None, || unreachable!(), "fake", args.clone()).unwrap();
        assert_eq!(plain, ("fake".to_string(), args.clone()));
        if crate::env::runnable(BWRAP) {
            let (program, wrapped) = wrap(Sandbox::Bwrap, || Ok(jail.clone()), "fake", args).unwrap();
            assert_eq!(program, BWRAP);
            assert_eq!(wrapped[..expected.len()], expected);
            assert_eq!(wrapped[expected.len()..], ["--", "fake", "--style", "claude"]);
        }
    }

    #[test]
    fn a_spawner_hides_the_workspaces_the_per_workspace_roots_and_its_signers_directory() {
        let d = scratch();
        for dir in ["data/workspaces", "srv/a", "checkouts", "auth"] {
            std::fs::create_dir_all(d.join(dir)).unwrap();
        }
        std::fs::write(d.join("auth/harness-signer.nk"), "x").unwrap();
        std::fs::write(d.join("relay.toml"), "").unwrap();
        let roots = [
            format!("{}/srv/{{workspace}}", d.display()),
            format!("{}/checkouts/ws-{{workspace}}/repo", d.display()),
            "/{workspace}".to_string(),
            "/opt/shared".to_string(),
        ];
        let signer = d.join("auth/harness-signer.nk").display().to_string();
        let listed = [d.join("relay.toml").display().to_string(), "/nonexistent".into()];
        let mut expected = vec![
            d.join("data/workspaces"),
            d.join("srv"),
            d.join("checkouts"),
            d.join("auth/harness-signer.nk"),
            d.join("auth"),
            d.join("relay.toml"),
        ];
        expected.sort();
        assert_eq!(hidden_from_agents(&d.join("data"), &roots, &signer, &listed), expected);
        assert_eq!(Sandbox::parse("", "s"), Ok(Sandbox::None));
        assert_eq!(Sandbox::parse("bwrap", "s"), Ok(Sandbox::Bwrap));
        let e = Sandbox::parse("firejail", "spawner.sandbox").unwrap_err();
        assert!(e.contains("spawner.sandbox") && e.contains("bwrap"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
