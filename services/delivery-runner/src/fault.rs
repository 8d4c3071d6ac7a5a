//! Fault injection for the hand-off tests: with `RELAY_RUNNER_CRASH_AT=<point>:<n>` the runner
//! dies the n-th time it reaches `<point>`, with no cleanup (`abort`: like kill -9, its
//! connections are simply cut). Unset, as in every deployment, a point costs one atomic load.
//!
//! Points: `handed` (a harness took a delivery, its receipt not stored yet), `recorded` (the
//! receipts of a walk stored), `reported` (a harness's report received, not stored yet).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

struct CrashAt {
    point: String,
    nth: u64,
    seen: AtomicU64,
}

fn crash_at() -> Option<&'static CrashAt> {
    static AT: OnceLock<Option<CrashAt>> = OnceLock::new();
    AT.get_or_init(|| {
        let spec = std::env::var("RELAY_RUNNER_CRASH_AT").ok()?;
        let (point, nth) = spec.split_once(':').unwrap_or((&spec, "1"));
        let nth = nth.parse().unwrap_or(1);
        tracing::warn!(point, nth, "fault injection on: this runner dies at {point} #{nth}");
        Some(CrashAt {
            point: point.to_string(),
            nth,
            seen: AtomicU64::new(0),
        })
    })
    .as_ref()
}

/// Dies here if this is the configured point's n-th visit.
pub fn point(name: &str) {
    if let Some(at) = crash_at()
        && at.point == name
        && at.seen.fetch_add(1, Ordering::SeqCst) + 1 == at.nth
    {
        eprintln!("delivery-runner: fault injection: dying at {name} #{}", at.nth);
        std::process::abort();
    }
}
