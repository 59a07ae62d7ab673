//! Several `--target FILE`s (docs/scenario.md, "Several targets side by side"): every file read
//! and checked before anything runs ([`target_files`]: each at its own FILE:line:col, exit 2
//! naming it; two files whose stems would name their arms alike refused), then one scenario
//! planned against each in turn ([`plan_each`]: the whole preflight per target, an error naming
//! the target it came with), the plans labelled with their file's stem and held together: the
//! first target's plan, the others `alongside` it. The run (`rehearsal::targets`) runs each
//! into its own directory and judges them into one report.

use std::path::{Path, PathBuf};

use super::{Refused, RunFlags, ScenarioPlan, TargetFlagError, preflight_one};
use crate::scenario::target_file::TargetFile;

/// The label of a target file: its stem, made safe as a directory name (`litellm` of
/// `fixtures/targets/litellm.toml`).
fn label_of(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    crate::rundir::safe_name(&stem)
}

/// `--target FILE`s → the target files, in order, each read and checked (the first error stops:
/// it names its file at line:col); several files whose labels clash are refused.
pub(crate) fn target_files(paths: &[PathBuf]) -> Result<Vec<TargetFile>, TargetFlagError> {
    let mut out: Vec<TargetFile> = Vec::with_capacity(paths.len());
    for p in paths {
        let file = TargetFile::load(p)?;
        let stem = label_of(p);
        if let Some(first) = out.iter().find(|f| label_of(&f.path) == stem) {
            return Err(TargetFlagError::SameStem {
                stem,
                first: first.path.display().to_string(),
                second: p.display().to_string(),
            });
        }
        out.push(file);
    }
    Ok(out)
}

/// The scenario at `path` planned against each of `targets` (two or more), in order: the first
/// one's plan with the others `alongside` it, each labelled with its file's stem. The first
/// refusal stops the rest and names its target file; a fleet scenario is refused (it runs the
/// embedded engine only, once).
pub(super) fn plan_each(
    path: &Path,
    flags: &RunFlags,
    targets: &[TargetFile],
) -> Result<ScenarioPlan, Refused> {
    let mut plans = Vec::with_capacity(targets.len());
    for t in targets {
        let mut plan = preflight_one(path, flags, Some(t)).map_err(|e| Refused::WithTarget {
            path: t.path.display().to_string(),
            why: Box::new(e),
        })?;
        if plan.checked.file.fleet.is_fleet() {
            return Err(Refused::FleetSideBySide);
        }
        plan.label = Some(label_of(&t.path));
        plans.push(plan);
    }
    let mut plans = plans.into_iter();
    let Some(mut first) = plans.next() else {
        return preflight_one(path, flags, None);
    };
    first.alongside = plans.collect();
    Ok(first)
}

impl ScenarioPlan {
    /// Every target's plan of a side-by-side run in order (this one, then those alongside);
    /// just this one otherwise.
    pub(crate) fn each_target(&self) -> impl Iterator<Item = &ScenarioPlan> {
        std::iter::once(self).chain(self.alongside.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn labels_are_stems_and_a_clash_or_a_bad_file_is_refused_naming_it() {
        let d = tempfile::tempdir().unwrap();
        let a = write(d.path(), "embedded.toml", "[target]\nkind = \"embedded\"\n");
        std::fs::create_dir(d.path().join("b")).unwrap();
        let again = write(&d.path().join("b"), "embedded.toml", "[target]\nkind = \"embedded\"\n");
        let bad = write(d.path(), "bad.toml", "[target]\nkind = \"embedded\"\nurll = 1\n");
        assert_eq!(label_of(&a), "embedded");
        assert_eq!(label_of(Path::new("x/my target.toml")), "my_target");
        assert_eq!(target_files(std::slice::from_ref(&a)).unwrap().len(), 1);
        let e = target_files(&[a.clone(), again.clone()]).unwrap_err().to_string();
        assert!(e.contains("would be named `embedded`") && e.contains(&again.display().to_string()), "{e}");
        let e = target_files(&[a, bad.clone()]).unwrap_err().to_string();
        assert!(e.contains(&format!("{}:3:1", bad.display())), "{e}");
    }
}
