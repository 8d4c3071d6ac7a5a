//! The mesh and the gateway as the HTTP and gRPC tests start them: every service on a private
//! NATS and a fresh database, and the gateway binary on a free port.
#![allow(dead_code)] // each test file uses its own part

use futures::StreamExt;
use relay_testkit::{Database, Nats, ServiceProcess, wait_for};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;

use relay_testkit::BUS_SERVICES as SERVICES;

pub struct Mesh {
    pub nats: Nats,
    pub db: Database,
    pub client: async_nats::Client,
    pub _services: Vec<ServiceProcess>,
}

pub async fn mesh() -> Mesh {
    mesh_with(&[]).await
}

/// The mesh with `env` set for every service (telemetry, say).
pub async fn mesh_with(env: &[(&str, &str)]) -> Mesh {
    let nats = Nats::start().await;
    let db = Database::create().await;
    let client = nats.client().await;
    // The tests' usage events are from 1970: kept per event, not rolled up by the hour.
    let mut env = env.to_vec();
    env.push(("RELAY_COSTS__ROLLUP_AFTER_MS", "0"));
    let services = SERVICES
        .iter()
        .map(|s| ServiceProcess::spawn(&relay_testkit::bin_path(s), &nats, &db, &env))
        .collect();
    for s in SERVICES {
        relay_testkit::wait_for_instances(&client, s, 1).await;
    }
    Mesh {
        nats,
        db,
        client,
        _services: services,
    }
}

/// An agent-spawner whose `claude` is the fake agent, logging every message it is typed to
/// `surfaced`.
pub async fn spawner(m: &Mesh, surfaced: &std::path::Path) -> ServiceProcess {
    spawner_with(m, surfaced, &[]).await
}

pub async fn spawner_with(m: &Mesh, surfaced: &std::path::Path, env: &[(&str, &str)]) -> ServiceProcess {
    let config = std::env::temp_dir().join(format!("gw-spawner-{}.toml", free_port()));
    let fake = relay_testkit::bin_path("fake-agent");
    let log = surfaced.to_str().unwrap();
    std::fs::write(
        &config,
        format!("[spawner.commands]\nclaude = [{fake:?}, \"--style\", \"claude\", \"--log\", {log:?}]\n"),
    )
    .unwrap();
    let mut all = vec![("RELAY_CONFIG", config.to_str().unwrap())];
    all.extend_from_slice(env);
    let spawner = ServiceProcess::spawn(&relay_testkit::bin_path("agent-spawner"), &m.nats, &m.db, &all);
    relay_testkit::wait_for_instances(&m.client, "agent-spawner", 1).await;
    spawner
}

