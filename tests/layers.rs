//! The architecture's two import rules hold for the code as it is: imports
//! point down the layers, and the interface's modules form no cycle.
//! `scripts/import-graph --check` reads them from the source.

use std::process::Command;

#[test]
fn imports_point_down_the_layers_and_the_interface_has_no_cycle() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/scripts/import-graph"))
        .arg("--check")
        .output()
        .expect("python3 runs scripts/import-graph (install python3)");
    assert!(
        out.status.success(),
        "scripts/import-graph --check failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
