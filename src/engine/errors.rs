//! The engine's configuration errors: a bad `[engine]` key or text ([`ConfigError`]) and a
//! cooldown store that cannot be read or written ([`StoreError`]). A leaf, so the parts that
//! validate their own settings (profiles, the store) need not name the configuration that
//! aggregates them. Re-exported as `config::ConfigError` and `failover::store::StoreError`.

use std::path::PathBuf;

/// A store error, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file exists but cannot be read.
    #[error("cooldown store {path}: cannot read: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a valid `auth-profiles.json`.
    #[error("cooldown store {path}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The file could not be replaced; the previous content is intact.
    #[error("cooldown store {path}: cannot write (previous file left intact): {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// A configuration error naming the offending key (or the file, for syntax errors).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A key has a bad value.
    #[error("engine config `{key}`: {message}")]
    Invalid {
        /// The key's path, e.g. `modelFailover.retryBackoffMs`.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// The text does not parse (syntax, unknown key, wrong type); the message names the line,
    /// column and key where the format reports them.
    #[error("{origin}: {message}")]
    Parse {
        /// Where the text came from (file name).
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// The cooldown store could not be loaded.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ConfigError {
    pub(crate) fn invalid(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            key: key.into(),
            message: message.into(),
        }
    }

    /// The offending key, for `Invalid` errors.
    pub fn key(&self) -> Option<&str> {
        match self {
            Self::Invalid { key, .. } => Some(key),
            _ => None,
        }
    }
}
