//! The messaging guide's recipe (docs/guides/messaging.md) for sending a relay message as an agent with the nats CLI
//! (`nats --creds … --inbox-prefix … req harness.default.<agentId>.message.send '{…}'`), taken
//! from the guide and run as written against a registry with auth on, twice (a retry after a
//! lost reply): it is answered, and the retry answers what the first stored instead of sending
//! again.
//!
//! With the nats CLI on PATH the line itself runs (its `--creds` pointed at the agent's minted
//! credentials, the server given as `NATS_URL`). Without it, the same request is made with the
//! official Rust client, async-nats, with what the line says: the credentials file, the inbox
//! prefix, the subject and the payload.

mod common;
use relay_contracts::delivery::{MessageContext, Receipt, ReceiptStatus};
use relay_contracts::session::{AgentSelection, Message};
use relay_harness::{AgentSession, AttachOptions, Binding, receipt};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

const GUIDE: &str = include_str!("../../../docs/guides/messaging.md");

struct Quiet;

impl AgentSession for Quiet {
    async fn receive_message(&self, _message: Message, ctx: MessageContext) -> Receipt {
        receipt(ReceiptStatus::Delivered, &ctx.id)
    }

    async fn release(&self, _reason: Option<String>) {}
}

/// A command line's words as a POSIX shell splits them (quotes, no expansions), up to a comment.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                let w = word.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    w.push(q);
                }
            }
            '#' if word.is_none() => break,
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// The guide's line, its placeholder filled in.
fn recipe(agent: &str) -> Vec<String> {
    let line = GUIDE
        .lines()
        .find(|l| l.starts_with("nats ") && l.contains("harness.default.<agentId>.message.send"))
        .expect("the messaging guide's nats recipe for sending as an agent");
    shell_words(&line.replace("<agentId>", agent))
}

/// A global option's value: `--name value` or `--name=value`.
fn option(words: &[String], name: &str) -> Option<String> {
    let flag = format!("--{name}");
    words.iter().enumerate().find_map(|(i, w)| {
        if *w == flag {
            words.get(i + 1).cloned()
        } else {
            w.strip_prefix(&format!("{flag}=")).map(String::from)
        }
    })
}

/// Runs the recipe once; the reply's JSON.
async fn run(words: &[String], creds: &std::path::Path, url: &str) -> Value {
    if std::process::Command::new("nats").arg("--version").output().is_ok() {
        // The line as written, with the test's credentials and server.
        let given = option(words, "creds").expect("the recipe names the agent's credentials");
        let args: Vec<String> = words[1..]
            .iter()
            .map(|w| {
                if *w == given {
                    creds.display().to_string()
                } else {
                    w.clone()
                }
            })
            .collect();
        let out = tokio::process::Command::new("nats")
            .args(&args)
            .env("NATS_URL", url)
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // `nats req` prints a status line, then the reply.
        let json = stdout
            .lines()
            .find(|l| l.trim_start().starts_with('{'))
            .unwrap_or_default();
        return serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    }
    let req = words
        .iter()
        .position(|w| w == "req")
        .expect("nats … req SUBJECT PAYLOAD");
    let (subject, payload) = (&words[req + 1], &words[req + 2]);
    let mut options = async_nats::ConnectOptions::with_credentials_file(creds).await.unwrap();
    if let Some(prefix) = option(words, "inbox-prefix") {
        options = options.custom_inbox_prefix(prefix);
    }
    let client = options.connect(url).await.unwrap();
    // The nats CLI's default timeout.
    let reply = tokio::time::timeout(
        Duration::from_secs(5),
        client.request(subject.clone(), payload.clone().into()),
    )
    .await
    .unwrap_or_else(|_| panic!("{words:?}: no reply within 5 s"))
    .unwrap_or_else(|e| panic!("{words:?}: {e}"));
    serde_json::from_slice(&reply.payload).unwrap()
}

