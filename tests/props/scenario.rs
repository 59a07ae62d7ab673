//! Scenario TOML (`ScenarioFile::parse` + `validate::check_file`): no panic on any text, syntax
//! errors located inside the input, and a parsed scenario written back as TOML reads the same.

use std::path::PathBuf;

use proptest::prelude::*;
use rehearse::scenario::validate::check_file;
use rehearse::scenario::{ScenarioError, ScenarioFile};

use super::common::{apply, assert_inside, config, edits, fixture, noise};

const FIXTURES: &[&str] = &[
    "budget-idempotency",
    "crm-search-503-storm",
    "retry-after-429",
    "smoke",
    "stream-resets",
    "timeout-storm",
    "websocket-ping",
    "weekly",
];

fn path_of(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/fixtures/scenarios/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
}

/// Parses `text`; a syntax error must point inside it.
fn parse_located(text: &str) -> Option<ScenarioFile> {
    match ScenarioFile::parse(text, "s.toml") {
        Ok(f) => Some(f),
        Err(ScenarioError::Syntax { line, col, .. }) => {
            assert_inside(text, line, col, "scenario syntax error");
            None
        }
        Err(e) => panic!("parse returned a non-syntax error: {e}"),
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn noise_never_panics_and_errors_are_located(text in noise()) {
        parse_located(&text);
    }

    #[test]
    fn mutated_fixtures_fail_located_or_validate_without_panic(
        which in prop::sample::select(FIXTURES),
        edits in edits(),
    ) {
        let text = apply(&fixture(&format!("fixtures/scenarios/{which}.toml")), &edits);
        if let Some(file) = parse_located(&text) {
            // Semantic checks (traffic file included) must answer, never panic.
            let _ = check_file(&path_of(which), &text, file);
        }
    }

    #[test]
    fn a_parsed_scenario_written_back_reads_the_same(
        which in prop::sample::select(FIXTURES),
        edits in edits(),
    ) {
        let text = apply(&fixture(&format!("fixtures/scenarios/{which}.toml")), &edits);
        if let Some(file) = parse_located(&text) {
            let written = toml::to_string(&file).expect("a parsed scenario serialises");
            let again = ScenarioFile::parse(&written, "written.toml")
                .unwrap_or_else(|e| panic!("{e}\n--- written ---\n{written}"));
            prop_assert_eq!(
                serde_json::to_value(&file).unwrap(),
                serde_json::to_value(&again).unwrap()
            );
        }
    }
}
