//! `ops.log`: one line per applied change since the snapshot.
//!
//! ```text
//! {"epoch":12,"sum":"<16 hex>","frame":{"kind":"apply","at":"…","op":{…},"inverse":{…}}}
//! ```
//!
//! `sum` is BLAKE3 over the epoch and the exact bytes of `frame`, so a
//! torn or flipped line is detected. A bad *last* line is what a crash in
//! the middle of an append leaves: recovery drops it with a warning. A bad
//! line before the last is real damage: an error naming the line.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use quire_model::error::{CoreError, CoreResult};
use quire_model::history::Group;
use quire_model::op::Op;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FrameKind {
    Apply,
    Undo,
    Redo,
}

/// What one line records: the op that was applied to the scene (resolved)
/// and its inverse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Frame {
    pub kind: FrameKind,
    /// When it was applied (RFC 3339); replay sets `updatedAt` from it.
    pub at: String,
    pub op: Op,
    pub inverse: Op,
    /// The job step the change belongs to (history joins its pages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<Group>,
    /// The server's user who made it (applied, undid or redid it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The agent (its MCP client) that made it for that user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The MCP session the agent made it through, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_session: Option<String>,
    /// An undo's or redo's: the epoch of the history entry it took back
    /// or brought back (undo is per person, so not always the newest).
    /// Frames written before undo was per person have none: theirs was
    /// the newest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<u64>,
}

/// How many hex digits of BLAKE3 a checksum keeps.
const SUM_DIGITS: usize = 16;

/// BLAKE3 over the epoch and the exact bytes, shortened to 16 hex digits.
pub(super) fn checksum(epoch: u64, frame: &str) -> String {
    checksum_bytes(epoch, frame.as_bytes())
}

fn checksum_bytes(epoch: u64, frame: &[u8]) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&epoch.to_le_bytes());
    hasher.update(frame);
    hasher.finalize().to_hex()[..SUM_DIGITS].to_owned()
}

/// One log line, newline included.
#[cfg(test)]
pub fn encode(epoch: u64, frame: &Frame) -> CoreResult<Vec<u8>> {
    let parts = Parts {
        kind: frame.kind,
        at: &frame.at,
        op: &frame.op,
        inverse: &frame.inverse,
        group: frame.group.as_ref(),
        by: frame.by.as_deref(),
        agent: frame.agent.as_deref(),
        mcp_session: frame.mcp_session.as_deref(),
        undoes: frame.undoes,
    };
    encode_parts(epoch, &parts).map(|e| e.bytes)
}

/// An encoded log line.
pub struct Encoded {
    /// The line, newline included.
    pub bytes: Vec<u8>,
    /// How many of those bytes are the (forward) op's JSON.
    pub op_len: usize,
}

/// One log line from the parts of a frame: the same JSON as serializing a
/// [`Frame`], written by hand into one buffer (the checksum's place is
/// filled in last), so a 20 MiB batch is serialized once and never copied,
/// and the op's size is known without a second serialization.
/// A frame's fields, borrowed.
pub struct Parts<'a> {
    pub kind: FrameKind,
    pub at: &'a str,
    pub op: &'a Op,
    pub inverse: &'a Op,
    pub group: Option<&'a Group>,
    pub by: Option<&'a str>,
    pub agent: Option<&'a str>,
    pub mcp_session: Option<&'a str>,
    pub undoes: Option<u64>,
}

pub fn encode_parts(epoch: u64, parts: &Parts<'_>) -> CoreResult<Encoded> {
    let Parts {
        kind,
        at,
        op,
        inverse,
        group,
        by,
        agent,
        mcp_session,
        undoes,
    } = *parts;
    let fail =
        |e: serde_json::Error| CoreError::internal(format!("cannot encode an ops.log frame: {e}"));
    let mut op_len = 0;
    let mut line = checksummed(epoch, "frame", |out| {
        out.extend_from_slice(b"{\"kind\":");
        serde_json::to_writer(&mut *out, &kind).map_err(fail)?;
        out.extend_from_slice(b",\"at\":");
        serde_json::to_writer(&mut *out, at).map_err(fail)?;
        out.extend_from_slice(b",\"op\":");
        let op_at = out.len();
        serde_json::to_writer(&mut *out, op).map_err(fail)?;
        op_len = out.len() - op_at;
        out.extend_from_slice(b",\"inverse\":");
        serde_json::to_writer(&mut *out, inverse).map_err(fail)?;
        if let Some(group) = group {
            out.extend_from_slice(b",\"group\":");
            serde_json::to_writer(&mut *out, group).map_err(fail)?;
        }
        if let Some(by) = by {
            out.extend_from_slice(b",\"by\":");
            serde_json::to_writer(&mut *out, by).map_err(fail)?;
        }
        if let Some(agent) = agent {
            out.extend_from_slice(b",\"agent\":");
            serde_json::to_writer(&mut *out, agent).map_err(fail)?;
        }
        if let Some(session) = mcp_session {
            out.extend_from_slice(b",\"mcpSession\":");
            serde_json::to_writer(&mut *out, session).map_err(fail)?;
        }
        if let Some(undoes) = undoes {
            out.extend_from_slice(b",\"undoes\":");
            serde_json::to_writer(&mut *out, &undoes).map_err(fail)?;
        }
        out.push(b'}');
        Ok(())
    })?;
    line.push(b'\n');
    Ok(Encoded {
        bytes: line,
        op_len,
    })
}

