//! `rehearse gateway install|list|remove` against `scripts/install-*.sh`: with a recording npm and
//! python3 in place of the real ones, the binary and the scripts install the same packages at the
//! same pinned versions (one `scripts/pins.env`, embedded in the one and sourced by the other)
//! into the same places; what is missing from PATH is exit 2 naming its Homebrew and Debian
//! packages.

use std::path::Path;

use super::{checkout, clean, script, show};

/// An npm that records each call (`$FAKE_LOG`) and "installs" every `PKG@VERSION` as
/// `PREFIX/node_modules/PKG/package.json`, OpenClaw's executable and a Node 24 beside it.
const FAKE_NPM: &str = r#"#!/bin/sh
prefix=
for a; do case "$prev" in --prefix) prefix="$a";; esac; prev="$a"; done
first="${PATH%%:*}"
case "$first" in "$prefix"/node_modules/node-*/bin) first=STAGE_NODE;; *) first=OTHER;; esac
args=
for a; do
  case "$a" in "$prefix") a=PREFIX;; esac
  args="$args $a"
done
echo "npm$args (PATH first: $first)" >> "$FAKE_LOG"
for a; do
  case "$a" in
    --*|install|"$prefix") ;;
    *@*)
      pkg="${a%@*}"; ver="${a##*@}"
      mkdir -p "$prefix/node_modules/$pkg" "$prefix/node_modules/.bin"
      printf '{\n  "name": "%s",\n  "version": "%s"\n}\n' "$pkg" "$ver" > "$prefix/node_modules/$pkg/package.json"
      if [ "$pkg" = @portkey-ai/gateway ]; then
        mkdir -p "$prefix/node_modules/$pkg/build"
        : > "$prefix/node_modules/$pkg/build/start-server.js"
      fi
      if [ "$pkg" = openclaw ]; then
        printf '#!/bin/sh\necho "OpenClaw %s (fake)"\n' "$ver" > "$prefix/node_modules/.bin/openclaw"
        printf '#!/bin/sh\necho v24.22.3\n' > "$prefix/node_modules/.bin/node"
        chmod +x "$prefix/node_modules/.bin/openclaw" "$prefix/node_modules/.bin/node"
      fi
      ;;
  esac
done
"#;

/// A python3 that records each call and makes a "venv" (a copy of itself) whose pip records the
/// version asked for and whose `import openai` prints it.
const FAKE_PYTHON: &str = r#"#!/bin/sh
here="$(cd "$(dirname "$0")" && pwd)"
echo "python $*" | sed "s#$FAKE_CACHE#CACHE#g" >> "$FAKE_LOG"
case "$1 $2" in
  "-m venv") mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0 ;;
  "-m pip") for a; do case "$a" in openai==*) echo "${a#openai==}" > "$here/../version";; esac; done; exit 0 ;;
esac
case "$1" in
  -c) [ -f "$here/../version" ] && cat "$here/../version" && exit 0 ;;
esac
exit 1
"#;

/// A directory holding the fake npm and python3.
fn fakes(dir: &Path) -> String {
    let bin = dir.join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    script(&bin.join("npm"), FAKE_NPM);
    script(&bin.join("python3"), FAKE_PYTHON);
    format!("{}:/usr/bin:/bin", bin.display())
}

