//! Connect's envelope framing and error shape, as envd's streaming calls use them.
//!
//! A streaming request or response body is a sequence of frames: one flag byte, a 4-byte
//! big-endian length, then that many bytes of message (JSON here). The last frame of a
//! response has [`END_STREAM`] set and carries an [`EndOfStream`]. Unary calls send bare JSON
//! and answer errors as a [`ConnectErrorBody`] with a matching HTTP status.

use serde::{Deserialize, Serialize};

/// The content type of a streaming call with JSON messages.
pub const CONTENT_TYPE: &str = "application/connect+json";
/// The value of the `connect-protocol-version` header.
pub const PROTOCOL_VERSION: &str = "1";
/// The flag of the frame that ends a response stream.
pub const END_STREAM: u8 = 0x02;
/// Bytes of a frame's header: the flag and the length.
pub const HEADER_BYTES: usize = 5;

/// Why bytes are not a Connect frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Fewer bytes than a frame header.
    #[error("no Connect frame: {0} bytes, fewer than a frame header's 5")]
    MissingHeader(usize),
    /// The message is shorter than its length prefix says.
    #[error("the Connect frame is shorter than its length prefix ({got} of {declared} bytes)")]
    Truncated {
        /// The length the header declares.
        declared: usize,
        /// The message bytes present.
        got: usize,
    },
    /// The message is longer than the reader accepts (or than a frame can say).
    #[error("the Connect frame of {length} bytes is longer than the {max} allowed")]
    TooLarge {
        /// The message's length.
        length: usize,
        /// The most accepted.
        max: usize,
    },
    /// The message could not be serialized.
    #[error("cannot serialize the Connect message: {0}")]
    Serialize(String),
}

/// Whether a request's content type says its body is enveloped (`application/connect+...`)
/// rather than a bare message.
pub fn is_enveloped(content_type: &str) -> bool {
    content_type.starts_with("application/connect+")
}

/// One frame: `flags`, the length of `message`, and `message`. Fails only for a message too
/// long for the 4-byte length.
pub fn encode(flags: u8, message: &[u8]) -> Result<Vec<u8>, FrameError> {
    let length = u32::try_from(message.len()).map_err(|_| FrameError::TooLarge {
        length: message.len(),
        max: u32::MAX as usize,
    })?;
    let mut out = Vec::with_capacity(HEADER_BYTES + message.len());
    out.push(flags);
    out.extend_from_slice(&length.to_be_bytes());
    out.extend_from_slice(message);
    Ok(out)
}

/// One frame holding `message` as JSON.
pub fn encode_json<T: Serialize + ?Sized>(flags: u8, message: &T) -> Result<Vec<u8>, FrameError> {
    let json = serde_json::to_vec(message).map_err(|e| FrameError::Serialize(e.to_string()))?;
    encode(flags, &json)
}

/// A frame read from bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The flag byte ([`END_STREAM`] on the last frame of a response).
    pub flags: u8,
    /// The message bytes.
    pub message: &'a [u8],
}

impl Frame<'_> {
    /// Whether this frame ends the stream.
    pub fn is_end_stream(&self) -> bool {
        self.flags & END_STREAM != 0
    }
}

/// The first frame of `bytes` and the bytes after it. A message longer than `max` bytes is
/// refused before it is looked at.
pub fn decode(bytes: &[u8], max: usize) -> Result<(Frame<'_>, &[u8]), FrameError> {
    let Some((header, rest)) = bytes.split_first_chunk::<HEADER_BYTES>() else {
        return Err(FrameError::MissingHeader(bytes.len()));
    };
    let declared = declared_length(header);
    if declared > max {
        return Err(FrameError::TooLarge {
            length: declared,
            max,
        });
    }
    if rest.len() < declared {
        return Err(FrameError::Truncated {
            declared,
            got: rest.len(),
        });
    }
    let (message, rest) = rest.split_at(declared);
    Ok((
        Frame {
            flags: header[0],
            message,
        },
        rest,
    ))
}

/// The length a frame header declares.
fn declared_length(header: &[u8; HEADER_BYTES]) -> usize {
    let length = u32::from_be_bytes([header[1], header[2], header[3], header[4]]);
    // A u32 always fits the usize of the targets this builds for (32 and 64 bits).
    usize::try_from(length).unwrap_or(usize::MAX)
}

