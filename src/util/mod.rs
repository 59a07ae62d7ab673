//! Small helpers shared by several modules (atomic writes, fingerprints, listen checks, the one
//! stop mechanism (shutdown and drain), the `--speed` type with the one saturating scale, counted nouns, the one secret scrubber,
//! rounding of measured floats, scenario times and seconds as reports write them, stdout/stderr lines that never panic, processes by pid and the
//! watchdog that stops a started program when the run dies).

pub mod atomic;
pub mod fingerprint;
pub mod jsonl;
pub mod listen;
pub mod out;
pub mod proc;
pub mod round;
pub mod secrets;
pub mod shutdown;
pub mod speed;
pub mod suggest;
pub mod sync;
pub mod text;
pub mod textpos;
pub mod units;
pub mod watchdog;

pub use atomic::write_atomic;
pub use fingerprint::fingerprint;
