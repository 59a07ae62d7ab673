//! Typed error mapping for the transports: hyper's predicates first, then the
//! innermost `io::Error` kind found by walking `Error::source()`. No string matching.

use std::error::Error as StdError;
use std::io;

use super::diagnostics::ReadFailure;
use crate::engine::TransportFailure;

/// Where in the exchange the error surfaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Connecting, sending, or waiting for the response head.
    Head,
    /// Reading the response body.
    Body,
}

/// Maps an error of the hyper client (or of a body read) to the engine's transport failure and
/// the diagnostics class.
pub fn classify(err: &(dyn StdError + 'static), phase: Phase) -> (TransportFailure, ReadFailure) {
    let mut hyper_incomplete = false;
    let mut innermost_io: Option<io::ErrorKind> = None;
    let mut cur: Option<&(dyn StdError + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(h) = e.downcast_ref::<hyper::Error>() {
            hyper_incomplete |= h.is_incomplete_message();
        }
        if let Some(io) = e.downcast_ref::<io::Error>() {
            innermost_io = Some(io.kind());
        }
        cur = e.source();
    }
    if hyper_incomplete {
        return match phase {
            Phase::Head => (
                TransportFailure::ClosedEarly,
                ReadFailure::HeadersNeverArrived,
            ),
            Phase::Body => (
                TransportFailure::BodyEndedEarly,
                ReadFailure::BodyEndedEarly,
            ),
        };
    }
    from_io_kind(innermost_io, phase)
}

/// The mapping of an innermost `io::ErrorKind` (None: no I/O error in the chain).
pub fn from_io_kind(kind: Option<io::ErrorKind>, phase: Phase) -> (TransportFailure, ReadFailure) {
    use io::ErrorKind as K;
    match kind {
        Some(K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe) => {
            (TransportFailure::Reset, ReadFailure::PeerReset)
        }
        Some(K::ConnectionRefused) => (TransportFailure::Refused, ReadFailure::Refused),
        Some(K::UnexpectedEof) => match phase {
            Phase::Head => (
                TransportFailure::ClosedEarly,
                ReadFailure::HeadersNeverArrived,
            ),
            Phase::Body => (
                TransportFailure::BodyEndedEarly,
                ReadFailure::BodyEndedEarly,
            ),
        },
        _ => (TransportFailure::Other, ReadFailure::Other),
    }
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
        let e = Wrap(io::Error::from(io::ErrorKind::UnexpectedEof));
        assert_eq!(
            classify(&e, Phase::Body),
            (
                TransportFailure::BodyEndedEarly,
                ReadFailure::BodyEndedEarly
            )
        );
        let e = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(classify(&e, Phase::Head).0, TransportFailure::Refused);
        // A kernel ETIMEDOUT is not one of our deadlines.
        let e = io::Error::from(io::ErrorKind::TimedOut);
        assert_eq!(classify(&e, Phase::Head).0, TransportFailure::Other);
    }
}
