//! The fake server over real HTTP, in-process: every route, streaming and not, recording, bad input.

use fake_model::{Api, FakeModel, Script, Step};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Reply {
    status: u16,
    content_type: String,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The `data:` payloads of an SSE body, parsed.
    fn events(&self) -> Vec<Value> {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("bad SSE data ({e}): {d}")))
            .collect()
    }
}

/// One HTTP/1.1 request with `Connection: close`; the fake always sends a sized body.
async fn send(model: &FakeModel, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut stream = TcpStream::connect(model.addr()).await.expect("connect");
    let mut request = format!("{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    let raw = String::from_utf8(raw).expect("utf-8 reply");
    let (head, body) = raw.split_once("\r\n\r\n").expect("head and body");
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("status");
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type: ")
                .map(str::to_string)
        })
        .unwrap_or_default();
    Reply {
        status,
        content_type,
        body: body.to_string(),
    }
}

async fn post(model: &FakeModel, path: &str, body: Value) -> Reply {
    send(
        model,
        "POST",
        path,
        &[("content-type", "application/json")],
        &body.to_string(),
    )
    .await
}

fn script() -> Script {
    Script::new()
        .on(
            "RUNTOOL",
            [
                Step::shell("touch ran.txt").usage(1500, 800),
                Step::text("done").usage(100, 20),
            ],
        )
        .on("HELLO", [Step::text("hello there").usage(7, 3)])
}

#[tokio::test]
async fn anthropic_answers_streaming_and_plain_with_the_scripted_step_and_usage() {
    let model = FakeModel::start(script()).await;
    let tools = json!([{"name": "Bash", "input_schema": {"type": "object"}}]);
    let user = json!([{"role": "user", "content": [{"type": "text", "text": "RUNTOOL now"}]}]);

    let reply = post(
        &model,
        "/v1/messages?beta=true",
        json!({"model": "m", "stream": true, "messages": user, "tools": tools}),
    )
    .await;
    assert_eq!((reply.status, reply.content_type.as_str()), (200, "text/event-stream"));
    let events = reply.events();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert_eq!(events[1]["content_block"]["name"], "Bash");
    let input: Value =
        serde_json::from_str(events[2]["delta"]["partial_json"].as_str().unwrap_or_default()).expect("input json");
    assert_eq!(input["command"], "touch ran.txt");
    assert_eq!(events[0]["message"]["usage"]["input_tokens"], 1500);
    assert_eq!(events[4]["usage"]["output_tokens"], 800);
    assert_eq!(events[4]["delta"]["stop_reason"], "tool_use");

    // After the tool result: step 2, not streamed.
    let after = json!([
        {"role": "user", "content": [{"type": "text", "text": "RUNTOOL now"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
    ]);
    let reply = post(
        &model,
        "/v1/messages",
        json!({"model": "m", "messages": after, "tools": tools}),
    )
    .await;
    let message = reply.json();
    assert_eq!(message["content"], json!([{"type": "text", "text": "done"}]));
    assert_eq!(
        (
            message["usage"]["input_tokens"].as_u64(),
            message["usage"]["output_tokens"].as_u64()
        ),
        (Some(100), Some(20))
    );

    // A side call without tools: text, zero usage, not a main request.
    let reply = post(&model, "/v1/messages", json!({"model": "haiku", "messages": user})).await;
    assert_eq!(reply.json()["usage"]["input_tokens"], 0);
    let count = post(&model, "/v1/messages/count_tokens?beta=true", json!({"messages": user})).await;
    assert_eq!(count.json(), json!({"input_tokens": 1000}));

    assert_eq!(model.requests().len(), 4);
    assert_eq!(model.main_requests().len(), 2);
    assert_eq!(model.user_texts(), ["RUNTOOL now"]);
}

#[tokio::test]
async fn openai_responses_stream_the_event_sequence_codex_expects() {
    let model = FakeModel::start(script()).await;
    let tools = json!([{"type": "function", "name": "exec_command", "parameters": {}}]);
    let input = json!([
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>x</environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "say HELLO"}]},
    ]);
    let reply = post(
        &model,
        "/v1/responses",
        json!({"model": "gpt-5.5", "stream": true, "input": input, "tools": tools}),
    )
    .await;
    assert_eq!(reply.content_type, "text/event-stream");
    let events = reply.events();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    assert_eq!(events[4]["delta"], "hello there");
    let usage = &events[8]["response"]["usage"];
    assert_eq!(
        (
            usage["input_tokens"].as_u64(),
            usage["output_tokens"].as_u64(),
            usage["total_tokens"].as_u64()
        ),
        (Some(7), Some(3), Some(10))
    );

    // Shell step as a function call, plain JSON.
    let input = json!([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "RUNTOOL"}]}]);
    let reply = post(
        &model,
        "/v1/responses",
        json!({"model": "gpt-5.5", "input": input, "tools": tools}),
    )
    .await;
    let call = &reply.json()["output"][0];
    assert_eq!(
        (call["type"].as_str(), call["name"].as_str()),
        (Some("function_call"), Some("exec_command"))
    );
    let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap_or_default()).expect("arguments json");
    assert_eq!(args["sandbox_permissions"], "require_escalated");

    let models = send(&model, "GET", "/v1/models", &[], "").await;
    assert_eq!(models.json()["data"][0]["id"], "gpt-5.5");
    assert_eq!(model.user_texts(), ["say HELLO", "RUNTOOL"]);
}

