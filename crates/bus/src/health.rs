//! `GET /healthz` for services that have no HTTP port of their own, so container probes can ask
//! whether this process still reaches NATS: 200 `ok` while connected, 503 otherwise.
//! Off unless `telemetry.health_listen` is set (e.g. `0.0.0.0:9090`).

use async_nats::connection::State;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Binds `listen` (when set) and answers probes in the background.
pub async fn serve(listen: Option<&str>, nats: async_nats::Client) -> std::io::Result<()> {
    let Some(listen) = listen.filter(|l| !l.is_empty()) else {
        return Ok(());
    };
    let listener = TcpListener::bind(listen).await?;
    tracing::info!(listen = %listener.local_addr()?, "serving GET /healthz");
    tokio::spawn(async move {
        loop {
            let Ok((mut tcp, _)) = listener.accept().await else {
                continue;
            };
            let nats = nats.clone();
            tokio::spawn(async move {
                // A probe's request fits in one read; anything else is not a probe.
                let mut buf = [0u8; 1024];
                let Ok(Ok(n)) = tokio::time::timeout(std::time::Duration::from_secs(5), tcp.read(&mut buf)).await
                else {
                    return;
                };
                let reply = answer(&buf[..n], nats.connection_state());
                let _ = tcp.write_all(reply.as_bytes()).await;
                let _ = tcp.shutdown().await;
            });
        }
    });
    Ok(())
}

fn answer(request: &[u8], state: State) -> String {
    let line = request.split(|b| *b == b'\r' || *b == b'\n').next().unwrap_or_default();
    let (status, body) = if !(line.starts_with(b"GET /healthz ") || line.starts_with(b"HEAD /healthz ")) {
        ("404 Not Found", "not found\n")
    } else if state == State::Connected {
        ("200 OK", "ok\n")
    } else {
        ("503 Service Unavailable", "nats disconnected\n")
    };
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn healthz_answers_by_connection_state_and_other_paths_are_not_found() {
        assert!(answer(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n", State::Connected).starts_with("HTTP/1.1 200 OK"));
        assert!(answer(b"GET /healthz HTTP/1.1\r\n\r\n", State::Disconnected).starts_with("HTTP/1.1 503"));
        assert!(answer(b"GET /metrics HTTP/1.1\r\n\r\n", State::Connected).starts_with("HTTP/1.1 404"));
        assert!(answer(b"\x00garbage", State::Connected).starts_with("HTTP/1.1 404"));
    }
}