/// `{"epoch":E,"sum":"…","<field>":<what body writes>}` in one buffer:
/// `sum` is [`checksum`] over the epoch and the bytes `body` wrote, filled
/// into its place afterwards, so nothing is serialized or copied twice
/// (the same shape for log lines and `scene.json`).
pub(super) fn checksummed(
    epoch: u64,
    field: &str,
    body: impl FnOnce(&mut Vec<u8>) -> CoreResult<()>,
) -> CoreResult<Vec<u8>> {
    let mut out = format!("{{\"epoch\":{epoch},\"sum\":\"").into_bytes();
    let sum_at = out.len();
    out.extend_from_slice(&[b'0'; SUM_DIGITS]);
    out.extend_from_slice(format!("\",\"{field}\":").as_bytes());
    let body_at = out.len();
    body(&mut out)?;
    let sum = checksum_bytes(epoch, &out[body_at..]);
    out[sum_at..sum_at + SUM_DIGITS].copy_from_slice(sum.as_bytes());
    out.push(b'}');
    Ok(out)
}

/// Whether an encoded line will decode again at recovery. Called before a
/// line is queued, so that the log never holds a line it cannot replay.
///
/// The line is parsed with the recovery decoder's settings (serde_json's,
/// whose nesting limit of 128 is what 0.1.0 hit when it logged a batch
/// nested 62 deep and could not read it back). That the frame's types then
/// read back what they wrote holds by construction: the same serde types
/// write and read, `apply` admits only finite numbers, and `limits`
/// bounds the nesting. Debug builds (every test) decode each line into a
/// [`Frame`] as well, which proves that on everything the tests apply;
/// release builds skip that, as it would double the cost of a small op.
pub fn check_replayable(line: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(line)
        .map_err(|_| "not UTF-8".to_owned())?
        .strip_suffix('\n')
        .ok_or("no newline")?;
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .map_err(|e| format!("frame does not decode: {e}"))?;
    if cfg!(debug_assertions) {
        decode(text)?;
    }
    Ok(())
}

#[derive(Deserialize)]
struct Line<'a> {
    epoch: u64,
    sum: &'a str,
    #[serde(borrow)]
    frame: &'a RawValue,
}

fn decode(line: &str) -> Result<(u64, Frame), String> {
    let parsed: Line<'_> = serde_json::from_str(line).map_err(|e| format!("not a frame: {e}"))?;
    if checksum(parsed.epoch, parsed.frame.get()) != parsed.sum {
        return Err("checksum mismatch".into());
    }
    let frame: Frame = serde_json::from_str(parsed.frame.get())
        .map_err(|e| format!("frame does not decode: {e}"))?;
    Ok((parsed.epoch, frame))
}

/// The frames to replay after a snapshot at `snapshot_epoch`.
#[derive(Debug)]
pub struct Recovered {
    /// `(line number, epoch, frame)`, epochs consecutive from `snapshot_epoch + 1`.
    pub frames: Vec<(usize, u64, Frame)>,
    /// Byte length of the intact prefix of the file.
    pub intact_len: u64,
    /// Set when a torn last line was dropped: the warning to log.
    pub dropped: Option<String>,
}

