//! Small helpers shared by several modules.

pub mod arrival;
pub mod atomic;
pub mod fingerprint;
pub mod listen;
pub mod signal;
pub mod textpos;

pub use atomic::write_atomic;
pub use fingerprint::fingerprint;
pub use signal::stop_signal;
