//! The one mapping of client errors, by type and never by message text: a single walk over
//! `Error::source()` notes hyper's incomplete-message predicate, hyper-util's connect
//! predicate and the innermost `io::Error` kind, and gives a [`Failure`]. The run's transport
//! and `rehearse replay` each project that one value ([`Failure::engine`], [`Failure::kind`]),
//! so the two cannot read the same error differently.
//!
//! | what the chain holds                                 | [`Failure`]      | engine (`TransportFailure`, `ReadFailure`) | replay kind  |
//! |------------------------------------------------------|------------------|--------------------------------------------|--------------|
//! | hyper incomplete message, or `UnexpectedEof`, before the head | `ClosedEarly` | `ClosedEarly`, `HeadersNeverArrived` | `incomplete` |
//! | the same while reading the body                      | `BodyEndedEarly` | `BodyEndedEarly`, `BodyEndedEarly`         | `incomplete` |
//! | `ConnectionReset`, `ConnectionAborted`, `BrokenPipe` | `Reset`          | `Reset`, `PeerReset`                       | `reset`      |
//! | `ConnectionRefused`                                  | `Refused`        | `Refused`, `Refused`                       | `connect`    |
//! | `AddrNotAvailable`, `HostUnreachable`, `NetworkUnreachable` | `Unreachable` | `Other`, `Other`                     | `connect`    |
//! | `TimedOut`                                           | `TimedOut`       | `Other`, `Other`                           | `timeout`    |
//! | another error of the connect step (hyper-util)       | `Connect`        | `Other`, `Other`                           | `connect`    |
//! | anything else                                        | `Other`          | `Other`, `Other`                           | `http`       |
//!
//! Why `TimedOut` differs: the run's connector has no connect timeout, so an `ETIMEDOUT` there
//! is the kernel's (SYN retries, `TCP_USER_TIMEOUT`), not one of the engine's deadlines, which
//! the transport reports as `AttemptResult::Timeout` itself. Replay's connector is bounded by
//! the replay's request timeout, and hyper-util reports that bound as `TimedOut`: it is the
//! replay's own deadline, the same `timeout` as the whole request running out.

use std::error::Error as StdError;
use std::io;

use super::diagnostics::ReadFailure;
use crate::engine::TransportFailure;

/// Where in the exchange the error surfaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Connecting, sending, or waiting for the response head.
    Head,
    /// Reading the response body.
    Body,
}

/// What a failed exchange's error chain says (the table of the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The peer closed before a complete response head.
    ClosedEarly,
    /// The body ended before its declared end.
    BodyEndedEarly,
    /// The peer reset or aborted the connection.
    Reset,
    /// Nobody listened.
    Refused,
    /// No route to the address.
    Unreachable,
    /// An I/O `TimedOut`: the kernel's, or a connect timeout the connector was given.
    TimedOut,
    /// The connect step failed otherwise.
    Connect,
    /// Any other I/O or protocol error.
    Other,
}

impl Failure {
    /// Reads an error chain (of the hyper client, a body read or a connector) once.
    pub(crate) fn of(err: &(dyn StdError + 'static), phase: Phase) -> Self {
        let mut hyper_incomplete = false;
        let mut connect = false;
        let mut innermost_io: Option<io::ErrorKind> = None;
        let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
        while let Some(e) = cur {
            if let Some(h) = e.downcast_ref::<hyper::Error>() {
                hyper_incomplete |= h.is_incomplete_message();
            }
            if let Some(c) = e.downcast_ref::<hyper_util::client::legacy::Error>() {
                connect |= c.is_connect();
            }
            if let Some(io) = e.downcast_ref::<io::Error>() {
                innermost_io = Some(io.kind());
            }
            cur = e.source();
        }
        if hyper_incomplete {
            return Self::early(phase);
        }
        match Self::of_io_kind(innermost_io, phase) {
            Self::Other if connect => Self::Connect,
            f => f,
        }
    }

    /// The mapping of an innermost `io::ErrorKind` alone (`None`: no I/O error in the chain).
    pub(crate) fn of_io_kind(kind: Option<io::ErrorKind>, phase: Phase) -> Self {
        use io::ErrorKind as K;
        match kind {
            Some(K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe) => Self::Reset,
            Some(K::ConnectionRefused) => Self::Refused,
            Some(K::AddrNotAvailable | K::HostUnreachable | K::NetworkUnreachable) => {
                Self::Unreachable
            }
            Some(K::UnexpectedEof) => Self::early(phase),
            Some(K::TimedOut) => Self::TimedOut,
            _ => Self::Other,
        }
    }

    fn early(phase: Phase) -> Self {
        match phase {
            Phase::Head => Self::ClosedEarly,
            Phase::Body => Self::BodyEndedEarly,
        }
    }

    /// The engine's view: its transport failure and the diagnostics class.
    pub(crate) fn engine(self) -> (TransportFailure, ReadFailure) {
        match self {
            Self::ClosedEarly => (
                TransportFailure::ClosedEarly,
                ReadFailure::HeadersNeverArrived,
            ),
            Self::BodyEndedEarly => (
                TransportFailure::BodyEndedEarly,
                ReadFailure::BodyEndedEarly,
            ),
            Self::Reset => (TransportFailure::Reset, ReadFailure::PeerReset),
            Self::Refused => (TransportFailure::Refused, ReadFailure::Refused),
            Self::Unreachable | Self::TimedOut | Self::Connect | Self::Other => {
                (TransportFailure::Other, ReadFailure::Other)
            }
        }
    }

    /// Replay's error kind (`rehearse replay`'s summary counts these).
    pub(crate) fn kind(self) -> &'static str {
        match self {
            Self::ClosedEarly | Self::BodyEndedEarly => "incomplete",
            Self::Reset => "reset",
            Self::Refused | Self::Unreachable | Self::Connect => "connect",
            Self::TimedOut => "timeout",
            Self::Other => "http",
        }
    }
}

