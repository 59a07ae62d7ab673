//! The release files agree with each other and with the binary: the Homebrew formula filled from
//! a checksum file is valid Ruby (`ruby -c`) whose test runs the built-in `smoke`; the release
//! workflow parses and builds, for macOS on `macos-15` and for Linux, exactly the archives the
//! formula names; `cargo package --list` ships what the build reads and no tests, docs or CI;
//! `rehearse --version` says the commit.

use std::path::Path;
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

use super::{checkout, show};

/// The targets `fill-formula.sh` requires a checksum for, from its `for target in …` line.
fn formula_targets() -> Vec<String> {
    let text =
        std::fs::read_to_string(checkout().join("packaging/homebrew/fill-formula.sh")).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("for target in "))
        .expect("a `for target in` line");
    let mut t: Vec<String> = line
        .trim_end_matches("; do")
        .split_whitespace()
        .map(String::from)
        .collect();
    t.sort();
    t
}

/// A checksum file for `version` over every target's archive, in `dir`.
fn checksums(dir: &Path, version: &str, skip: Option<&str>) -> std::path::PathBuf {
    let mut text = String::new();
    for (i, t) in formula_targets().iter().enumerate() {
        if Some(t.as_str()) != skip {
            text.push_str(&format!("{:064x}  rehearse-{version}-{t}.tar.gz\n", i + 1));
        }
    }
    let path = dir.join("SHA256SUMS");
    std::fs::write(&path, text).unwrap();
    path
}

fn fill(sums: &Path, version: &str) -> std::process::Output {
    Command::new(checkout().join("packaging/homebrew/fill-formula.sh"))
        .arg(version)
        .arg(sums)
        .args([
            "https://example.com/o/rehearse/releases/download/v0.1.0",
            "https://example.com/o/rehearse",
        ])
        .output()
        .unwrap()
}

#[test]
fn the_formula_filled_from_a_checksum_file_is_valid_ruby_and_tests_the_smoke_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let out = fill(&checksums(tmp.path(), "0.1.0", None), "0.1.0");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let formula = String::from_utf8(out.stdout).unwrap();
    for (i, t) in formula_targets().iter().enumerate() {
        let url = format!(
            "url \"https://example.com/o/rehearse/releases/download/v0.1.0/rehearse-0.1.0-{t}.tar.gz\""
        );
        let at = formula
            .find(&url)
            .unwrap_or_else(|| panic!("{url}\n{formula}"));
        let sha = format!("sha256 \"{:064x}\"", i + 1);
        assert!(
            formula[at..]
                .lines()
                .nth(1)
                .is_some_and(|l| l.trim() == sha),
            "{t}: its own checksum on the next line\n{formula}"
        );
    }
    assert!(!formula.contains('@'), "a placeholder left:\n{formula}");
    let test_block = formula.split("test do").nth(1).expect("a test block");
    assert!(
        test_block.contains(r#"system bin/"rehearse", "--scenario", "smoke", "--speed", "5""#),
        "{test_block}"
    );
    let rb = tmp.path().join("rehearse.rb");
    std::fs::write(&rb, &formula).unwrap();
    let ruby = Command::new("ruby")
        .arg("-c")
        .arg(&rb)
        .output()
        .expect("ruby is installed (.ci/test installs it)");
    assert_eq!(ruby.status.code(), Some(0), "{}", show(&ruby));
    // A broken formula is caught by the same check (the check can fail).
    std::fs::write(&rb, formula.replacen("end\n", "", 1)).unwrap();
    let ruby = Command::new("ruby").arg("-c").arg(&rb).output().unwrap();
    assert_ne!(ruby.status.code(), Some(0), "{}", show(&ruby));
    // A release missing an archive, or a tag given as the version, is refused.
    let missing = checksums(tmp.path(), "0.1.0", Some("x86_64-apple-darwin"));
    let out = fill(&missing, "0.1.0");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(show(&out).contains("rehearse-0.1.0-x86_64-apple-darwin.tar.gz"));
    let out = fill(&checksums(tmp.path(), "0.1.0", None), "v0.1.0");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
}

