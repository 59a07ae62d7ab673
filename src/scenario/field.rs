//! The error of a check that names one field of the scenario file; `validate` turns it into a
//! located [`super::ScenarioError`].

/// A scenario value that cannot be used: the field to fix (relative to its table) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct FieldError {
    /// The scenario field (`traffic`, `profile`, `engine.modelFailover.fallbacks[0]`).
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub(crate) fn new(field: impl Into<String>, message: String) -> Self {
        FieldError {
            field: field.into(),
            message,
        }
    }
}
