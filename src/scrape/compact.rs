//! What a run keeps of its scrapes, in memory that does not grow with the run's length: the
//! breaker timeline built one scrape at a time ([`super::timeline::Builder`]: every transition,
//! at most [`super::timeline::MAX_RATE_POINTS`] rate points), the largest
//! `health_breaker_disagreement_seconds` of each dep, the last parsed scrape (the diff's "final
//! scrape" and the A/B summary), the breaker series of every scrape for the event-log
//! cross-check ([`CompactScrapes::breaker_scrapes`]: a scrape time each, the `breaker_state` and
//! `breaker_transitions_total` samples stored again only when they changed), the names of every
//! family and sample any scrape held ([`CompactScrapes::exported`]), the label values every
//! sample name carried in any scrape ([`CompactScrapes::label_values`], at most
//! [`MAX_LABEL_VALUES`] per label) and the scrape counts. The raw scrapes go to `scrapes.prom.gz` as
//! they come (see `rehearsal::arm::sinks::PromFile`); nothing else of them is kept.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::parse::Exposition;
use super::scraper::{ScrapeLog, ScrapeSink};
use super::timeline::{Builder, Timeline};
use crate::engine::events::BreakerState;

/// The most values of one label of one sample name a run keeps (a gateway exporting a label
/// per request would otherwise grow without bound); past it the set is marked [`LabelSeen::full`].
const MAX_LABEL_VALUES: usize = 1024;

/// The values one label of one sample name carried in the scrapes of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSeen {
    /// The values, up to [`MAX_LABEL_VALUES`].
    pub values: std::collections::BTreeSet<String>,
    /// More values came than were kept.
    pub full: bool,
}

/// See the module docs.
#[derive(Debug, Clone)]
pub struct CompactScrapes {
    timeline: Builder,
    disagreement: BTreeMap<String, f64>,
    last: Option<Arc<Exposition>>,
    /// Every parsed scrape's time with its breaker series (shared while they do not change).
    breaker: Vec<(u64, Arc<Exposition>)>,
    /// Scrapes that returned 200 and parsed.
    pub ok: u64,
    /// Failed scrapes (connection, timeout, status, body or parse errors).
    pub failures: u64,
    /// The last failure, prefixed with its `t_ms`.
    pub last_error: Option<String>,
    /// Every family and sample name any parsed scrape held.
    names: std::collections::BTreeSet<String>,
    /// Per sample name any parsed scrape held, per label, the values it carried.
    labels: BTreeMap<String, BTreeMap<String, LabelSeen>>,
}

impl CompactScrapes {
    /// Nothing scraped yet, for a run that started at `start_unix_s` (Unix seconds).
    pub(crate) fn new(start_unix_s: f64) -> Self {
        Self {
            timeline: Builder::new(start_unix_s),
            disagreement: BTreeMap::new(),
            last: None,
            breaker: Vec::new(),
            ok: 0,
            failures: 0,
            last_error: None,
            names: std::collections::BTreeSet::new(),
            labels: BTreeMap::new(),
        }
    }

    /// What a run would have kept of `log`'s scrapes (and its counts).
    pub fn from_log(log: &ScrapeLog, start_unix_s: f64) -> Self {
        let mut c = Self::new(start_unix_s);
        for s in &log.scrapes {
            c.scrape(s.t_ms, &s.text, s.parsed.as_ref());
        }
        c.ok = log.ok;
        c.failures = log.failures;
        c.last_error = log.last_error.clone();
        c
    }

    /// The breaker timeline of every scrape so far.
    pub(crate) fn timeline(&self) -> Timeline {
        self.timeline.timeline()
    }

    /// Per dep, the largest finite `health_breaker_disagreement_seconds` of any scrape (0 for a
    /// dep whose gauge never rose above 0).
    pub(crate) fn max_disagreement(&self) -> &BTreeMap<String, f64> {
        &self.disagreement
    }

    /// Per dep, its `breaker_state` when a scrape first showed it.
    pub(crate) fn first_states(&self) -> &BTreeMap<String, BreakerState> {
        self.timeline.first_states()
    }

    /// Every parsed scrape's time with its `breaker_state` and `breaker_transitions_total`
    /// samples: what [`super::crosscheck`] compares with the event log.
    pub(crate) fn breaker_scrapes(&self) -> Vec<(u64, &Exposition)> {
        self.breaker.iter().map(|(t, e)| (*t, e.as_ref())).collect()
    }

    /// The last parsed scrape.
    pub(crate) fn last_parsed(&self) -> Option<&Exposition> {
        self.last.as_deref()
    }

    /// Whether any parsed scrape held a family or a sample called `name`.
    pub(crate) fn exported(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The labels samples called `name` carried in any parsed scrape, each with its values
    /// (`None`: no scrape held a sample of that name, if maybe its family's header).
    pub(crate) fn label_values(&self, name: &str) -> Option<&BTreeMap<String, LabelSeen>> {
        self.labels.get(name)
    }

    /// Adds the sample names and label values of `e` (every scrape's, and a fleet's final
    /// exposition merged from its hosts).
    fn note_labels(&mut self, e: &Exposition) {
        for s in e.samples() {
            if !self.labels.contains_key(&s.name) {
                self.labels.insert(s.name.clone(), BTreeMap::new());
            }
            let Some(by_label) = self.labels.get_mut(&s.name) else {
                continue;
            };
            for (k, v) in &s.labels {
                if !by_label.contains_key(k) {
                    by_label.insert(k.clone(), LabelSeen::default());
                }
                let Some(seen) = by_label.get_mut(k) else {
                    continue;
                };
                if seen.values.contains(v) {
                    continue;
                }
                if seen.values.len() < MAX_LABEL_VALUES {
                    seen.values.insert(v.clone());
                } else {
                    seen.full = true;
                }
            }
        }
    }
}

impl ScrapeSink for CompactScrapes {
    fn scrape(&mut self, t_ms: u64, _text: &str, parsed: Option<&Arc<Exposition>>) {
        let Some(e) = parsed else { return };
        self.ok += 1;
        self.timeline.push(t_ms, e);
        for s in e
            .samples()
            .filter(|s| s.name == "health_breaker_disagreement_seconds")
        {
            let dep = s.labels.get("dep").cloned().unwrap_or_default();
            let max = self.disagreement.entry(dep).or_insert(0.0);
            if s.value.is_finite() && s.value > *max {
                *max = s.value;
            }
        }
        let slim = breaker_series(e);
        let same = self.breaker.last().filter(|(_, prev)| **prev == slim);
        let slim = match same {
            Some((_, prev)) => prev.clone(),
            None => Arc::new(slim),
        };
        self.breaker.push((t_ms, slim));
        for f in &e.families {
            for name in std::iter::once(&f.name).chain(f.samples.iter().map(|s| &s.name)) {
                if !self.names.contains(name) {
                    self.names.insert(name.clone());
                }
            }
        }
        self.note_labels(e);
        self.last = Some(e.clone());
    }

    fn failure(&mut self, t_ms: u64, error: &str) {
        self.failures += 1;
        self.last_error = Some(format!("t_ms={t_ms}: {error}"));
    }
}

/// Only the families the event-log cross-check reads.
fn breaker_series(e: &Exposition) -> Exposition {
    Exposition {
        families: e
            .families
            .iter()
            .filter(|f| f.name == "breaker_state" || f.name == "breaker_transitions_total")
            .cloned()
            .collect(),
    }
}
