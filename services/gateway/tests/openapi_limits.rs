//! What the OpenAPI document says about request bodies is what the gateway does, checked for
//! every operation the document lists (not a hand-picked few): each operation that reads a body
//! declares its limit (`x-max-body-bytes`) and the 413 it answers over it; one that takes no
//! body refuses one; and the schedule schema refuses exactly what the automation service does.

mod common;

use common::{Gateway, gateway, mesh};
use relay_testkit::ServiceProcess;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// (method, path, operation) for every POST, PUT and PATCH in the document.
fn writes(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if ["post", "put", "patch"].contains(&method.as_str()) {
                out.push((method.clone(), path.clone(), op.clone()));
            }
        }
    }
    out
}

/// The document's path with every parameter filled in, under /api/v1.
fn concrete(path: &str) -> String {
    let mut out = String::from("/api/v1");
    let mut in_param = false;
    for c in path.chars() {
        match c {
            '{' => in_param = true,
            '}' => {
                in_param = false;
                out.push_str("x1");
            }
            _ if !in_param => out.push(c),
            _ => {}
        }
    }
    out
}

/// A JSON object of exactly `n` bytes (n ≥ 8).
fn body_of(n: usize) -> String {
    format!("{{\"x\":\"{}\"}}", "a".repeat(n - 8))
}

async fn send_raw(g: &Gateway, method: &str, path: &str, body: String) -> (StatusCode, Value) {
    let resp = g
        .req(Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(), path)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// The operation's 413, resolved: it must be the one declared in `components`, with the error
/// envelope as its body.
fn declared_413<'d>(doc: &'d Value, op: &Value) -> Option<&'d Value> {
    let name = op["responses"]["413"]["$ref"]
        .as_str()?
        .strip_prefix("#/components/responses/")?;
    let response = &doc["components"]["responses"][name];
    (response["content"]["application/json"]["schema"]["$ref"] == "#/components/schemas/WireError").then_some(response)
}

#[tokio::test]
async fn every_operation_answers_413_just_over_the_body_limit_it_declares() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    let (st, doc) = g.get("/api/v1/openapi.json").await;
    assert_eq!(st, StatusCode::OK);
    let ops = writes(&doc);
    assert!(ops.len() > 40, "only {} write operations in the document", ops.len());
    let mut wrong = Vec::new();
    for (method, path, op) in &ops {
        let name = format!("{} {path}", method.to_uppercase());
        if declared_413(&doc, op).is_none() {
            wrong.push(format!("{name}: no 413 with the error envelope among its responses"));
        }
        let Some(limit) = op["x-max-body-bytes"].as_u64().map(|n| n as usize) else {
            wrong.push(format!("{name}: no x-max-body-bytes"));
            continue;
        };
        let url = concrete(path);
        let (st, body) = send_raw(&g, method, &url, body_of(limit + 1)).await;
        if st != StatusCode::PAYLOAD_TOO_LARGE || body["error"]["code"] != "invalid_request" {
            wrong.push(format!("{name}: {} bytes answered {st} {body}", limit + 1));
        }
        let (st, body) = send_raw(&g, method, &url, body_of(limit)).await;
        if st == StatusCode::PAYLOAD_TOO_LARGE {
            wrong.push(format!("{name}: {limit} bytes (the limit) answered {st} {body}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} operations:\n{}",
        wrong.len(),
        ops.len(),
        wrong.join("\n")
    );
}

#[tokio::test]
async fn every_post_without_a_request_body_refuses_a_body_and_takes_an_empty_one() {
    let m = mesh().await;
    let g = gateway(&m, &[]).await;
    let (_, doc) = g.get("/api/v1/openapi.json").await;
    let bodyless: Vec<_> = writes(&doc)
        .into_iter()
        .filter(|(method, _, op)| method == "post" && op.get("requestBody").is_none())
        .collect();
    assert!(bodyless.len() >= 5, "only {bodyless:?}");
    let mut wrong = Vec::new();
    for (_, path, op) in &bodyless {
        let name = format!("POST {path}");
        if declared_413(&doc, op).is_none() {
            wrong.push(format!("{name}: no 413 among its responses"));
        }
        let url = concrete(path);
        // 1.1 MB: over the gateway's body limit too, once refused unread.
        let (st, body) = send_raw(&g, "post", &url, body_of(1_100_000)).await;
        if st != StatusCode::PAYLOAD_TOO_LARGE
            || !body["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("takes no body")
        {
            wrong.push(format!("{name}: 1.1 MB answered {st} {body}"));
        }
        let (st, body) = send_raw(&g, "post", &url, r#"{"reason": "x"}"#.into()).await;
        if st != StatusCode::BAD_REQUEST
            || !body["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("takes no body")
        {
            wrong.push(format!("{name}: a small body answered {st} {body}"));
        }
        // What clients send for nothing reaches the handler (the ids are unknown: 404 or 503
        // from a service that is not running here, never a refusal of the body).
        for nothing in ["", "{}", " null ", "{ }\n"] {
            let (st, body) = send_raw(&g, "post", &url, nothing.into()).await;
            if body["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("takes no body")
                || st == StatusCode::PAYLOAD_TOO_LARGE
            {
                wrong.push(format!("{name}: {nothing:?} answered {st} {body}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[tokio::test]
async fn the_schedule_schema_refuses_exactly_the_bodies_the_automation_service_refuses() {
    let m = mesh().await;
    let _automation = ServiceProcess::spawn(&relay_testkit::bin_path("automation"), &m.nats, &m.db, &[]);
    relay_testkit::wait_for_instances(&m.client, "automation", 1).await;
    let g = gateway(&m, &[]).await;
    let (_, doc) = g.get("/api/v1/openapi.json").await;
    let schema = json!({
        "$ref": "#/components/schemas/CreateScheduleRequest",
        "components": doc["components"],
    });
    let validator = jsonschema::draft202012::new(&schema).unwrap();

    // A one-time run far in the future: valid, never fires during the test.
    let base = json!({"at": 4_102_444_800_000i64, "action": {"kind": "spawn", "cli": "claude", "task": "do it"}});
    let with = |pointer: &str, value: Value| {
        let mut body = base.clone();
        if pointer == "/cron" {
            body.as_object_mut().unwrap().remove("at");
        }
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        body.pointer_mut(parent).unwrap()[key] = value;
        body
    };
    let mut cases = vec![base.clone()];
    for blank in ["", " ", "\t\n"] {
        for field in ["/name", "/cron", "/action/task", "/action/cli"] {
            cases.push(with(field, json!(blank)));
        }
        let mut message = base.clone();
        message["action"] = json!({"kind": "message", "to": "@bob", "text": blank});
        cases.push(message);
    }
    cases.push(with("/name", json!("nightly")));
    cases.push(with("/cron", json!("@daily")));
    cases.push(with("/action/cli", json!("Claude Code")));

    let mut wrong = Vec::new();
    for body in &cases {
        let valid = validator.is_valid(body);
        let (st, answer) = g.post("/api/v1/schedules", body.clone()).await;
        let accepted = st.is_success();
        assert!(accepted || st == StatusCode::BAD_REQUEST, "{body}: {st} {answer}");
        if accepted != valid {
            wrong.push(format!(
                "{body}: the schema says valid={valid}, the API answered {st} {answer}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
