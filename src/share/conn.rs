//! The one connection type of both sides: newline-delimited JSON frames,
//! each at most [`MAX_FRAME`] bytes, read with `tokio-util`'s bounded
//! `LinesCodec`. A longer line is reported once as [`Frame::TooLong`] and
//! its rest discarded without being held in memory; a line that is not
//! UTF-8 is [`Frame::NotText`]. Neither ends the connection.

use std::io;

use bytes::BytesMut;
use futures_util::{SinkExt, StreamExt};
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::codec::{Decoder, Encoder, FramedRead, FramedWrite, LinesCodec, LinesCodecError};

use super::protocol::MAX_FRAME;

/// One frame read.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    Line(String),
    /// Over [`MAX_FRAME`]; its rest is skipped up to the next newline.
    TooLong,
    /// Not UTF-8, so not JSON.
    NotText,
}

/// `LinesCodec` with the frame limit, whose recoverable errors are frames.
#[derive(Debug)]
pub struct FrameCodec(LinesCodec);

impl Default for FrameCodec {
    fn default() -> Self {
        FrameCodec(LinesCodec::new_with_max_length(MAX_FRAME))
    }
}

fn frame(result: Result<Option<String>, LinesCodecError>) -> io::Result<Option<Frame>> {
    match result {
        Ok(line) => Ok(line.map(Frame::Line)),
        Err(LinesCodecError::MaxLineLengthExceeded) => Ok(Some(Frame::TooLong)),
        Err(LinesCodecError::Io(e)) if e.kind() == io::ErrorKind::InvalidData => {
            Ok(Some(Frame::NotText))
        }
        Err(LinesCodecError::Io(e)) => Err(e),
    }
}

impl Decoder for FrameCodec {
    type Item = Frame;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Frame>> {
        frame(self.0.decode(buf))
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<Frame>> {
        frame(self.0.decode_eof(buf))
    }
}

impl Encoder<String> for FrameCodec {
    type Error = io::Error;

    fn encode(&mut self, line: String, buf: &mut BytesMut) -> io::Result<()> {
        self.0.encode(line, buf).map_err(|e| match e {
            LinesCodecError::Io(e) => e,
            LinesCodecError::MaxLineLengthExceeded => io::Error::other("frame too long"),
        })
    }
}

/// The reading half of a connection.
pub type Reader<R> = FramedRead<R, FrameCodec>;
/// The writing half of a connection.
pub type Writer<W> = FramedWrite<W, FrameCodec>;

/// Frames both halves of a stream.
pub fn framed<R: AsyncRead, W: AsyncWrite>(read: R, write: W) -> (Reader<R>, Writer<W>) {
    (
        FramedRead::new(read, FrameCodec::default()),
        FramedWrite::new(write, FrameCodec::default()),
    )
}

/// The next frame; `None` at the end of the stream.
pub async fn next<R: AsyncRead + Unpin>(reader: &mut Reader<R>) -> io::Result<Option<Frame>> {
    reader.next().await.transpose()
}

/// Writes one frame and flushes it.
pub async fn send<W: AsyncWrite + Unpin, T: Serialize>(
    writer: &mut Writer<W>,
    frame: &T,
) -> io::Result<()> {
    let line = serde_json::to_string(frame).map_err(io::Error::other)?;
    writer.send(line).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_are_capped_without_ending_the_connection() {
        let mut data = b"{\"a\":1}\n".to_vec();
        data.extend(vec![b'x'; MAX_FRAME + 10]);
        data.push(b'\n');
        data.extend(b"\xff\xfe\n");
        data.extend(b"{\"b\":2}");
        let (mut reader, _) = framed(&data[..], tokio::io::sink());
        assert_eq!(
            next(&mut reader).await.unwrap(),
            Some(Frame::Line("{\"a\":1}".into()))
        );
        assert_eq!(next(&mut reader).await.unwrap(), Some(Frame::TooLong));
        assert_eq!(next(&mut reader).await.unwrap(), Some(Frame::NotText));
        assert_eq!(
            next(&mut reader).await.unwrap(),
            Some(Frame::Line("{\"b\":2}".into()))
        );
        assert_eq!(next(&mut reader).await.unwrap(), None);
    }

    #[tokio::test]
    async fn what_one_side_sends_the_other_reads() {
        let (a, b) = tokio::io::duplex(256);
        let (_, mut writer) = framed(tokio::io::empty(), a);
        let (mut reader, _) = framed(b, tokio::io::sink());
        send(&mut writer, &serde_json::json!({ "name": "第一話" }))
            .await
            .unwrap();
        assert_eq!(
            next(&mut reader).await.unwrap(),
            Some(Frame::Line("{\"name\":\"第一話\"}".into()))
        );
    }
}
