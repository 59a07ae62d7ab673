//! Setting a machine up from the binary alone: `rehearse gateway install|list|remove` (the
//! gateways and the OpenAI SDK a run may use, into the cache `scripts/install-*.sh` fill too) and
//! `rehearse doctor` (what a run needs from PATH, and which scenarios need which).
//!
//! # Layout
//! - `crate::util::pins`: the pinned versions, `scripts/pins.env` embedded (the scripts source it).
//! - [`tools`]: the programs on PATH (Debian and Homebrew names, packages, versions).
//! - [`openclaw`], [`portkey`], [`litellm`], [`openai_sdk`]: the installs, as the scripts do them.
//! - [`inventory`]: what the cache holds, with sizes.
//! - [`doctor`]: `rehearse doctor`.
//! - `cmd`: `rehearse gateway` (the CLI edge).

mod cmd;
pub(crate) mod doctor;
pub(crate) mod inventory;
pub(crate) mod litellm;
pub(crate) mod openai_sdk;
pub(crate) mod openclaw;
pub(crate) mod portkey;
pub(crate) mod tools;

pub(crate) use cmd::command;

/// Why an install could not be done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SetupError {
    /// Bad usage, or a program to install first (exit 2).
    #[error("{0}")]
    Usage(String),
    /// A program the install runs is not on PATH (exit 2, naming its packages).
    #[error(transparent)]
    Missing(#[from] tools::Missing),
    /// The install ran and failed (exit 3).
    #[error("{0}")]
    Failed(String),
    /// The file system refused (exit 3).
    #[error("{0}")]
    Io(String),
}

impl SetupError {
    /// The exit code: 2 for what the user can fix by installing or asking otherwise, else 3.
    pub(crate) fn code(&self) -> u8 {
        match self {
            Self::Usage(_) | Self::Missing(_) => 2,
            Self::Failed(_) | Self::Io(_) => 3,
        }
    }
}
