//! The listener: plain HTTP (HTTP/1.1 and h2c for gRPC), or HTTPS with rustls when a
//! certificate is configured (ALPN offers h2 and http/1.1, so gRPC and REST share that port
//! too). Either way each request knows the client's address (`ConnectInfo`) for the audit trail.

use axum::Router;
use axum::serve::ListenerExt;
use axum_server::accept::{TcpConfigAcceptor, TcpSocketConfig};
use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

/// How long requests in flight get after the stop signal; SSE streams never end by themselves.
const DRAIN: Duration = Duration::from_secs(5);

/// Serves `app` on `listener` until `stop` completes, then drains for a few seconds.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    tls: Option<(String, String)>,
    stop: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = app.into_make_service_with_connect_info::<SocketAddr>();
    let Some((cert, key)) = tls else {
        // Without TCP_NODELAY a small SSE frame waits for the client's delayed ACK (~40 ms).
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(error = %e, "cannot set TCP_NODELAY");
            }
        });
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let server = axum::serve(listener, app).with_graceful_shutdown(async {
            let _ = stop_rx.await;
        });
        let server = tokio::spawn(server.into_future());
        stop.await;
        let _ = stop_tx.send(());
        let _ = tokio::time::timeout(DRAIN, server).await;
        return Ok(());
    };
    let config = RustlsConfig::from_pem_file(&cert, &key).await?;
    tokio::spawn(reload_on_hangup(config.clone(), cert, key));
    let acceptor = RustlsAcceptor::new(config)
        .handshake_timeout(Duration::from_secs(10))
        .acceptor(TcpConfigAcceptor::new(TcpSocketConfig::new().nodelay(true)));
    let handle = axum_server::Handle::new();
    let server = axum_server::from_tcp(listener.into_std()?)?
        .acceptor(acceptor)
        .handle(handle.clone())
        .serve(app);
    let server = tokio::spawn(server);
    stop.await;
    handle.graceful_shutdown(Some(DRAIN));
    let _ = tokio::time::timeout(DRAIN + Duration::from_secs(1), server).await;
    Ok(())
}

/// `kill -HUP`: read the certificate and key again (a renewed certificate without a restart;
/// open connections keep the one they started with).
async fn reload_on_hangup(config: RustlsConfig, cert: String, key: String) {
    let Ok(mut hangups) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) else {
        return;
    };
    while hangups.recv().await.is_some() {
        match config.reload_from_pem_file(&cert, &key).await {
            Ok(()) => tracing::info!(cert = %cert, "TLS certificate reloaded"),
            Err(e) => tracing::error!(cert = %cert, error = %e, "TLS certificate not reloaded; keeping the old one"),
        }
    }
}
