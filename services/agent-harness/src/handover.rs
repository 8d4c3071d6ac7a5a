//! What a harness and the spawner that started it tell each other: the trace the spawn belongs
//! to (in the harness's environment), and the lines the harness prints on its stdout.

/// How a spawner hands its request's trace context to the harness it starts.
pub const TRACEPARENT_ENV: &str = "RELAY_TRACEPARENT";

/// The line a harness prints when the registry refused to attach its agent, with the error.
pub const ATTACH_REFUSED: &str = "agent session not attached";

/// Tells the spawner (on stdout) which CLI session to resume, and which process to clear away
/// first, should this harness be killed.
pub fn announce_resumable(cli_session: &str, pid: Option<u32>) {
    println!(
        "{}",
        serde_json::json!({ "message": "agent session resumable", "cliSession": cli_session, "cliPid": pid })
    );
}
