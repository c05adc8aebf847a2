//! Arguments written straight into doppio's frame buffer: a statement's generated values
//! ([`QueryValues`] for [`Args`]) and a batch's, element by element ([`Elements`]).

use bytes::BytesMut;
use doppio_driver::proto::metadata::ColumnSpec;
use doppio_driver::proto::values::QueryValues;
use doppio_driver::session::BatchValues;

use super::prepare::DoppioPrepared;
use crate::engine::{Args, BatchArgs};
use crate::workload::encode::{encode, Encoded};

/// Generated arguments written straight into doppio's frame buffer: `[int length][bytes]`
/// per value, the length patched after the bytes (no allocation).
impl QueryValues for Args<'_> {
    fn count(&self) -> usize {
        self.bound.args.len()
    }

    fn write_values(
        &self,
        _columns: Option<&[ColumnSpec]>,
        buf: &mut BytesMut,
    ) -> doppio_driver::proto::error::Result<()> {
        for (k, (expr, kind)) in self.bound.args.iter().enumerate() {
            let at = buf.len();
            buf.extend_from_slice(&[0; 4]);
            let value = expr.eval(self.iteration).map_err(|e| value_error(k, e.0))?;
            match encode(value, kind, buf).map_err(|e| value_error(k, e.0))? {
                Encoded::Null => {
                    buf.truncate(at);
                    buf.extend_from_slice(&(-1i32).to_be_bytes());
                }
                Encoded::Written => {
                    let len = buf.len() - at - 4;
                    let len = i32::try_from(len).map_err(|_| value_error(k, "value too long"))?;
                    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
                }
            }
        }
        Ok(())
    }
}

fn value_error(k: usize, reason: &str) -> doppio_driver::proto::ProtoError {
    doppio_driver::proto::ProtoError::Value {
        column: format!("argument {}", k + 1),
        reason: Box::new(doppio_driver::proto::ValueError::Custom(reason.to_owned())),
    }
}

/// A batch's values as doppio takes them: element `k`'s, made on demand (nothing is
/// collected per request).
pub(super) struct Elements<'a>(pub(super) BatchArgs<'a, DoppioPrepared>);

impl BatchValues for Elements<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn with_values(
        &self,
        k: usize,
        f: &mut dyn FnMut(&dyn QueryValues) -> doppio_driver::proto::error::Result<()>,
    ) -> doppio_driver::proto::error::Result<()> {
        match self.0.element(k) {
            Some((_, args)) => f(&args),
            None => Err(doppio_driver::proto::ProtoError::InvalidValue {
                what: "batch statement",
                detail: format!("no element {k} of {}", self.0.len()),
            }),
        }
    }
}
