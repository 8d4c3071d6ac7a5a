//! Orchestration patterns (seed 003 §4): mapReduce, pipeline and fanOut, plus a supervisor.
//!
//! Every worker is an agent CLI that `agent-spawner` starts in the run's session. A worker is
//! asked with a relay message to its handle (delivered when it is idle) and answers with
//! `relay_reply` (an MCP tool, or the `->relay:reply` line): its reply messages in the ask's
//! thread are its answer. A worker that replied nothing (a CLI with neither) is read the old
//! way: what it printed from then until it was idle again, without the echo of the message.
//! Every worker a pattern starts is released (`agent.stop`) whatever happens: answer, error,
//! timeout, or the run no longer needing it.

use crate::{Client, Error, EventStream, Result};
use futures::StreamExt;
use relay_contracts::capabilities::DeliveryMode;
use relay_contracts::delivery::{ReleaseRequest, StopAgentRequest};
use relay_contracts::events::SinceRequest;
use relay_contracts::hosts::SpawnRequest;
use relay_contracts::messaging::{MessageRef, SendRequest, To};
use relay_contracts::rpc;
use relay_contracts::session::AgentStatus;
use relay_contracts::session::{AgentGetRequest, CreateRequest};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The seed's default timeout for one item, stage or fan-out.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// The seed caps mapReduce at this many workers at once.
pub const MAX_WORKERS: usize = 10;

// ---------------------------------------------------------------------------------------------
// Workers

/// One spawned agent, followed through the event log.
struct Worker {
    client: Client,
    agent_id: String,
    handle: String,
    events: EventStream,
    /// Its harness reported it offline (or released): nothing left to release.
    gone: bool,
}

impl Worker {
    /// Workers take the default handle (`claude`, `claude-2`, …): a pattern's worker names are
    /// per run, handles per workspace, and two runs must not contend for one.
    async fn spawn(client: &Client, session_id: &str, cli: &str) -> Result<Worker> {
        let spawned = client
            .agent_spawn(&SpawnRequest {
                session_id: session_id.to_string(),
                agent_name: None,
                cli: cli.to_string(),
                task: None,
                cwd: None,
                placement: None,
            })
            .await?;
        // The session's events are indexed: reading this agent's from the start is cheap.
        let events = client
            .follow(SinceRequest {
                seq: 0,
                types: Some(vec!["status.changed".into(), "terminal.output".into()]),
                agents: Some(vec![spawned.agent_id.clone()]),
                session_ids: Some(vec![session_id.to_string()]),
                limit: None,
            })
            .await?;
        let agent = client
            .agent_get(&AgentGetRequest {
                agent: spawned.agent_id.clone(),
            })
            .await?;
        tracing::info!(agent_id = %spawned.agent_id, cli, "worker started");
        Ok(Worker {
            client: client.clone(),
            handle: agent.handle.unwrap_or_else(|| spawned.agent_id.clone()),
            agent_id: spawned.agent_id,
            events,
            gone: false,
        })
    }

    /// Sends `text` for when the agent is idle; returns its replies in the message's thread, or
    /// (when it replied nothing) what it printed in the turn that follows.
    async fn ask(&mut self, text: &str) -> Result<String> {
        let message = SendRequest {
            to: Some(To::One(format!("@{}", self.handle))),
            text: text.to_string(),
            delivery_mode: Some(DeliveryMode::OnIdle),
            ..SendRequest::default()
        };
        let asked = self.client.message_send(&message).await?;
        // The terminal shows the message as typed: one line, inner newlines as spaces, and the
        // line naming the relay message.
        let typed = text.replace(['\r', '\n'], " ").trim().to_string();
        let (mut in_turn, mut lines) = (false, Vec::<String>::new());
        loop {
            let event = self.events.next().await?;
            if event.event_type == "terminal.output" {
                let line = event.payload["text"].as_str().unwrap_or_default();
                if in_turn && !is_echo(line, &typed) && !line.contains(&asked.message_id) {
                    lines.push(line.to_string());
                }
                continue;
            }
            match serde_json::from_value::<AgentStatus>(event.payload["status"].clone()) {
                Ok(AgentStatus::Active) => in_turn = true,
                Ok(AgentStatus::Idle) if in_turn => {
                    // Its replies were stored before the tool call (or line) that sent them
                    // returned, so before the turn ended.
                    let thread = self
                        .client
                        .message_thread(&MessageRef {
                            message_id: asked.message_id.clone(),
                        })
                        .await?;
                    let replies: Vec<String> = thread
                        .replies
                        .into_iter()
                        .filter(|r| r.from.id == self.agent_id)
                        .map(|r| r.text)
                        .collect();
                    if !replies.is_empty() {
                        return Ok(replies.join("\n"));
                    }
                    return Ok(lines.join("\n").trim().to_string());
                }
                Ok(status) if is_gone(status) => {
                    self.gone = true;
                    return Err(Error::AgentExited {
                        agent_id: self.agent_id.clone(),
                    });
                }
                _ => {}
            }
        }
    }

