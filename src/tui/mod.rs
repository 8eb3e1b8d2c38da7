//! The terminal UI (ratatui + crossterm), written as state + `Msg` +
//! `update` + `view`:
//!
//! - `app.rs` — the state, the messages, the effects;
//! - `update.rs` — the only code that changes the state (no I/O);
//!   `commands.rs` — the command line;
//! - `view.rs` — draws the state (reads only); `layout.rs` — where things
//!   are, shared by drawing and mouse hit-testing;
//! - `context.rs` — what the view shows, as facts (for TUI sharing);
//! - `backend.rs` — the `Backend` interface and its in-process
//!   implementation; `remote.rs` — the HTTP + SSE one (`quire attach`);
//! - `run.rs` — the loop that carries effects out and redraws at most
//!   ~60 times a second; `clock.rs` — its "now" (tests move it); `terminal.rs` — raw mode and its restoration;
//! - `share/` — sharing this TUI with an MCP client (`--tui-mcp`): its
//!   requests become messages that `update` applies.

pub mod app;
pub mod backend;
pub mod clock;
pub mod commands;
pub mod complete;
pub mod context;
pub mod drafts;
pub mod layout;
pub mod manage;
pub mod navigate;
pub mod preview;
pub mod remote;
pub mod run;
pub mod share;
pub mod style;
pub mod terminal;
pub mod update;
pub mod view;

use std::sync::Arc;

use futures_util::StreamExt;

use self::app::{App, Msg};
use self::backend::Backend;
use self::run::Runner;
use self::share::Share;
use quire_model::ids::SessionId;

/// How the TUI starts.
pub struct Options {
    /// Capture the mouse (config `tui.mouse`).
    pub mouse: bool,
    /// Attached to a remote server (shows the connection state).
    pub attached: bool,
    /// Show this session once loaded (`--project`).
    pub show: Option<SessionId>,
    /// A first line for the status bar (e.g. where the API is served).
    pub status: Option<String>,
    /// Colours (config `tui.theme`).
    pub theme: crate::config::schema::Theme,
    /// Whether `n` stops at machine translations (`tui.next_stops_at_machine`).
    pub next_stops_at_machine: bool,
    /// The engines' settings: the status line measures cues against the
    /// `qa` engine's limits (`[qa.subtitles]`, with the project's profile
    /// when it names one).
    pub settings: quire_core::engines::settings::SettingsMap,
    /// Where drafts are kept while typed (`<data_dir>/drafts`).
    pub drafts_dir: Option<std::path::PathBuf>,
}

/// Runs the TUI on the real terminal until the person quits.
pub async fn run(
    backend: Arc<dyn Backend>,
    options: Options,
    share: Option<Share>,
) -> std::io::Result<()> {
    let (terminal, _guard) = terminal::enter(options.mouse)?;
    let mut app = App::new(backend.describe(), options.attached);
    app.prefs.picker = Some(preview::picker());
    app.link.pending_show = options.show;
    app.prefs.theme = options.theme;
    app.prefs.next_stops_at_machine = options.next_stops_at_machine;
    let qa = options.settings.get::<quire_core::engines::qa::QaLevels>();
    app.prefs.subtitles = qa.subtitles.clone();
    if let Some(status) = options.status {
        app.say(status);
    }
    let mut runner = Runner::new(terminal, backend, app);
    if let Some(dir) = options.drafts_dir {
        runner = runner.with_drafts(drafts::Store::new(dir));
    }
    if let Some(share) = share {
        runner = runner.with_share(share);
    }
    // From here on a signal quits through the loop like `q` does.
    let signals = tokio::spawn(forward_signals(runner.sender()));
    let tx = runner.sender();
    let input = tokio::spawn(async move {
        let mut events = crossterm::event::EventStream::new();
        while let Some(Ok(event)) = events.next().await {
            use crossterm::event::Event as E;
            let msg = match event {
                E::Key(k) => Msg::Key(k),
                E::Mouse(m) => Msg::Mouse(m),
                E::Paste(s) => Msg::Paste(s),
                E::Resize(w, h) => Msg::Resize(w, h),
                _ => continue,
            };
            if tx.send(msg).is_err() {
                break;
            }
        }
        // The terminal is gone (its stream ended or failed): nothing can
        // be typed or shown any more, so quit as a stop signal does,
        // saving projects, rather than run on without one.
        let _ = tx.send(Msg::Terminate);
    });
    runner.run().await;
    input.abort();
    signals.abort();
    Ok(())
}

/// Turns a stop signal into `Msg::Terminate`, so `kill` or a closed
/// terminal window still saves projects and restores the terminal. (Ctrl-C
/// in raw mode is a key, not a signal.) The handlers are installed by the
/// call, before the returned future first runs.
fn forward_signals(
    tx: tokio::sync::mpsc::UnboundedSender<Msg>,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let stop = crate::signals::stop_requested();
    async move {
        stop.await;
        let _ = tx.send(Msg::Terminate);
    }
}
