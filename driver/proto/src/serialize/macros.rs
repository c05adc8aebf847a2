//! The macros that write [`SerializeValue`](super::SerializeValue) impls: a scalar's bytes
//! per column type it fits, and a cold type through [`CqlValue`](crate::value::CqlValue).

macro_rules! scalar {
    ($t:ty, $natural:expr, |$v:ident, $typ:ident, $buf:ident| { $($arm:pat => $body:expr),+ $(,)? }) => {
        impl SerializeValue for $t {
            fn natural_type(&self) -> ColumnType {
                $natural
            }
            fn write(&self, $typ: &ColumnType, $buf: &mut BytesMut) -> ValueResult<()> {
                let $v = self;
                match $typ {
                    $($arm => $body,)+
                    #[allow(unreachable_patterns)]
                    _ => return Err(mismatch::<$t>($typ)),
                }
                Ok(())
            }
        }
    };
}

pub(super) use scalar;

macro_rules! via_cql_value {
    ($t:ty, $variant:ident, $natural:expr) => {
        impl SerializeValue for $t {
            fn natural_type(&self) -> ColumnType {
                $natural
            }
            fn write(&self, typ: &ColumnType, buf: &mut BytesMut) -> ValueResult<()> {
                // Cold types (decimal, duration): the value is cloned into a CqlValue once.
                CqlValue::$variant(self.clone()).encode_reason(typ, buf)
            }
        }
    };
}

pub(super) use via_cql_value;
