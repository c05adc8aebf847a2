//! Times and dates as CQL values: [`CqlDate`], [`CqlTimestamp`], [`CqlTime`] (checked to lie
//! within a day) and [`CqlDuration`].

use bytes::{BufMut, BytesMut};

use super::macros::{scalar, via_cql_value};
use super::value_trait::{mismatch, SerializeValue};
use crate::types::ColumnType;
use crate::value::{CqlDate, CqlDuration, CqlTime, CqlTimestamp, CqlValue, ValueResult};

scalar!(CqlDate, ColumnType::Date, |v, typ, buf| { ColumnType::Date => buf.put_u32(v.0) });
scalar!(CqlTimestamp, ColumnType::Timestamp, |v, typ, buf| { ColumnType::Timestamp => buf.put_i64(v.0) });
scalar!(CqlTime, ColumnType::Time, |v, typ, buf| {
    ColumnType::Time => {
        buf.put_i64(CqlTime::checked(v.0)?.0)
    },
});

via_cql_value!(CqlDuration, Duration, ColumnType::Duration);
