//! Keeping an OpenClaw process inside one directory: its layout ([`GatewayDirs`]), the
//! environment that points every OpenClaw path there, and the private `/tmp` on Linux as root.
//!
//! OpenClaw honours `HOME`, `OPENCLAW_HOME`, `OPENCLAW_STATE_DIR`, `OPENCLAW_CONFIG_PATH` and
//! `TMPDIR`, but still creates `/tmp/openclaw-state-locks-0/` and `/tmp/openclaw` (hard-coded).
//! On Linux as root each command runs under
//! `unshare --mount --pid --fork --kill-child`: a private mount namespace whose `/tmp` is the
//! run's own `tmp/` (every path the command needs that lies under `/tmp` — the run directory,
//! the install — is bind-mounted back at its own path first), and a private PID namespace, so
//! when the gateway (its PID 1) ends, the kernel ends every process it left, including the
//! workers it starts in process groups of their own. Elsewhere [`TmpRecord`] lists what it
//! left in `/tmp`, and the supervisor kills the process tree it can see ([`super::procs`]).
//!
//! Every command starts in the gateway's own directory (`RUN/openclaw`), never in the caller's
//! working directory: a checkout, report dir or scenario under `/tmp` is hidden by the private
//! `/tmp`, and a process whose working directory is hidden there fails as soon as it spawns
//! anything (Node: `spawn …/node ENOENT`; a shell: `cannot change working directory`). Inside
//! the namespace the command `cd`s into that directory again after the mounts, so its working
//! directory is the bind-mounted path, not the hidden one. The executable and the `node`
//! directory are made absolute for the same reason.
//!
//! One thing is shared between runs, outside the run's directories: Node's compile cache
//! (`NODE_COMPILE_CACHE`, V8's code compiled from the install's JavaScript, no state and no
//! keys), in `node-compile-cache/` of the harness's cache directory. OpenClaw turns that cache
//! on itself, under `$TMPDIR` — which is each run's fresh `tmp/`, so every gateway and every
//! CLI start compiled all of OpenClaw again. OpenClaw keys it by its version and install
//! (`openclaw/VERSION/MTIME-SIZE/`). A `NODE_COMPILE_CACHE` or `NODE_DISABLE_COMPILE_CACHE` of
//! the caller's own is left as it is.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The files and directories of one gateway, all under `root`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayDirs {
    /// `RUN/openclaw` (canonical).
    pub root: PathBuf,
    /// `HOME` and `OPENCLAW_HOME`.
    pub home: PathBuf,
    /// `OPENCLAW_STATE_DIR` (its database is `state/openclaw.sqlite` inside).
    pub state: PathBuf,
    /// `TMPDIR`, and the private `/tmp` in the namespace.
    pub tmp: PathBuf,
    /// `OPENCLAW_CONFIG_PATH`.
    pub config: PathBuf,
    /// `logging.file`: the JSON-lines log.
    pub log: PathBuf,
    /// The gateway's stdout and stderr.
    pub console: PathBuf,
    /// The output of the key-seeding commands (keys scrubbed).
    pub seed_log: PathBuf,
}

impl GatewayDirs {
    /// Creates `run_dir/openclaw/{home,state,tmp}`; refuses one that already exists, so every
    /// gateway starts from a fresh state.
    pub(crate) fn create(run_dir: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(run_dir)?;
        let root = std::fs::canonicalize(run_dir)?.join("openclaw");
        std::fs::create_dir(&root)?;
        let d = Self {
            home: root.join("home"),
            state: root.join("state"),
            tmp: root.join("tmp"),
            config: root.join("openclaw.json"),
            log: root.join("openclaw.log"),
            console: root.join("gateway.out"),
            seed_log: root.join("seed.out"),
            root,
        };
        for dir in [&d.home, &d.state, &d.tmp] {
            std::fs::create_dir(dir)?;
        }
        Ok(d)
    }
}

/// How the gateway's `/tmp` writes are contained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TmpIsolation {
    /// A private mount and PID namespace (Linux, as root, `unshare` on PATH).
    Namespace,
    /// None: what it leaves in `/tmp` is recorded.
    None,
}

impl TmpIsolation {
    /// Its name in the report (`namespace`, `none`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Namespace => "namespace",
            Self::None => "none",
        }
    }

    /// The namespace where it can be had (and `want` is true), else none.
    pub(crate) fn detect(want: bool) -> Self {
        if want && namespace_possible() {
            Self::Namespace
        } else {
            Self::None
        }
    }
}

#[cfg(target_os = "linux")]
fn namespace_possible() -> bool {
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    root && Path::new("/usr/bin/unshare").exists()
}

#[cfg(not(target_os = "linux"))]
fn namespace_possible() -> bool {
    false
}

