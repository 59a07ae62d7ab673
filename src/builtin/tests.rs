use super::*;

#[test]
fn the_tree_holds_every_scenario_and_what_they_refer_to() {
    let names = names();
    assert!(names.contains(&"smoke") && names.contains(&"weekly"), "{names:?}");
    let on_disk: usize = GROUPS
        .iter()
        .map(|g| {
            let dir = format!("{}/fixtures/{g}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read_dir(dir)
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .path()
                        .extension()
                        .is_some_and(|x| x == "toml")
                })
                .count()
        })
        .sum();
    assert_eq!(names.len(), on_disk, "every fixture scenario is built in");
    // Only scenario material: no generator script, no README.
    for f in files() {
        let ext = Path::new(f.rel).extension().unwrap().to_str().unwrap();
        assert!(["toml", "jsonl", "yml", "json5"].contains(&ext), "{}", f.rel);
    }
    assert!(files().iter().any(|f| f.rel == "rules/breaker-fast.yml"));
    assert!(files().iter().any(|f| f.rel == "openclaw/user-fallback.json5"));
}

#[test]
fn the_catalogue_is_built_in_as_a_group_of_its_own_with_names_unique_across_groups() {
    let all = names();
    let mut unique = all.clone();
    unique.dedup();
    assert_eq!(all, unique, "a name in two groups would find one file only");
    let catalogue: Vec<_> = all.iter().filter(|n| group(n) == Some("catalogue")).collect();
    assert!(catalogue.len() >= 15, "{catalogue:?}");
    assert_eq!(group("smoke"), Some("scenarios"));
    assert_eq!(scenario_rel("silence"), Some("catalogue/silence.toml"));
    assert_eq!(
        shown_under(
            Path::new("/cache/builtin-0.1.0-abc"),
            Path::new("/cache/builtin-0.1.0-abc/catalogue/silence.toml")
        )
        .as_deref(),
        Some("builtin:silence.toml")
    );
    // Gateway-neutral: no catalogue case names its system under test.
    for n in catalogue {
        let text = scenario_text(n).unwrap();
        assert!(!text.contains("\n[target]"), "{n} names a [target]");
    }
}

#[test]
fn every_builtin_validates_from_its_extracted_copy() {
    let dir = tempfile::tempdir().unwrap();
    extract::write_tree(dir.path()).unwrap();
    for name in names() {
        let path = dir.path().join(scenario_rel(name).unwrap());
        let checked = crate::scenario::validate::check(&path)
            .unwrap_or_else(|e| panic!("built-in {name}: {e}"));
        assert!(
            checked.traffic_path.starts_with(dir.path()),
            "{name}: its traffic is extracted beside it: {}",
            checked.traffic_path.display()
        );
    }
}

#[test]
fn a_changed_or_missing_copy_is_rewritten_and_nothing_else_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    extract::write_tree(dir.path()).unwrap();
    let smoke = dir.path().join("scenarios/smoke.toml");
    let traffic = dir.path().join("traffic/smoke.jsonl");
    let mine = dir.path().join("scenarios/not-ours.txt");
    std::fs::write(&smoke, "edited").unwrap();
    std::fs::remove_file(&traffic).unwrap();
    std::fs::write(&mine, "x").unwrap();
    extract::write_tree(dir.path()).unwrap();
    assert_eq!(
        std::fs::read_to_string(&smoke).unwrap(),
        scenario_text("smoke").unwrap()
    );
    assert!(traffic.is_file());
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "x");
}

#[test]
fn the_directory_is_named_after_the_version_and_the_trees_hash() {
    let name = dir_name();
    assert!(
        name.starts_with(&format!("builtin-{}-", env!("CARGO_PKG_VERSION"))),
        "{name}"
    );
    assert_eq!(tree_hash().len(), 12);
    assert!(tree_hash().chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(root_in(Path::new("/c")), Path::new("/c").join(name));
}

#[test]
fn a_file_under_the_root_is_shown_as_builtin() {
    let root = Path::new("/cache/builtin-0.1.0-abc");
    let shown = |p: &str| shown_under(root, Path::new(p));
    assert_eq!(
        shown("/cache/builtin-0.1.0-abc/scenarios/smoke.toml").as_deref(),
        Some("builtin:smoke.toml")
    );
    assert_eq!(
        shown("/cache/builtin-0.1.0-abc/scenarios/../traffic/smoke.jsonl").as_deref(),
        Some("builtin:traffic/smoke.jsonl")
    );
    assert_eq!(shown("/cache/builtin-0.1.0-abc/../x.toml"), None);
    assert_eq!(shown("/home/me/scenarios/smoke.toml"), None);
}

#[test]
fn an_error_in_a_builtin_names_it_with_line_and_column() {
    // The extraction this process uses (the cache root of the environment): what `--scenario
    // smoke` reads.
    let root = extract().unwrap();
    let path = root.join("scenarios/smoke.toml");
    let text = scenario_text("smoke")
        .unwrap()
        .replacen("seed = ", "seed_typo = 1\nseed = ", 1);
    let err = crate::scenario::ScenarioFile::parse(&text, &shown(&path))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("builtin:smoke.toml:"), "{err}");
    let (line, col) = err["builtin:smoke.toml:".len()..]
        .split_once(':')
        .and_then(|(l, rest)| Some((l.parse::<usize>().ok()?, rest.split(':').next()?)))
        .unwrap_or_else(|| panic!("no LINE:COL in {err}"));
    assert!(line > 1 && col.parse::<usize>().is_ok(), "{err}");
    // A semantic error, located after the check.
    let bad = scenario_text("smoke").unwrap().replacen("seed = ", "seed = 1\n#", 1);
    let file = crate::scenario::ScenarioFile::parse(&bad, &shown(&path)).unwrap();
    let mut file = file;
    file.name = " ".into();
    let err = crate::scenario::validate::check_file(&path, &bad, file)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("builtin:smoke.toml:1:"), "{err}");
}

#[test]
fn the_shared_temp_fallback_is_used_only_when_it_is_our_own_directory() {
    let dir = tempfile::tempdir().unwrap();
    let absent = dir.path().join("rehearse-cache-0");
    assert_eq!(extract::owned_or_absent(&absent), Ok(()));
    std::fs::create_dir(&absent).unwrap();
    assert_eq!(extract::owned_or_absent(&absent), Ok(()));
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    assert!(extract::owned_or_absent(&file).is_err());
    #[cfg(unix)]
    {
        let link = dir.path().join("a-link");
        std::os::unix::fs::symlink(&absent, &link).unwrap();
        let err = extract::owned_or_absent(&link).unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
    }
}
