//! A harness failure of a fleet run (exit 3), shared by the run and the host launcher.

/// A harness failure of a fleet run (exit 3).
#[derive(Debug, thiserror::Error)]
pub(crate) enum FleetError {
    /// A loopback listener could not be bound.
    #[error("binding a loopback port for the mock upstream: {0}")]
    Bind(std::io::Error),
    /// The run's redis-server would not start.
    #[error("{0}")]
    Redis(#[from] super::redis_server::RedisSpawnError),
    /// A host process could not be started or never became ready.
    #[error("host {host}: {why}")]
    Host {
        /// Its id.
        host: String,
        /// Why.
        why: String,
    },
}
