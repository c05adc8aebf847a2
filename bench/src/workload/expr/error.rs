//! What can go wrong with an expression: compiling it ([`ExprError`], with the place in
//! its text) or evaluating it ([`EvalError`]).

/// Why an expression could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("in `{source_text}` at byte {at}: {message}")]
pub struct ExprError {
    /// The expression.
    pub(crate) source_text: String,
    /// Byte offset of the problem.
    pub(crate) at: usize,
    /// What is wrong.
    pub(crate) message: String,
}

/// Why a value could not be computed (division by zero, a type mismatch found at run time).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EvalError(pub &'static str);
