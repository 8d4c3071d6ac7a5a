//! The environment a CLI runs in: what it inherits, what is on its PATH, and its process as the
//! system calls name it.

/// `name` as the CLI sees it: set for it by the harness (`env`, the last setting winning), else
/// inherited from the harness; empty is unset.
pub(crate) fn cli_var(env: &[(String, String)], name: &str) -> Option<std::ffi::OsString> {
    let set = env.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.into());
    set.or_else(|| std::env::var_os(name)).filter(|v| !v.is_empty())
}

/// `program` is a file here: a path, or a name found on PATH.
pub(crate) fn runnable(program: &str) -> bool {
    if program.contains('/') {
        return std::path::Path::new(program).is_file();
    }
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// A child's pid as nix takes it; none for 0 (to kill(2), this process's own group) or one out
/// of range.
pub(crate) fn child_pid(raw: u32) -> Option<nix::unistd::Pid> {
    i32::try_from(raw)
        .ok()
        .filter(|p| *p > 0)
        .map(nix::unistd::Pid::from_raw)
}