/// What a [`FrameReader`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// A whole frame.
    Frame {
        /// Its flag byte.
        flags: u8,
        /// Its message.
        message: Vec<u8>,
    },
    /// A frame longer than the reader's limit, skipped unread.
    Skipped {
        /// Its flag byte.
        flags: u8,
        /// Its message's length.
        length: usize,
    },
}

/// Splits a Connect stream into frames as it arrives, holding at most one frame of up to
/// `max` bytes: a longer one is skipped as it passes, never buffered.
#[derive(Debug)]
pub struct FrameReader {
    max: usize,
    buffer: Vec<u8>,
    /// Bytes of an overlong frame still to skip.
    skip: usize,
}

impl FrameReader {
    /// A reader keeping frames of at most `max` message bytes.
    pub fn new(max: usize) -> Self {
        FrameReader {
            max,
            buffer: Vec::new(),
            skip: 0,
        }
    }

    /// Bytes held while waiting for the rest of a frame.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Takes the next piece of the stream; returns the frames it completed.
    pub fn push(&mut self, mut chunk: &[u8]) -> Vec<Read> {
        let mut read = Vec::new();
        loop {
            if self.skip > 0 {
                let skipped = self.skip.min(chunk.len());
                self.skip -= skipped;
                chunk = &chunk[skipped..];
                if self.skip > 0 {
                    return read;
                }
            }
            self.buffer.extend_from_slice(chunk);
            chunk = &[];
            let Some(header) = self.buffer.first_chunk::<HEADER_BYTES>() else {
                return read;
            };
            let (flags, length) = (header[0], declared_length(header));
            let held = self.buffer.len() - HEADER_BYTES;
            if length > self.max {
                read.push(Read::Skipped { flags, length });
                if held >= length {
                    self.buffer.drain(..HEADER_BYTES + length);
                } else {
                    self.skip = length - held;
                    self.buffer.clear();
                }
                continue;
            }
            if held < length {
                return read;
            }
            let message = self.buffer[HEADER_BYTES..HEADER_BYTES + length].to_vec();
            self.buffer.drain(..HEADER_BYTES + length);
            read.push(Read::Frame { flags, message });
        }
    }

    /// Checks that the stream ended on a frame boundary.
    pub fn finish(self) -> Result<(), FrameError> {
        if self.skip > 0 {
            return Err(FrameError::Truncated {
                declared: self.skip,
                got: 0,
            });
        }
        match self.buffer.first_chunk::<HEADER_BYTES>() {
            None if self.buffer.is_empty() => Ok(()),
            None => Err(FrameError::MissingHeader(self.buffer.len())),
            Some(header) => Err(FrameError::Truncated {
                declared: declared_length(header),
                got: self.buffer.len() - HEADER_BYTES,
            }),
        }
    }
}

/// A Connect error: the body of a failed unary call, and inside [`EndOfStream`] of a failed
/// stream.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectErrorBody {
    /// Connect's code (`not_found`, `invalid_argument`, `deadline_exceeded`, ...).
    #[serde(default)]
    pub code: String,
    /// What went wrong.
    #[serde(default)]
    pub message: String,
}

/// The message of the frame that ends a response stream: `{}`, or `{"error": ...}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndOfStream {
    /// Why the call failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ConnectErrorBody>,
}

