//! Diff of expected against observed behaviour (pure). Not built yet.
