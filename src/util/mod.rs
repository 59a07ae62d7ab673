//! Small helpers shared by several modules (atomic writes, fingerprints, arrival stamps, listen
//! checks, signals, and the `--speed` bounds with the one saturating scale).

pub mod arrival;
pub mod atomic;
pub mod fingerprint;
pub mod listen;
pub mod signal;
pub mod speed;
pub mod suggest;

pub use atomic::write_atomic;
pub use fingerprint::fingerprint;
pub use signal::stop_signal;
