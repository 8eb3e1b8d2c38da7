//! `journal.jsonl`: every change to the project, one line each, oldest
//! first, never cut (the history a team reads; `ops.log` is emptied at
//! each snapshot).
//!
//! A line is the change's `ops.log` frame as it was written, with its
//! epoch and its history label: `{"epoch":E,"label":"…","frame":{…}}`.
//! Making it costs a copy of bytes already encoded, under the session's
//! lock; what the change did field by field ([`Record`]) is worked out
//! when someone reads the history, which is rare beside writing.
//!
//! The log writer appends a frame's record once the frame is durable,
//! without an fsync of its own; it syncs the journal before a snapshot
//! empties `ops.log`, and opening a project appends the records of any
//! frame of `ops.log` the journal does not reach (a crash between the two
//! writes). So the journal holds every durable change.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use quire_model::error::{CoreError, CoreResult};
use quire_model::journal::{Record, Who};

use super::log::Frame;
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

/// A journal line as stored: the frame (this version) or, from the
/// builds before it, the record itself.
#[derive(Deserialize)]
#[serde(untagged)]
enum Stored {
    Frame {
        epoch: u64,
        label: String,
        frame: Box<Frame>,
    },
    Record(Record),
}

impl Stored {
    fn record(self) -> Record {
        match self {
            Stored::Record(record) => record,
            Stored::Frame {
                epoch,
                label,
                frame,
            } => {
                let frame = *frame;
                Record {
                    epoch,
                    changes: quire_model::journal::changes(&frame.op, &frame.inverse),
                    by: Who::of(
                        frame.by.as_deref(),
                        frame.agent.as_deref(),
                        frame.group.as_ref(),
                    ),
                    at: frame.at,
                    label,
                }
            }
        }
    }
}

/// The journal line of the frame `frame_line` (as [`super::log`] encoded
/// it) at `epoch`, labelled `label`; empty if the line is not a frame.
pub fn line(epoch: u64, label: &str, frame_line: &[u8]) -> Vec<u8> {
    const FIELD: &[u8] = b"\"frame\":";
    let Some(at) = frame_line.windows(FIELD.len()).position(|w| w == FIELD) else {
        return Vec::new();
    };
    // The frame's object, without the line's closing `}` and newline.
    let body = frame_line[at..]
        .strip_suffix(b"}\n")
        .unwrap_or(&frame_line[at..]);
    let mut out = Vec::with_capacity(body.len() + label.len() + 40);
    out.extend_from_slice(format!("{{\"epoch\":{epoch},\"label\":").as_bytes());
    if serde_json::to_writer(&mut out, label).is_err() {
        return Vec::new();
    }
    out.push(b',');
    out.extend_from_slice(body);
    out.extend_from_slice(b"}\n");
    out
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
        .find_map(|l| serde_json::from_slice::<Epoch>(l).ok());
    match last {
        Some(line) => line.epoch,
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
        .filter_map(|l| serde_json::from_slice::<Stored>(&l).ok())
        .map(Stored::record)
        .collect()
}

/// A line's epoch, whatever else it holds.
#[derive(Deserialize)]
struct Epoch {
    epoch: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_model::ids::{NodeId, PageId};
    use quire_model::op::{NodePatch, Op};

    /// A line carries the frame as logged and reads back as the record
    /// of what changed; a record line of the builds before it still reads.
    #[test]
    fn a_line_is_the_frame_and_reads_as_its_record() {
        let (page, id) = (PageId::new(), NodeId::new());
        let edit = |t: &str| Op::UpdateNode {
            page,
            id,
            patch: NodePatch::text(Some(Some(t.into())), None),
            based_on: None,
        };
        let parts = super::super::log::Parts {
            kind: super::super::log::FrameKind::Apply,
            at: "2026-12-07T10:00:00Z",
            op: &edit("après"),
            inverse: &edit("avant"),
            group: None,
            by: Some("ana"),
            agent: None,
            mcp_session: None,
            undoes: None,
        };
        let frame = super::super::log::encode_parts(7, &parts).unwrap().bytes;
        let line = line(7, "edit \"translation\"", &frame);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let old = r#"{"epoch":3,"at":"2026-12-06T10:00:00Z","label":"old","by":{"by":"human"},"changes":[]}"#;
        std::fs::write(&path, [old.as_bytes(), b"\n", &line].concat()).unwrap();
        let records = read(&path);
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].label, "old");
        let record = &records[1];
        assert_eq!(
            (record.epoch, record.label.as_str()),
            (7, "edit \"translation\"")
        );
        assert_eq!(record.by.user(), Some("ana"));
        let change = &record.changes[0];
        assert_eq!(change.field, "translation");
        assert_eq!(
            (&change.before, &change.after),
            (&"avant".into(), &"après".into())
        );
        assert_eq!(last_epoch(&path), 7);
    }
}
