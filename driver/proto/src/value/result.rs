//! [`ValueResult`]: the result of converting one value, whose error the caller gives a column.

use crate::error::ValueError;

/// Why a value could not be decoded or encoded (the caller adds the column).
pub type ValueResult<T> = std::result::Result<T, ValueError>;
