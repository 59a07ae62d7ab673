//! What an alerting rule's PromQL expression reads and what its alerts can carry, from the
//! expression's syntax tree (`promql-parser`): its series selectors (a family name and label
//! matchers each), the labels each of its outputs may keep ([`Shape`]: aggregations, vector
//! matching, `label_replace`, `absent` followed as Prometheus's engine does), whether every
//! output keeps a label that ties it to a scrape target ([`TIE_LABELS`]), and the lower bounds
//! it needs a series to reach (`x >= 180`). Pure; nothing here knows what a run exports (the
//! caller says what a selector's series carry).

use std::collections::BTreeSet;

use promql_parser::label::MatchOp;
use promql_parser::parser::{self, Expr, LabelModifier, VectorMatchCardinality};

/// The labels that tie an alert to the scrape targets a run published: `instance` and `job`
/// (Prometheus's own target labels) and `arm`, `host` (the run's targets file).
pub const TIE_LABELS: [&str; 4] = ["instance", "job", "arm", "host"];

/// Most output shapes followed (an `or` of `or`s doubles them).
const MAX_SHAPES: usize = 64;

/// How a selector matches a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `=~`
    Re,
    /// `!~`
    NotRe,
}

/// One label matcher of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelMatch {
    /// The label's name.
    pub name: String,
    /// How it matches.
    pub kind: MatchKind,
    /// The value (or regex) as written.
    pub value: String,
}

impl LabelMatch {
    /// True when a series lacking the label cannot match: `=` a non-empty value, or `=~` a
    /// regex that does not match the empty string.
    pub fn requires_label(&self) -> bool {
        match self.kind {
            MatchKind::Eq => !self.value.is_empty(),
            MatchKind::Re => !regex_matches_empty(&self.value),
            MatchKind::Ne | MatchKind::NotRe => false,
        }
    }
}

/// A conservative test of whether an anchored regex matches "": only plain alternatives
/// (`a|b|c`) are read; anything else may match it.
fn regex_matches_empty(re: &str) -> bool {
    let plain = re
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '|' | '-' | ':' | '/'));
    !plain || re.split('|').any(str::is_empty)
}

/// One series selector of an expression (a range selector's too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    /// The family (metric) name, when the selector names one (`x{...}` or `{__name__="x"}`).
    pub name: Option<String>,
    /// The label matchers other than the name's.
    pub matchers: Vec<LabelMatch>,
}

impl Selector {
    /// The selector as written (`breaker_state{dep="crm"}`).
    pub fn text(&self) -> String {
        let m: Vec<String> = self
            .matchers
            .iter()
            .map(|m| {
                let op = match m.kind {
                    MatchKind::Eq => "=",
                    MatchKind::Ne => "!=",
                    MatchKind::Re => "=~",
                    MatchKind::NotRe => "!~",
                };
                format!("{}{op}{:?}", m.name, m.value)
            })
            .collect();
        let name = self.name.clone().unwrap_or_default();
        if m.is_empty() {
            name
        } else {
            format!("{name}{{{}}}", m.join(","))
        }
    }
}

/// The labels the series of one output of an expression may carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    /// It may carry labels nobody listed (a series of a family whose labels are unknown), except
    /// those in `removed`.
    pub any: bool,
    /// Labels it may carry.
    pub labels: BTreeSet<String>,
    /// Labels it surely does not carry (with `any`).
    pub removed: BTreeSet<String>,
}

impl Shape {
    /// A shape carrying exactly `labels`.
    pub fn of<'a>(labels: impl IntoIterator<Item = &'a str>) -> Self {
        Self {
            any: false,
            labels: labels.into_iter().map(String::from).collect(),
            removed: BTreeSet::new(),
        }
    }

    /// A shape that may carry any label.
    pub fn unknown() -> Self {
        Self {
            any: true,
            ..Self::default()
        }
    }

    /// True when its series may carry `label`.
    pub fn may_carry(&self, label: &str) -> bool {
        self.labels.contains(label) || (self.any && !self.removed.contains(label))
    }

    /// True when it may carry a label of [`TIE_LABELS`].
    pub fn tied(&self) -> bool {
        TIE_LABELS.iter().any(|l| self.may_carry(l))
    }

    fn keep(&self, keep: &[String]) -> Self {
        Self::of(
            keep.iter()
                .filter(|l| self.may_carry(l))
                .map(String::as_str),
        )
    }

    fn drop(&self, drop: &[String]) -> Self {
        let mut s = self.clone();
        for l in drop {
            s.labels.remove(l);
            s.removed.insert(l.clone());
        }
        s
    }

    fn add(&self, add: &[String]) -> Self {
        let mut s = self.clone();
        for l in add {
            s.removed.remove(l);
            s.labels.insert(l.clone());
        }
        s
    }
}

/// A parsed expression.
#[derive(Debug, Clone)]
pub struct Parsed(Expr);

/// Parses a PromQL expression; the parser's message when it cannot.
pub fn parse(expr: &str) -> Result<Parsed, String> {
    parser::parse(expr).map(Parsed)
}