/// Reads `ops.log` (a missing file is an empty log). Changes nothing on disk.
pub fn read(path: &Path, snapshot_epoch: u64) -> CoreResult<Recovered> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(CoreError::io(path, e)),
    };
    let corrupt = |line: usize, message: String| CoreError::Corrupt {
        file: path.to_path_buf(),
        line: Some(line),
        message,
    };
    let mut frames = Vec::new();
    let mut offset = 0usize;
    let mut expected = snapshot_epoch + 1;
    let mut dropped = None;
    let mut line_no = 0usize;
    while offset < bytes.len() {
        line_no += 1;
        let rest = &bytes[offset..];
        let (line, consumed, complete) = match rest.iter().position(|b| *b == b'\n') {
            Some(i) => (&rest[..i], i + 1, true),
            None => (rest, rest.len(), false),
        };
        let is_last = offset + consumed >= bytes.len();
        let decoded = std::str::from_utf8(line)
            .map_err(|_| "not UTF-8".to_owned())
            .and_then(decode)
            .and_then(|d| {
                if complete {
                    Ok(d)
                } else {
                    Err("incomplete line (no newline)".to_owned())
                }
            });
        match decoded {
            Ok((epoch, frame)) => {
                if epoch <= snapshot_epoch {
                    // Written before the snapshot that covers it; the crash
                    // came between the snapshot's rename and the truncation.
                } else if epoch != expected {
                    return Err(corrupt(
                        line_no,
                        format!("epoch {epoch} where {expected} was expected"),
                    ));
                } else {
                    frames.push((line_no, epoch, frame));
                    expected += 1;
                }
            }
            Err(message) if is_last => {
                dropped = Some(format!(
                    "{}: line {line_no}: dropped a torn last frame ({message})",
                    path.display()
                ));
                break;
            }
            Err(message) => return Err(corrupt(line_no, message)),
        }
        offset += consumed;
    }
    Ok(Recovered {
        frames,
        intact_len: offset as u64,
        dropped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_model::ids::PageId;

    fn frame() -> Frame {
        let id = PageId::new();
        Frame {
            kind: FrameKind::Apply,
            at: "2026-01-01T00:00:00.000Z".into(),
            op: Op::RemovePage { id },
            inverse: Op::RemovePage { id },
            group: Some(Group {
                key: "job/0".into(),
                what: "pseudo-translate".into(),
                pages: 1,
            }),
            by: Some("ana".into()),
            agent: Some("claude-code 2.1.0".into()),
            mcp_session: Some("s-1".into()),
            undoes: Some(3),
        }
    }

    #[test]
    fn a_line_holds_exactly_the_serialized_frame() {
        let f = frame();
        let line = String::from_utf8(encode(7, &f).unwrap()).unwrap();
        let expected = serde_json::to_string(&f).unwrap();
        let sum = checksum(7, &expected);
        assert_eq!(
            line,
            format!("{{\"epoch\":7,\"sum\":\"{sum}\",\"frame\":{expected}}}\n")
        );
        let parts = Parts {
            kind: f.kind,
            at: &f.at,
            op: &f.op,
            inverse: &f.inverse,
            group: f.group.as_ref(),
            by: f.by.as_deref(),
            agent: f.agent.as_deref(),
            mcp_session: f.mcp_session.as_deref(),
            undoes: f.undoes,
        };
        let encoded = encode_parts(7, &parts).unwrap();
        assert_eq!(encoded.op_len, serde_json::to_string(&f.op).unwrap().len());
        check_replayable(&encoded.bytes).unwrap();
    }

    #[test]
    fn round_trip_and_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ops.log");
        let mut bytes = encode(1, &frame()).unwrap();
        bytes.extend(encode(2, &frame()).unwrap());
        let good = bytes.len();
        let third = encode(3, &frame()).unwrap();
        bytes.extend(&third[..third.len() / 2]);
        std::fs::write(&path, &bytes).unwrap();
        let r = read(&path, 0).unwrap();
        assert_eq!(r.frames.len(), 2);
        assert_eq!(r.intact_len, good as u64);
        assert!(r.dropped.unwrap().contains("line 3"));
    }

    #[test]
    fn middle_damage_is_an_error_naming_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ops.log");
        let mut bytes = encode(1, &frame()).unwrap();
        let mut second = encode(2, &frame()).unwrap();
        let n = second.len();
        second[n - 5] ^= 0x01;
        bytes.extend(second);
        bytes.extend(encode(3, &frame()).unwrap());
        std::fs::write(&path, &bytes).unwrap();
        let err = read(&path, 0).unwrap_err();
        assert_eq!(err.code(), "corrupt");
        assert!(err.to_string().contains("ops.log:2"), "{err}");
    }

    #[test]
    fn frames_covered_by_the_snapshot_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ops.log");
        let mut bytes = Vec::new();
        for e in 1..=4 {
            bytes.extend(encode(e, &frame()).unwrap());
        }
        std::fs::write(&path, &bytes).unwrap();
        let r = read(&path, 3).unwrap();
        assert_eq!(r.frames.iter().map(|f| f.1).collect::<Vec<_>>(), vec![4]);
        let err = read(&path, 7).map(|r| r.frames.len()).unwrap();
        assert_eq!(err, 0);
    }

    #[test]
    fn a_gap_in_epochs_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ops.log");
        let mut bytes = encode(1, &frame()).unwrap();
        bytes.extend(encode(3, &frame()).unwrap());
        std::fs::write(&path, &bytes).unwrap();
        let err = read(&path, 0).unwrap_err().to_string();
        assert!(err.contains("epoch 3 where 2 was expected"), "{err}");
    }
}
