//! TEMPORARY: a stand-in for the upstream helper's `FaultSpec` (HELPERS-API.md) until it
//! lands on main. Deleted then.
#![allow(missing_docs, dead_code)]

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
