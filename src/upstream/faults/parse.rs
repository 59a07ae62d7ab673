//! Reading fault specs: the envelope/kind split behind `FaultSpec`'s `Deserialize`, the checks
//! that need both halves, and [`parse_fault_file`] for TOML `[[fault]]` files or JSON arrays.
//! Errors name `origin:line:col` (or the field, where the format has no position).

use std::time::Duration;

use serde::de::{Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::{FaultError, FaultHeaders, FaultKind, FaultSpec, MAX_FAULT_DURATION, RouteSel, When};
use crate::util::textpos::line_col;

/// The envelope keys; everything else belongs to the kind.
const ENVELOPE_KEYS: [&str; 11] = [
    "name",
    "route",
    "profile",
    "model",
    "from",
    "until",
    "probability",
    "first",
    "optional",
    "when",
    "headers",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope {
    #[serde(default)]
    name: Option<String>,
    route: RouteSel,
    #[serde(default)]
    profile: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default, with = "humantime_serde")]
    from: Option<Duration>,
    #[serde(default, with = "humantime_serde")]
    until: Option<Duration>,
    #[serde(default = "one")]
    probability: f64,
    #[serde(default)]
    first: Option<u64>,
    #[serde(default)]
    optional: bool,
    #[serde(default)]
    when: Option<When>,
    #[serde(default)]
    headers: Option<FaultHeaders>,
}

fn one() -> f64 {
    1.0
}

impl<'de> Deserialize<'de> for FaultSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Errors are raised inside `visit_map`, so formats that track positions (TOML spans,
        // JSON line:col) attach the position of this fault's table.
        d.deserialize_map(SpecVisitor)
    }
}

struct SpecVisitor;

impl<'de> Visitor<'de> for SpecVisitor {
    type Value = FaultSpec;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a fault table")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<FaultSpec, A::Error> {
        let mut attrs = Map::new();
        while let Some((k, v)) = access.next_entry::<String, Value>()? {
            attrs.insert(k, v);
        }
        build(attrs).map_err(A::Error::custom)
    }
}

/// Splits a fault table into envelope and kind, decodes both and validates the whole.
fn build(mut attrs: Map<String, Value>) -> Result<FaultSpec, FaultError> {
    let mut env = Map::new();
    for key in ENVELOPE_KEYS {
        if let Some(v) = attrs.remove(key) {
            env.insert(key.to_string(), v);
        }
    }
    let envelope: Envelope =
        serde_json::from_value(Value::Object(env)).map_err(FaultError::Envelope)?;
    let kind_name = attrs
        .get("kind")
        .and_then(Value::as_str)
        .map(str::to_string);
    let kind: FaultKind =
        serde_json::from_value(Value::Object(attrs)).map_err(|source| FaultError::Kind {
            kind: kind_name,
            source,
        })?;
    let spec = FaultSpec {
        name: envelope.name,
        route: envelope.route,
        profile: envelope.profile,
        model: envelope.model,
        from: envelope.from,
        until: envelope.until,
        probability: envelope.probability,
        first: envelope.first,
        optional: envelope.optional,
        when: envelope.when,
        headers: envelope.headers,
        kind,
    };
    spec.validate()?;
    Ok(spec)
}

