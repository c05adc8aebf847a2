//! The token of a prepared statement's partition key, from its bound values.
//!
//! The partition key's columns are among the bound values (PREPARED says which, by bind
//! marker index). The values are serialized into a reused scratch buffer, the key's
//! components are found by walking the `[value]`s, and the token is Murmur3 of the single
//! component, or of the composite key built from all of them (in another reused buffer).
//! The serialized values stay in the scratch, stamped with a generation, so that the
//! request's frame can copy them instead of serializing the values a second time
//! ([`PlacedValues`]).
//!
//! Invariants: no allocation once the buffers have grown; a value that is null, unset or
//! cannot be serialized means "no token" (the request is then routed without one and the
//! real encoding reports any error); serialized values are handed out only for the
//! generation that wrote them.

use std::cell::RefCell;
use std::num::NonZeroU64;

use bytes::BytesMut;
use doppio_proto::metadata::ColumnSpec;
use doppio_proto::values::QueryValues;

use crate::routing::murmur3::{self, Token};

/// Reused buffers for routing keys (one per session: a shard computes one token at a
/// time, and never across an await).
#[derive(Debug, Default)]
pub(crate) struct RoutingScratch {
    values: BytesMut,
    key: Vec<u8>,
    components: Vec<(usize, usize)>,
    /// Bumped by every [`RoutingScratch::token`] call.
    generation: u64,
    /// Whether `values` holds the latest generation's values whole, checked against their
    /// columns.
    whole: bool,
}

/// A request's values, and where the placement may have left them serialized: writing them
/// copies the scratch's bytes when generation `generation` still holds them (whole, and
/// checked against their columns then), and serializes `values` otherwise.
pub(crate) struct PlacedValues<'a, V: ?Sized> {
    scratch: &'a RefCell<RoutingScratch>,
    generation: Option<NonZeroU64>,
    values: &'a V,
}

impl<'a, V: QueryValues + ?Sized> PlacedValues<'a, V> {
    /// `values`, serialized by the `token` call of `generation` if there was one.
    pub(crate) fn new(
        scratch: &'a RefCell<RoutingScratch>,
        generation: Option<NonZeroU64>,
        values: &'a V,
    ) -> Self {
        Self {
            scratch,
            generation,
            values,
        }
    }
}

impl<V: QueryValues + ?Sized> QueryValues for PlacedValues<'_, V> {
    fn count(&self) -> usize {
        self.values.count()
    }

    fn has_names(&self) -> bool {
        self.values.has_names()
    }

    fn write_values(
        &self,
        columns: Option<&[ColumnSpec]>,
        buf: &mut BytesMut,
    ) -> doppio_proto::Result<()> {
        if let Some(generation) = self.generation {
            let scratch = self.scratch.borrow();
            if scratch.whole && scratch.generation == generation.get() {
                buf.extend_from_slice(&scratch.values);
                return Ok(());
            }
        }
        self.values.write_values(columns, buf)
    }
}

/// The most partition-key components routed (Cassandra tables rarely have more than a few).
const MAX_COMPONENTS: usize = 16;

impl RoutingScratch {
    /// The token of the partition key among `values`, whose components are the bind markers
    /// `pk_indexes` (in partition-key order).
    pub(crate) fn token(
        &mut self,
        values: &(impl QueryValues + ?Sized),
        columns: &[ColumnSpec],
        pk_indexes: &[u16],
    ) -> Option<Token> {
        self.generation += 1;
        self.whole = false;
        if pk_indexes.is_empty() || pk_indexes.len() > MAX_COMPONENTS || values.has_names() {
            return None;
        }
        self.values.clear();
        values.write_values(Some(columns), &mut self.values).ok()?;
        self.whole = true;
        // Where each bound value lies in the buffer.
        self.components.clear();
        let mut rest: &[u8] = &self.values;
        let mut at = 0usize;
        for _ in 0..values.count() {
            let (len, tail) = rest.split_first_chunk::<4>()?;
            let len = usize::try_from(i32::from_be_bytes(*len)).ok()?; // null / unset: none
            let start = at + 4;
            tail.get(..len)?;
            self.components.push((start, len));
            rest = &tail[len..];
            at = start + len;
        }
        let bytes = &self.values[..];
        let component = |i: u16| -> Option<&[u8]> {
            let &(start, len) = self.components.get(usize::from(i))?;
            bytes.get(start..start + len)
        };
        if let [only] = pk_indexes {
            return Some(murmur3::token(component(*only)?));
        }
        self.key.clear();
        for &i in pk_indexes {
            let c = component(i)?;
            if !murmur3::composite_key([c], &mut self.key) {
                return None;
            }
        }
        Some(murmur3::token(&self.key))
    }