fn selector_of(vs: &parser::VectorSelector) -> Selector {
    let mut name = vs.name.clone();
    let mut matchers = Vec::new();
    let all = vs
        .matchers
        .matchers
        .iter()
        .chain(vs.matchers.or_matchers.iter().flatten());
    for m in all {
        let kind = match m.op {
            MatchOp::Equal => MatchKind::Eq,
            MatchOp::NotEqual => MatchKind::Ne,
            MatchOp::Re(_) => MatchKind::Re,
            MatchOp::NotRe(_) => MatchKind::NotRe,
        };
        if m.name == "__name__" {
            if kind == MatchKind::Eq {
                name.get_or_insert_with(|| m.value.clone());
            }
            continue;
        }
        matchers.push(LabelMatch {
            name: m.name.clone(),
            kind,
            value: m.value.clone(),
        });
    }
    Selector { name, matchers }
}

fn walk<'a>(e: &'a Expr, out: &mut Vec<&'a parser::VectorSelector>) {
    match e {
        Expr::Aggregate(a) => {
            walk(&a.expr, out);
            if let Some(p) = &a.param {
                walk(p, out);
            }
        }
        Expr::Unary(u) => walk(&u.expr, out),
        Expr::Binary(b) => {
            walk(&b.lhs, out);
            walk(&b.rhs, out);
        }
        Expr::Paren(p) => walk(&p.expr, out),
        Expr::Subquery(s) => walk(&s.expr, out),
        Expr::VectorSelector(v) => out.push(v),
        Expr::MatrixSelector(m) => out.push(&m.vs),
        Expr::Call(c) => c.args.args.iter().for_each(|a| walk(a, out)),
        Expr::NumberLiteral(_) | Expr::StringLiteral(_) | Expr::Extension(_) => {}
    }
}

fn strings(l: &promql_parser::label::Labels) -> Vec<String> {
    l.labels.clone()
}

fn string_arg(args: &[Box<Expr>], i: usize) -> Option<String> {
    match args.get(i).map(|a| &**a) {
        Some(Expr::StringLiteral(s)) => Some(s.val.clone()),
        Some(Expr::Paren(p)) => string_arg(std::slice::from_ref(&p.expr), 0),
        _ => None,
    }
}

fn cap(mut v: Vec<Shape>) -> Vec<Shape> {
    v.truncate(MAX_SHAPES);
    v
}

impl Parsed {
    /// Every series selector, in the order written.
    pub fn selectors(&self) -> Vec<Selector> {
        let mut out = Vec::new();
        walk(&self.0, &mut out);
        out.into_iter().map(selector_of).collect()
    }

    /// The shapes of the expression's outputs, given the shape of a selector's series.
    pub fn shapes(&self, series: &dyn Fn(&Selector) -> Shape) -> Vec<Shape> {
        shapes(&self.0, series)
    }

    /// The lower bounds the expression needs a selector's value to reach for any output:
    /// `(family, n)` for `x >= n`, `x > n` (or `n <= x`, `n < x`) at its top, through
    /// parentheses, `and` and `max`/`min`/`avg` aggregations (which cannot exceed their
    /// largest input). Empty when it has none it surely needs.
    pub fn lower_bounds(&self) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        bounds(&self.0, &mut out);
        out
    }
}

fn bounds(e: &Expr, out: &mut Vec<(String, f64)>) {
    match e {
        Expr::Paren(p) => bounds(&p.expr, out),
        Expr::Binary(b) => {
            let op = b.op.to_string();
            if op == "and" {
                bounds(&b.lhs, out);
                bounds(&b.rhs, out);
                return;
            }
            if b.modifier.as_ref().is_some_and(|m| m.return_bool) {
                return;
            }
            let found = match (value_of(&b.lhs), number(&b.rhs), op.as_str()) {
                (Some(s), Some(n), ">=" | ">") => Some((s, n)),
                _ => match (number(&b.lhs), value_of(&b.rhs), op.as_str()) {
                    (Some(n), Some(s), "<=" | "<") => Some((s, n)),
                    _ => None,
                },
            };
            out.extend(found);
        }
        _ => {}
    }
}

/// The family whose value an expression passes through unchanged or bounded by its largest
/// input: a selector, in parentheses or under `max`/`min`/`avg`.
fn value_of(e: &Expr) -> Option<String> {
    match e {
        Expr::Paren(p) => value_of(&p.expr),
        Expr::VectorSelector(v) => selector_of(v).name,
        Expr::Aggregate(a) if matches!(a.op.to_string().as_str(), "max" | "min" | "avg") => {
            value_of(&a.expr)
        }
        _ => None,
    }
}

fn number(e: &Expr) -> Option<f64> {
    match e {
        Expr::Paren(p) => number(&p.expr),
        Expr::NumberLiteral(n) => Some(n.val),
        _ => None,
    }
}

fn is_scalar(e: &Expr) -> bool {
    matches!(
        e.value_type(),
        parser::value::ValueType::Scalar | parser::value::ValueType::String
    )
}