    /// `agent.stop` through the delivery runner (which also cancels what the agent was not yet
    /// sent), straight to the harness when the runner cannot help; then waits (up to 10 s) for
    /// the harness to report the agent offline, so a released worker is really gone.
    async fn release(mut self, reason: &str) {
        if self.gone {
            return;
        }
        let stop = StopAgentRequest {
            agent_id: self.agent_id.clone(),
            reason: Some(reason.to_string()),
        };
        let stopped = matches!(self.client.agent_stop(&stop).await, Ok(r) if r.released);
        if !stopped {
            let release = ReleaseRequest {
                reason: Some(reason.to_string()),
            };
            let subject = rpc::agent::release(&self.agent_id);
            if let Err(e) = self.client.call::<_, serde_json::Value>(&subject, &release).await {
                tracing::debug!(agent_id = %self.agent_id, error = %e, "release");
            }
        }
        let offline = async {
            loop {
                match self.events.next().await {
                    Ok(e) if e.event_type == "status.changed" => {
                        if serde_json::from_value(e.payload["status"].clone()).is_ok_and(is_gone) {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
                }
            }
        };
        if tokio::time::timeout(Duration::from_secs(10), offline).await.is_err() {
            tracing::warn!(agent_id = %self.agent_id, "released worker not reported offline within 10 s");
        }
    }
}

fn is_gone(status: AgentStatus) -> bool {
    matches!(
        status,
        AgentStatus::Offline | AgentStatus::Failed | AgentStatus::Released | AgentStatus::Releasing
    )
}

/// The PTY echoes what was typed, possibly behind the CLI's prompt (`> hello`).
fn is_echo(line: &str, typed: &str) -> bool {
    let line = line.trim();
    !typed.is_empty() && (line == typed || (line.ends_with(typed) && line.len() - typed.len() <= 4))
}

/// Why one task ended without an answer.
enum Ended {
    Failed(Error),
    /// The run stopped it: enough answers, or the run's own timeout.
    Stopped,
}

/// Spawns a worker, asks it `prompt` (waiting at most `timeout` for the answer), releases it.
async fn run_once(
    client: &Client,
    session_id: &str,
    cli: &str,
    prompt: &str,
    timeout: Duration,
    stop: Option<watch::Receiver<bool>>,
) -> std::result::Result<String, Ended> {
    // A spawn is bounded by the spawner's attach timeout; it is waited for even when stopped,
    // so that the agent it starts is released rather than left behind.
    let mut worker = Worker::spawn(client, session_id, cli).await.map_err(Ended::Failed)?;
    // Only fan-out stops workers early; the other patterns pass no receiver.
    let stopped = async {
        match stop {
            Some(mut rx) => drop(rx.wait_for(|s| *s).await),
            None => std::future::pending().await,
        }
    };
    let answer = tokio::select! {
        r = tokio::time::timeout(timeout, worker.ask(prompt)) => match r {
            Ok(Ok(text)) => Ok(text),
            Ok(Err(e)) => Err(Ended::Failed(e)),
            Err(_) => Err(Ended::Failed(Error::TimedOut(timeout))),
        },
        _ = stopped => Err(Ended::Stopped),
    };
    let reason = match &answer {
        Ok(_) => "task done",
        Err(Ended::Stopped) => "no longer needed",
        Err(Ended::Failed(_)) => "task failed",
    };
    worker.release(reason).await;
    answer
}

async fn session_for(client: &Client, given: &Option<String>, title: String) -> Result<String> {
    if let Some(id) = given {
        return Ok(id.clone());
    }
    let created = client
        .session_create(&CreateRequest {
            title: Some(title),
            ..Default::default()
        })
        .await?;
    Ok(created.session_id)
}

// ---------------------------------------------------------------------------------------------
// Map-reduce

/// Distribute items across up to `max_workers` workers; each item gets its own worker.
#[derive(Debug, Clone)]
pub struct MapReduce {
    /// Overall task, used in every worker's prompt.
    pub task: String,
    pub items: Vec<String>,
    pub worker_cli: String,
    /// Workers at once; default the number of items, never more than [`MAX_WORKERS`].
    pub max_workers: Option<usize>,
    /// Per-item prompt; `{{task}}` and `{{item}}` are replaced.
    pub item_template: String,
    /// How long one attempt waits for the worker's answer.
    pub timeout: Duration,
    /// Further attempts for an item that failed (a new worker each time).
    pub retries: u32,
    /// The session the workers join; a new one when unset.
    pub session_id: Option<String>,
}

impl MapReduce {
    pub fn new(task: impl Into<String>, items: Vec<String>, worker_cli: impl Into<String>) -> MapReduce {
        MapReduce {
            task: task.into(),
            items,
            worker_cli: worker_cli.into(),
            max_workers: None,
            item_template: "{{task}}\n\nWork on: {{item}}".into(),
            timeout: DEFAULT_TIMEOUT,
            retries: 1,
            session_id: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ItemResult {
    pub item: String,
    pub result: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ItemFailure {
    pub item: String,
    pub error: String,
    pub attempts: u32,
}

#[derive(Debug, Clone)]
pub struct MapReduceResult {
    /// In item order.
    pub results: Vec<ItemResult>,
    pub failures: Vec<ItemFailure>,
    pub duration: Duration,
    /// Workers started, retries included.
    pub worker_count: usize,
    pub session_id: String,
}

pub async fn map_reduce(client: &Client, opts: MapReduce) -> Result<MapReduceResult> {
    let start = Instant::now();
    let session_id = session_for(client, &opts.session_id, format!("mapReduce: {}", opts.task)).await?;
    let max_workers = opts.max_workers.unwrap_or(opts.items.len()).clamp(1, MAX_WORKERS);
    let started = std::sync::atomic::AtomicUsize::new(0);
    tracing::info!(items = opts.items.len(), max_workers, session_id, "mapReduce started");

    let process = |(index, item): (usize, String)| {
        let (opts, session_id, started) = (&opts, &session_id, &started);
        async move {
            let prompt = opts
                .item_template
                .replace("{{task}}", &opts.task)
                .replace("{{item}}", &item);
            let mut attempts = 0;
            loop {
                attempts += 1;
                started.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let outcome = run_once(client, session_id, &opts.worker_cli, &prompt, opts.timeout, None).await;
                match outcome {
                    Ok(result) => {
                        tracing::info!(item, attempts, "mapReduce item done");
                        return (index, Ok(ItemResult { item, result }));
                    }
                    Err(Ended::Failed(e)) if attempts > opts.retries => {
                        tracing::warn!(item, attempts, error = %e, "mapReduce item failed");
                        let error = e.to_string();
                        return (index, Err(ItemFailure { item, error, attempts }));
                    }
                    Err(Ended::Failed(e)) => {
                        tracing::info!(item, attempts, error = %e, "mapReduce item failed, retrying")
                    }
                    Err(Ended::Stopped) => unreachable!("mapReduce never stops a worker early"),
                }
            }
        }
    };
    let mut done: Vec<_> = futures::stream::iter(opts.items.iter().cloned().enumerate())
        .map(process)
        .buffer_unordered(max_workers)
        .collect()
        .await;
    done.sort_by_key(|(index, _)| *index);
    let (mut results, mut failures) = (Vec::new(), Vec::new());
    for (_, outcome) in done {
        match outcome {
            Ok(r) => results.push(r),
            Err(f) => failures.push(f),
        }
    }
    Ok(MapReduceResult {
        results,
        failures,
        duration: start.elapsed(),
        worker_count: started.into_inner(),
        session_id,
    })
}

// ---------------------------------------------------------------------------------------------
// Pipeline

#[derive(Debug, Clone)]
pub struct Stage {
    /// Used as the worker's agent name.
    pub name: String,
    pub cli: String,
    /// `{{input}}` is replaced with the previous stage's output (the pipeline's input at first).
    pub task: String,
}

#[derive(Debug, Clone)]
pub struct Pipeline {
    pub stages: Vec<Stage>,
    pub input: String,
    pub stage_timeout: Duration,
    pub session_id: Option<String>,
}

impl Pipeline {
    pub fn new(stages: Vec<Stage>, input: impl Into<String>) -> Pipeline {
        Pipeline {
            stages,
            input: input.into(),
            stage_timeout: DEFAULT_TIMEOUT,
            session_id: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct StageResult {
    pub name: String,
    pub input: String,
    pub output: String,
    pub duration: Duration,
}

#[derive(Debug, Clone)]
pub struct PipelineResult {
    pub output: String,
    pub stages: Vec<StageResult>,
    pub duration: Duration,
    pub session_id: String,
}

/// Runs the stages one after another, each on a worker of its own, passing output forward.
/// A stage that fails ends the pipeline with [`Error::Stage`], after its worker is released.
pub async fn pipeline(client: &Client, opts: Pipeline) -> Result<PipelineResult> {
    let start = Instant::now();
    let first = opts.stages.first().map_or("", |s| s.name.as_str());
    let session_id = session_for(client, &opts.session_id, format!("pipeline: {first}…")).await?;
    let mut input = opts.input.clone();
    let mut stages = Vec::new();
    for (i, stage) in opts.stages.iter().enumerate() {
        tracing::info!(stage = %stage.name, step = i + 1, of = opts.stages.len(), "pipeline stage started");
        let began = Instant::now();
        let prompt = stage.task.replace("{{input}}", &input);
        let output = run_once(client, &session_id, &stage.cli, &prompt, opts.stage_timeout, None)
            .await
            .map_err(|ended| Error::Stage {
                stage: stage.name.clone(),
                source: Box::new(match ended {
                    Ended::Failed(e) => e,
                    Ended::Stopped => unreachable!("a pipeline never stops a stage early"),
                }),
            })?;
        stages.push(StageResult {
            name: stage.name.clone(),
            input: std::mem::replace(&mut input, output.clone()),
            output,
            duration: began.elapsed(),
        });
    }
    Ok(PipelineResult {
        output: input,
        stages,
        duration: start.elapsed(),
        session_id,
    })
}

// ---------------------------------------------------------------------------------------------
// Fan-out / fan-in

#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    pub cli: String,
    pub task: String,
}

/// When a fan-out is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitFor {
    All,
    Any,
    /// This many answers.
    Count(usize),
}

#[derive(Debug, Clone)]
pub struct FanOut {
    pub tasks: Vec<Task>,
    pub wait_for: WaitFor,
    /// For the whole fan-out; tasks still running then are released and listed as pending.
    pub timeout: Duration,
    pub session_id: Option<String>,
}

impl FanOut {
    pub fn new(tasks: Vec<Task>, wait_for: WaitFor) -> FanOut {
        FanOut {
            tasks,
            wait_for,
            timeout: DEFAULT_TIMEOUT,
            session_id: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Completed {
    pub name: String,
    pub result: String,
    pub duration: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Failed {
    pub name: String,
    pub error: String,
}

#[derive(Debug, Clone)]
pub struct FanOutResult {
    /// In the order they answered.
    pub completed: Vec<Completed>,
    /// Tasks that failed (they count towards nothing).
    pub failed: Vec<Failed>,
    /// Tasks stopped because the fan-out was complete or timed out.
    pub pending: Vec<String>,
    pub duration: Duration,
    pub session_id: String,
}

/// Runs every task at once and returns when `wait_for` is met (or cannot be met any more, or
/// the timeout passes); the workers of tasks still running are released before it returns.
pub async fn fan_out(client: &Client, opts: FanOut) -> Result<FanOutResult> {
    let start = Instant::now();
    let session_id = session_for(client, &opts.session_id, format!("fanOut: {} tasks", opts.tasks.len())).await?;
    let needed = match opts.wait_for {
        WaitFor::All => opts.tasks.len(),
        WaitFor::Any => 1.min(opts.tasks.len()),
        WaitFor::Count(n) => n.min(opts.tasks.len()),
    };
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut running: futures::stream::FuturesUnordered<_> = opts
        .tasks
        .iter()
        .map(|t| {
            let (stop, session_id) = (stop_rx.clone(), &session_id);
            async move {
                let began = Instant::now();
                let r = run_once(client, session_id, &t.cli, &t.task, opts.timeout, Some(stop)).await;
                (t, r, began.elapsed())
            }
        })
        .collect();
    let (mut completed, mut failed, mut pending) = (Vec::new(), Vec::new(), Vec::new());
    let deadline = tokio::time::Instant::now() + opts.timeout;
    let timer = tokio::time::sleep_until(deadline);
    tokio::pin!(timer);
    loop {
        let next = tokio::select! {
            next = running.next() => match next {
                Some(next) => next,
                None => break,
            },
            _ = &mut timer, if !*stop_tx.borrow() => {
                tracing::info!(timeout = ?opts.timeout, "fanOut timed out; releasing the workers still running");
                let _ = stop_tx.send(true);
                continue;
            }
        };
        match next {
            (t, Ok(result), duration) => completed.push(Completed {
                name: t.name.clone(),
                result,
                duration,
            }),
            (t, Err(Ended::Failed(e)), _) => failed.push(Failed {
                name: t.name.clone(),
                error: e.to_string(),
            }),
            (t, Err(Ended::Stopped), _) => pending.push(t.name.clone()),
        }
        let still_possible = completed.len() + running.len() >= needed;
        if (completed.len() >= needed || !still_possible) && !*stop_tx.borrow() {
            // Done (or never will be): the rest are released, then reported as pending.
            let _ = stop_tx.send(true);
        }
    }
    drop(running);
    Ok(FanOutResult {
        completed,
        failed,
        pending,
        duration: start.elapsed(),
        session_id,
    })
}

// ---------------------------------------------------------------------------------------------
// Supervisor (beyond the seed)

/// Runs tasks at once and restarts a task's worker, with the same task, when it crashes (its
/// agent exits or fails to start) or does not answer in time: one-for-one supervision, as in
/// Erlang/OTP, with at most `max_restarts` restarts per task.
#[derive(Debug, Clone)]
pub struct Supervisor {
    pub tasks: Vec<Task>,
    pub max_restarts: u32,
    /// How long each worker has to answer.
    pub timeout: Duration,
    pub session_id: Option<String>,
}

impl Supervisor {
    pub fn new(tasks: Vec<Task>) -> Supervisor {
        Supervisor {
            tasks,
            max_restarts: 3,
            timeout: DEFAULT_TIMEOUT,
            session_id: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Supervised {
    pub name: String,
    /// The answer, or the last error once the restarts ran out.
    pub outcome: std::result::Result<String, String>,
    pub restarts: u32,
    /// Why each restart happened, in order.
    pub restart_reasons: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct SupervisorResult {
    /// In task order.
    pub tasks: Vec<Supervised>,
    pub duration: Duration,
    pub session_id: String,
}

pub async fn supervise(client: &Client, opts: Supervisor) -> Result<SupervisorResult> {
    let start = Instant::now();
    let session_id = session_for(
        client,
        &opts.session_id,
        format!("supervisor: {} tasks", opts.tasks.len()),
    )
    .await?;
    let runs = opts.tasks.iter().map(|t| {
        let session_id = &session_id;
        let opts = &opts;
        async move {
            let mut reasons = Vec::new();
            loop {
                match run_once(client, session_id, &t.cli, &t.task, opts.timeout, None).await {
                    Ok(answer) => return (t, Ok(answer), reasons),
                    Err(Ended::Failed(e)) if reasons.len() as u32 >= opts.max_restarts => {
                        return (t, Err(e.to_string()), reasons);
                    }
                    Err(Ended::Failed(e)) => {
                        tracing::warn!(task = %t.name, restart = reasons.len() + 1, error = %e, "supervisor restarting a worker");
                        reasons.push(e.to_string());
                    }
                    Err(Ended::Stopped) => unreachable!("the supervisor never stops a worker early"),
                }
            }
        }
    });
    let tasks = futures::future::join_all(runs)
        .await
        .into_iter()
        .map(|(t, outcome, reasons)| Supervised {
            name: t.name.clone(),
            outcome,
            restarts: reasons.len() as u32,
            restart_reasons: reasons,
        })
        .collect();
    Ok(SupervisorResult {
        tasks,
        duration: start.elapsed(),
        session_id,
    })
}

#[cfg(test)]
mod tests {
    use super::is_echo;

    #[test]
    fn the_echo_of_a_typed_message_is_not_part_of_the_answer() {
        assert!(is_echo("review auth.rs", "review auth.rs"));
        assert!(is_echo("> review auth.rs", "review auth.rs"));
        assert!(!is_echo("Received: review auth.rs", "review auth.rs"));
        assert!(!is_echo("anything", ""));
    }
}