#[tokio::test]
async fn the_guides_nats_recipe_sends_as_the_agent_and_its_retry_sends_nothing_again() {
    let m = common::start(1).await;
    let session = common::create(&m).await;

    // The agent, attached with credentials minted for it (`relayctl auth harness`), in #ops.
    let agent = uuid::Uuid::now_v7().to_string();
    let creds = m.nats.harness_creds(&agent, "default").unwrap();
    let settings = relay_bus::settings::NatsSettings {
        url: m.nats.url.clone(),
        creds: Some(creds.clone()),
        ..Default::default()
    };
    let caps = json!({"messaging": {"receive": true, "send": true}, "delivery": {"modes": ["immediate"]},
                      "events": {"emits": ["status.changed"]}, "lifecycle": {"release": true}});
    let options = AttachOptions::new(
        session.clone(),
        AgentSelection::adapter("sdk"),
        serde_json::from_value(caps).unwrap(),
    )
    .handle("deployer");
    // Before this process takes the agent's identity (it names every call of the process then).
    m.ok("channel.create", json!({"name": "ops"})).await;
    let nats = relay_bus::connect_nats(&settings, "sdk-agent").await.unwrap();
    let bound = Binding::attach(nats, options, Arc::new(Quiet)).await.unwrap();
    let join = relay_contracts::messaging::MembershipRequest {
        channel: "ops".into(),
        agent: None,
    };
    relay_bus::client::call::<relay_contracts::rpc::ChannelJoin>(bound.client(), &join, Duration::from_secs(10))
        .await
        .unwrap();
    let file = std::env::temp_dir().join(format!("{agent}.creds"));
    std::fs::write(&file, &creds).unwrap();

    let words = recipe(&agent);
    assert_eq!(
        option(&words, "inbox-prefix").as_deref(),
        Some(relay_contracts::access::harness_inbox_prefix(&agent).as_str()),
        "the recipe names the only inbox prefix a harness identity may read replies under: {words:?}"
    );
    let payload: Value = serde_json::from_str(words.last().unwrap()).unwrap();
    assert!(
        payload["idempotencyKey"].is_string(),
        "the recipe passes an idempotencyKey: {payload}"
    );

    let first = run(&words, &file, &m.nats.url).await;
    let again = run(&words, &file, &m.nats.url).await;
    assert!(first["messageId"].is_string(), "{first}");
    assert_eq!(first["duplicate"], false, "{first}");
    assert_eq!(
        again["messageId"], first["messageId"],
        "the retry answers the first send: {again}"
    );
    assert_eq!(again["duplicate"], true, "{again}");
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM registry_relay_messages")
        .fetch_one(&m.db.pool().await)
        .await
        .unwrap();
    assert_eq!(stored, 1, "sent once");
    let message = m.ok("message.get", json!({"messageId": first["messageId"]})).await;
    assert_eq!(message["from"]["id"], agent.as_str(), "sent as the agent: {message}");

    // Why the prefix: without it (the recipe before), the message is sent and stored,
    // but the reply cannot reach a harness identity, and the caller gets no answer.
    let req = words.iter().position(|w| w == "req").unwrap();
    let mut other = payload.clone();
    other["idempotencyKey"] = json!("without-the-prefix");
    let client = async_nats::ConnectOptions::with_credentials_file(&file)
        .await
        .unwrap()
        .connect(&m.nats.url)
        .await
        .unwrap();
    let answered = tokio::time::timeout(
        Duration::from_secs(2),
        client.request(words[req + 1].clone(), other.to_string().into()),
    )
    .await;
    assert!(!matches!(answered, Ok(Ok(_))), "answered without the inbox prefix");
    relay_testkit::wait_for(|| async {
        let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM registry_relay_messages")
            .fetch_one(&m.db.pool().await)
            .await
            .ok()?;
        (stored == 2).then_some(())
    })
    .await;
    let _ = std::fs::remove_file(file);
}
