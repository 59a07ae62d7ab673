//! The degradation ladder's rungs once retries are over: a lighter model → a partial result →
//! fail.

/// A rung of the degradation ladder, tried in order once retries are over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rung {
    /// Answer with a lighter (cheaper, smaller) model.
    LighterModel(String),
    /// Return what arrived before the failure (tokens of a cut stream).
    PartialResult {
        /// Tokens received.
        tokens: u64,
    },
    /// Fail with the user-visible error.
    Fail,
}

/// The ladder for a request: a lighter model if one is configured and not the one that failed,
/// a partial result if tokens arrived, then fail.
pub fn ladder(lighter: Option<&str>, failed_model: Option<&str>, partial_tokens: u64) -> Vec<Rung> {
    let mut rungs = Vec::new();
    if let Some(m) = lighter.filter(|m| Some(*m) != failed_model) {
        rungs.push(Rung::LighterModel(m.to_string()));
    }
    if partial_tokens > 0 {
        rungs.push(Rung::PartialResult {
            tokens: partial_tokens,
        });
    }
    rungs.push(Rung::Fail);
    rungs
}
