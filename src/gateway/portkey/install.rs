//! Finding a Portkey install and the Node it runs on: `$REHEARSE_PORTKEY` (the gateway's entry
//! script, `…/node_modules/@portkey-ai/gateway/build/start-server.js`, as
//! `scripts/install-portkey.sh` prints it), else the pinned version's install in the cache
//! (`rehearse gateway install portkey`); a version of `[target] versions` from
//! `$REHEARSE_PORTKEY_<VERSION>`, else `CACHE/portkey-VERSION`. The Node is the pinned one the
//! install put beside it (`node_modules/.bin/node`, npm `node-OS-ARCH`, the same pin as
//! OpenClaw's); the version is the package's `package.json` (no process started).

use std::path::{Path, PathBuf};

/// The environment variable naming the entry script.
pub(crate) const ENV_VAR: &str = "REHEARSE_PORTKEY";

/// The npm package.
pub(crate) const PACKAGE: &str = "@portkey-ai/gateway";

/// Portkey's HTTP server package: which version it resolves decides whether a streamed answer
/// passes (see [`Install::server_problem`]).
const SERVER: &str = crate::util::pins::PORTKEY_HONO_SERVER;

/// How to get the pinned install, named in every "not found" error.
fn how_to_install(version: Option<&str>) -> String {
    let v = version.map(str::to_string).or_else(|| {
        crate::util::pins::pins().ok().map(|p| p.portkey)
    });
    let v = v.unwrap_or_default();
    format!(
        "install it with `rehearse gateway install portkey {v}` (into the cache, \
         ~/.cache/rehearse/portkey-{v}, where the run finds it; a checkout's \
         `scripts/install-portkey.sh {v}` does the same), or set {ENV_VAR} to its \
         build/start-server.js"
    )
}

/// `CACHE/portkey-VERSION/node_modules/@portkey-ai/gateway/build/start-server.js`.
pub(crate) fn cached_entry(cache: &Path, version: &str) -> PathBuf {
    cache
        .join(format!("portkey-{version}"))
        .join("node_modules")
        .join(PACKAGE)
        .join("build/start-server.js")
}

/// A Portkey install the supervisor can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Install {
    /// The gateway's entry script (`build/start-server.js`).
    pub entry: PathBuf,
    /// The `node` that runs it.
    pub node: PathBuf,
    /// Its version (`1.15.2`), from its `package.json`.
    pub version: String,
    /// The version of [`SERVER`] the gateway loads (its own `node_modules` first, then the
    /// prefix's, as Node resolves it), if found.
    pub server: Option<String>,
}

/// No usable Portkey install.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// Nothing where it looked.
    #[error("Portkey's gateway is not installed (looked at {}); {}", .looked.join(", "), how_to_install(.version.as_deref()))]
    NotFound {
        /// Where it looked, in order.
        looked: Vec<String>,
        /// The version asked for, if one was.
        version: Option<String>,
    },
    /// The install is another version than the one asked for.
    #[error("{entry} is Portkey {found}, not {version}; {}", how_to_install(Some(.version)))]
    WrongVersion {
        /// The version asked for.
        version: String,
        /// What its package.json says.
        found: String,
        /// The entry script.
        entry: String,
    },
    /// No Node beside it.
    #[error("no pinned Node beside {entry} (looked for {node}); {}", how_to_install(None))]
    NoNode {
        /// The entry script.
        entry: String,
        /// Where the Node was looked for.
        node: String,
    },
}

/// The `version` of the npm package at `dir` (its `package.json`).
fn manifest_version(dir: &Path) -> Option<String> {
    let b = std::fs::read(dir.join("package.json")).ok()?;
    let v = serde_json::from_slice::<serde_json::Value>(&b).ok()?;
    v.get("version")?.as_str().map(str::to_string)
}

impl Install {
    /// What the report says of the HTTP server the gateway runs on: its version, and, from
    /// 1.14.2 on (a lightweight Response that keeps a fetched response's immutable headers,
    /// which Portkey 1.15's header writes throw on; 1.14.1 and earlier stream), that every
    /// streamed answer will be a 500.
    pub fn server_note(&self) -> String {
        let Some(v) = &self.server else {
            return format!("its HTTP server: {SERVER} not found beside it");
        };
        let nums: Vec<u64> = v
            .split(['.', '-', '+'])
            .take(3)
            .map_while(|x| x.parse().ok())
            .collect();
        let broken = match nums.as_slice() {
            [1, m, p] => *m > 14 || (*m == 14 && *p >= 2),
            [1, m] => *m > 14,
            _ => false,
        };
        if broken {
            format!(
                "its HTTP server: {SERVER} {v}, with which every streamed answer of Portkey \
                 1.15 is a 500 (`TypeError: immutable`); `rehearse gateway install portkey` \
                 installs what Portkey's own lock file pins (1.13.5)"
            )
        } else {
            format!("its HTTP server: {SERVER} {v}")
        }
    }

    /// `$REHEARSE_PORTKEY`, else the pinned version in the cache.
    pub fn find() -> Result<Self, InstallError> {
        let env = std::env::var_os(ENV_VAR).map(PathBuf::from);
        let cached = crate::util::cache::root().and_then(|c| {
            crate::util::pins::pins()
                .ok()
                .map(|p| cached_entry(&c, &p.portkey))
        });
        Self::find_in(env, cached, None)
    }

