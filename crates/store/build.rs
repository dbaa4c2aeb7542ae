//! Build-time facts the binary reports (`graphctx status`): the storage
//! engine's crate and version, read from Cargo.lock, so they are always
//! the ones this build links.

use std::path::Path;

/// The crates that provide the `cozo` library, the maintained forks first.
const ENGINE_PACKAGES: &[&str] = &["cozo-ce", "cozo"];

fn main() {
    // The workspace's lock file, two levels above this crate.
    let lock = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let engine = ENGINE_PACKAGES
        .iter()
        .find_map(|name| version_of(&text, name).map(|v| format!("{name} {v}")))
        .unwrap_or_else(|| "cozo (version unknown)".to_string());
    println!("cargo:rustc-env=GRAPHCTX_STORAGE_ENGINE={engine}");
}

/// The version of package `name` in a Cargo.lock's text.
fn version_of(lock: &str, name: &str) -> Option<String> {
    let wanted = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == wanted {
            let version = lines.next()?.trim().strip_prefix("version = \"")?;
            return Some(version.trim_end_matches('"').to_string());
        }
    }
    None
}
