//! The run's list of what Prometheus scrapes, arm by arm: every kind of run publishes its
//! metrics endpoints when its arm's clock starts (the embedded engine's `/metrics`, every fleet
//! host's, a gateway's `metrics_url`) and withdraws them at the arm's end. With a Prometheus the
//! harness started, that rewrites the `file_sd` targets file its config names (labels `arm`
//! and `host`); in every case it records each arm's window, the time range its alerts are
//! judged on. Without `[prometheus]` it does nothing.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use super::config::{Target, targets_json};
use crate::util::sync::Locked;

/// One arm's time range, unix ms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArmWindow {
    /// The arm (policy, coordination, target kind).
    pub arm: String,
    /// Its clock's start.
    pub start_unix_ms: i64,
    /// When it withdrew its targets (its end), if it did.
    pub end_unix_ms: Option<i64>,
    /// The metrics endpoints it published.
    pub targets: Vec<Target>,
}

#[derive(Debug, Default)]
struct State {
    active: bool,
    file: Option<PathBuf>,
    windows: Vec<ArmWindow>,
    write_error: Option<(PathBuf, std::io::Error)>,
}

/// The shared handle (cheap to clone; inert by default).
#[derive(Debug, Clone, Default)]
pub struct Targets(Arc<Mutex<State>>);

/// Unix ms of `t`.
pub(crate) fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl Targets {
    /// Turns it on: arm windows are recorded, and the targets file (if any) is written.
    pub(crate) fn enable(&self, file: Option<PathBuf>) {
        let mut s = self.0.locked();
        s.active = true;
        s.file = file;
        Self::write(&mut s, None, &[]);
    }

    fn write(s: &mut State, arm: Option<&str>, targets: &[Target]) {
        if let Some(f) = &s.file
            && let Err(e) =
                crate::util::atomic::write_atomic(f, targets_json(arm, targets).as_bytes())
        {
            // The first failure is the one to report; later ones repeat it.
            s.write_error.get_or_insert((f.clone(), e));
        }
    }

    /// `arm`'s clock started at `start`; Prometheus scrapes `targets` from now on.
    pub fn publish(&self, arm: &str, start: SystemTime, targets: &[Target]) {
        let mut s = self.0.locked();
        if !s.active {
            return;
        }
        s.windows.push(ArmWindow {
            arm: arm.to_string(),
            start_unix_ms: unix_ms(start),
            end_unix_ms: None,
            targets: targets.to_vec(),
        });
        Self::write(&mut s, Some(arm), targets);
    }

    /// `arm` ended: nothing is scraped until the next arm.
    pub fn withdraw(&self, arm: &str) {
        let mut s = self.0.locked();
        if !s.active {
            return;
        }
        let now = unix_ms(SystemTime::now());
        if let Some(w) = s
            .windows
            .iter_mut()
            .rev()
            .find(|w| w.arm == arm && w.end_unix_ms.is_none())
        {
            w.end_unix_ms = Some(now);
        }
        Self::write(&mut s, None, &[]);
    }

    /// The arm being run now: its window's index and the window.
    pub(crate) fn current(&self) -> Option<(usize, ArmWindow)> {
        let s = self.0.locked();
        let i = s.windows.iter().rposition(|w| w.end_unix_ms.is_none())?;
        Some((i, s.windows[i].clone()))
    }

    /// Every arm's window so far.
    pub(crate) fn windows(&self) -> Vec<ArmWindow> {
        self.0.locked().windows.clone()
    }

    /// Why the targets file could not be written, if it could not (once: taken by the one
    /// place that reports it).
    pub(crate) fn take_write_error(&self) -> Option<super::error::DetectionError> {
        let (path, source) = self.0.locked().write_error.take()?;
        Some(super::error::DetectionError::Targets { path, source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inert_until_enabled_then_one_window_per_arm() {
        let t = Targets::default();
        t.publish("a", SystemTime::now(), &[]);
        assert!(t.windows().is_empty());
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("targets.json");
        t.enable(Some(f.clone()));
        let target = Target {
            url: "http://127.0.0.1:9/metrics".parse().unwrap(),
            host: "sut".into(),
        };
        t.publish("legacy", SystemTime::now(), std::slice::from_ref(&target));
        assert!(std::fs::read_to_string(&f).unwrap().contains("legacy"));
        assert_eq!(
            t.current().map(|(i, w)| (i, w.arm)),
            Some((0, "legacy".into()))
        );
        t.withdraw("legacy");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "[]\n");
        let w = t.windows();
        assert_eq!(w.len(), 1);
        assert!(w[0].end_unix_ms.is_some());
        assert_eq!(w[0].targets, vec![target]);
        assert!(t.current().is_none());
    }
}
