//! Helper commands: one-shot work that prints to stdout and exits.
//!
//! Each takes a writer, so tests can run them in process; `crate::app`
//! passes stdout.

pub mod backup;
pub mod batch;
pub mod config;
pub mod docs;
pub mod engines;
pub mod glossary;
pub mod models;
pub mod modes;
pub mod projects;
pub mod tm;

use crate::error::Failure;

/// Output that ends quietly when its reader goes away: once a write finds
/// the pipe closed (`quire man | head -1`), every later write succeeds
/// without writing, so the command finishes and exits 0 instead of
/// panicking (clap_complete) or printing an error. Other errors pass.
pub struct Output<W> {
    inner: W,
    closed: bool,
}

impl<W: std::io::Write> Output<W> {
    pub fn new(inner: W) -> Self {
        Output {
            inner,
            closed: false,
        }
    }

    fn quiet(&mut self, result: std::io::Result<usize>, len: usize) -> std::io::Result<usize> {
        match result {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(len)
            }
            other => other,
        }
    }
}

impl<W: std::io::Write> std::io::Write for Output<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let result = self.inner.write(buf);
        self.quiet(result, buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let result = self.inner.flush().map(|()| 0);
        self.quiet(result, 0).map(|_| ())
    }
}

/// A write to stdout failed (e.g. a closed pipe).
pub(crate) fn write_failed(e: std::io::Error) -> Failure {
    Failure::Runtime(anyhow::Error::new(e).context("cannot write output"))
}

/// Writes rows under a header, columns padded to their widest cell; the
/// last column is not padded.
pub(crate) fn table<const N: usize>(
    out: &mut dyn std::io::Write,
    header: [&str; N],
    rows: &[[String; N]],
) -> Result<(), Failure> {
    let header = header.map(str::to_owned);
    let mut widths = [0usize; N];
    for row in std::iter::once(&header).chain(rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                let pad = widths[i] - cell.chars().count();
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad + 2));
            }
        }
        writeln!(out, "{}", line.trim_end()).map_err(write_failed)?;
    }
    Ok(())
}
