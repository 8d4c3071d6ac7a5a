//! Permission requests and questions an agent raises, whatever its driver (PTY or structured):
//! the permission manager's decision now, or a human's later on `agent.<id>.permission` /
//! `agent.<id>.question`.
//!
//! The harness picks the id and listens for it before asking, so a decision can never outrun
//! the reply that says it is pending.

use relay_contracts::agent_events::*;
use relay_contracts::permission::*;
use relay_contracts::rpc;
use relay_contracts::session::AgentStatus;
use relay_harness::EventSink;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::oneshot;

pub struct Prompts {
    nats: async_nats::Client,
    /// Requests and questions waiting for a decision: id → where to send it (with the trace
    /// of the call that decided it).
    pending: Mutex<HashMap<String, oneshot::Sender<Decided>>>,
}

/// What the agent asks permission for.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    pub tool: String,
    pub command: Option<String>,
    pub file_path: Option<String>,
    pub description: String,
}

impl Prompts {
    pub fn new(nats: async_nats::Client) -> Prompts {
        Prompts {
            nats,
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Asks the permission manager; waits for a human when it answers `pending`, and for a
    /// decision on `agent.<id>.permission` when no manager answers at all. Never approves by
    /// default: a decision that cannot be read is a denial.
    pub async fn permission(&self, ev: &EventSink, ask: Ask) -> Decision {
        ev.status(AgentStatus::Blocked);
        let request_id = uuid::Uuid::now_v7().to_string();
        let req = PermissionRequest {
            request_id: Some(request_id.clone()),
            agent_id: ev.agent_id().to_string(),
            session_id: ev.session_id().to_string(),
            tool: ask.tool,
            command: ask.command,
            file_path: ask.file_path,
            description: ask.description,
        };
        let later = self.register(&request_id);
        // In the trace of the turn that asks.
        let call = relay_bus::client::call::<rpc::PermissionRequest>(&self.nats, &req, Duration::from_secs(10));
        let reply = ev.in_trace(call).await;
        match reply {
            Ok(r) if r.decision != Decision::Pending => {
                self.forget(&request_id);
                r.decision
            }
            Ok(_) => decision_of(decided(ev, later.await)),
            Err(e) => {
                // No manager reachable: the prompt stays visible in the log and can still be
                // decided on agent.<id>.permission.
                tracing::warn!(error = %e, request_id, "permission manager not reachable; waiting for a decision on agent.<id>.permission");
                ev.send(&PermissionRequested {
                    request_id: request_id.clone(),
                    tool: req.tool.clone(),
                    command: req.command.clone(),
                    file_path: req.file_path.clone(),
                    description: req.description.clone(),
                });
                decision_of(decided(ev, later.await))
            }
        }
    }

    /// Asks a question; the answer now (a policy) or a human's later.
    pub async fn question(&self, ev: &EventSink, question: String, options: Vec<String>) -> String {
        ev.status(AgentStatus::Waiting);
        let question_id = uuid::Uuid::now_v7().to_string();
        let req = QuestionRequest {
            question_id: Some(question_id.clone()),
            agent_id: ev.agent_id().to_string(),
            session_id: ev.session_id().to_string(),
            question,
            options,
        };
        let later = self.register(&question_id);
        let call = relay_bus::client::call::<rpc::QuestionAsk>(&self.nats, &req, Duration::from_secs(10));
        let reply = ev.in_trace(call).await;
        match reply {
            Ok(QuestionReply { answer: Some(a), .. }) => {
                self.forget(&question_id);
                a
            }
            Ok(_) => decided(ev, later.await),
            Err(e) => {
                tracing::warn!(error = %e, question_id, "permission manager not reachable; waiting for an answer on agent.<id>.question");
                ev.send(&QuestionRequested {
                    question_id: question_id.clone(),
                    question: req.question.clone(),
                    options: req.options.clone(),
                });
                decided(ev, later.await)
            }
        }
    }

    /// Where the decision or answer for `id` will arrive.
    fn register(&self, id: &str) -> oneshot::Receiver<Decided> {
        let (tx, rx) = oneshot::channel();
        self.pending.lock().expect("pending lock").insert(id.to_string(), tx);
        rx
    }

    fn forget(&self, id: &str) {
        self.pending.lock().expect("pending lock").remove(id);
    }

    /// A decision or answer arrived for `id` (in the current span: the deciding call's);
    /// false when nothing waits for it.
    pub fn resolve(&self, id: &str, value: String) -> bool {
        let trace = relay_bus::trace::current_traceparent();
        match self.pending.lock().expect("pending lock").remove(id) {
            Some(tx) => tx.send(Decided { value, trace }).is_ok(),
            None => false,
        }
    }
}

/// A person's decision or answer, and the trace of the call that made it.
#[derive(Default)]
struct Decided {
    value: String,
    trace: Option<String>,
}

/// What was decided; the agent goes on in the trace of the call that decided it.
fn decided(ev: &EventSink, later: Result<Decided, oneshot::error::RecvError>) -> String {
    let d = later.unwrap_or_default();
    ev.set_trace(d.trace);
    d.value
}

fn decision_of(value: String) -> Decision {
    match value.as_str() {
        "approved" => Decision::Approved,
        _ => Decision::Denied,
    }
}
