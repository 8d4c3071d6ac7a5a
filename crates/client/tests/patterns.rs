//! The orchestration patterns over the real mesh: every worker is a fake agent CLI that
//! agent-spawner starts under its own harness, asked with a relay message and answered with its
//! relay replies (or, without any, what it printed, read from the event log).

mod common;

use relay_client::patterns::{self, FanOut, MapReduce, Pipeline, Stage, Supervisor, Task, WaitFor};
use std::time::Duration;

fn task(name: &str, cli: &str, text: &str) -> Task {
    Task {
        name: name.into(),
        cli: cli.into(),
        task: text.into(),
    }
}

#[tokio::test]
async fn map_reduce_answers_every_item_in_order_within_max_workers_and_releases_every_worker() {
    let mesh = common::mesh(8).await;
    let items: Vec<String> = (1..=5).map(|i| format!("file-{i}.rs")).collect();
    let mut opts = MapReduce::new("Review for security issues", items.clone(), "claude");
    opts.max_workers = Some(2);
    opts.retries = 0;
    opts.timeout = Duration::from_secs(20);
    let run = patterns::map_reduce(&mesh.client, opts).await.unwrap();

    assert_eq!(run.failures, vec![], "{run:?}");
    let answered: Vec<&str> = run.results.iter().map(|r| r.item.as_str()).collect();
    assert_eq!(answered, items.iter().map(String::as_str).collect::<Vec<_>>());
    for r in &run.results {
        // The prompt is one line on the terminal; the answer is the agent's, not the echo.
        assert_eq!(
            r.result,
            format!("Received: Review for security issues  Work on: {}", r.item),
            "{r:?}"
        );
    }
    assert_eq!(run.worker_count, 5);
    assert_eq!(mesh.all_released(&run.session_id).await, 5);
    // A worker counts from its first status until it is released, in log order.
    assert_eq!(mesh.most_agents_at_once(&run.session_id).await, 2);
}

#[tokio::test]
async fn map_reduce_takes_the_workers_relay_replies_as_their_answers() {
    let mesh = common::mesh(4).await;
    // Each worker answers with `->relay:reply` (its CLI has no MCP): the reply message is the
    // answer, not what the terminal showed.
    let items: Vec<String> = (1..=3)
        .map(|i| format!("say ->relay:reply item {i} reviewed"))
        .collect();
    let mut opts = MapReduce::new("t", items, "claude");
    opts.item_template = "{{item}}".into();
    opts.max_workers = Some(3);
    opts.retries = 0;
    opts.timeout = Duration::from_secs(20);
    let run = patterns::map_reduce(&mesh.client, opts).await.unwrap();
    assert_eq!(run.failures, vec![], "{run:?}");
    let answers: Vec<&str> = run.results.iter().map(|r| r.result.as_str()).collect();
    assert_eq!(answers, vec!["item 1 reviewed", "item 2 reviewed", "item 3 reviewed"]);
    assert_eq!(mesh.all_released(&run.session_id).await, 3);
}

#[tokio::test]
async fn map_reduce_retries_a_failed_item_and_gives_up_after_the_last_attempt() {
    let mesh = common::mesh(4).await;
    // `flaky` fails its first start and works after; `sleep` never answers within the timeout.
    let mut flaky = MapReduce::new("t", vec!["hello".into()], "flaky");
    flaky.item_template = "{{item}}".into();
    flaky.timeout = Duration::from_secs(20);
    let run = patterns::map_reduce(&mesh.client, flaky).await.unwrap();
    assert_eq!(run.failures, vec![], "{run:?}");
    assert_eq!(run.results[0].result, "Received: hello");
    assert_eq!(run.worker_count, 2, "one retry");

    let mut slow = MapReduce::new("t", vec!["sleep 5000".into()], "claude");
    slow.item_template = "{{item}}".into();
    slow.timeout = Duration::from_millis(1500);
    slow.retries = 2;
    let run = patterns::map_reduce(&mesh.client, slow).await.unwrap();
    assert_eq!(run.results, vec![]);
    assert_eq!(run.failures.len(), 1);
    assert_eq!(run.failures[0].attempts, 3, "{:?}", run.failures);
    assert!(run.failures[0].error.contains("no answer within"), "{:?}", run.failures);
    assert_eq!(
        mesh.all_released(&run.session_id).await,
        3,
        "every attempt's worker released"
    );
}