    /// Version `version`: `$REHEARSE_PORTKEY_<VERSION>` (upper-cased, `.`, `-`, `+` as `_`),
    /// else `CACHE/portkey-VERSION`; it must say it is that version.
    pub fn find_version(version: &str) -> Result<Self, InstallError> {
        let var = format!(
            "{ENV_VAR}_{}",
            version
                .to_ascii_uppercase()
                .replace(['.', '-', '+'], "_")
        );
        let env = std::env::var_os(&var).map(PathBuf::from);
        let cached = crate::util::cache::root().map(|c| cached_entry(&c, version));
        let found = Self::find_in(env, cached, Some(version))?;
        if found.version != version {
            return Err(InstallError::WrongVersion {
                version: version.to_string(),
                found: found.version,
                entry: found.entry.display().to_string(),
            });
        }
        Ok(found)
    }

    /// The first of `env` and `cached` that exists (tests pass both in).
    pub(crate) fn find_in(
        env: Option<PathBuf>,
        cached: Option<PathBuf>,
        version: Option<&str>,
    ) -> Result<Self, InstallError> {
        let mut looked = Vec::new();
        for (what, p) in [("$".to_string() + ENV_VAR, env), ("the install cache".into(), cached)] {
            match p {
                Some(p) if p.is_file() => return Self::at(&p),
                Some(p) => looked.push(format!("{what} {}", p.display())),
                None => looked.push(format!("{what} (not set)")),
            }
        }
        Err(InstallError::NotFound {
            looked,
            version: version.map(str::to_string),
        })
    }

    /// The install whose entry script is `entry`: its version from the package's manifest,
    /// its Node the pinned one in the same npm prefix.
    pub(crate) fn at(entry: &Path) -> Result<Self, InstallError> {
        // ENTRY = PREFIX/node_modules/@portkey-ai/gateway/build/start-server.js
        let package = entry.parent().and_then(Path::parent);
        let node_modules = package.and_then(Path::parent).and_then(Path::parent);
        let version = package
            .and_then(manifest_version)
            .unwrap_or_else(|| "unknown".into());
        let node = node_modules.map(|n| n.join(".bin/node"));
        let server = [package.map(|p| p.join("node_modules")), node_modules.map(Path::to_path_buf)]
            .into_iter()
            .flatten()
            .find_map(|nm| manifest_version(&nm.join(SERVER)));
        match node {
            Some(n) if n.is_file() => Ok(Self {
                entry: entry.to_path_buf(),
                node: n,
                version,
                server,
            }),
            n => Err(InstallError::NoNode {
                entry: entry.display().to_string(),
                node: n.map_or_else(|| "node_modules/.bin/node".into(), |n| n.display().to_string()),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_install_is_its_entry_its_manifest_and_the_node_beside_it() {
        let d = tempfile::tempdir().unwrap();
        let pkg = d.path().join("node_modules/@portkey-ai/gateway");
        std::fs::create_dir_all(pkg.join("build")).unwrap();
        std::fs::create_dir_all(d.path().join("node_modules/.bin")).unwrap();
        let entry = pkg.join("build/start-server.js");
        std::fs::write(&entry, "").unwrap();
        std::fs::write(pkg.join("package.json"), r#"{"version":"1.15.2"}"#).unwrap();
        let err = Install::find_in(Some(entry.clone()), None, None).unwrap_err();
        assert!(err.to_string().contains("no pinned Node"), "{err}");
        std::fs::write(d.path().join("node_modules/.bin/node"), "").unwrap();
        let i = Install::find_in(None, Some(entry.clone()), None).unwrap();
        assert_eq!(i.version, "1.15.2");
        assert_eq!(i.node, d.path().join("node_modules/.bin/node"));
        let missing = Install::find_in(Some(d.path().join("nope.js")), None, Some("1.2.3"));
        let msg = missing.unwrap_err().to_string();
        assert!(msg.contains("rehearse gateway install portkey 1.2.3"), "{msg}");
        assert!(msg.contains("$REHEARSE_PORTKEY"), "{msg}");
        assert_eq!(i.server, None);
        assert!(i.server_note().contains("not found"), "{}", i.server_note());
    }

    /// The HTTP server is the one Node loads: the package's own nested copy before the
    /// prefix's; from 1.14.2 on the report says streamed answers will be 500s.
    #[test]
    fn the_http_server_is_read_where_node_resolves_it() {
        let d = tempfile::tempdir().unwrap();
        let nm = d.path().join("node_modules");
        let pkg = nm.join(PACKAGE);
        std::fs::create_dir_all(pkg.join("build")).unwrap();
        std::fs::create_dir_all(nm.join(".bin")).unwrap();
        std::fs::write(nm.join(".bin/node"), "").unwrap();
        let entry = pkg.join("build/start-server.js");
        std::fs::write(&entry, "").unwrap();
        let put = |dir: &Path, v: &str| {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join("package.json"), format!(r#"{{"version":"{v}"}}"#)).unwrap();
        };
        put(&nm.join(SERVER), "1.13.5");
        let i = Install::at(&entry).unwrap();
        assert_eq!(i.server.as_deref(), Some("1.13.5"));
        assert_eq!(i.server_note(), "its HTTP server: @hono/node-server 1.13.5");
        put(&pkg.join("node_modules").join(SERVER), "1.19.19");
        let i = Install::at(&entry).unwrap();
        assert_eq!(i.server.as_deref(), Some("1.19.19"));
        assert!(i.server_note().contains("every streamed answer"), "{}", i.server_note());
        // Bisected against the real gateway: 1.14.1 streams, 1.14.2 does not.
        for (v, broken) in [("1.14.1", false), ("1.14.2", true), ("1.13.8", false), ("2.0.0", false)] {
            put(&pkg.join("node_modules").join(SERVER), v);
            let note = Install::at(&entry).unwrap().server_note();
            assert_eq!(note.contains("every streamed answer"), broken, "{v}: {note}");
        }
    }
}
