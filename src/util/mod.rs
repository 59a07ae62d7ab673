//! Small helpers shared by several modules (the cache directory and the pinned versions of what
//! `rehearse gateway install` installs, atomic writes, fingerprints, listen checks, the one
//! stop mechanism (shutdown and drain), the `--speed` type with the one saturating scale, counted nouns, the one secret scrubber,
//! rounding of measured floats, scenario times and seconds as reports write them, stdout/stderr lines that never panic, processes by pid and the
//! watchdog that stops a started program when the run dies, the no-sleep assertion and the sleep
//! detector of a run).

pub(crate) mod atomic;
pub(crate) mod cache;
pub mod fingerprint;
pub(crate) mod jsonl;
pub(crate) mod listen;
pub(crate) mod out;
pub(crate) mod pins;
pub(crate) mod proc;
pub mod round;
pub(crate) mod secrets;
pub mod shutdown;
pub mod speed;
pub(crate) mod suggest;
pub mod suspend;
pub(crate) mod sync;
pub(crate) mod text;
pub(crate) mod textpos;
pub(crate) mod units;
pub(crate) mod watchdog;

pub(crate) use atomic::write_atomic;
pub use fingerprint::fingerprint;
