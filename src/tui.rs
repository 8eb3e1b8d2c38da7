//! Terminal UI frontend (ratatui + crossterm) over a `Backend`: the core in
//! process, or a remote headless server. Built in the TUI issue.
