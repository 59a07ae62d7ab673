//! Reading the engine's `/metrics`: a strict text-format 0.0.4 parser ([`parse`]), series
//! selectors and sums ([`selector`]), the periodic scraper ([`scraper`]) and the breaker timeline
//! derived from successive scrapes ([`timeline`]), and the event log checked against the
//! scrapes ([`agreement`]).

mod lexer;
pub mod parse;
pub mod scraper;
pub mod selector;
mod validate;

pub use parse::{Exposition, Family, MetricKind, ParseError, Sample, parse};
pub use scraper::{Scrape, ScrapeLog, Scraper, ScraperConfig, metrics_url};
pub use selector::Selector;
pub mod timeline;

pub use timeline::{RatePoint, StatePoint, Timeline, Timing, Transition};
pub mod agreement;

pub use agreement::{Disagreement, DisagreementKind, crosscheck};
