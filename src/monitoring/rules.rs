//! Reading a Prometheus rule file (`groups: [{name, rules: [{alert|record, expr, for, labels,
//! annotations}]}]`): its alerting rules and their names. Only what the harness needs is read;
//! `promtool check rules` remains the judge of a file's validity (PromQL included).

use std::collections::BTreeMap;

use yaml_rust2::{Yaml, YamlLoader};

/// Why a rule file could not be read. The position is 1-based `line:column` in the file, so a
/// caller prints `FILE:{error}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    /// Not YAML.
    #[error("{line}:{col}: not valid YAML: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// The parser's message.
        message: String,
    },
    /// YAML, but not shaped like a Prometheus rule file.
    #[error("{path}: {message} (a rule file is `groups: [{{name, rules: [{{alert, expr, ...}}]}}]`)")]
    Shape {
        /// Where, as `groups[0].rules[2].alert`.
        path: String,
        /// What is wrong there.
        message: String,
    },
}

/// One alerting rule of a rule file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertRule {
    /// The group's name.
    pub group: String,
    /// The alert's name.
    pub alert: String,
    /// Its PromQL expression.
    pub expr: String,
    /// Its `for:` as written (`None` when absent: fires at the first evaluation).
    pub for_: Option<String>,
    /// Its labels (`severity`, ...).
    pub labels: BTreeMap<String, String>,
    /// Its annotations (`summary`, `description`, `runbook_url`, ...).
    pub annotations: BTreeMap<String, String>,
}

/// The alert names of a rule file, in file order, each once (recording rules are skipped).
pub fn alert_names(rules_yaml: &str) -> Result<Vec<String>, RulesError> {
    let mut names: Vec<String> = Vec::new();
    for rule in alert_rules(rules_yaml)? {
        if !names.contains(&rule.alert) {
            names.push(rule.alert);
        }
    }
    Ok(names)
}

/// One recording rule of a rule file: the series it records and the expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordRule {
    /// The recorded series' name.
    pub record: String,
    /// Its PromQL expression.
    pub expr: String,
}

/// Every alerting rule of a rule file, in file order (recording rules are skipped). An empty
/// file has none.
pub fn alert_rules(rules_yaml: &str) -> Result<Vec<AlertRule>, RulesError> {
    read_rules(rules_yaml).map(|(alerts, _)| alerts)
}

/// Every recording rule of a rule file, in file order.
pub fn record_rules(rules_yaml: &str) -> Result<Vec<RecordRule>, RulesError> {
    read_rules(rules_yaml).map(|(_, records)| records)
}

/// The rule file's YAML document, `None` when it is empty.
fn document(rules_yaml: &str) -> Result<Option<Yaml>, RulesError> {
    let docs = YamlLoader::load_from_str(rules_yaml).map_err(|e| RulesError::Syntax {
        line: e.marker().line(),
        col: e.marker().col() + 1,
        message: e.info().to_string(),
    })?;
    Ok(docs.into_iter().next())
}

/// The file with every alerting rule in a group of its own (`GROUP/ALERT`, keeping the group's
/// `interval` and `limit`); recording rules stay in their group, in order. Prometheus counts
/// evaluations and failures per group (`prometheus_rule_evaluations_total{rule_group}`), so
/// this is what lets the harness read them per rule. Also returns, per alerting rule in file
/// order, the name of the group it now has.
pub fn one_group_per_alert(rules_yaml: &str) -> Result<(String, Vec<String>), RulesError> {
    // Checked first, with the paths of its errors.
    read_rules(rules_yaml)?;
    let Some(doc) = document(rules_yaml)? else {
        return Ok((String::new(), Vec::new()));
    };
    let key = |k: &str| Yaml::String(k.to_string());
    let mut root = doc.as_hash().cloned().unwrap_or_default();
    let groups = match root.get(&key("groups")) {
        Some(Yaml::Array(g)) => g.clone(),
        _ => Vec::new(),
    };
    let mut taken: std::collections::BTreeSet<String> = groups
        .iter()
        .filter_map(|g| g["name"].as_str().map(String::from))
        .collect();
    let mut out = Vec::new();
    let mut names = Vec::new();
    for g in &groups {
        let Some(group) = g.as_hash() else { continue };
        let name = scalar(&g["name"]).ok().flatten().unwrap_or_default();
        let rules = g["rules"].as_vec().cloned().unwrap_or_default();
        let (alerts, records): (Vec<Yaml>, Vec<Yaml>) = rules
            .into_iter()
            .partition(|r| !matches!(r["alert"], Yaml::BadValue | Yaml::Null));
        if !records.is_empty() || alerts.is_empty() {
            let mut kept = group.clone();
            kept.insert(key("rules"), Yaml::Array(records));
            out.push(Yaml::Hash(kept));
        }
        for a in alerts {
            let alert = scalar(&a["alert"]).ok().flatten().unwrap_or_default();
            let base = format!("{name}/{alert}");
            let mut own = base.clone();
            let mut n = 2;
            while !taken.insert(own.clone()) {
                own = format!("{base}/{n}");
                n += 1;
            }
            let mut single = group.clone();
            single.insert(key("name"), Yaml::String(own.clone()));
            single.insert(key("rules"), Yaml::Array(vec![a]));
            out.push(Yaml::Hash(single));
            names.push(own);
        }
    }
    root.insert(key("groups"), Yaml::Array(out));
    let mut text = String::new();
    let mut emitter = yaml_rust2::YamlEmitter::new(&mut text);
    emitter.multiline_strings(true);
    emitter
        .dump(&Yaml::Hash(root))
        .map_err(|e| RulesError::Shape {
            path: "(top level)".into(),
            message: format!("cannot be written back: {e:?}"),
        })?;
    text.push('\n');
    Ok((text, names))
}

