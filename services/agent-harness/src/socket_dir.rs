//! The private directory of a harness's relay tools socket (`relay-harness-p<pid>-<uuid>` under
//! `$XDG_RUNTIME_DIR`, else the temporary directory): made at start, removed by the harness on
//! every way out of `run` (the command's exit, a release, SIGTERM, an error), and swept by the
//! spawner once its owner is gone (kill -9, a crash), which the owner's pid in the name tells.

use std::path::{Path, PathBuf};
use std::time::Duration;

const PREFIX: &str = "relay-harness-";

/// A directory without an owner's pid (made by an older harness) is swept once its socket
/// refuses connections and it is at least this old: a harness binds its socket at once.
const UNOWNED_GRACE: Duration = Duration::from_secs(60);

/// Where the socket directories live.
pub fn base() -> PathBuf {
    std::env::var_os("XDG_RUNTIME_DIR").map_or_else(std::env::temp_dir, PathBuf::from)
}

/// This harness's socket directory; dropping it removes the directory and what is in it.
pub struct SocketDir {
    dir: PathBuf,
}

impl SocketDir {
    /// Names a fresh directory (created when the socket is bound, by `relay::bind`).
    pub fn new() -> SocketDir {
        let name = format!("{PREFIX}p{}-{}", std::process::id(), uuid::Uuid::now_v7());
        SocketDir { dir: base().join(name) }
    }

    /// The tools socket in it.
    pub fn socket(&self) -> PathBuf {
        self.dir.join("tools.sock")
    }
}

impl Drop for SocketDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Removes the socket directories under `base` whose harness is gone; returns how many.
pub fn sweep(base: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        // Only our own: another user's (a shared /tmp) is not ours to judge or remove.
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.is_dir() || !owned_by_us(&meta) {
            continue;
        }
        let dead = match owner_pid(rest) {
            Some(pid) => !alive(pid),
            None => unowned_and_idle(&entry.path(), &meta),
        };
        if dead && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// `p<pid>-<uuid>` → pid.
fn owner_pid(rest: &str) -> Option<u32> {
    rest.strip_prefix('p')?.split_once('-')?.0.parse().ok()
}

fn alive(pid: u32) -> bool {
    // With no signal kill(2) only checks that the process exists (EPERM: it does, not ours).
    let Ok(pid) = i32::try_from(pid) else { return false };
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) | Err(nix::errno::Errno::EPERM) => true,
        Err(_) => false,
    }
}

fn owned_by_us(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.uid() == nix::unistd::getuid().as_raw()
}

/// A directory of an older harness (no pid in its name): gone once nobody listens on its socket.
fn unowned_and_idle(dir: &Path, meta: &std::fs::Metadata) -> bool {
    let old = meta
        .modified()
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age >= UNOWNED_GRACE);
    old && std::os::unix::net::UnixStream::connect(dir.join("tools.sock")).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_pid_is_read_from_the_name_and_older_names_have_none() {
        assert_eq!(owner_pid("p4242-0190f8a2-1111-7abc-8def-0123456789ab"), Some(4242));
        assert_eq!(owner_pid("01234567-1111-7abc-8def-0123456789ab"), None);
        let dir = SocketDir::new();
        let name = dir.dir.file_name().unwrap().to_str().unwrap().to_string();
        assert_eq!(owner_pid(name.strip_prefix(PREFIX).unwrap()), Some(std::process::id()));
    }
}