/// Maps an error of the hyper client (or of a body read) to the engine's transport failure and
/// the diagnostics class.
pub(crate) fn classify(err: &(dyn StdError + 'static), phase: Phase) -> (TransportFailure, ReadFailure) {
    Failure::of(err, phase).engine()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrap(io::Error);
    impl std::fmt::Display for Wrap {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("wrapped")
        }
    }
    impl StdError for Wrap {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            Some(&self.0)
        }
    }

    fn wrapped(kind: io::ErrorKind, phase: Phase) -> Failure {
        Failure::of(&Wrap(io::Error::from(kind)), phase)
    }

    #[test]
    fn innermost_io_kind_decides_without_reading_messages() {
        // The message says "refused" but the kind is a reset: the kind wins.
        let e = Wrap(io::Error::new(
            io::ErrorKind::ConnectionReset,
            "connection refused",
        ));
        assert_eq!(
            classify(&e, Phase::Head),
            (TransportFailure::Reset, ReadFailure::PeerReset)
        );
        let e = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(classify(&e, Phase::Head).0, TransportFailure::Refused);
    }

    /// The table of the module docs, row by row, through both projections.
    #[test]
    fn the_mapping_table_timeout_vs_reset_vs_incomplete_vs_refused() {
        use io::ErrorKind as K;
        use {ReadFailure as R, TransportFailure as T};
        #[rustfmt::skip]
        let rows = [
            (K::UnexpectedEof, Phase::Head, Failure::ClosedEarly, T::ClosedEarly, R::HeadersNeverArrived, "incomplete"),
            (K::UnexpectedEof, Phase::Body, Failure::BodyEndedEarly, T::BodyEndedEarly, R::BodyEndedEarly, "incomplete"),
            (K::ConnectionReset, Phase::Head, Failure::Reset, T::Reset, R::PeerReset, "reset"),
            (K::BrokenPipe, Phase::Body, Failure::Reset, T::Reset, R::PeerReset, "reset"),
            (K::ConnectionAborted, Phase::Head, Failure::Reset, T::Reset, R::PeerReset, "reset"),
            (K::ConnectionRefused, Phase::Head, Failure::Refused, T::Refused, R::Refused, "connect"),
            (K::HostUnreachable, Phase::Head, Failure::Unreachable, T::Other, R::Other, "connect"),
            (K::AddrNotAvailable, Phase::Head, Failure::Unreachable, T::Other, R::Other, "connect"),
            // A kernel ETIMEDOUT is not one of the engine's deadlines; for replay it is its
            // connector's connect timeout.
            (K::TimedOut, Phase::Head, Failure::TimedOut, T::Other, R::Other, "timeout"),
            (K::InvalidData, Phase::Body, Failure::Other, T::Other, R::Other, "http"),
        ];
        for (kind, phase, failure, engine, diag, replay) in rows {
            let f = wrapped(kind, phase);
            assert_eq!(f, failure, "{kind:?} {phase:?}");
            assert_eq!(f.engine(), (engine, diag), "{kind:?} {phase:?}");
            assert_eq!(f.kind(), replay, "{kind:?} {phase:?}");
        }
        assert_eq!(Failure::of_io_kind(None, Phase::Head), Failure::Other);
    }
}