impl FaultSpec {
    /// Checks values the types cannot: probability range, window order, attribute ranges and
    /// that the kind can act on the route. The error names the key.
    pub fn validate(&self) -> Result<(), FaultError> {
        if let Some(name) = &self.name
            && !valid_name(name)
        {
            return Err(FaultError::Table(format!(
                "`name` must be 1 to 64 ASCII letters, digits, `-` or `_`, got {name:?}"
            )));
        }
        if !(self.probability.is_finite() && (0.0..=1.0).contains(&self.probability)) {
            return Err(FaultError::Table(format!(
                "`probability` must be between 0 and 1, got {}",
                self.probability
            )));
        }
        for (key, d) in self.durations() {
            if d > MAX_FAULT_DURATION {
                return Err(FaultError::Table(format!(
                    "`{key}` must be at most 365days, got {}",
                    humantime::format_duration(d)
                )));
            }
        }
        if let (Some(from), Some(until)) = (self.from, self.until)
            && from >= until
        {
            return Err(FaultError::Table(format!(
                "`from` ({}) must be before `until` ({})",
                humantime::format_duration(from),
                humantime::format_duration(until)
            )));
        }
        if self.model.is_some() && !matches!(self.route, RouteSel::Llm | RouteSel::Any) {
            return Err(FaultError::Table(format!(
                "`model` only applies to route `llm`, not `{}`",
                self.route
            )));
        }
        let fault = self.kind.as_fault();
        let coordinator = self.route == RouteSel::Coordinator;
        if coordinator != matches!(self.kind, FaultKind::Down(_))
            && !matches!(self.kind, FaultKind::Latency(_))
        {
            return Err(FaultError::Table(if coordinator {
                format!(
                    "route `coordinator` takes kind `down` or `latency`, not `{}`",
                    fault.name()
                )
            } else {
                format!(
                    "fault kind `down` applies to route `coordinator` only, not `{}`",
                    self.route
                )
            }));
        }
        if coordinator
            && (self.profile.is_some()
                || self.model.is_some()
                || self.first.is_some()
                || self.probability != 1.0)
        {
            return Err(FaultError::Table(
                "route `coordinator` takes only `from`, `until` and the kind's attributes".into(),
            ));
        }
        fault.validate().map_err(|source| FaultError::Attribute {
            kind: fault.name(),
            source,
        })?;
        self.validate_when_and_headers()?;
        if let Some(route) = self.route.kind()
            && !fault.applies_to(route)
        {
            return Err(FaultError::Table(format!(
                "fault kind `{}` does not apply to route `{}`",
                fault.name(),
                self.route
            )));
        }
        Ok(())
    }
}

impl FaultSpec {
    /// `when` reads chat completions (route `llm`, or `*` where it selects them only); `headers`
    /// ride on an answer over HTTP, so not on `reset`, `stall`, `ws_*`, `down`, nor on route `ws`
    /// but for the answers that replace the upgrade (`status`, `rate_limit`).
    fn validate_when_and_headers(&self) -> Result<(), FaultError> {
        let fault = self.kind.as_fault();
        if self.when.is_some() && !matches!(self.route, RouteSel::Llm | RouteSel::Any) {
            return Err(FaultError::Table(format!(
                "`when` reads chat completions: it applies to route `llm` (or `*`), not `{}`",
                self.route
            )));
        }
        let Some(headers) = &self.headers else {
            return Ok(());
        };
        if !fault.answers_over_http() {
            return Err(FaultError::Table(format!(
                "`headers` ride on an HTTP answer, and fault kind `{}` sends none",
                fault.name()
            )));
        }
        if self.route == RouteSel::Ws
            && !matches!(self.kind, FaultKind::Status(_) | FaultKind::RateLimit(_))
        {
            return Err(FaultError::Table(format!(
                "`headers` on route `ws` ride only on an answer that replaces the upgrade \
                 (`status`, `rate_limit`), not on `{}`",
                fault.name()
            )));
        }
        super::headers::validate(headers).map_err(|source| FaultError::Attribute {
            kind: fault.name(),
            source,
        })
    }
}

/// A fault name: what an expectation's `since = { fault = "NAME" }` can say and a report can
/// print as it is.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl FaultSpec {
    /// Every duration the fault carries, by key ([`MAX_FAULT_DURATION`] is 365 days).
    fn durations(&self) -> Vec<(&'static str, Duration)> {
        let mut out: Vec<(&'static str, Duration)> = [("from", self.from), ("until", self.until)]
            .into_iter()
            .filter_map(|(k, d)| d.map(|d| (k, d)))
            .collect();
        match &self.kind {
            FaultKind::RateLimit(f) => out.push(("retry_after", f.retry_after)),
            FaultKind::Latency(f) => out.extend([("delay", f.delay), ("jitter", f.jitter)]),
            FaultKind::SlowStream(f) => out.push(("token_interval", f.token_interval)),
            FaultKind::FirstTokenDelay(f) => out.push(("delay", f.delay)),
            FaultKind::StallStream(f) => out.extend(f.resume_after.map(|d| ("resume_after", d))),
            FaultKind::Status(_)
            | FaultKind::Stall(_)
            | FaultKind::Reset(_)
            | FaultKind::ResetMidStream(_)
            | FaultKind::MalformedChunk(_)
            | FaultKind::ErrorEvent(_)
            | FaultKind::WsPingTimeout(_)
            | FaultKind::WsClose(_)
            | FaultKind::Down(_) => {}
        }
        out
    }
}