/// Runs relayctl with the `admin` identity against the mesh; its standard output, after
/// asserting it succeeded.
pub fn relayctl(m: &Mesh, args: &[&str]) -> String {
    let mut cmd = std::process::Command::new(relay_testkit::bin_path("relayctl"));
    cmd.args(args)
        .envs(m.nats.env_for(relay_contracts::access::ADMIN))
        .env("RELAY_NATS__URL", &m.nats.url)
        .env_remove("RELAY_CONFIG");
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "relayctl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub struct Gateway {
    pub base: String,
    pub http: reqwest::Client,
    pub token: Option<String>,
    pub _process: ServiceProcess,
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub async fn gateway(m: &Mesh, env: &[(&str, &str)]) -> Gateway {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    // Open (loopback) unless the test sets a token: most tests act as the local developer.
    let mut all = vec![
        ("RELAY_GATEWAY__LISTEN", listen.as_str()),
        ("RELAY_API_TOKEN", ""),
        ("RELAY_GATEWAY__OPEN", "true"),
    ];
    all.extend_from_slice(env);
    let process = ServiceProcess::spawn(&relay_testkit::bin_path("gateway"), &m.nats, &m.db, &all);
    let token = env
        .iter()
        .find(|(k, _)| *k == "RELAY_API_TOKEN")
        .map(|(_, v)| v.to_string());
    let g = Gateway {
        base: format!("http://{listen}"),
        http: reqwest::Client::new(),
        token,
        _process: process,
    };
    wait_for(|| async {
        g.http
            .get(g.url("/healthz"))
            .send()
            .await
            .ok()
            .filter(|r| r.status().is_success())
    })
    .await;
    g
}

impl Gateway {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let r = self.http.request(method, self.url(path));
        match &self.token {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
    }

    pub async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut r = self.req(method, path);
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.unwrap();
        let status = resp.status();
        let text = resp.text().await.unwrap();
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    pub async fn post_empty(&self, path: &str) -> (StatusCode, Value) {
        self.send(reqwest::Method::POST, path, None).await
    }

    /// The whole /metrics page.
    pub async fn metrics(&self) -> String {
        self.http
            .get(self.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    pub async fn metric(&self, name: &str) -> f64 {
        relay_testkit::metric_value(&self.metrics().await, name)
    }

    pub async fn sse(&self, path: &str, last_event_id: Option<i64>) -> reqwest::Response {
        let mut r = self.req(reqwest::Method::GET, path);
        if let Some(id) = last_event_id {
            r = r.header("Last-Event-ID", id.to_string());
        }
        r.send().await.unwrap()
    }
}

/// Appends `n` events of `type` to the log; returns their seqs.
pub async fn append(m: &Mesh, event_type: &str, session: &str, agent: &str, n: usize) -> Vec<i64> {
    let events: Vec<Value> = (0..n)
        .map(|i| json!({"type": event_type, "sessionId": session, "agentName": agent, "payload": {"n": i}}))
        .collect();
    let r = relay_testkit::expect_ok(&m.client, "event.append", json!({ "events": events })).await;
    r["appended"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["seq"].as_i64().unwrap())
        .collect()
}

/// One parsed SSE frame: id (the seq), event type and data.
#[derive(Debug, Clone)]
pub struct Frame {
    pub id: i64,
    pub event: String,
    pub data: Value,
}

/// Reads frames from an SSE response; comments (heartbeats) are counted apart.
pub struct SseReader {
    pub stream: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    pub buf: String,
    pub comments: usize,
}

impl SseReader {
    pub fn new(resp: reqwest::Response) -> SseReader {
        SseReader {
            stream: resp.bytes_stream().boxed(),
            buf: String::new(),
            comments: 0,
        }
    }

    pub async fn next(&mut self) -> Frame {
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let (mut id, mut event, mut data) = (None, String::new(), String::new());
                for line in block.lines() {
                    if line.starts_with(':') {
                        self.comments += 1;
                    } else if let Some(v) = line.strip_prefix("id: ") {
                        id = v.parse().ok();
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        event = v.to_string();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data.push_str(v);
                    }
                }
                if let Some(id) = id {
                    return Frame {
                        id,
                        event,
                        data: serde_json::from_str(&data).unwrap(),
                    };
                }
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.stream.next())
                .await
                .expect("no SSE frame within 20 s")
                .expect("stream ended")
                .unwrap();
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    pub async fn take(&mut self, n: usize) -> Vec<Frame> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            out.push(self.next().await);
        }
        out
    }
}

/// A caller of a running gateway with one bearer token (an API key or the shared token).
#[derive(Clone)]
pub struct Bearer {
    pub base: String,
    pub http: reqwest::Client,
    pub token: String,
}

impl Bearer {
    pub fn new(g: &Gateway, token: &str) -> Bearer {
        Bearer {
            base: g.base.clone(),
            http: g.http.clone(),
            token: token.to_string(),
        }
    }

    /// Status, body (JSON, or the text as a JSON string) and headers.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value, reqwest::header::HeaderMap) {
        let mut r = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.unwrap();
        let (status, headers) = (resp.status(), resp.headers().clone());
        let text = resp.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
            headers,
        )
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let (s, v, _) = self.send(reqwest::Method::GET, path, None).await;
        (s, v)
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let (s, v, _) = self.send(reqwest::Method::POST, path, Some(body)).await;
        (s, v)
    }

    /// Creates an API key with `role` (in `workspace`, or this caller's) and returns its id and
    /// a caller with it.
    pub async fn create_key(&self, name: &str, role: &str, workspace: Option<&str>) -> (String, Bearer) {
        let (status, body) = self
            .post(
                "/api/v1/keys",
                json!({"name": name, "role": role, "workspace": workspace}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let token = body["token"].as_str().unwrap();
        assert!(token.starts_with("rk_"), "{token}");
        let key = Bearer {
            token: token.to_string(),
            ..self.clone()
        };
        (body["key"]["keyId"].as_str().unwrap().to_string(), key)
    }
}
