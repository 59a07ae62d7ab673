//! TEMPORARY: stand-ins for the upstream helper's `FaultSpec` and the verdict helper's
//! `Expectations` (HELPERS-API.md) until they land on main. Deleted then.
#![allow(missing_docs, dead_code)]

pub use crate::engine::{EngineConfig, Policy, Profile};

// ---- upstream::FaultSpec
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct FaultSpec(pub toml::Table);
impl FaultSpec {
    pub fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}
pub fn parse_fault_file(text: &str, origin: &str) -> Result<Vec<FaultSpec>, String> {
    #[derive(serde::Deserialize)]
    struct F {
        #[serde(default)]
        fault: Vec<FaultSpec>,
    }
    toml::from_str::<F>(text)
        .map(|f| f.fault)
        .map_err(|e| format!("{origin}: {}", e.message()))
}

// ---- verdict::expect::Expectations
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dep {
    pub dep: String,
    #[serde(flatten)]
    pub rest: toml::Table,
}
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    #[serde(default)]
    pub transition: Vec<Dep>,
    #[serde(default)]
    pub metric: Vec<toml::Table>,
    #[serde(default)]
    pub no_transition: Vec<Dep>,
    #[serde(default)]
    pub probe_spacing: Vec<Dep>,
}
#[derive(Debug)]
pub struct ExpectError {
    pub field: String,
    pub msg: String,
}
impl Expectations {
    pub fn validate(&self, _policies: &[&str]) -> Result<(), ExpectError> {
        Ok(())
    }
}
