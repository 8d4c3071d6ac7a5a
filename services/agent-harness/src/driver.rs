//! What every driver of a CLI (the PTY agent in session.rs, the structured protocols in
//! structured/) implements and shares, without importing the orchestrator (run.rs) that
//! drives them.

use relay_contracts::capabilities::*;
use relay_contracts::delivery::{Receipt, ReceiptStatus};
use relay_harness::{AgentSession, EventSink};
use std::sync::Arc;

/// What the run loop needs of an agent, whatever drives it (implemented beside each driver).
pub(crate) trait Driver: AgentSession + crate::relay::Inbox {
    fn relay(&self) -> Arc<crate::relay::Relay>;
    fn set_events(self: &Arc<Self>, events: EventSink);
    fn kill(&self);
    fn is_releasing(&self) -> bool;
}

/// What a PTY agent can do: every delivery mode (boundary modes queued in the harness and
/// reported when typed), text only, release; usage only when the CLI shows it on its screen.
pub fn capabilities(observes_usage: bool) -> AgentSessionCapabilities {
    use AgentSessionEventType::*;
    let mut emits = vec![
        StatusChanged,
        ToolCalled,
        ToolCompleted,
        MessageReceived,
        FileChanged,
        TerminalOutput,
        TerminalScreen,
        SessionStarted,
        SessionReleased,
    ];
    if observes_usage {
        emits.push(UsageUpdated);
    }
    let modes = vec![
        DeliveryMode::Immediate,
        DeliveryMode::NextMessage,
        DeliveryMode::NextToolCall,
        DeliveryMode::OnIdle,
        DeliveryMode::Manual,
    ];
    text_agent(modes, emits)
}

/// A harness-run agent: text messages, the given modes (queued in the harness, reported when
/// surfaced) and events, release.
pub(crate) fn text_agent(modes: Vec<DeliveryMode>, emits: Vec<AgentSessionEventType>) -> AgentSessionCapabilities {
    AgentSessionCapabilities {
        messaging: MessagingCapabilities {
            receive: true,
            // Through the relay tools (MCP) or the output convention.
            send: Some(true),
            attachments: Some(vec![AttachmentKind::Text]),
        },
        delivery: DeliveryCapabilities {
            modes,
            queue: Some(true),
        },
        events: EventCapabilities { emits },
        // Through the relay tools (`relay_invoke`).
        actions: Some(ActionCapabilities {
            invoke: Some(true),
            expose: None,
        }),
        lifecycle: LifecycleCapabilities {
            release: true,
            pause: None,
            resume: None,
            fork: None,
            snapshot: None,
        },
    }
}

/// The receipt for a delivery the agent already has: the runner asked again (after a crash
/// or a lost receipt) and must not get a second copy surfaced.
pub(crate) fn handed_receipt(handed: &std::collections::HashMap<String, bool>, id: &str) -> Option<Receipt> {
    let status = match handed.get(id)? {
        true => ReceiptStatus::Delivered,
        false => ReceiptStatus::Accepted,
    };
    Some(relay_harness::receipt(status, id))
}