#[tokio::test]
async fn gemini_answers_sse_json_and_schema_side_calls() {
    let model = FakeModel::start(script()).await;
    let tools = json!([{"functionDeclarations": [{"name": "run_shell_command"}]}]);
    let contents = json!([{"role": "user", "parts": [{"text": "<session_context>\nctx\n</session_context>"}, {"text": "RUNTOOL"}]}]);
    let body = json!({"contents": contents, "tools": tools});

    let reply = post(
        &model,
        "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse",
        body.clone(),
    )
    .await;
    assert_eq!(reply.content_type, "text/event-stream");
    let chunk = &reply.events()[0];
    assert_eq!(
        chunk["candidates"][0]["content"]["parts"][0]["functionCall"]["args"]["command"],
        "touch ran.txt"
    );
    assert_eq!(
        chunk["usageMetadata"],
        json!({"promptTokenCount": 1500, "candidatesTokenCount": 800, "cachedContentTokenCount": 0, "totalTokenCount": 2300})
    );

    let array = post(
        &model,
        "/v1beta/models/gemini-3.8-flash:streamGenerateContent",
        body.clone(),
    )
    .await;
    assert!(array.json()[0]["candidates"].is_array());
    let plain = post(&model, "/v1beta/models/gemini-3.8-flash:generateContent", body).await;
    assert_eq!(plain.json()["modelVersion"], "gemini-3.8-flash");

    let schema =
        json!({"type": "OBJECT", "properties": {"complexity_score": {"type": "INTEGER"}, "why": {"type": "STRING"}}});
    let router = json!({"contents": contents, "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": schema}});
    let reply = post(&model, "/v1beta/models/gemini-3.5-flash-lite:generateContent", router)
        .await
        .json();
    let text = reply["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        serde_json::from_str::<Value>(&text).expect("schema JSON"),
        json!({"complexity_score": 1, "why": "x"})
    );
    assert_eq!(reply["usageMetadata"]["totalTokenCount"], 0);

    let count = post(
        &model,
        "/v1beta/models/gemini-3.8-flash:countTokens",
        json!({"contents": contents}),
    )
    .await;
    assert_eq!(count.json(), json!({"totalTokens": 1000}));
    let apis: Vec<Api> = model.requests().iter().map(|r| r.api).collect();
    assert_eq!(apis, [Api::Gemini; 5]);
    assert_eq!(model.main_requests().len(), 3);
}

