//! `StartCalendarInterval` entries: built from `--weekday/--hour/--minute` with range checks,
//! and the next time an entry fires (pure, local wall-clock minutes; `status` shows it).

use serde::{Deserialize, Serialize};

/// One `StartCalendarInterval` dict. A missing key means "any" to launchd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CalendarEntry {
    /// 0–7, 0 and 7 = Sunday.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weekday: Option<u8>,
    /// 0–23.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hour: Option<u8>,
    /// 0–59.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minute: Option<u8>,
}

/// A flag combination launchd would misread or reject.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CalendarError {
    /// A value outside its range.
    #[error("--{flag} {value} is out of range {range}")]
    OutOfRange {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: u8,
        /// The allowed range.
        range: &'static str,
    },
    /// `--hour` or `--minute` missing: launchd would run every hour / every minute.
    #[error("--{0} is required: launchd treats a missing {1} as every {0}")]
    Missing(&'static str, &'static str),
    /// The repeated flags cannot be paired into entries.
    #[error(
        "cannot pair {weekdays} --weekday, {hours} --hour and {minutes} --minute into entries: \
         give each flag once (shared by all entries) or as many times as there are entries"
    )]
    Mismatch {
        /// Count of --weekday.
        weekdays: usize,
        /// Count of --hour.
        hours: usize,
        /// Count of --minute.
        minutes: usize,
    },
}

/// Pairs the flags into entries: entry i takes the i-th value of each flag, and a flag given
/// once applies to every entry (`--weekday 1 --weekday 4 --hour 3 --minute 0` = Mon and Thu
/// 03:00). `--weekday` may be absent (daily); `--hour` and `--minute` may not.
pub(crate) fn entries_from_flags(
    weekdays: &[u8],
    hours: &[u8],
    minutes: &[u8],
) -> Result<Vec<CalendarEntry>, CalendarError> {
    for (flag, values, max, range) in [
        ("weekday", weekdays, 7, "0-7 (0 and 7 = Sunday)"),
        ("hour", hours, 23, "0-23"),
        ("minute", minutes, 59, "0-59"),
    ] {
        if let Some(&value) = values.iter().find(|&&v| v > max) {
            return Err(CalendarError::OutOfRange { flag, value, range });
        }
    }
    if hours.is_empty() {
        return Err(CalendarError::Missing("hour", "Hour"));
    }
    if minutes.is_empty() {
        return Err(CalendarError::Missing("minute", "Minute"));
    }
    let n = weekdays.len().max(hours.len()).max(minutes.len());
    let fits = |len: usize| len == n || len == 1 || len == 0;
    if !(fits(weekdays.len()) && fits(hours.len()) && fits(minutes.len())) {
        return Err(CalendarError::Mismatch {
            weekdays: weekdays.len(),
            hours: hours.len(),
            minutes: minutes.len(),
        });
    }
    let pick = |v: &[u8], i: usize| match v.len() {
        0 => None,
        1 => Some(v[0]),
        _ => v.get(i).copied(),
    };
    let mut out: Vec<CalendarEntry> = (0..n)
        .map(|i| CalendarEntry {
            weekday: pick(weekdays, i),
            hour: pick(hours, i),
            minute: pick(minutes, i),
        })
        .collect();
    out.dedup();
    Ok(out)
}

/// A local wall-clock minute of the week.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WeekMinute {
    /// 0 = Sunday … 6 = Saturday.
    pub weekday: u8,
    /// 0–23.
    pub hour: u8,
    /// 0–59.
    pub minute: u8,
}

impl CalendarEntry {
    /// Does this entry fire at `t`?
    pub(crate) fn matches(&self, t: WeekMinute) -> bool {
        self.weekday.is_none_or(|w| w % 7 == t.weekday)
            && self.hour.is_none_or(|h| h == t.hour)
            && self.minute.is_none_or(|m| m == t.minute)
    }

