//! The answers a client got — a gateway's turns, the embedded engine's — checked once the
//! run's record is in
//! ([`crate::verdict::answers`]): each 2xx turn's row gets what the upstream served
//! for it (its row in the upstream's record, by the turn's marker), and an answer shorter than
//! the one served becomes `truncated` (not ok).

use crate::gateway::TurnEnd;
use crate::report::model::TurnRow;
use crate::upstream::UpstreamRecord;
use crate::util::speed::Speed;
use crate::verdict::answers::{outcome, served_of};
use crate::verdict::turns::{Names, rows};

/// Fills in `turns`' answers from `records` (the run's requests, as `verdict::turns` reads
/// them). A gateway that strips the marker leaves every answer unrecorded.
pub(crate) fn check(turns: &mut [TurnRow], records: &[UpstreamRecord]) {
    let part = rows(records, &Names::default(), Speed::ONE);
    for t in turns.iter_mut() {
        let Some(a) = t.answer.as_mut() else {
            continue;
        };
        let row = part
            .rows
            .iter()
            .find(|r| r.host.is_none() && r.turn == t.line as u64)
            .filter(|_| part.readable());
        a.recorded = row.is_some();
        a.served = row.and_then(served_of);
        if let Some(end) = t.outcome {
            let end = outcome(end, Some(a));
            if end == TurnEnd::Truncated {
                t.ok = false;
            }
            t.outcome = Some(end);
        }
    }
}