#[test]
fn the_release_workflow_builds_every_archive_the_formula_names() {
    let text = std::fs::read_to_string(checkout().join(".github/workflows/release.yml")).unwrap();
    let docs = YamlLoader::load_from_str(&text).expect("release.yml parses");
    let wf = &docs[0];
    let build = &wf["jobs"]["build"];
    let matrix = build["strategy"]["matrix"]["include"]
        .as_vec()
        .expect("a matrix");
    let mut targets: Vec<String> = Vec::new();
    for m in matrix {
        let t = m["target"].as_str().unwrap().to_string();
        let runner = m["runner"].as_str().unwrap();
        if t.ends_with("apple-darwin") {
            assert_eq!(runner, "macos-15", "{t}");
        } else {
            assert!(runner.starts_with("ubuntu-"), "{t}: {runner}");
        }
        targets.push(t);
    }
    targets.sort();
    assert_eq!(targets, formula_targets());
    let steps: Vec<&str> = build["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    let all = steps.join("\n");
    assert!(
        all.contains("cargo build --release --locked --target \"${{ matrix.target }}\""),
        "{all}"
    );
    assert!(all.contains("--scenario smoke --speed 5"), "{all}");
    assert!(
        all.contains("name=\"rehearse-$VERSION-${{ matrix.target }}\""),
        "{all}"
    );
    assert!(matches!(
        build["steps"][3]["env"]["REHEARSE_COMMIT"],
        Yaml::String(_)
    ));
    let release: Vec<&str> = wf["jobs"]["release"]["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    let release = release.join("\n");
    assert!(
        release.contains("sha256sum rehearse-*.tar.gz > SHA256SUMS"),
        "{release}"
    );
    assert!(release.contains("packaging/homebrew/fill-formula.sh \"$version\" dist/SHA256SUMS"));
}

/// Every file the crate's sources embed (`include_str!`, `include_bytes!`, `include_dir!`),
/// outside test code, as a path from the checkout's root.
fn embedded() -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![checkout().join("src")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") || p.file_name().unwrap() == "tests.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            // Test modules come last in a file: only what is above the first one.
            let code = text.split("#[cfg(test)]").next().unwrap();
            for mac in ["include_str!(", "include_bytes!(", "include_dir!("] {
                for part in code.split(mac).skip(1) {
                    let arg = part.split(')').next().unwrap().trim();
                    let Some(lit) = arg.strip_prefix('"').and_then(|a| a.split('"').next()) else {
                        continue;
                    };
                    let path = match lit.strip_prefix("$CARGO_MANIFEST_DIR/") {
                        Some(rel) => checkout().join(rel),
                        None => p.parent().unwrap().join(lit),
                    };
                    let path = path.canonicalize().unwrap_or_else(|e| panic!("{lit}: {e}"));
                    let rel = path
                        .strip_prefix(checkout().canonicalize().unwrap())
                        .unwrap();
                    out.push(rel.display().to_string());
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_package_ships_what_the_build_reads_and_nothing_of_the_tests_docs_or_ci() {
    let out = Command::new(env!("CARGO"))
        .current_dir(checkout())
        .args(["package", "--list", "--locked", "--allow-dirty"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let list = String::from_utf8(out.stdout).unwrap();
    let files: Vec<&str> = list.lines().collect();
    let has = |f: &str| files.contains(&f);
    for f in [
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
        "README.md",
        "src/main.rs",
        "src/lib.rs",
    ] {
        assert!(has(f), "{f} missing from the package");
    }
    let embedded = embedded();
    assert!(embedded.len() > 10, "{embedded:?}");
    for e in &embedded {
        if checkout().join(e).is_dir() {
            // A directory the binary embeds: its scenario material at least.
            assert!(
                files.iter().any(|f| f.starts_with(&format!("{e}/"))),
                "nothing of {e}/ in the package"
            );
        } else {
            assert!(has(e), "{e} is embedded but not packaged");
        }
    }
    for name in super::fixture_names() {
        assert!(
            has(&format!("fixtures/scenarios/{name}.toml"))
                || has(&format!("fixtures/catalogue/{name}.toml")),
            "{name}"
        );
    }
    for f in &files {
        for not in [
            "tests/",
            "benches/",
            "examples/",
            ".ci/",
            ".github/",
            "reports/",
            "launchd/",
            "packaging/",
            "fixtures/reports/",
            "fixtures/metrics/",
        ] {
            assert!(!f.starts_with(not), "{f} is shipped");
        }
        assert!(
            !f.starts_with("docs/") || *f == "docs/alerts.md",
            "{f} is shipped"
        );
    }
}

#[test]
fn version_says_the_commit_it_was_built_from() {
    let out = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let v = String::from_utf8(out.stdout).unwrap();
    let commit = v
        .trim()
        .strip_prefix(&format!("rehearse {} (commit ", env!("CARGO_PKG_VERSION")))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{v}"));
    let head = Command::new("git")
        .current_dir(checkout())
        .args(["rev-parse", "HEAD"])
        .output()
        .expect("git is installed where the tests run");
    assert!(head.status.success(), "{}", show(&head));
    let head = String::from_utf8(head.stdout).unwrap();
    assert_eq!(commit, &head.trim()[..12], "{v}");
    // Every subcommand says the same.
    let sub = Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["gateway", "--version"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&sub.stdout).contains(commit));
}