fn shapes(e: &Expr, series: &dyn Fn(&Selector) -> Shape) -> Vec<Shape> {
    match e {
        Expr::VectorSelector(v) => vec![series(&selector_of(v))],
        Expr::MatrixSelector(m) => vec![series(&selector_of(&m.vs))],
        Expr::Paren(p) => shapes(&p.expr, series),
        Expr::Subquery(s) => shapes(&s.expr, series),
        Expr::Unary(u) => shapes(&u.expr, series),
        Expr::NumberLiteral(_) | Expr::StringLiteral(_) | Expr::Extension(_) => {
            vec![Shape::default()]
        }
        Expr::Aggregate(a) => {
            let inner = shapes(&a.expr, series);
            let op = a.op.to_string();
            if matches!(op.as_str(), "topk" | "bottomk" | "limitk" | "limit_ratio") {
                return inner;
            }
            let extra: Vec<String> = if op == "count_values" {
                a.param
                    .as_ref()
                    .and_then(|p| string_arg(std::slice::from_ref(p), 0))
                    .into_iter()
                    .collect()
            } else {
                Vec::new()
            };
            let out = inner.iter().map(|s| {
                let s = match &a.modifier {
                    Some(LabelModifier::Include(l)) => s.keep(&strings(l)),
                    Some(LabelModifier::Exclude(l)) => s.drop(&strings(l)),
                    None => Shape::default(),
                };
                s.add(&extra)
            });
            cap(out.collect())
        }
        Expr::Binary(b) => binary(b, series),
        Expr::Call(c) => call(c, series),
    }
}

/// Vector matching as Prometheus's engine labels a result: `and`/`unless` keep the left side,
/// `or` gives both sides' outputs, one-to-one `on (L)` keeps only `L` and `ignoring (L)` drops
/// it, `group_left`/`group_right` keep the "many" side and add what they include.
fn binary(b: &parser::BinaryExpr, series: &dyn Fn(&Selector) -> Shape) -> Vec<Shape> {
    let (l_scalar, r_scalar) = (is_scalar(&b.lhs), is_scalar(&b.rhs));
    if l_scalar && r_scalar {
        return vec![Shape::default()];
    }
    if l_scalar {
        return shapes(&b.rhs, series);
    }
    if r_scalar {
        return shapes(&b.lhs, series);
    }
    let op = b.op.to_string();
    let (lhs, rhs) = (shapes(&b.lhs, series), shapes(&b.rhs, series));
    match op.as_str() {
        "and" | "unless" => return lhs,
        "or" => return cap(lhs.into_iter().chain(rhs).collect()),
        _ => {}
    }
    let m = b.modifier.as_ref();
    let matching = m.and_then(|m| m.matching.as_ref());
    match m.map(|m| &m.card) {
        Some(VectorMatchCardinality::ManyToOne(include)) => {
            lhs.iter().map(|s| s.add(&strings(include))).collect()
        }
        Some(VectorMatchCardinality::OneToMany(include)) => {
            rhs.iter().map(|s| s.add(&strings(include))).collect()
        }
        _ => lhs
            .iter()
            .map(|s| match matching {
                Some(LabelModifier::Include(on)) => s.keep(&strings(on)),
                Some(LabelModifier::Exclude(ign)) => s.drop(&strings(ign)),
                None => s.clone(),
            })
            .collect(),
    }
}

/// A function's result: `absent` keeps its selector's equality matchers, `label_replace` and
/// `label_join` add their destination, `histogram_quantile` drops `le`, `vector` and `time`
/// carry nothing, the others keep their vector argument's labels.
fn call(c: &parser::Call, series: &dyn Fn(&Selector) -> Shape) -> Vec<Shape> {
    let args = &c.args.args;
    match c.func.name {
        "absent" | "absent_over_time" => {
            let mut sels = Vec::new();
            if let Some(a) = args.first() {
                walk(a, &mut sels);
            }
            let kept: Vec<String> = match sels.as_slice() {
                [one] => selector_of(one)
                    .matchers
                    .into_iter()
                    .filter(|m| m.kind == MatchKind::Eq)
                    .map(|m| m.name)
                    .collect(),
                _ => Vec::new(),
            };
            vec![Shape::of(kept.iter().map(String::as_str))]
        }
        "label_replace" | "label_join" => {
            let dst: Vec<String> = string_arg(args, 1).into_iter().collect();
            let inner = args
                .first()
                .map_or_else(|| vec![Shape::default()], |a| shapes(a, series));
            inner.iter().map(|s| s.add(&dst)).collect()
        }
        "histogram_quantile" => args.get(1).map_or_else(
            || vec![Shape::default()],
            |a| {
                shapes(a, series)
                    .iter()
                    .map(|s| s.drop(&["le".to_string()]))
                    .collect()
            },
        ),
        "vector" | "time" | "scalar" | "pi" => vec![Shape::default()],
        _ => match args.iter().find(|a| !is_scalar(a)) {
            Some(a) => shapes(a, series),
            None => vec![Shape::default()],
        },
    }
}

#[cfg(test)]
mod tests;