    /// `Mon 03:00`, `daily 03:00`.
    pub fn describe(&self) -> String {
        const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
        let day = self.weekday.map_or("daily", |w| DAYS[usize::from(w % 7)]);
        let two = |v: Option<u8>| v.map_or("**".to_string(), |v| format!("{v:02}"));
        format!("{day} {}:{}", two(self.hour), two(self.minute))
    }
}

/// Minutes from `now` (exclusive) until the first minute any entry fires, within a week;
/// `None` when there is no entry.
pub(crate) fn minutes_until_next(entries: &[CalendarEntry], now: WeekMinute) -> Option<u32> {
    let start =
        u32::from(now.weekday % 7) * 1440 + u32::from(now.hour) * 60 + u32::from(now.minute);
    (1..=7 * 1440).find(|&d| {
        let m = (start + d) % (7 * 1440);
        let t = WeekMinute {
            weekday: (m / 1440) as u8,
            hour: ((m % 1440) / 60) as u8,
            minute: (m % 60) as u8,
        };
        entries.iter().any(|e| e.matches(t))
    })
}

/// How many minutes before a scheduled run `pmset` wakes the Mac.
pub(crate) const WAKE_LEAD_MIN: u16 = 5;

/// The `pmset repeat wakeorpoweron DAYS HH:MM:SS` line that wakes (or powers on) the Mac
/// `lead_min` minutes before the entries fire, and the entries it does not cover: pmset keeps
/// one repeating wake time, so an entry whose wake falls at another time of day (or one without
/// an hour and minute) is left out and said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Wake {
    /// `pmset repeat wakeorpoweron M 02:55:00` (pmset's days: M T W R F S U).
    pub line: String,
    /// The entries the line does not wake the Mac for.
    pub uncovered: Vec<CalendarEntry>,
}

