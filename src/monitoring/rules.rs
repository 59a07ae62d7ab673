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

/// Every alerting rule of a rule file, in file order (recording rules are skipped). An empty
/// file has none.
pub fn alert_rules(rules_yaml: &str) -> Result<Vec<AlertRule>, RulesError> {
    let docs = YamlLoader::load_from_str(rules_yaml).map_err(|e| RulesError::Syntax {
        line: e.marker().line(),
        col: e.marker().col() + 1,
        message: e.info().to_string(),
    })?;
    let Some(doc) = docs.first() else {
        return Ok(Vec::new());
    };
    let shape = |path: &str, message: &str| RulesError::Shape {
        path: path.to_string(),
        message: message.to_string(),
    };
    let root = doc
        .as_hash()
        .ok_or_else(|| shape("(top level)", "expected a mapping with `groups`"))?;
    let groups = match root.get(&Yaml::String("groups".into())) {
        None | Some(Yaml::Null) => return Ok(Vec::new()),
        Some(Yaml::Array(groups)) => groups,
        Some(_) => return Err(shape("groups", "expected a list of groups")),
    };
    let mut out = Vec::new();
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
                if text(rule, "record", &rpath)?.is_none() {
                    return Err(shape(&rpath, "a rule needs `alert` or `record`"));
                }
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
    Ok(out)
}

/// A scalar field as text (numbers and booleans as written), `None` when absent.
fn text(node: &Yaml, key: &str, path: &str) -> Result<Option<String>, RulesError> {
    match &node[key] {
        Yaml::Null | Yaml::BadValue => Ok(None),
        Yaml::String(s) | Yaml::Real(s) => Ok(Some(s.clone())),
        Yaml::Integer(i) => Ok(Some(i.to_string())),
        Yaml::Boolean(b) => Ok(Some(b.to_string())),
        _ => Err(RulesError::Shape {
            path: format!("{path}.{key}"),
            message: "expected a string".into(),
        }),
    }
}

/// A string-to-string mapping field, empty when absent.
fn map(node: &Yaml, key: &str, path: &str) -> Result<BTreeMap<String, String>, RulesError> {
    let path = format!("{path}.{key}");
    let hash = match &node[key] {
        Yaml::Null | Yaml::BadValue => return Ok(BTreeMap::new()),
        Yaml::Hash(h) => h,
        _ => {
            return Err(RulesError::Shape {
                path,
                message: "expected a mapping".into(),
            });
        }
    };
    let mut out = BTreeMap::new();
    for (k, v) in hash {
        let Some(k) = k.as_str() else {
            return Err(RulesError::Shape {
                path,
                message: "expected string keys".into(),
            });
        };
        let holder = Yaml::Hash([(Yaml::String(k.into()), v.clone())].into_iter().collect());
        let value = text(&holder, k, &path)?.unwrap_or_default();
        out.insert(k.to_string(), value);
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