/// The alerting and the recording rules of a rule file, each in file order.
fn read_rules(rules_yaml: &str) -> Result<(Vec<AlertRule>, Vec<RecordRule>), RulesError> {
    let Some(doc) = document(rules_yaml)? else {
        return Ok((Vec::new(), Vec::new()));
    };
    let shape = |path: &str, message: &str| RulesError::Shape {
        path: path.to_string(),
        message: message.to_string(),
    };
    let root = doc
        .as_hash()
        .ok_or_else(|| shape("(top level)", "expected a mapping with `groups`"))?;
    let groups = match root.get(&Yaml::String("groups".into())) {
        None | Some(Yaml::Null) => return Ok((Vec::new(), Vec::new())),
        Some(Yaml::Array(groups)) => groups,
        Some(_) => return Err(shape("groups", "expected a list of groups")),
    };
    let mut out = Vec::new();
    let mut records = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        let gpath = format!("groups[{g}]");
        let name = text(group, "name", &gpath)?
            .ok_or_else(|| shape(&gpath, "a group needs a `name`"))?;
        let rules = match group["rules"] {
            Yaml::Array(ref rules) => rules.as_slice(),
            Yaml::Null | Yaml::BadValue => &[],
            _ => return Err(shape(&format!("{gpath}.rules"), "expected a list of rules")),
        };
        for (r, rule) in rules.iter().enumerate() {
            let rpath = format!("{gpath}.rules[{r}]");
            if rule.as_hash().is_none() {
                return Err(shape(&rpath, "expected a mapping"));
            }
            let Some(alert) = text(rule, "alert", &rpath)? else {
                let Some(record) = text(rule, "record", &rpath)? else {
                    return Err(shape(&rpath, "a rule needs `alert` or `record`"));
                };
                records.push(RecordRule {
                    record,
                    expr: text(rule, "expr", &rpath)?
                        .ok_or_else(|| shape(&rpath, "a recording rule needs an `expr`"))?,
                });
                continue;
            };
            out.push(AlertRule {
                group: name.clone(),
                alert,
                expr: text(rule, "expr", &rpath)?
                    .ok_or_else(|| shape(&rpath, "an alerting rule needs an `expr`"))?,
                for_: text(rule, "for", &rpath)?,
                labels: map(rule, "labels", &rpath)?,
                annotations: map(rule, "annotations", &rpath)?,
            });
        }
    }
    Ok((out, records))
}

/// A scalar as text (numbers and booleans as written); `None` for null.
fn scalar(value: &Yaml) -> Result<Option<String>, ()> {
    match value {
        Yaml::Null | Yaml::BadValue => Ok(None),
        Yaml::String(s) | Yaml::Real(s) => Ok(Some(s.clone())),
        Yaml::Integer(i) => Ok(Some(i.to_string())),
        Yaml::Boolean(b) => Ok(Some(b.to_string())),
        _ => Err(()),
    }
}

/// A scalar field as text, `None` when absent.
fn text(node: &Yaml, key: &str, path: &str) -> Result<Option<String>, RulesError> {
    scalar(&node[key]).map_err(|()| RulesError::Shape {
        path: format!("{path}.{key}"),
        message: "expected a string".into(),
    })
}