/// What one installer did: its stdout (the path) and the calls it made, with its cache as
/// `CACHE`.
fn install(program: &Path, args: &[&str], tmp: &Path, name: &str) -> (String, String) {
    let path = fakes(tmp);
    let cache = tmp.join(format!("cache-{name}"));
    let log = tmp.join(format!("{name}.log"));
    let home = tmp.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = clean(program, tmp, &home, &cache, &path)
        .args(args)
        .env("FAKE_LOG", &log)
        .env("FAKE_CACHE", &cache)
        .env("PYTHON", tmp.join("fakebin/python3"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{name}: {}", show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout)
        .trim()
        .replace(cache.to_str().unwrap(), "CACHE");
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    (stdout, calls)
}

#[test]
fn the_binary_and_the_scripts_install_the_same_pinned_versions_the_same_way() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_rehearse"));
    let scripts = checkout().join("scripts");
    let pins = std::fs::read_to_string(scripts.join("pins.env")).unwrap();
    let pin = |key: &str| {
        pins.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in pins.env"))
            .to_string()
    };
    let (openclaw, node) = (pin("OPENCLAW_VERSION"), pin("NODE_VERSION"));
    let second = pin("OPENCLAW_SECOND_VERSION");
    for (label, ours, theirs, version) in [
        (
            "openclaw",
            vec!["gateway", "install", "openclaw"],
            "install-openclaw.sh",
            openclaw.as_str(),
        ),
        (
            "openclaw-second",
            vec!["gateway", "install", "openclaw", second.as_str()],
            "install-openclaw.sh",
            second.as_str(),
        ),
    ] {
        let t = tmp.path().join(label);
        std::fs::create_dir_all(&t).unwrap();
        let script_args: Vec<&str> = ours[3..].to_vec();
        let (p1, calls1) = install(&scripts.join(theirs), &script_args, &t, "script");
        let (p2, calls2) = install(bin, &ours, &t, "binary");
        let want = format!("CACHE/openclaw-{version}/node_modules/.bin/openclaw");
        assert_eq!((p1.as_str(), p2.as_str()), (want.as_str(), want.as_str()));
        assert_eq!(calls1, calls2, "{label}: npm calls differ");
        assert!(
            calls2.contains(&format!("openclaw@{version} node-"))
                && calls2.contains(&format!("@{node} (PATH first: STAGE_NODE)")),
            "{label}: {calls2}"
        );
        assert_eq!(calls2.lines().count(), 2, "{calls2}");
        // A second install of the same version is a no-op for both.
        let (_, again) = install(bin, &ours, &t, "binary");
        assert_eq!(again, calls2, "nothing installed again");
    }
    // Portkey's gateway and the same pinned Node, in one npm call each.
    let portkey = pin("PORTKEY_VERSION");
    let t = tmp.path().join("portkey");
    std::fs::create_dir_all(&t).unwrap();
    let (p1, calls1) = install(&scripts.join("install-portkey.sh"), &[], &t, "script");
    let (p2, calls2) = install(bin, &["gateway", "install", "portkey"], &t, "binary");
    let want =
        format!("CACHE/portkey-{portkey}/node_modules/@portkey-ai/gateway/build/start-server.js");
    assert_eq!((p1.as_str(), p2.as_str()), (want.as_str(), want.as_str()));
    assert_eq!(calls1, calls2, "portkey: npm calls differ");
    // Beside the pinned release, what its own lock file pins of its HTTP stack.
    let locked = format!(
        "hono@{} @hono/node-server@{} @hono/node-ws@{}",
        pin("PORTKEY_HONO_VERSION"),
        pin("PORTKEY_HONO_NODE_SERVER_VERSION"),
        pin("PORTKEY_HONO_NODE_WS_VERSION")
    );
    assert!(
        calls2.contains("node-")
            && calls2.contains(&format!("@{node} @portkey-ai/gateway@{portkey} {locked}")),
        "portkey: {calls2}"
    );
    assert_eq!(calls2.lines().count(), 1, "{calls2}");
    let (_, again) = install(bin, &["gateway", "install", "portkey"], &t, "binary");
    assert_eq!(again, calls2, "nothing installed again");
    let openai = pin("OPENAI_VERSION");
    let t = tmp.path().join("openai");
    std::fs::create_dir_all(&t).unwrap();
    let (p1, calls1) = install(&scripts.join("install-openai-sdk.sh"), &[], &t, "script");
    let (p2, calls2) = install(bin, &["gateway", "install", "openai-sdk"], &t, "binary");
    let want = format!("CACHE/openai-python-{openai}/bin/python");
    assert_eq!((p1.as_str(), p2.as_str()), (want.as_str(), want.as_str()));
    // The scripts' `-c` presence checks run before and after; the binary's the same.
    assert_eq!(calls1, calls2, "python calls differ");
    assert!(
        calls2.contains(&format!(
            "-m pip install --quiet --disable-pip-version-check openai=={openai}"
        )),
        "{calls2}"
    );
}

#[test]
fn list_shows_versions_and_sizes_remove_removes_and_the_run_finds_the_cached_install() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_rehearse"));
    let path = fakes(tmp.path());
    let cache = tmp.path().join("cache");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let run = |args: &[&str]| {
        clean(bin, tmp.path(), &home, &cache, &path)
            .args(args)
            .env("FAKE_LOG", tmp.path().join("log"))
            .output()
            .unwrap()
    };
    for v in ["2026.9.2", "2026.9.6"] {
        let out = run(&["gateway", "install", "openclaw", v]);
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    }
    let out = run(&["gateway", "list"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    for v in ["2026.9.2", "2026.9.6"] {
        let row = text
            .lines()
            .find(|l| l.starts_with("openclaw") && l.contains(v))
            .unwrap_or_else(|| panic!("no {v} row:\n{text}"));
        assert!(row.contains(" B ") || row.contains(" kB "), "a size: {row}");
        assert!(row.contains(&cache.join(format!("openclaw-{v}")).display().to_string()));
    }
    // The run's own lookup finds the pinned one in the cache (no REHEARSE_OPENCLAW, none on PATH).
    let out = run(&["doctor", "--scenario", "openclaw-503-window"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let row = report.lines().find(|l| l.starts_with("openclaw")).unwrap();
    assert!(
        row.contains("openclaw-2026.9.6/node_modules/.bin/openclaw") && row.contains("2026.9.6"),
        "{row}"
    );
    // Two versions: remove needs one named.
    let out = run(&["gateway", "remove", "openclaw"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(show(&out).contains("2026.9.2, 2026.9.6"), "{}", show(&out));
    let out = run(&["gateway", "remove", "openclaw", "2026.9.2"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!cache.join("openclaw-2026.9.2").exists());
    assert!(cache.join("openclaw-2026.9.6").exists());
    let out = run(&["gateway", "remove", "openclaw", "2026.9.2"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(show(&out).contains("no openclaw 2026.9.2 is installed"));
}

#[test]
fn missing_npm_or_python_is_exit_2_naming_the_packages() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_rehearse"));
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let path = empty.to_str().unwrap();
    let cache = tmp.path().join("cache");
    for (kind, wants) in [
        (
            "openclaw",
            ["`npm`", "`brew install node`", "`apt-get install npm`"],
        ),
        (
            "openai-sdk",
            [
                "`python3`",
                "`brew install python`",
                "`apt-get install python3 python3-venv`",
            ],
        ),
    ] {
        let out = clean(bin, tmp.path(), tmp.path(), &cache, path)
            .args(["gateway", "install", kind])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        for w in wants {
            assert!(err.contains(w), "{kind}: {w} in {err}");
        }
    }
    // Nothing was half-installed.
    let left: Vec<_> = std::fs::read_dir(&cache)
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}
