//! Placeholder until the rules land.
pub fn store_rule(path: &std::path::Path, rule: &str) -> Result<(), String> {
    let _ = (path, rule);
    Ok(())
}
