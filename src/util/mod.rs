//! Small helpers shared by several modules.

pub mod atomic;
pub mod fingerprint;

pub use atomic::write_atomic;
pub use fingerprint::fingerprint;
