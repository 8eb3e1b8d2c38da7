//! The real terminal: raw mode, alternate screen, mouse and paste, and the
//! guarantee that they are undone on every way out, panics included.

use std::io::{Stdout, Write};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// Restores the terminal when dropped.
pub struct TerminalGuard {
    mouse: bool,
}

/// Puts the terminal back as it was; safe to call more than once.
pub fn restore(mouse: bool) {
    let mut out = std::io::stdout();
    if mouse {
        let _ = execute!(out, DisableMouseCapture);
    }
    let _ = execute!(
        out,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore(self.mouse);
    }
}

/// Enters the TUI's terminal mode; the guard and a panic hook undo it.
pub fn enter(mouse: bool) -> std::io::Result<(Terminal<CrosstermBackend<Stdout>>, TerminalGuard)> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // Leave the alternate screen first so the message is readable.
        restore(mouse);
        previous(info);
    }));
    enable_raw_mode()?;
    let guard = TerminalGuard { mouse };
    let mut out = std::io::stdout();
    execute!(out, EnterAlternateScreen, EnableBracketedPaste)?;
    if mouse {
        execute!(out, EnableMouseCapture)?;
    }
    let terminal = Terminal::new(CrosstermBackend::new(out))?;
    Ok((terminal, guard))
}