/// [`Wake`] for `entries`; `None` when no entry has an hour and a minute.
pub(crate) fn pmset_wake(entries: &[CalendarEntry], lead_min: u16) -> Option<Wake> {
    const WEEK: i32 = 7 * 1440;
    // (days as a bit per weekday 0 = Sunday, minute of the day) of each entry's wake.
    let wake = |e: &CalendarEntry| -> Option<(u8, i32)> {
        let at = i32::from(e.hour?) * 60 + i32::from(e.minute?) - i32::from(lead_min);
        Some(match e.weekday {
            None => (0x7f, at.rem_euclid(1440)),
            Some(w) => {
                let m = (i32::from(w % 7) * 1440 + at).rem_euclid(WEEK);
                (1 << (m / 1440), m % 1440)
            }
        })
    };
    let time = entries.iter().find_map(wake)?.1;
    let mut days = 0u8;
    let mut uncovered = Vec::new();
    for e in entries {
        match wake(e) {
            Some((d, t)) if t == time => days |= d,
            _ => uncovered.push(*e),
        }
    }
    // pmset's letters, Monday first; bit 0 is Sunday.
    let letters: String = [(1, 'M'), (2, 'T'), (3, 'W'), (4, 'R'), (5, 'F'), (6, 'S'), (0, 'U')]
        .iter()
        .filter(|(bit, _)| days & (1 << bit) != 0)
        .map(|(_, c)| *c)
        .collect();
    Some(Wake {
        line: format!(
            "pmset repeat wakeorpoweron {letters} {:02}:{:02}:00",
            time / 60,
            time % 60
        ),
        uncovered,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(w: Option<u8>, h: u8, m: u8) -> CalendarEntry {
        CalendarEntry {
            weekday: w,
            hour: Some(h),
            minute: Some(m),
        }
    }

    #[test]
    fn pairs_flags_and_broadcasts_single_values() {
        assert_eq!(
            entries_from_flags(&[1], &[3], &[0]).unwrap(),
            vec![e(Some(1), 3, 0)]
        );
        assert_eq!(
            entries_from_flags(&[1, 4], &[3], &[0]).unwrap(),
            vec![e(Some(1), 3, 0), e(Some(4), 3, 0)]
        );
        assert_eq!(
            entries_from_flags(&[], &[3, 15], &[0, 30]).unwrap(),
            vec![e(None, 3, 0), e(None, 15, 30)]
        );
    }

    #[test]
    fn rejects_out_of_range_missing_and_unpairable() {
        assert!(matches!(
            entries_from_flags(&[8], &[3], &[0]),
            Err(CalendarError::OutOfRange {
                flag: "weekday",
                value: 8,
                ..
            })
        ));
        assert!(matches!(
            entries_from_flags(&[1], &[24], &[0]),
            Err(CalendarError::OutOfRange { flag: "hour", .. })
        ));
        assert!(matches!(
            entries_from_flags(&[1], &[3], &[60]),
            Err(CalendarError::OutOfRange { flag: "minute", .. })
        ));
        assert_eq!(
            entries_from_flags(&[1], &[3], &[]),
            Err(CalendarError::Missing("minute", "Minute"))
        );
        assert!(matches!(
            entries_from_flags(&[1, 2, 3], &[3, 4], &[0]),
            Err(CalendarError::Mismatch { .. })
        ));
    }

    #[test]
    fn next_run_wraps_the_week_and_treats_7_as_sunday() {
        let mon3 = [e(Some(1), 3, 0)];
        let sun_2359 = WeekMinute {
            weekday: 0,
            hour: 23,
            minute: 59,
        };
        assert_eq!(minutes_until_next(&mon3, sun_2359), Some(3 * 60 + 1));
        // Exactly at the firing minute: the next one is a week away.
        let mon_0300 = WeekMinute {
            weekday: 1,
            hour: 3,
            minute: 0,
        };
        assert_eq!(minutes_until_next(&mon3, mon_0300), Some(7 * 1440));
        let sun7 = [e(Some(7), 0, 0)];
        assert_eq!(
            minutes_until_next(
                &sun7,
                WeekMinute {
                    weekday: 6,
                    hour: 23,
                    minute: 0
                }
            ),
            Some(60)
        );
        assert_eq!(minutes_until_next(&[], mon_0300), None);
        assert_eq!(mon3[0].describe(), "Mon 03:00");
    }

    #[test]
    fn the_pmset_wake_is_five_minutes_before_the_slot_on_pmsets_days() {
        let wake = |entries: &[CalendarEntry]| pmset_wake(entries, WAKE_LEAD_MIN).unwrap();
        assert_eq!(
            wake(&[e(Some(1), 3, 0)]),
            Wake {
                line: "pmset repeat wakeorpoweron M 02:55:00".into(),
                uncovered: Vec::new(),
            }
        );
        // Across midnight, and across the week: Monday 00:03 wakes on Sunday.
        assert_eq!(
            wake(&[e(Some(1), 0, 3)]).line,
            "pmset repeat wakeorpoweron U 23:58:00"
        );
        assert_eq!(
            wake(&[e(Some(0), 0, 0)]).line,
            "pmset repeat wakeorpoweron S 23:55:00"
        );
        assert_eq!(
            wake(&[e(Some(7), 12, 0)]).line,
            "pmset repeat wakeorpoweron U 11:55:00"
        );
        assert_eq!(
            wake(&[e(None, 3, 0)]).line,
            "pmset repeat wakeorpoweron MTWRFSU 02:55:00"
        );
        assert_eq!(
            wake(&entries_from_flags(&[4, 1], &[3], &[0]).unwrap()).line,
            "pmset repeat wakeorpoweron MR 02:55:00"
        );
        // One repeating wake time: a slot at another time is not covered, and said.
        let two = wake(&[e(Some(1), 3, 0), e(Some(4), 4, 30)]);
        assert_eq!(two.line, "pmset repeat wakeorpoweron M 02:55:00");
        assert_eq!(two.uncovered, vec![e(Some(4), 4, 30)]);
        assert_eq!(pmset_wake(&[], WAKE_LEAD_MIN), None);
    }
}