/// A fault file or body that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}{}: {message}", position(*.line, *.col))]
pub struct FaultFileError {
    /// The file name (or `PUT /_rehearse/faults`).
    pub origin: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub col: Option<usize>,
    /// What is wrong, naming the key.
    pub message: String,
}

fn position(line: Option<usize>, col: Option<usize>) -> String {
    match (line, col) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlFile {
    #[serde(default)]
    fault: Vec<FaultSpec>,
}

/// Parses a fault file: TOML `[[fault]]` tables, or JSON (an array of faults or an object
/// `{"fault": [...]}`), chosen by the first non-blank character. `origin` names the source in
/// errors, which carry `origin:line:col`.
pub fn parse_fault_file(text: &str, origin: &str) -> Result<Vec<FaultSpec>, FaultFileError> {
    if looks_like_json(text) {
        return parse_json(text, origin);
    }
    match toml::from_str::<TomlFile>(text) {
        Ok(f) => Ok(f.fault),
        Err(e) => {
            let (line, col) = match e.span() {
                Some(span) => {
                    let at = key_offset(text, span.start, e.message()).unwrap_or(span.start);
                    let (l, c) = line_col(text, at);
                    (Some(l), Some(c))
                }
                None => (None, None),
            };
            Err(FaultFileError {
                origin: origin.to_string(),
                line,
                col,
                message: e.message().trim().to_string(),
            })
        }
    }
}

fn parse_json(text: &str, origin: &str) -> Result<Vec<FaultSpec>, FaultFileError> {
    let result = if text.trim_start().starts_with('{') {
        serde_json::from_str::<TomlFile>(text).map(|f| f.fault)
    } else {
        serde_json::from_str::<Vec<FaultSpec>>(text)
    };
    result.map_err(|e| {
        let (line, col) = crate::util::textpos::json_position(text, &e);
        FaultFileError {
            origin: origin.to_string(),
            line: Some(line),
            col: Some(col),
            message: crate::util::textpos::json_message(&e),
        }
    })
}

/// Whether `text` is JSON (an object, or an array of objects) rather than TOML.
fn looks_like_json(text: &str) -> bool {
    let t = text.trim_start();
    if t.starts_with('{') {
        return true;
    }
    match t.strip_prefix('[') {
        Some(rest) => {
            let rest = rest.trim_start();
            rest.is_empty() || rest.starts_with('{') || rest.starts_with(']')
        }
        None => false,
    }
}

/// The offset of the key an error message names (its first `backticked` word that is a key of
/// the table starting at `table_start`), so errors point at the key rather than the table.
fn key_offset(text: &str, table_start: usize, message: &str) -> Option<usize> {
    // The span may point anywhere inside the table: search from its header line.
    let before = text.get(..table_start)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let table_start = if text[line_start..].trim_start().starts_with('[') {
        line_start
    } else {
        before.rfind("\n[").map_or(0, |i| i + 1)
    };
    // "fault kind `status`: ..." names the kind first; look at what follows.
    let message = match message.strip_prefix("fault kind `") {
        Some(rest) => rest.split_once("`: ").map_or(rest, |(_, m)| m),
        None => message,
    };
    let mut names = message.split('`').skip(1).step_by(2);
    let rest = &text[table_start..];
    names.find_map(|name| {
        let mut offset = table_start;
        for (i, line) in rest.split_inclusive('\n').enumerate() {
            let trimmed = line.trim_start();
            if i > 0 && trimmed.starts_with('[') {
                break;
            }
            if let Some(after) = trimmed.strip_prefix(name)
                && after.trim_start().starts_with('=')
                && !name.is_empty()
            {
                return Some(offset + (line.len() - trimmed.len()));
            }
            offset += line.len();
        }
        None
    })
}

#[cfg(test)]
mod tests;