/// A string-to-string mapping field, empty when absent.
fn map(node: &Yaml, key: &str, path: &str) -> Result<BTreeMap<String, String>, RulesError> {
    let path = format!("{path}.{key}");
    let shape = |path: String, message: &str| RulesError::Shape {
        path,
        message: message.into(),
    };
    let hash = match &node[key] {
        Yaml::Null | Yaml::BadValue => return Ok(BTreeMap::new()),
        Yaml::Hash(h) => h,
        _ => return Err(shape(path, "expected a mapping")),
    };
    let mut out = BTreeMap::new();
    for (k, v) in hash {
        let Some(k) = k.as_str() else {
            return Err(shape(path, "expected string keys"));
        };
        let value = scalar(v).map_err(|()| shape(format!("{path}.{k}"), "expected a string"))?;
        out.insert(k.to_string(), value.unwrap_or_default());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
groups:
  - name: a
    rules:
      - record: job:up:sum
        expr: sum(up)
      - alert: Down
        expr: up == 0
        for: 1m
        labels: {severity: critical, tier: 1}
        annotations:
          summary: \"{{ $labels.instance }} down\"
  - name: b
    rules:
      - alert: Down
        expr: absent(up)
      - alert: Other
        expr: vector(1)
";

    #[test]
    fn alert_names_in_order_once_records_skipped() {
        assert_eq!(alert_names(FILE).unwrap(), ["Down", "Other"]);
        let rules = alert_rules(FILE).unwrap();
        assert_eq!(rules.len(), 3);
        assert_eq!(rules[0].group, "a");
        assert_eq!(rules[0].for_.as_deref(), Some("1m"));
        assert_eq!(rules[0].labels["tier"], "1");
        assert_eq!(rules[0].annotations["summary"], "{{ $labels.instance }} down");
        assert_eq!(rules[1].group, "b");
        assert_eq!(rules[1].for_, None);
    }

    #[test]
    fn recording_rules_are_read_and_every_alert_gets_a_group_of_its_own() {
        assert_eq!(
            record_rules(FILE).unwrap(),
            vec![RecordRule {
                record: "job:up:sum".into(),
                expr: "sum(up)".into()
            }]
        );
        let (copy, groups) = one_group_per_alert(FILE).unwrap();
        assert_eq!(groups, ["a/Down", "b/Down", "b/Other"]);
        // The same rules, read back: the alerts in their own groups, the record left in `a`.
        let again = alert_rules(&copy).unwrap();
        let mut before = alert_rules(FILE).unwrap();
        for (r, g) in before.iter_mut().zip(&groups) {
            r.group = g.clone();
        }
        assert_eq!(again, before);
        assert_eq!(record_rules(&copy).unwrap(), record_rules(FILE).unwrap());
        // A group keeps its interval; a taken name gets a number.
        let (copy, groups) = one_group_per_alert(
            "groups:\n  - name: g\n    interval: 30s\n    rules:\n      - alert: X\n        expr: up\n      - alert: X\n        expr: up == 0\n  - name: g/X\n    rules: []\n",
        )
        .unwrap();
        assert_eq!(groups, ["g/X/2", "g/X/3"]);
        assert!(copy.contains("interval: 30s"), "{copy}");
        let shipped = one_group_per_alert(&crate::monitoring::rehearsal_rules()).unwrap();
        assert_eq!(
            alert_names(&shipped.0).unwrap(),
            crate::monitoring::rehearsal_alert_names()
        );
    }

    #[test]
    fn empty_files_have_no_alerts() {
        assert_eq!(alert_names("").unwrap(), Vec::<String>::new());
        assert_eq!(alert_names("groups:\n").unwrap(), Vec::<String>::new());
        assert_eq!(alert_names("groups: []\n").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn bad_yaml_is_reported_at_its_line_and_column() {
        let e = alert_names("groups:\n  - name: a\n    rules: [\n").unwrap_err();
        let RulesError::Syntax { line, .. } = e else {
            panic!("{e:?}")
        };
        assert!(line >= 3, "{e}");
        let e = alert_names("groups:\n\t- name: a\n").unwrap_err().to_string();
        assert!(e.starts_with("2:"), "{e}");
    }

    #[test]
    fn a_misshapen_file_names_the_place() {
        let cases = [
            ("- a\n", "(top level)"),
            ("groups: 3\n", "groups: expected a list"),
            ("groups:\n  - rules: []\n", "groups[0]: a group needs a `name`"),
            (
                "groups:\n  - name: a\n    rules:\n      - expr: up\n",
                "groups[0].rules[0]: a rule needs `alert` or `record`",
            ),
            (
                "groups:\n  - name: a\n    rules:\n      - alert: X\n",
                "groups[0].rules[0]: an alerting rule needs an `expr`",
            ),
            (
                "groups:\n  - name: a\n    rules:\n      - alert: [X]\n        expr: up\n",
                "groups[0].rules[0].alert: expected a string",
            ),
            (
                "groups:\n  - name: a\n    rules:\n      - alert: X\n        expr: up\n        labels: [a]\n",
                "groups[0].rules[0].labels: expected a mapping",
            ),
        ];
        for (input, want) in cases {
            let e = alert_names(input).unwrap_err().to_string();
            assert!(e.starts_with(want), "{input:?}: {e}");
        }
    }
}