/// The script `sh -c` runs inside the namespace: `PRIV WORKDIR KEEP… -- CMD…`. It `cd`s into
/// WORKDIR after the mounts: the working directory it was started in may be hidden by them.
const NAMESPACE_SCRIPT: &str = r#"set -e
priv="$1"; wd="$2"; shift 2
mount --make-rprivate /
while [ "$1" != "--" ]; do
  case "$1" in /tmp/*) rel="${1#/tmp/}"; mkdir -p "$priv/$rel"; mount --bind "$1" "$priv/$rel";; esac
  shift
done
shift
mount --rbind "$priv" /tmp
cd "$wd"
exec "$@""#;

/// Paths under `/tmp` that must stay visible, minus any inside another (a bind of the outer
/// one already shows them).
fn keep_paths(paths: &[PathBuf]) -> Vec<PathBuf> {
    let under_tmp: BTreeSet<PathBuf> = paths
        .iter()
        .filter(|p| p.starts_with("/tmp") && p.as_path() != Path::new("/tmp"))
        .cloned()
        .collect();
    under_tmp
        .iter()
        .filter(|p| !under_tmp.iter().any(|q| q != *p && p.starts_with(q)))
        .cloned()
        .collect()
}

/// Builds the commands of one gateway: its environment and, with a namespace, the wrapper.
#[derive(Debug, Clone)]
pub(crate) struct Sandbox {
    /// The directories.
    pub dirs: GatewayDirs,
    /// How `/tmp` is contained.
    pub isolation: TmpIsolation,
    /// The executable.
    openclaw: PathBuf,
    /// The dir put first on PATH (the pinned node's).
    node_dir: Option<PathBuf>,
    /// Paths under `/tmp` the command needs (canonical).
    keep: Vec<PathBuf>,
    /// Node's compile cache shared between runs (`None`: OpenClaw's default under `TMPDIR`).
    compile_cache: Option<PathBuf>,
}

/// `CACHE/node-compile-cache`, created; `None` when there is no cache root, it cannot be made,
/// or the caller's environment already says where (or that there is none).
fn shared_compile_cache() -> Option<PathBuf> {
    if std::env::var_os("NODE_COMPILE_CACHE").is_some()
        || std::env::var_os("NODE_DISABLE_COMPILE_CACHE").is_some()
    {
        return None;
    }
    let dir = crate::util::cache::root()?.join("node-compile-cache");
    std::fs::create_dir_all(&dir).ok()?;
    std::fs::canonicalize(&dir).ok()
}

impl Sandbox {
    /// A sandbox running `openclaw` with `node_dir` first on `PATH`.
    pub(crate) fn new(dirs: GatewayDirs, isolation: TmpIsolation, openclaw: &Path, node: &Path) -> Self {
        // Absolute: the commands start in the gateway's directory, not the caller's.
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let (openclaw, node) = (&absolute(openclaw), &absolute(node));
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let compile_cache = shared_compile_cache();
        let mut needed = vec![dirs.root.clone()];
        needed.extend(compile_cache.iter().cloned());
        for p in [openclaw, node] {
            // The install's `node_modules` (the executable and node are symlinks into it).
            if let Some(d) = p.parent() {
                needed.push(real(d));
            }
            if let Some(d) = real(p).parent().and_then(Path::parent) {
                needed.push(d.to_path_buf());
            }
        }
        Self {
            keep: keep_paths(&needed),
            dirs,
            isolation,
            openclaw: openclaw.to_path_buf(),
            node_dir: node.parent().map(Path::to_path_buf),
            compile_cache,
        }
    }

    /// `openclaw ARGS…` with the sandbox environment, wrapped in the namespace if any, started
    /// in the gateway's own directory.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut cmd = match self.isolation {
            TmpIsolation::None => {
                let mut c = Command::new(&self.openclaw);
                c.args(args);
                c
            }
            TmpIsolation::Namespace => {
                let mut c = Command::new("/usr/bin/unshare");
                c.args([
                    "--mount",
                    "--pid",
                    "--fork",
                    "--kill-child",
                    "/bin/sh",
                    "-c",
                ])
                .arg(NAMESPACE_SCRIPT)
                .arg("sh")
                .arg(&self.dirs.tmp)
                .arg(&self.dirs.root)
                .args(&self.keep)
                .arg("--")
                .arg(&self.openclaw)
                .args(args);
                c
            }
        };
        for (k, _) in std::env::vars_os() {
            let name = k.to_string_lossy();
            if name.starts_with("OPENCLAW_") || name.starts_with("XDG_") {
                cmd.env_remove(&k);
            }
        }
        let d = &self.dirs;
        cmd.current_dir(&d.root);
        cmd.env("HOME", &d.home)
            .env("OPENCLAW_HOME", &d.home)
            .env("OPENCLAW_STATE_DIR", &d.state)
            .env("OPENCLAW_CONFIG_PATH", &d.config)
            .env("TMPDIR", &d.tmp)
            .env("OPENCLAW_NO_AUTO_UPDATE", "1")
            .env("NO_PROXY", "*")
            .env("no_proxy", "*")
            .env("PWD", &d.root)
            .env("PATH", self.path_var());
        if let Some(dir) = &self.compile_cache {
            cmd.env("NODE_COMPILE_CACHE", dir);
        }
        cmd
    }

    fn path_var(&self) -> OsString {
        let mut dirs: Vec<PathBuf> = self.node_dir.iter().cloned().collect();
        if let Some(p) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&p));
        }
        std::env::join_paths(dirs).unwrap_or_default()
    }
}

/// The `/tmp/openclaw*` entries before a gateway ran, to say afterwards what it left.
#[derive(Debug, Clone, Default)]
pub(crate) struct TmpRecord {
    before: BTreeSet<PathBuf>,
}

impl TmpRecord {
    /// The entries now.
    pub(crate) fn now() -> Self {
        Self {
            before: openclaw_tmp_entries(),
        }
    }

    /// Entries that appeared since.
    pub(crate) fn left_behind(&self) -> Vec<PathBuf> {
        openclaw_tmp_entries()
            .difference(&self.before)
            .cloned()
            .collect()
    }
}

/// `/tmp/openclaw*`.
pub fn openclaw_tmp_entries() -> BTreeSet<PathBuf> {
    std::fs::read_dir("/tmp")
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("openclaw"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_outermost_paths_under_tmp_are_kept() {
        let keep = keep_paths(&[
            "/tmp/a/run/openclaw".into(),
            "/tmp/a".into(),
            "/tmp/b/node_modules".into(),
            "/home/u/.cache/x".into(),
            "/tmp".into(),
        ]);
        assert_eq!(
            keep,
            [PathBuf::from("/tmp/a"), "/tmp/b/node_modules".into()]
        );
    }

    #[test]
    fn the_environment_points_everything_into_the_run_dir() {
        let run = tempfile::tempdir().unwrap();
        let dirs = GatewayDirs::create(run.path()).unwrap();
        assert!(
            GatewayDirs::create(run.path()).is_err(),
            "a fresh state each time"
        );
        let sb = Sandbox::new(
            dirs.clone(),
            TmpIsolation::None,
            Path::new("/opt/oc/bin/openclaw"),
            Path::new("/opt/oc/bin/node"),
        );
        let cmd = sb.command(&["gateway", "run"]);
        let env: std::collections::HashMap<String, String> = cmd
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_string_lossy().into(), v?.to_string_lossy().into())))
            .collect();
        assert_eq!(env["HOME"], dirs.home.to_string_lossy());
        assert_eq!(env["OPENCLAW_HOME"], dirs.home.to_string_lossy());
        assert_eq!(env["OPENCLAW_STATE_DIR"], dirs.state.to_string_lossy());
        assert_eq!(env["OPENCLAW_CONFIG_PATH"], dirs.config.to_string_lossy());
        assert_eq!(env["TMPDIR"], dirs.tmp.to_string_lossy());
        assert_eq!(env["OPENCLAW_NO_AUTO_UPDATE"], "1");
        assert_eq!(env["NO_PROXY"], "*");
        assert!(env["PATH"].starts_with("/opt/oc/bin"), "{}", env["PATH"]);
        assert_eq!(cmd.get_program(), "/opt/oc/bin/openclaw");
        assert_eq!(
            cmd.get_current_dir(),
            Some(dirs.root.as_path()),
            "started in its own directory, not the caller's"
        );
        assert_eq!(env["PWD"], dirs.root.to_string_lossy());
        // Node's compile cache is the one shared between runs (unless the caller chose one).
        if std::env::var_os("NODE_COMPILE_CACHE").is_none()
            && std::env::var_os("NODE_DISABLE_COMPILE_CACHE").is_none()
            && let Some(root) = crate::util::cache::root()
        {
            let shared = std::fs::canonicalize(root.join("node-compile-cache")).unwrap();
            assert_eq!(env["NODE_COMPILE_CACHE"], shared.to_string_lossy());
        }
        let relative = Sandbox::new(
            dirs.clone(),
            TmpIsolation::None,
            Path::new("oc/bin/openclaw"),
            Path::new("oc/bin/node"),
        );
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            relative.command(&[]).get_program(),
            cwd.join("oc/bin/openclaw"),
            "a relative executable is made absolute before the directory changes"
        );
        let ns = Sandbox::new(
            dirs.clone(),
            TmpIsolation::Namespace,
            Path::new("/opt/oc/bin/openclaw"),
            Path::new("/opt/oc/bin/node"),
        );
        let cmd = ns.command(&["gateway", "run"]);
        let args: Vec<String> = cmd.get_args().map(|a| a.to_string_lossy().into()).collect();
        assert_eq!(cmd.get_program(), "/usr/bin/unshare");
        assert_eq!(&args[..4], ["--mount", "--pid", "--fork", "--kill-child"]);
        let sep = args.iter().position(|a| a == "--").unwrap();
        assert_eq!(&args[sep + 1..], ["/opt/oc/bin/openclaw", "gateway", "run"]);
        // `sh -c SCRIPT sh PRIV WORKDIR KEEP… --`: the script `cd`s into WORKDIR after the mounts.
        let sh = args.iter().position(|a| a == "sh").unwrap();
        assert_eq!(args[sh + 1], dirs.tmp.to_string_lossy());
        assert_eq!(args[sh + 2], dirs.root.to_string_lossy());
        assert_eq!(cmd.get_current_dir(), Some(dirs.root.as_path()));
    }
}
