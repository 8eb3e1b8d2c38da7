//! Stop signals: SIGTERM, SIGINT and SIGHUP all mean "quit gracefully" in
//! every mode (there is nothing to reload). The handlers are installed by
//! [`stop_requested`] itself, not when its future first runs, so a mode can
//! install them before it tells anyone it is up.

use std::future::Future;

/// Installs the stop-signal handlers now; the future resolves at the first
/// stop signal. Call it inside the tokio runtime.
pub fn stop_requested() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let signals = {
        use tokio::signal::unix::{SignalKind, signal};
        (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        )
    };
    async move {
        #[cfg(unix)]
        match signals {
            (Ok(mut term), Ok(mut int), Ok(mut hup)) => {
                let name = tokio::select! {
                    _ = term.recv() => "SIGTERM",
                    _ = int.recv() => "SIGINT",
                    _ = hup.recv() => "SIGHUP",
                };
                tracing::info!("{name}: shutting down");
            }
            _ => {
                tracing::warn!("cannot install signal handlers; waiting for Ctrl-C only");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("Ctrl-C: shutting down");
        }
    }
}
