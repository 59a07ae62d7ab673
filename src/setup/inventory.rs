//! What the cache holds (`gateway list`, `gateway remove`): OpenClaw installs
//! (`openclaw-VERSION/`), Portkey installs (`portkey-VERSION/`), LiteLLM venvs (`litellm-VERSION/`),
//! OpenAI SDK venvs (`openai-python-VERSION/`), the extracted built-in
//! scenarios (`builtin-VERSION-HASH/`) and installs that never finished (`.openclaw-VERSION.*`,
//! `.portkey-VERSION.*` staging directories), each with its size on disk.

use std::path::{Path, PathBuf};

use crate::cli::GatewayKind;

/// What one cache entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `openclaw-VERSION`.
    Openclaw,
    /// `portkey-VERSION`.
    Portkey,
    /// `openai-python-VERSION`.
    OpenaiSdk,
    /// `litellm-VERSION`.
    Litellm,
    /// `builtin-VERSION-HASH`.
    Builtin,
    /// `.openclaw-VERSION.XXXX`: an install that was interrupted.
    Unfinished,
}

impl Kind {
    /// The listing's name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Openclaw => "openclaw",
            Self::Portkey => "portkey",
            Self::OpenaiSdk => "openai-sdk",
            Self::Litellm => "litellm",
            Self::Builtin => "built-in scenarios",
            Self::Unfinished => "unfinished install",
        }
    }

    /// The kind of a `gateway install|remove` argument.
    pub(crate) fn of(k: GatewayKind) -> Self {
        match k {
            GatewayKind::Openclaw => Self::Openclaw,
            GatewayKind::Portkey => Self::Portkey,
            GatewayKind::OpenaiSdk => Self::OpenaiSdk,
            GatewayKind::Litellm => Self::Litellm,
        }
    }
}

/// One directory of the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// What it is.
    pub kind: Kind,
    /// The version its name says.
    pub version: String,
    /// The directory.
    pub path: PathBuf,
}

/// The kind and version a cache directory's name says; `None` for anything else.
pub(crate) fn classify(name: &str) -> Option<(Kind, String)> {
    if let Some(rest) = name
        .strip_prefix(".openclaw-")
        .or_else(|| name.strip_prefix(".portkey-"))
    {
        let v = rest.rsplit_once('.').map_or(rest, |(v, _)| v);
        return Some((Kind::Unfinished, v.to_string()));
    }
    let (kind, v) = if let Some(v) = name.strip_prefix("openclaw-") {
        (Kind::Openclaw, v)
    } else if let Some(v) = name.strip_prefix("portkey-") {
        (Kind::Portkey, v)
    } else if let Some(v) = name.strip_prefix("openai-python-") {
        (Kind::OpenaiSdk, v)
    } else if let Some(v) = name.strip_prefix("litellm-") {
        (Kind::Litellm, v)
    } else if let Some(v) = name.strip_prefix("builtin-") {
        (Kind::Builtin, v)
    } else {
        return None;
    };
    (!v.is_empty()).then(|| (kind, v.to_string()))
}

/// Every entry under `cache`, sorted by kind then version.
pub(crate) fn scan(cache: &Path) -> Vec<Entry> {
    let mut out: Vec<Entry> = std::fs::read_dir(cache)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let (kind, version) = classify(e.file_name().to_str()?)?;
            Some(Entry {
                kind,
                version,
                path: e.path(),
            })
        })
        .collect();
    out.sort_by(|a, b| {
        (a.kind as u8, &a.version).cmp(&(b.kind as u8, &b.version))
    });
    out
}

/// Bytes on disk under `dir` (files and symlinks themselves, never followed).
pub(crate) fn size_of(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().filter_map(Result::ok) {
            let Ok(meta) = e.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                total = total.saturating_add(meta.len());
            }
        }
    }
    total
}

/// `840.2 MB`, `12.0 kB`, `512 B` (decimal units, as `du -h --si`).
pub(crate) fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1000.0;
    let mut unit = 0;
    while v >= 1000.0 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// The entry `gateway remove KIND [VERSION]` means: the one of that version, or the only one.
pub(crate) fn pick<'a>(
    entries: &'a [Entry],
    kind: Kind,
    version: Option<&str>,
) -> Result<&'a Entry, String> {
    let of_kind: Vec<&Entry> = entries.iter().filter(|e| e.kind == kind).collect();
    let versions = || {
        of_kind
            .iter()
            .map(|e| e.version.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (version, of_kind.as_slice()) {
        (Some(v), _) => of_kind.iter().copied().find(|e| e.version == v).ok_or_else(|| {
            if of_kind.is_empty() {
                format!("no {} {v} is installed (none is)", kind.as_str())
            } else {
                format!("no {} {v} is installed (installed: {})", kind.as_str(), versions())
            }
        }),
        (None, [one]) => Ok(one),
        (None, []) => Err(format!("no {} is installed", kind.as_str())),
        (None, _) => Err(format!(
            "several {} versions are installed ({}): name the one to remove",
            kind.as_str(),
            versions()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_directories_are_told_apart_by_name() {
        assert_eq!(classify("openclaw-2026.9.6"), Some((Kind::Openclaw, "2026.9.6".into())));
        assert_eq!(classify("openai-python-3.57.0"), Some((Kind::OpenaiSdk, "3.57.0".into())));
        assert_eq!(classify("portkey-1.15.2"), Some((Kind::Portkey, "1.15.2".into())));
        assert_eq!(classify(".portkey-1.15.2.Xy12ab"), Some((Kind::Unfinished, "1.15.2".into())));
        assert_eq!(classify("litellm-1.108.7"), Some((Kind::Litellm, "1.108.7".into())));
        assert_eq!(classify("builtin-0.1.0-abc"), Some((Kind::Builtin, "0.1.0-abc".into())));
        assert_eq!(
            classify(".openclaw-2026.9.6.Xy12ab"),
            Some((Kind::Unfinished, "2026.9.6".into()))
        );
        assert_eq!(classify("openclaw-"), None);
        assert_eq!(classify("reports"), None);
    }

    #[test]
    fn scan_sizes_and_pick() {
        let cache = tempfile::tempdir().unwrap();
        for d in ["openclaw-2026.9.6/node_modules", "openclaw-2026.9.2", "openai-python-3.57.0", "other"] {
            std::fs::create_dir_all(cache.path().join(d)).unwrap();
        }
        std::fs::write(cache.path().join("openclaw-2026.9.6/node_modules/a"), vec![0u8; 1500]).unwrap();
        std::fs::write(cache.path().join("openclaw-2026.9.6/b"), vec![0u8; 500]).unwrap();
        let entries = scan(cache.path());
        assert_eq!(entries.len(), 3, "{entries:?}");
        assert_eq!(size_of(&cache.path().join("openclaw-2026.9.6")), 2000);
        assert_eq!(human(2000), "2.0 kB");
        assert_eq!(human(840_200_000), "840.2 MB");
        assert_eq!(human(999), "999 B");
        let err = pick(&entries, Kind::Openclaw, None).unwrap_err();
        assert!(err.contains("2026.9.2, 2026.9.6"), "{err}");
        assert_eq!(
            pick(&entries, Kind::Openclaw, Some("2026.9.2")).unwrap().path,
            cache.path().join("openclaw-2026.9.2")
        );
        assert_eq!(pick(&entries, Kind::OpenaiSdk, None).unwrap().version, "3.57.0");
        assert!(pick(&entries, Kind::OpenaiSdk, Some("1.0.0")).is_err());
    }
}
