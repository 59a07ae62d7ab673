use super::*;

#[test]
fn node_versions_follow_openclaws_engines_range() {
    for ok in ["24.16.0", "24.22.3", "26.1.0", "27.0.0"] {
        assert!(node_supported(ok), "{ok}");
    }
    for bad in [
        "24.15.9", "22.12.0", "20.20.2", "25.2.0", "26.0.5", "garbage", "24.16",
    ] {
        assert!(!node_supported(bad), "{bad}");
    }
    assert_eq!(parse_version("24.22.3-pre"), Some((24, 22, 3)));
}

#[test]
fn the_banner_gives_the_version() {
    assert_eq!(
        version_from_banner("OpenClaw 2026.9.6 (eb377ac)\n").as_deref(),
        Some("2026.9.6")
    );
    assert_eq!(version_from_banner("something else"), None);
}

#[test]
fn nothing_found_says_how_to_install() {
    let empty = tempfile::tempdir().unwrap();
    let err = Install::find_in(None, None, Some(empty.path().into())).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, InstallError::NotFound { .. }), "{msg}");
    assert!(msg.contains("scripts/install-openclaw.sh"), "{msg}");
    assert!(msg.contains("REHEARSE_OPENCLAW"), "{msg}");
    let err = Install::find_in(Some(Path::new("/nonexistent/openclaw")), None, None);
    let msg = err.unwrap_err().to_string();
    assert!(
        msg.contains("/nonexistent/openclaw is not an executable"),
        "{msg}"
    );
    assert!(msg.contains("scripts/install-openclaw.sh"), "{msg}");
}

/// A directory holding a fake `openclaw` and a `node` that prints `version`.
fn fake_install(version: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in [
        (
            "openclaw",
            "#!/bin/sh\necho 'OpenClaw 2026.9.6 (test)'\n".to_string(),
        ),
        ("node", format!("#!/bin/sh\necho v{version}\n")),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

#[test]
fn the_node_beside_the_executable_is_used_and_checked() {
    let dir = fake_install("24.22.3");
    let exe = dir.path().join("openclaw");
    let found = Install::find_in(None, Some(exe.clone().into()), None).unwrap();
    assert_eq!(found.openclaw, exe);
    assert_eq!(found.node, dir.path().join("node"));
    assert_eq!(found.node_version, "24.22.3");
    assert_eq!(found.openclaw_version, "2026.9.6", "from --version");
    // On PATH only.
    let found = Install::find_in(None, None, Some(dir.path().into())).unwrap();
    assert_eq!(found.openclaw, exe);
    let old = fake_install("22.12.0");
    let err = Install::find_in(Some(&old.path().join("openclaw")), None, None).unwrap_err();
    assert!(
        matches!(&err, InstallError::NodeTooOld { version, .. } if version == "22.12.0"),
        "{err}"
    );
    assert!(err.to_string().contains(">=24.16.0"));
}

#[test]
fn the_pinned_install_in_the_cache_is_looked_at_last() {
    let dir = fake_install("24.22.3");
    let exe = dir.path().join("openclaw");
    let empty = tempfile::tempdir().unwrap();
    let path = Some(empty.path().into());
    let found = Install::find_or_cached(None, None, path.clone(), Some(exe.clone())).unwrap();
    assert_eq!(found.openclaw, exe);
    // PATH first.
    let other = fake_install("24.22.3");
    let found =
        Install::find_or_cached(None, None, Some(other.path().into()), Some(exe.clone())).unwrap();
    assert_eq!(found.openclaw, other.path().join("openclaw"));
    // Not installed there: named among the places looked at, and how to install it.
    let missing = empty.path().join("openclaw-2026.9.6/node_modules/.bin/openclaw");
    let err = Install::find_or_cached(None, None, path, Some(missing.clone())).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains(&missing.display().to_string()), "{msg}");
    assert!(msg.contains("`rehearse gateway install openclaw`"), "{msg}");
    let pins = crate::util::pins::pins().unwrap();
    assert!(msg.contains(&format!("OpenClaw {} and Node {}", pins.openclaw, pins.node)), "{msg}");
    assert_eq!(
        cached_executable(Path::new("/c"), "2026.9.2"),
        Path::new("/c/openclaw-2026.9.2/node_modules/.bin/openclaw")
    );
}

#[test]
fn a_version_is_found_in_its_cache_dir_or_its_variable_and_must_be_that_version() {
    assert_eq!(version_env_var("2026.9.2"), "REHEARSE_OPENCLAW_2026_9_2");
    assert_eq!(
        version_env_var("2026.9.1-beta.1"),
        "REHEARSE_OPENCLAW_2026_9_1_BETA_1"
    );
    let cache = tempfile::tempdir().unwrap();
    // Missing: exit-2 material naming the exact install command and where it looked.
    let err = Install::find_version_in("2026.9.2", None, Some(cache.path().into()), None)
        .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, InstallError::VersionNotInstalled { .. }), "{msg}");
    assert!(msg.contains("`scripts/install-openclaw.sh 2026.9.2`"), "{msg}");
    assert!(msg.contains("$REHEARSE_OPENCLAW_2026_9_2 (unset)"), "{msg}");
    assert!(msg.contains("openclaw-2026.9.2/node_modules/.bin/openclaw"), "{msg}");
    // The install script's layout: CACHE/openclaw-VERSION/node_modules/.bin/{openclaw,node}.
    let fake = fake_install("24.22.3");
    let bin = cache.path().join("openclaw-2026.9.6/node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    for f in ["openclaw", "node"] {
        std::fs::copy(fake.path().join(f), bin.join(f)).unwrap();
    }
    let found =
        Install::find_version_in("2026.9.6", None, Some(cache.path().into()), None).unwrap();
    assert_eq!(found.openclaw, bin.join("openclaw"));
    assert_eq!(found.openclaw_version, "2026.9.6");
    // The variable wins over the cache; an install of another version is refused.
    let err = Install::find_version_in(
        "2026.9.2",
        Some(bin.join("openclaw").into()),
        Some(cache.path().into()),
        None,
    )
    .unwrap_err();
    assert!(
        matches!(&err, InstallError::WrongVersion { found, .. } if found == "2026.9.6"),
        "{err}"
    );
    assert!(err.to_string().contains("scripts/install-openclaw.sh 2026.9.2"));
    // The cache root as the install script computes it.
    let root = |a: Option<&str>, b: Option<&str>, c: Option<&str>| {
        crate::util::cache::root_from(a.map(Into::into), b.map(Into::into), c.map(Into::into))
    };
    assert_eq!(root(Some("/c"), Some("/x"), Some("/h")), Some("/c".into()));
    assert_eq!(root(None, Some("/x"), Some("/h")), Some("/x/rehearse".into()));
    assert_eq!(root(Some(""), None, Some("/h")), Some("/h/.cache/rehearse".into()));
    assert_eq!(root(None, None, None), None);
}
