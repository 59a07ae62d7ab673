//! `rehearse gateway install|list|remove` (the CLI edge).

use anyhow::anyhow;

use super::SetupError;
use super::inventory::{Kind, human, pick, scan, size_of};
use crate::cli::{GatewayAction, GatewayArgs, GatewayInstallArgs, GatewayKind};
use crate::exit::{CmdError, CmdResult, Status};

/// Runs `rehearse gateway`.
pub(crate) fn command(args: GatewayArgs) -> CmdResult {
    match args.action {
        GatewayAction::Install(a) => install(&a),
        GatewayAction::List => list(),
        GatewayAction::Remove(a) => remove(a.kind, a.release.as_deref()),
    }
}

fn cache() -> Result<std::path::PathBuf, CmdError> {
    crate::util::cache::root().ok_or_else(|| CmdError::bad_input(anyhow!(crate::util::cache::NO_ROOT)))
}

fn failed(e: SetupError) -> CmdError {
    CmdError {
        code: e.code(),
        error: anyhow!(e),
    }
}

fn install(args: &GatewayInstallArgs) -> CmdResult {
    let cache = cache()?;
    let pins = crate::util::pins::pins().map_err(CmdError::harness)?;
    let path = match args.kind {
        GatewayKind::Openclaw => {
            let v = args.release.as_deref().unwrap_or(&pins.openclaw);
            super::openclaw::install(&cache, v, &pins.node)
        }
        GatewayKind::Portkey => {
            let v = args.release.as_deref().unwrap_or(&pins.portkey);
            // What the pinned release's own lock file pins of its HTTP stack; another release
            // gets what npm resolves (its report names the server it runs on).
            let locked: &[(String, String)] = if v == pins.portkey { &pins.portkey_locked } else { &[] };
            super::portkey::install(&cache, v, &pins.node, locked)
        }
        GatewayKind::OpenaiSdk => {
            let v = args.release.as_deref().unwrap_or(&pins.openai);
            super::openai_sdk::install(&cache, v)
        }
        GatewayKind::Litellm => {
            let v = args.release.as_deref().unwrap_or(&pins.litellm);
            super::litellm::install(&cache, v, &pins.litellm_prometheus_client)
        }
    }
    .map_err(failed)?;
    // The path alone on stdout, as the scripts print it: `export X="$(rehearse gateway install …)"`.
    crate::outln!("{}", path.display());
    Ok(Status::Pass)
}

fn list() -> CmdResult {
    let cache = cache()?;
    let pins = crate::util::pins::pins().map_err(CmdError::harness)?;
    crate::outln!("cache: {}", cache.display());
    crate::outln!(
        "pinned: openclaw {} (node {}), openclaw {} (second release), portkey {}, litellm {}, openai-sdk {}",
        pins.openclaw,
        pins.node,
        pins.openclaw_second,
        pins.portkey,
        pins.litellm,
        pins.openai
    );
    let entries = scan(&cache);
    if entries.is_empty() {
        crate::outln!("nothing installed (`rehearse gateway install openclaw`)");
        return Ok(Status::Pass);
    }
    let rows: Vec<[String; 4]> = entries
        .iter()
        .map(|e| {
            [
                e.kind.as_str().to_string(),
                e.version.clone(),
                human(size_of(&e.path)),
                e.path.display().to_string(),
            ]
        })
        .collect();
    let w: Vec<usize> = (0..3)
        .map(|i| rows.iter().map(|r| r[i].len()).max().unwrap_or(0))
        .collect();
    for r in &rows {
        crate::outln!(
            "{:w0$}  {:w1$}  {:>w2$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2]
        );
    }
    Ok(Status::Pass)
}

fn remove(kind: GatewayKind, version: Option<&str>) -> CmdResult {
    let cache = cache()?;
    let entries = scan(&cache);
    let entry = pick(&entries, Kind::of(kind), version).map_err(|e| CmdError::bad_input(anyhow!(e)))?;
    let size = human(size_of(&entry.path));
    std::fs::remove_dir_all(&entry.path)
        .map_err(|e| CmdError::harness(anyhow!("removing {}: {e}", entry.path.display())))?;
    crate::outln!("removed {} ({size})", entry.path.display());
    Ok(Status::Pass)
}