/// Connect's error code for an HTTP status (the mapping Connect clients expect back).
pub fn code_for_status(status: u16) -> &'static str {
    match status {
        400 | 422 => "invalid_argument",
        404 => "not_found",
        409 => "already_exists",
        403 => "permission_denied",
        413 | 429 => "resource_exhausted",
        401 => "unauthenticated",
        _ => "internal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn frames_round_trip() {
        let frame = encode_json(0, &json!({"a": 1})).unwrap();
        assert_eq!(frame[..HEADER_BYTES], [0, 0, 0, 0, 7]);
        let mut two = frame.clone();
        two.extend(encode_json(END_STREAM, &EndOfStream::default()).unwrap());
        let (first, rest) = decode(&two, 1024).unwrap();
        assert!(!first.is_end_stream());
        assert_eq!(
            serde_json::from_slice::<Value>(first.message).unwrap(),
            json!({"a": 1})
        );
        let (last, rest) = decode(rest, 1024).unwrap();
        assert!(last.is_end_stream());
        assert_eq!(last.message, b"{}");
        assert!(rest.is_empty());
        assert_eq!(encode(3, b"").unwrap(), [3, 0, 0, 0, 0]);
    }

    #[test]
    fn short_and_oversized_frames_are_errors() {
        assert_eq!(decode(b"", 10), Err(FrameError::MissingHeader(0)));
        assert_eq!(decode(&[0, 0, 0], 10), Err(FrameError::MissingHeader(3)));
        assert_eq!(
            decode(&[0, 0, 0, 0, 4, b'{', b'}'], 10),
            Err(FrameError::Truncated {
                declared: 4,
                got: 2
            })
        );
        assert_eq!(
            decode(&[0, 0xff, 0xff, 0xff, 0xff], 10),
            Err(FrameError::TooLarge {
                length: u32::MAX as usize,
                max: 10
            })
        );
        let error = decode(&[0, 0, 0, 0, 4, b'{'], 10).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the Connect frame is shorter than its length prefix (1 of 4 bytes)"
        );
    }

    #[test]
    fn any_bytes_decode_without_panicking() {
        // Every prefix of a stream, and every length byte: an error or a frame, never a panic.
        let stream = [
            encode_json(0, &json!({"x": "y"})).unwrap(),
            encode(END_STREAM, b"{}").unwrap(),
        ]
        .concat();
        for end in 0..=stream.len() {
            let _ = decode(&stream[..end], 64);
            let mut reader = FrameReader::new(64);
            let _ = reader.push(&stream[..end]);
            let _ = reader.finish();
        }
        for byte in 0..=255u8 {
            let _ = decode(&[byte, byte, byte, byte, byte, byte], 1 << 20);
        }
    }

    #[test]
    fn the_reader_splits_frames_across_chunks() {
        let stream = [
            encode_json(0, &json!({"n": 1})).unwrap(),
            encode_json(0, &json!({"n": 2})).unwrap(),
            encode_json(END_STREAM, &json!({})).unwrap(),
        ]
        .concat();
        for size in 1..stream.len() {
            let mut reader = FrameReader::new(1024);
            let mut got = Vec::new();
            for chunk in stream.chunks(size) {
                got.extend(reader.push(chunk));
            }
            assert_eq!(got.len(), 3, "chunks of {size}");
            assert_eq!(
                got[2],
                Read::Frame {
                    flags: END_STREAM,
                    message: b"{}".to_vec()
                }
            );
            reader.finish().unwrap();
        }
    }

    #[test]
    fn overlong_frames_are_skipped_unbuffered() {
        let max = 1024;
        let mut reader = FrameReader::new(max);
        let mut huge = vec![0u8];
        huge.extend_from_slice(&((max as u32) * 3 + 10).to_be_bytes());
        let mut got = reader.push(&huge);
        for _ in 0..2 {
            got.extend(reader.push(&vec![b' '; max * 3 / 2 + 5]));
            assert_eq!(reader.buffered(), 0);
        }
        got.extend(reader.push(&encode(0, b"{}").unwrap()));
        assert_eq!(
            got,
            vec![
                Read::Skipped {
                    flags: 0,
                    length: max * 3 + 10
                },
                Read::Frame {
                    flags: 0,
                    message: b"{}".to_vec()
                }
            ]
        );
        reader.finish().unwrap();
        // A stream cut off inside a frame.
        let mut reader = FrameReader::new(max);
        assert!(reader.push(&[0, 0, 0, 0, 9, b'{']).is_empty());
        assert_eq!(
            reader.finish(),
            Err(FrameError::Truncated {
                declared: 9,
                got: 1
            })
        );
    }

    #[test]
    fn errors_and_ends_have_connect_shapes() {
        let end = EndOfStream {
            error: Some(ConnectErrorBody {
                code: code_for_status(404).into(),
                message: "gone".into(),
            }),
        };
        assert_eq!(
            serde_json::to_value(&end).unwrap(),
            json!({"error": {"code": "not_found", "message": "gone"}})
        );
        assert_eq!(
            serde_json::to_string(&EndOfStream::default()).unwrap(),
            "{}"
        );
        let parsed: EndOfStream = serde_json::from_str(r#"{"error": {"code": "x"}}"#).unwrap();
        assert_eq!(parsed.error.unwrap().message, "");
        assert_eq!(code_for_status(422), "invalid_argument");
        assert_eq!(code_for_status(500), "internal");
        assert!(is_enveloped(CONTENT_TYPE) && !is_enveloped("application/json"));
    }
}
