//! Helper commands: one-shot work that prints to stdout and exits.
//!
//! Each takes a writer, so tests can run them in process; `crate::app`
//! passes stdout.

pub mod config;
pub mod docs;
pub mod engines;
pub mod modes;
pub mod projects;

use crate::error::Failure;

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
