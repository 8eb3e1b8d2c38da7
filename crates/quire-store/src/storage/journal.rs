//! `journal.jsonl`: every change to the project, one
//! [`Record`] a line, oldest first, never cut
//! (the history a team reads; `ops.log` is emptied at each snapshot).
//!
//! The log writer appends a frame's record once the frame is durable,
//! without an fsync of its own; it syncs the journal before a snapshot
//! empties `ops.log`, and opening a project appends the records of any
//! frame of `ops.log` the journal does not reach (a crash between the two
//! writes). So the journal holds every durable change.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use quire_model::error::{CoreError, CoreResult};
use quire_model::journal::Record;

use super::private_file;

/// The journal, open for appending.
pub struct Journal {
    path: PathBuf,
    file: Option<File>,
}

impl Journal {
    pub fn new(path: PathBuf) -> Journal {
        Journal { path, file: None }
    }

    /// Appends encoded records (each a line). A failure is a warning: the
    /// frames are durable in `ops.log`, and the next open catches up.
    pub fn append(&mut self, lines: &[u8]) {
        if lines.is_empty() {
            return;
        }
        if let Err(e) = self.try_append(lines) {
            tracing::warn!("cannot append to {}: {e}", self.path.display());
            self.file = None;
        }
    }

    fn try_append(&mut self, lines: &[u8]) -> std::io::Result<()> {
        if self.file.is_none() {
            self.file = Some(private_file().create(true).append(true).open(&self.path)?);
        }
        match &mut self.file {
            Some(file) => file.write_all(lines),
            None => Ok(()),
        }
    }

    /// Makes what was appended durable (before `ops.log` is emptied).
    pub fn sync(&mut self) -> CoreResult<()> {
        match &self.file {
            Some(file) => file.sync_data().map_err(|e| CoreError::io(&self.path, e)),
            None => Ok(()),
        }
    }
}

/// One record as a journal line.
pub fn encode(record: &Record) -> CoreResult<Vec<u8>> {
    let mut line = serde_json::to_vec(record)
        .map_err(|e| CoreError::internal(format!("cannot encode a journal record: {e}")))?;
    line.push(b'\n');
    Ok(line)
}

/// The epoch of the journal's last whole record; 0 when it has none.
pub fn last_epoch(path: &Path) -> u64 {
    let Ok(mut file) = File::open(path) else {
        return 0;
    };
    // The last line is within the file's last 1 MiB unless a record is
    // bigger than that, when the whole file is read.
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(1 << 20);
    let mut tail = Vec::new();
    if file.seek(SeekFrom::Start(from)).is_err() || file.read_to_end(&mut tail).is_err() {
        return 0;
    }
    let last = tail
        .split(|b| *b == b'\n')
        .rev()
        .filter(|l| !l.is_empty())
        .find_map(|l| serde_json::from_slice::<Record>(l).ok());
    match last {
        Some(record) => record.epoch,
        None if from > 0 => read(path).last().map_or(0, |r| r.epoch),
        None => 0,
    }
}

/// Every whole record, oldest first (a line a crash cut short is skipped).
pub fn read(path: &Path) -> Vec<Record> {
    let Ok(file) = File::open(path) else {
        return Vec::new();
    };
    BufReader::new(file)
        .split(b'\n')
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_slice(&l).ok())
        .collect()
}
