//! Arguments bound straight into scylla's request buffer: a statement's generated values
//! ([`SerializeRow`] for [`Args`]) and a batch's, element by element ([`ElementValues`]).

use scylla::serialize::batch::{BatchValues, BatchValuesIterator};
use scylla::serialize::row::{RowSerializationContext, SerializeRow};
use scylla::serialize::writers::{CellValueBuilder, RowWriter};
use scylla::serialize::SerializationError;

use super::prepare::ScyllaPrepared;
use crate::engine::{Args, BatchArgs};
use crate::workload::encode::{encode, Encoded, Sink};

/// Lets the shared encoder append straight into scylla's value buffer.
struct CellSink<'a, 'buf>(&'a mut CellValueBuilder<'buf>);

impl Sink for CellSink<'_, '_> {
    fn put(&mut self, bytes: &[u8]) {
        self.0.append_bytes(bytes);
    }
}

/// Generated arguments written straight into scylla's request buffer (no allocation).
impl SerializeRow for Args<'_> {
    fn serialize(
        &self,
        _ctx: &RowSerializationContext<'_>,
        writer: &mut RowWriter<'_>,
    ) -> Result<(), SerializationError> {
        for (expr, kind) in &self.bound.args {
            let value = expr.eval(self.iteration).map_err(SerializationError::new)?;
            let cell = writer.make_cell_writer();
            if value == crate::workload::expr::Value::Null {
                cell.set_null();
                continue;
            }
            let mut builder = cell.into_value_builder();
            match encode(value, kind, &mut CellSink(&mut builder)) {
                Ok(Encoded::Written) => {}
                // Unreachable: null was handled above; the encoder writes nothing for it.
                Ok(Encoded::Null) => {}
                Err(e) => return Err(SerializationError::new(e)),
            }
            builder.finish().map_err(SerializationError::new)?;
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        self.bound.args.is_empty()
    }
}

/// A batch's values, element by element, written straight into scylla's request buffer:
/// no collection of them is made (scylla-rust-driver takes them as an iterator-like object).
#[derive(Clone, Copy)]
pub(super) struct ElementValues<'a> {
    pub(super) args: BatchArgs<'a, ScyllaPrepared>,
}

/// [`ElementValues`]' iterator: the next element's position.
pub(super) struct ElementIter<'a> {
    pub(super) args: BatchArgs<'a, ScyllaPrepared>,
    next: usize,
}

impl BatchValues for ElementValues<'_> {
    type BatchValuesIter<'r>
        = ElementIter<'r>
    where
        Self: 'r;

    fn batch_values_iter(&self) -> ElementIter<'_> {
        ElementIter {
            args: self.args,
            next: 0,
        }
    }
}

impl<'bv> BatchValuesIterator<'bv> for ElementIter<'_> {
    fn serialize_next(
        &mut self,
        ctx: &RowSerializationContext<'_>,
        writer: &mut RowWriter<'_>,
    ) -> Option<Result<(), SerializationError>> {
        let (_, args) = self.args.element(self.next)?;
        self.next += 1;
        Some(args.serialize(ctx, writer))
    }

    fn is_empty_next(&mut self) -> Option<bool> {
        let (_, args) = self.args.element(self.next)?;
        self.next += 1;
        Some(args.bound.args.is_empty())
    }

    fn skip_next(&mut self) -> Option<()> {
        self.args.element(self.next)?;
        self.next += 1;
        Some(())
    }
}