#[tokio::test]
async fn pipeline_passes_each_stage_output_to_the_next_and_stops_at_a_failed_stage() {
    let mesh = common::mesh(2).await;
    let stage = |name: &str, cli: &str, task: &str| Stage {
        name: name.into(),
        cli: cli.into(),
        task: task.into(),
    };
    let mut opts = Pipeline::new(
        vec![
            stage("Researcher", "claude", "research {{input}}"),
            stage("Writer", "claude", "write up {{input}}"),
        ],
        "NATS queue groups",
    );
    opts.stage_timeout = Duration::from_secs(20);
    let run = patterns::pipeline(&mesh.client, opts).await.unwrap();
    assert_eq!(run.stages.len(), 2);
    assert_eq!(run.stages[0].input, "NATS queue groups");
    assert_eq!(run.stages[0].output, "Received: research NATS queue groups");
    assert_eq!(run.stages[1].input, run.stages[0].output);
    assert_eq!(run.output, "Received: write up Received: research NATS queue groups");
    assert_eq!(mesh.all_released(&run.session_id).await, 2);

    // A stage whose agent exits fails the pipeline; the stage after it never starts.
    let session = mesh
        .client
        .session_create(&Default::default())
        .await
        .unwrap()
        .session_id;
    let mut broken = Pipeline::new(
        vec![
            stage("Quitter", "claude", "exit"),
            stage("Never", "claude", "{{input}}"),
        ],
        "x",
    );
    broken.session_id = Some(session.clone());
    broken.stage_timeout = Duration::from_secs(20);
    let err = patterns::pipeline(&mesh.client, broken).await.unwrap_err();
    assert!(
        matches!(&err, relay_client::Error::Stage { stage, source } if stage == "Quitter" && matches!(**source, relay_client::Error::AgentExited { .. })),
        "{err:?}"
    );
    assert_eq!(mesh.all_released(&session).await, 1, "the later stage never spawned");
}

#[tokio::test]
async fn fan_out_completes_on_all_any_or_n_answers_and_releases_the_workers_still_running() {
    let mesh = common::mesh(8).await;
    let tasks = || {
        vec![
            task("fast", "claude", "hello"),
            task("quick", "claude", "hi"),
            task("slow", "claude", "sleep 30000"),
        ]
    };

    let mut any = FanOut::new(
        vec![
            task("fast", "claude", "hello"),
            task("slow", "claude", "sleep 30000"),
            task("slower", "claude", "sleep 40000"),
        ],
        WaitFor::Any,
    );
    any.timeout = Duration::from_secs(25);
    let run = patterns::fan_out(&mesh.client, any).await.unwrap();
    assert_eq!(run.completed.len(), 1, "{run:?}");
    assert_eq!(run.completed[0].name, "fast");
    let mut pending = run.pending.clone();
    pending.sort();
    assert_eq!(pending, ["slow", "slower"], "{run:?}");
    assert_eq!(run.failed, vec![]);
    assert_eq!(mesh.all_released(&run.session_id).await, 3);

    let mut two = FanOut::new(tasks(), WaitFor::Count(2));
    two.timeout = Duration::from_secs(25);
    let run = patterns::fan_out(&mesh.client, two).await.unwrap();
    let mut names: Vec<&str> = run.completed.iter().map(|c| c.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["fast", "quick"]);
    assert_eq!(
        run.completed.iter().find(|c| c.name == "fast").unwrap().result,
        "Received: hello"
    );
    assert_eq!(run.pending, vec!["slow".to_string()]);
    assert_eq!(mesh.all_released(&run.session_id).await, 3);

    // `all` with a timeout the slow task cannot meet: the fast ones answer, the slow one is
    // released when the fan-out times out.
    let mut all = FanOut::new(tasks(), WaitFor::All);
    all.timeout = Duration::from_secs(4);
    let run = patterns::fan_out(&mesh.client, all).await.unwrap();
    assert_eq!(run.completed.len(), 2, "{run:?}");
    assert_eq!(run.pending, vec!["slow".to_string()]);
    assert_eq!(mesh.all_released(&run.session_id).await, 3);
}

#[tokio::test]
async fn supervisor_restarts_a_crashed_worker_with_the_same_task_up_to_max_restarts() {
    let mesh = common::mesh(8).await;
    let mut opts = Supervisor::new(vec![
        // Killed mid-task on its first start, fine on the second.
        task("survivor", "crashy", "sleep 2500"),
        task("steady", "claude", "hello"),
        // Exits on every start.
        task("quitter", "claude", "exit"),
    ]);
    opts.max_restarts = 2;
    opts.timeout = Duration::from_secs(20);
    let run = patterns::supervise(&mesh.client, opts).await.unwrap();

    let by_name = |n: &str| run.tasks.iter().find(|t| t.name == n).unwrap();
    let survivor = by_name("survivor");
    assert_eq!(survivor.restarts, 1, "{survivor:?}");
    assert!(survivor.restart_reasons[0].contains("exited"), "{survivor:?}");
    assert_eq!(survivor.outcome, Ok("✻ Worked for 2s".to_string()));
    assert_eq!(by_name("steady").outcome, Ok("Received: hello".to_string()));
    assert_eq!(by_name("steady").restarts, 0);
    let quitter = by_name("quitter");
    assert_eq!(quitter.restarts, 2);
    assert!(quitter.outcome.as_ref().unwrap_err().contains("exited"), "{quitter:?}");
    // 2 + 1 + 3 workers, every one released.
    assert_eq!(mesh.all_released(&run.session_id).await, 6);
}
