//! A harness failure of a fleet run (exit 3), shared by the run and the host launcher.

/// A harness failure of a fleet run (exit 3).
#[derive(Debug, thiserror::Error)]
pub(crate) enum FleetError {
    /// A loopback listener could not be bound.
    #[error("binding a loopback port for the mock upstream: {0}")]
    Bind(std::io::Error),
    /// The run's redis-server would not start.
    #[error("{0}")]
    Redis(#[from] crate::rehearsal::fleet::redis_server::RedisSpawnError),
    /// The `[coordinator] url` Redis did not answer `PING` before the run.
    #[error(
        "[coordinator] url {url} did not answer PING before the run ({why}): the run is refused, \
         since every host would have fallen back to its local breakers; start that Redis, or use \
         [coordinator] spawn = true"
    )]
    Coordinator {
        /// The URL, its password hidden.
        url: String,
        /// What went wrong.
        why: String,
    },
    /// A host process could not be started or never became ready.
    #[error("host {host}: {why}")]
    Host {
        /// Its id.
        host: String,
        /// Why.
        why: String,
    },
}
