//! Reading the engine's `/metrics`: a strict text-format 0.0.4 parser ([`parse`]), series
//! selectors and sums ([`selector`]), the periodic scraper ([`scraper`]), the breaker timeline
//! derived from successive scrapes ([`timeline`]), one GET of an endpoint with its same-origin
//! redirects and bearer token ([`fetch`]), what a run keeps of its scrapes
//! ([`compact`]: bounded, whatever the run's length), the event log checked against the
//! scrapes ([`agreement`]) and the run's `scrapes.prom.gz` read back member by member ([`gzlog`]).

pub(crate) mod compact;
pub(crate) mod fetch;
mod exposition;
pub mod gzlog;
mod lexer;
pub mod parse;
mod rates;
pub(crate) mod scraper;
pub mod selector;
mod validate;

pub use compact::CompactScrapes;
pub use fetch::{Bearer, MAX_REDIRECTS};
pub use gzlog::{SCRAPES_FILE, ScrapesText, read_scrapes, scrapes_path};
pub use parse::{Exposition, Family, MetricKind, ParseError, Sample, parse};
pub use scraper::{Scrape, ScrapeLog, ScrapeSink, Scraper, ScraperConfig, metrics_url};
pub use selector::Selector;
pub mod timeline;

pub use timeline::{RatePoint, StatePoint, Timeline, Timing, Transition};
pub(crate) mod agreement;

pub use agreement::{Disagreement, DisagreementKind, crosscheck};