#[tokio::test]
async fn unknown_routes_and_bad_bodies_get_json_errors_and_are_recorded() {
    let model = FakeModel::start(Script::new()).await;
    let head = send(&model, "HEAD", "/", &[], "").await;
    assert_eq!(head.status, 404);
    let missing = send(&model, "GET", "/nope", &[], "").await;
    assert_eq!(
        (missing.status, missing.json()["error"]["code"].as_u64()),
        (404, Some(404))
    );
    let bad = send(
        &model,
        "POST",
        "/v1/messages",
        &[("x-api-key", "secret-key")],
        "{not json",
    )
    .await;
    assert_eq!((bad.status, bad.content_type.as_str()), (400, "application/json"));
    let wrong_shape = post(&model, "/v1/responses", json!({"input": "just a string", "tools": 7})).await;
    assert_eq!(wrong_shape.status, 200);

    let recorded = model.requests();
    assert_eq!(recorded.len(), 4);
    assert_eq!(
        (recorded[0].method.as_str(), recorded[0].path.as_str(), recorded[0].api),
        ("HEAD", "/", Api::Other)
    );
    assert_eq!(recorded[2].body, json!("{not json"));
    assert!(recorded[2].headers.contains(&("x-api-key".into(), "<redacted>".into())));
    assert!(!format!("{recorded:?}").contains("secret-key"));
}

#[tokio::test]
async fn set_script_changes_the_answers_of_a_running_server() {
    let model = FakeModel::start(Script::new()).await;
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "ping"}], "tools": [{"name": "Bash"}]});
    assert_eq!(
        post(&model, "/v1/messages", body.clone()).await.json()["content"][0]["text"],
        fake_model::DEFAULT_FALLBACK
    );
    model.set_script(Script::new().on("ping", [Step::text("pong")]));
    assert_eq!(
        post(&model, "/v1/messages", body.clone()).await.json()["content"][0]["text"],
        "pong"
    );
    model.set_script(Script::new().fallback("nothing scripted"));
    assert_eq!(
        post(&model, "/v1/messages", body).await.json()["content"][0]["text"],
        "nothing scripted"
    );
}

#[tokio::test]
async fn cache_reads_and_side_call_usage_are_told_each_api_its_way_and_summed_as_reported() {
    let script = Script::new()
        .on("CACHED", [Step::text("ok").usage(100, 20).cached(30)])
        .side_usage(7, 3, 2);
    let model = FakeModel::start(script).await;
    let tool = json!([{"name": "Bash", "input_schema": {}}]);
    let user = json!([{"role": "user", "content": "CACHED"}]);
    // Anthropic: cache reads apart from input_tokens.
    let r = post(
        &model,
        "/v1/messages",
        json!({"model": "m", "tools": tool, "messages": user}),
    )
    .await
    .json();
    assert_eq!(
        (
            r["usage"]["input_tokens"].as_u64(),
            r["usage"]["cache_read_input_tokens"].as_u64()
        ),
        (Some(100), Some(30))
    );
    // OpenAI: input_tokens include the cached ones.
    let input = json!([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "CACHED"}]}]);
    let r = post(
        &model,
        "/v1/responses",
        json!({"model": "m", "tools": [{"type": "function", "name": "shell"}], "input": input}),
    )
    .await
    .json();
    assert_eq!(r["usage"]["input_tokens"], 130);
    assert_eq!(r["usage"]["input_tokens_details"]["cached_tokens"], 30);
    // Gemini: promptTokenCount includes them; a side call (no tools) reports the side usage.
    let contents = json!([{"role": "user", "parts": [{"text": "CACHED"}]}]);
    let r = post(
        &model,
        "/v1beta/models/g:generateContent",
        json!({"contents": contents}),
    )
    .await
    .json();
    assert_eq!(r["usageMetadata"]["promptTokenCount"], 9);
    assert_eq!(r["usageMetadata"]["cachedContentTokenCount"], 2);
    let reported = model.reported_usage();
    assert_eq!((reported.input, reported.cached, reported.output), (207, 62, 43));
}
