//! Stop signals: SIGTERM and SIGINT mean "quit gracefully" in every mode;
//! SIGHUP means "reload the config" for a server ([`stop_or_reload`]) and
//! "quit" for the others ([`stop_requested`]: a terminal closing). The
//! handlers are installed by the functions themselves, not when their
//! futures first run, so a mode can install them before it tells anyone
//! it is up.

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

/// Installs the handlers now; the future resolves at SIGTERM or SIGINT,
/// and each SIGHUP sends on `reload` instead. Call it inside the tokio
/// runtime.
pub fn stop_or_reload(
    reload: tokio::sync::mpsc::UnboundedSender<()>,
) -> impl Future<Output = ()> + Send + 'static {
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
            (Ok(mut term), Ok(mut int), Ok(mut hup)) => loop {
                let name = tokio::select! {
                    _ = term.recv() => "SIGTERM",
                    _ = int.recv() => "SIGINT",
                    _ = hup.recv() => {
                        let _ = reload.send(());
                        continue;
                    }
                };
                tracing::info!("{name}: shutting down");
                break;
            },
            _ => {
                tracing::warn!("cannot install signal handlers; waiting for Ctrl-C only");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
        #[cfg(not(unix))]
        {
            drop(reload);
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("Ctrl-C: shutting down");
        }
    }
}
