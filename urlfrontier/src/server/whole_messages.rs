//! A request body that ends inside a gRPC message ends with an error, not cleanly.
//!
//! tonic's decoder takes the end of a request body right after a message's 5-byte prefix as the
//! clean end of the client's stream (it reports an error only when bytes of the cut message are
//! buffered). So a PutURLs call whose last message was cut after its prefix was answered OK, and
//! the client was never told that its last message was lost (found by the `grpc_requests` fuzz
//! target). [`WholeMessages`] follows the framing of the bytes on their way to tonic and, when the
//! body ends inside a prefix or a message, ends it with an `INVALID_ARGUMENT` status that says how
//! much was missing; the call then ends with that status once the messages before are answered.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

/// The length of gRPC's message prefix: a compression flag, then the length (4 bytes, big-endian).
const PREFIX: usize = 5;

/// A request body checked to end at a message boundary.
pub(super) struct WholeMessages<B> {
    inner: B,
    framing: Framing,
    /// Whether the cut has been reported (it is reported once; the body ends after it).
    reported: bool,
}

impl<B> WholeMessages<B> {
    /// `inner`, checked.
    pub(super) fn new(inner: B) -> Self {
        WholeMessages {
            inner,
            framing: Framing::default(),
            reported: false,
        }
    }
}

impl<B> Body for WholeMessages<B>
where
    B: Body<Data = Bytes, Error = tonic::Status> + Unpin,
{
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        let this = self.get_mut();
        if this.reported {
            return Poll::Ready(None);
        }
        match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    this.framing.feed(data);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Some(Err(status)) => Poll::Ready(Some(Err(status))),
            None => match this.framing.cut() {
                Some(why) => {
                    this.reported = true;
                    Poll::Ready(Some(Err(tonic::Status::invalid_argument(why))))
                }
                None => Poll::Ready(None),
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.reported || (self.inner.is_end_stream() && self.framing.cut().is_none())
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Where the bytes seen so far stand in gRPC's framing.
#[derive(Debug, Default, Clone, PartialEq)]
struct Framing {
    /// The bytes of a prefix seen so far (0 at a message boundary or inside a message).
    prefix: [u8; PREFIX],
    prefix_seen: usize,
    /// The bytes of the current message still to come.
    remaining: usize,
}

impl Framing {
    /// Follows `bytes`, the next bytes of the body.
    fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.remaining > 0 {
                let taken = self.remaining.min(bytes.len());
                self.remaining -= taken;
                bytes = &bytes[taken..];
                continue;
            }
            let taken = (PREFIX - self.prefix_seen).min(bytes.len());
            self.prefix[self.prefix_seen..self.prefix_seen + taken]
                .copy_from_slice(&bytes[..taken]);
            self.prefix_seen += taken;
            bytes = &bytes[taken..];
            if self.prefix_seen == PREFIX {
                let length = [
                    self.prefix[1],
                    self.prefix[2],
                    self.prefix[3],
                    self.prefix[4],
                ];
                self.remaining = u32::from_be_bytes(length) as usize;
                self.prefix_seen = 0;
            }
        }
    }

    /// Why a body ending here is cut short, or `None` at a message boundary.
    fn cut(&self) -> Option<String> {
        if self.prefix_seen > 0 {
            Some(format!(
                "the request ended inside a message's prefix ({} of {PREFIX} bytes)",
                self.prefix_seen
            ))
        } else if self.remaining > 0 {
            Some(format!(
                "the request ended {} bytes short of its last message's end",
                self.remaining
            ))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(length: u32) -> Vec<u8> {
        let mut bytes = vec![0];
        bytes.extend(length.to_be_bytes());
        bytes.extend(std::iter::repeat_n(7, length as usize));
        bytes
    }

    #[test]
    fn whole_messages_in_any_split_end_at_a_boundary() {
        let body: Vec<u8> = [message(0), message(3), message(300), message(0)].concat();
        for split in [1, 2, 4, 5, 7, 64, body.len()] {
            let mut framing = Framing::default();
            for piece in body.chunks(split) {
                framing.feed(piece);
            }
            assert_eq!(framing.cut(), None, "pieces of {split} bytes");
        }
    }

    #[test]
    fn a_body_cut_after_a_prefix_or_inside_one_or_a_message_is_named() {
        let mut after_prefix = Framing::default();
        after_prefix.feed(&[message(0), vec![0, 0, 0x32, 0, 0]].concat());
        assert_eq!(
            after_prefix.cut().as_deref(),
            Some("the request ended 3276800 bytes short of its last message's end")
        );
        let mut in_prefix = Framing::default();
        in_prefix.feed(&[0, 0]);
        assert_eq!(
            in_prefix.cut().as_deref(),
            Some("the request ended inside a message's prefix (2 of 5 bytes)")
        );
        let mut in_message = Framing::default();
        in_message.feed(&message(10)[..9]);
        assert!(
            in_message
                .cut()
                .is_some_and(|why| why.contains("6 bytes short"))
        );
    }
}
