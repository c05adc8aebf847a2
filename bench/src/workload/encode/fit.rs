//! Whether a generator's values fit a column type ([`compatible`]), checked when a statement
//! is prepared; what does not fit is a [`FitError`], from the outside in.

use std::fmt;

use super::types::{CqlKind, CqlType};
use crate::workload::expr::{Composite, CompositeKind, EvalError, Value};

/// Why a generator's values cannot go to a column of a type, found when a statement is
/// prepared ([`compatible`]); the message says what does not fit, from the outside in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FitError {
    /// A value whose shape is not the column's (an integer for a `list<int>`, a list for a
    /// `set<text>`).
    #[error("{shape} cannot be bound to a {ty} value")]
    Shape {
        /// The value's shape, as a message names it (`an integer`, `a list`).
        shape: String,
        /// The column's type.
        ty: CqlType,
    },
    /// A vector of a constant length other than the type's dimension.
    #[error("vector({len}, ...) for a {ty} value: the lengths differ")]
    VectorLength {
        /// The generator's length.
        len: i64,
        /// The column's type.
        ty: CqlType,
    },
    /// A tuple with another number of fields than the tuple type.
    #[error("a tuple of {len} for a {ty} value of {fields}")]
    TupleArity {
        /// The generator's fields.
        len: u32,
        /// The column's type.
        ty: CqlType,
        /// The type's fields.
        fields: usize,
    },
    /// A tuple with another number of fields than the user type.
    #[error("a tuple of {len} for the user type {ty} of {fields} fields")]
    UdtArity {
        /// The generator's fields.
        len: u32,
        /// The column's type.
        ty: CqlType,
        /// The user type's fields.
        fields: usize,
    },
    /// An element, key, value or field of a composite that does not fit.
    #[error("{part}: {source}")]
    Part {
        /// Which part.
        part: ValuePart,
        /// Why it does not fit.
        #[source]
        source: Box<FitError>,
    },
    /// An element, key, value or field of a composite that could not be computed.
    #[error("{part}: {source}")]
    Eval {
        /// Which part.
        part: ValuePart,
        /// Why it could not.
        #[source]
        source: EvalError,
    },
}

/// A part of a composite value, as a [`FitError`] names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ValuePart {
    /// An element of a list, set or vector.
    Element,
    /// A map's key.
    Key,
    /// A map's value.
    Value,
    /// A tuple's field, counted from 1.
    Field(usize),
    /// A user type's field, by name.
    UdtField(String),
}

impl fmt::Display for ValuePart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValuePart::Element => f.write_str("element"),
            ValuePart::Key => f.write_str("key"),
            ValuePart::Value => f.write_str("value"),
            ValuePart::Field(n) => write!(f, "field {n}"),
            ValuePart::UdtField(name) => write!(f, "field `{name}`"),
        }
    }
}

/// Checks, when a statement is prepared, that values of this shape can go to a `ty` column:
/// recursively, composites against the type's shape (a tuple's arity against the type's
/// fields, a constant vector length against its dimension) and one sample element against
/// the element type. `sample` is the generator's value for iteration 0. The error says what
/// does not fit, from the outside in.
pub(crate) fn compatible(sample: &Value<'_>, ty: &CqlType) -> Result<(), FitError> {
    match (sample, ty) {
        (Value::Null, _) => Ok(()),
        (Value::Composite(c), _) => composite_fits(c, ty),
        (v, CqlType::Scalar(k)) if scalar_fits(v, *k) => Ok(()),
        (v, _) => Err(FitError::Shape {
            shape: describe(v),
            ty: ty.clone(),
        }),
    }
}

/// A value's shape for a message.
fn describe(v: &Value<'_>) -> String {
    match v {
        Value::Int(_) => "an integer".into(),
        Value::Float(_) => "a float".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Text { .. } => "text".into(),
        Value::Blob { .. } => "a blob".into(),
        Value::Str(_) => "a string".into(),
        Value::Uuid(_) => "a uuid".into(),
        Value::Composite(c) => format!("a {}", c.kind().name()),
        Value::Null => "null".into(),
    }
}

fn element_fits(
    c: &Composite<'_>,
    j: u32,
    at: usize,
    ty: &CqlType,
    part: ValuePart,
) -> Result<(), FitError> {
    let v = c.element(j, at).map_err(|source| FitError::Eval {
        part: part.clone(),
        source,
    })?;
    compatible(&v, ty).map_err(|e| FitError::Part {
        part,
        source: Box::new(e),
    })
}

fn composite_fits(c: &Composite<'_>, ty: &CqlType) -> Result<(), FitError> {
    use CompositeKind as G;
    match (c.kind(), ty) {
        (G::List, CqlType::List(e)) | (G::Set, CqlType::Set(e)) => {
            element_fits(c, 0, 0, e, ValuePart::Element)
        }
        (G::Map, CqlType::Map(kv)) => {
            element_fits(c, 0, 0, &kv.0, ValuePart::Key)?;
            element_fits(c, 0, 1, &kv.1, ValuePart::Value)
        }
        (G::Vector, CqlType::Vector(e, dim)) => {
            if let Some(n) = c.constant_len() {
                if n != i64::from(*dim) {
                    return Err(FitError::VectorLength {
                        len: n,
                        ty: ty.clone(),
                    });
                }
            }
            element_fits(c, 0, 0, e, ValuePart::Element)
        }
        (G::Tuple, CqlType::Tuple(ts)) => {
            if c.len() as usize != ts.len() {
                return Err(FitError::TupleArity {
                    len: c.len(),
                    ty: ty.clone(),
                    fields: ts.len(),
                });
            }
            for (k, t) in ts.iter().enumerate() {
                element_fits(c, k as u32, 0, t, ValuePart::Field(k + 1))?;
            }
            Ok(())
        }
        (G::Tuple, CqlType::Udt(u)) => {
            if c.len() as usize != u.fields.len() {
                return Err(FitError::UdtArity {
                    len: c.len(),
                    ty: ty.clone(),
                    fields: u.fields.len(),
                });
            }
            for (k, (name, t)) in u.fields.iter().enumerate() {
                element_fits(c, k as u32, 0, t, ValuePart::UdtField(name.clone()))?;
            }
            Ok(())
        }
        (kind, _) => Err(FitError::Shape {
            shape: format!("a {}", kind.name()),
            ty: ty.clone(),
        }),
    }
}

fn scalar_fits(sample: &Value<'_>, kind: CqlKind) -> bool {
    use CqlKind as K;
    match sample {
        Value::Null => true,
        Value::Composite(_) => false,
        Value::Int(_) | Value::Float(_) => !matches!(kind, K::Other | K::Uuid | K::TimeUuid),
        Value::Bool(_) => matches!(kind, K::Boolean),
        Value::Text { .. } | Value::Blob { .. } | Value::Str(_) => {
            matches!(kind, K::Text | K::Ascii | K::Blob)
        }
        Value::Uuid(_) => matches!(kind, K::Uuid | K::TimeUuid | K::Text | K::Ascii | K::Blob),
    }
}