    /// The generation of the latest [`RoutingScratch::token`] call (non-zero: one fits
    /// in an `Option` at no extra size in every request's future).
    pub(crate) fn generation(&self) -> NonZeroU64 {
        NonZeroU64::new(self.generation).unwrap_or(NonZeroU64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use doppio_proto::types::ColumnType;
    use doppio_proto::wire::RawValue;

    use super::*;

    fn col(name: &str, typ: ColumnType) -> ColumnSpec {
        ColumnSpec::new("ks", "t", name, typ)
    }

    #[test]
    fn single_and_composite_keys_hash_their_components() {
        let mut s = RoutingScratch::default();
        let cols = [col("v", ColumnType::Blob), col("k", ColumnType::Int)];
        let k = 7i32.to_be_bytes();
        let values = [RawValue::Bytes(b"xyz"), RawValue::Bytes(&k)];
        assert_eq!(
            s.token(&values[..], &cols, &[1]),
            Some(murmur3::token(&k)),
            "the key is the second marker"
        );
        let mut key = Vec::new();
        murmur3::composite_key([&k[..], &b"xyz"[..]], &mut key);
        assert_eq!(
            s.token(&values[..], &cols, &[1, 0]),
            Some(murmur3::token(&key)),
            "composite keys follow partition-key order"
        );
    }

    #[test]
    fn nulls_unsets_and_bad_indexes_give_no_token() {
        let mut s = RoutingScratch::default();
        let cols = [col("k", ColumnType::Blob)];
        assert_eq!(s.token(&[RawValue::Null][..], &cols, &[0]), None);
        assert_eq!(s.token(&[RawValue::Unset][..], &cols, &[0]), None);
        assert_eq!(s.token(&[RawValue::Bytes(b"a")][..], &cols, &[3]), None);
        assert_eq!(s.token(&[RawValue::Bytes(b"a")][..], &cols, &[]), None);
    }

    #[test]
    fn placed_values_are_copied_only_while_their_generation_holds_them() {
        let scratch = RefCell::new(RoutingScratch::default());
        let cols = [col("k", ColumnType::Blob), col("v", ColumnType::Blob)];
        let values = [RawValue::Bytes(b"key"), RawValue::Bytes(b"value")];
        let other = [RawValue::Bytes(b"other"), RawValue::Bytes(b"pair")];
        let write = |p: &dyn Fn(&mut BytesMut) -> doppio_proto::Result<()>| {
            let mut buf = BytesMut::new();
            p(&mut buf).expect("written");
            buf
        };
        let direct = write(&|b| values[..].write_values(Some(&cols), b));
        assert!(scratch
            .borrow_mut()
            .token(&values[..], &cols, &[0])
            .is_some());
        let g = scratch.borrow().generation();
        let placed = PlacedValues::new(&scratch, Some(g), &values[..]);
        assert_eq!(placed.count(), 2);
        assert_eq!(write(&|b| placed.write_values(Some(&cols), b)), direct);
        // Another placement overwrote the scratch: the values are serialized again, not
        // taken from the other request's bytes.
        assert!(scratch
            .borrow_mut()
            .token(&other[..], &cols, &[0])
            .is_some());
        assert_eq!(write(&|b| placed.write_values(Some(&cols), b)), direct);
        // A placement that wrote nothing whole leaves nothing to copy.
        assert_eq!(scratch.borrow_mut().token(&values[..], &cols, &[]), None);
        let g = scratch.borrow().generation();
        let placed = PlacedValues::new(&scratch, Some(g), &values[..]);
        assert_eq!(write(&|b| placed.write_values(Some(&cols), b)), direct);
        assert_eq!(
            write(&|b| PlacedValues::new(&scratch, None, &values[..]).write_values(Some(&cols), b)),
            direct
        );
    }
}
