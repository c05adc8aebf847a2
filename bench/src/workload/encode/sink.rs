//! Where encoded bytes go ([`Sink`]: a frame buffer, a scratch vector, or a [`Counter`] that
//! only counts), and whether a value was written ([`Encoded`]).

/// Where encoded bytes go (a frame buffer, or a scratch vector).
pub(crate) trait Sink {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);

    /// The number of bytes held, for a sink that can rewrite them ([`Sink::patch`]): an
    /// element's length is then patched in after its bytes. `None` (the default): the sink
    /// is append-only, and lengths are counted before the bytes are written.
    fn position(&self) -> Option<usize> {
        None
    }

    /// Overwrites the 4 bytes at `at` (a [`Sink::position`] taken earlier).
    fn patch(&mut self, _at: usize, _bytes: [u8; 4]) {}
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    fn position(&self) -> Option<usize> {
        Some(self.len())
    }

    fn patch(&mut self, at: usize, bytes: [u8; 4]) {
        if let Some(dst) = self.get_mut(at..at + 4) {
            dst.copy_from_slice(&bytes);
        }
    }
}

impl Sink for bytes::BytesMut {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    fn position(&self) -> Option<usize> {
        Some(self.len())
    }

    fn patch(&mut self, at: usize, bytes: [u8; 4]) {
        if let Some(dst) = self.get_mut(at..at + 4) {
            dst.copy_from_slice(&bytes);
        }
    }
}

/// A sink that only counts: the length of a value before it is written to an append-only
/// sink. It reports a position (its count) so that nested lengths are not counted again.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counter(pub usize);

impl Sink for Counter {
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }

    fn position(&self) -> Option<usize> {
        Some(self.0)
    }

    fn patch(&mut self, _at: usize, _bytes: [u8; 4]) {}
}

/// Whether a value was written or is null.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoded {
    /// Bytes were appended.
    Written,
    /// The value is null: nothing was appended.
    Null,
}
