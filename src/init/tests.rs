use super::*;

fn write(starter: &Starter, dir: &Path) {
    for (rel, text) in starter.files() {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

#[test]
fn every_starter_validates_as_written() {
    for g in [InitGateway::Http, InitGateway::Openclaw] {
        let s = starter(g).unwrap();
        let dir = tempfile::tempdir().unwrap();
        write(&s, dir.path());
        let path = dir.path().join(format!("scenarios/{}.toml", s.name));
        let checked = crate::scenario::validate::check(&path)
            .unwrap_or_else(|e| panic!("{g:?}: {e}"));
        assert_eq!(checked.file.name, s.name, "the file stem is the name");
        assert!(!checked.traffic.is_empty());
        assert_eq!(s.readme().lines().count(), 4, "{}", s.readme());
        assert!(s.readme().contains(&s.schedule_command()));
    }
}

#[test]
fn the_openclaw_starter_is_the_builtin_it_comes_from_under_its_own_name() {
    let s = starter(InitGateway::Openclaw).unwrap();
    let builtin = crate::builtin::scenario_text(OPENCLAW_FROM).unwrap();
    let ours = crate::scenario::ScenarioFile::parse(&s.scenario, "starter").unwrap();
    let theirs = crate::scenario::ScenarioFile::parse(builtin, "builtin").unwrap();
    let mut a = serde_json::to_value(&ours).unwrap();
    let mut b = serde_json::to_value(&theirs).unwrap();
    assert_eq!(a["name"], OPENCLAW_NAME);
    assert_eq!(a["traffic"], format!("../traffic/{OPENCLAW_NAME}.jsonl"));
    for v in [&mut a, &mut b] {
        v["name"] = "x".into();
        v["traffic"] = "x".into();
    }
    assert_eq!(a, b);
}

#[test]
fn an_existing_file_is_named_and_nothing_is_written() {
    let s = starter(InitGateway::Http).unwrap();
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(first_existing(dir.path(), &s.files()), None);
    std::fs::write(dir.path().join("README.md"), "mine").unwrap();
    assert_eq!(
        first_existing(dir.path(), &s.files()),
        Some(dir.path().join("README.md"))
    );
    let err = command(InitArgs {
        dir: dir.path().into(),
        gateway: InitGateway::Http,
    })
    .unwrap_err();
    assert_eq!(err.code, 2);
    assert!(format!("{:#}", err.error).contains("README.md already exists"));
    assert_eq!(std::fs::read_to_string(dir.path().join("README.md")).unwrap(), "mine");
    assert!(!dir.path().join("scenarios").exists(), "nothing else written");
    assert!(write_new(&dir.path().join("README.md"), "x").is_err());
}

#[test]
fn a_dir_that_is_a_file_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x");
    std::fs::write(&file, "mine").unwrap();
    let err = command(InitArgs {
        dir: file.clone(),
        gateway: InitGateway::Http,
    })
    .unwrap_err();
    assert_eq!(err.code, 2);
    assert!(format!("{:#}", err.error).contains("is not a directory"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}
