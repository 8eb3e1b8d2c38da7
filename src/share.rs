//! TUI sharing: the private endpoint a `--tui-mcp` TUI serves and the
//! `quire mcp tui` adapter. Built in the TUI-sharing issue.
