//! Small helpers shared by several modules (atomic writes, fingerprints, listen
//! checks, signals, the `--speed` bounds with the one saturating scale, counted nouns,
//! rounding of measured floats, and stdout/stderr lines that never panic).

pub mod atomic;
pub mod fingerprint;
pub mod listen;
pub mod out;
pub mod round;
pub mod signal;
pub mod speed;
pub mod suggest;
pub mod text;
pub mod textpos;

pub use atomic::write_atomic;
pub use fingerprint::fingerprint;
pub use signal::stop_signal;
