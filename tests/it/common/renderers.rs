//! The real renderers diagrams are checked with: Graphviz's `dot` and
//! Mermaid's own parser (installed by scripts/install-test-clients.sh). A
//! missing renderer fails the test (see [`super::client_missing`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const INSTALL: &str = "scripts/install-test-clients.sh";

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".test-clients/mermaid")
}

/// Whether `dot` runs; `false` only when a missing one may be skipped.
fn dot_available() -> bool {
    let ok = Command::new("dot")
        .arg("-V")
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok || !super::client_missing("Graphviz (dot)", INSTALL)
}

/// Whether Mermaid's parser is installed; `false` only when it may be skipped.
fn mermaid_available() -> bool {
    let ok = clients_dir()
        .join("node_modules/mermaid/package.json")
        .is_file()
        && clients_dir()
            .join("node_modules/jsdom/package.json")
            .is_file();
    ok || !super::client_missing("Mermaid's parser (npm mermaid, jsdom)", INSTALL)
}

/// Render every DOT text with `dot -Tsvg`; panics naming the diagram
/// `dot` rejects or warns about. Returns the SVGs.
pub fn assert_dot_renders(diagrams: &[(&str, &str)]) -> Vec<String> {
    if !dot_available() {
        return Vec::new();
    }
    diagrams
        .iter()
        .map(|(name, text)| {
            let out = super::run_with_stdin(Command::new("dot").arg("-Tsvg"), Some(text));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && err.trim().is_empty(),
                "dot rejects {name}: {err}\n{text}"
            );
            let svg = String::from_utf8(out.stdout).expect("dot writes UTF-8");
            assert!(svg.contains("<svg"), "{name}: no SVG from dot");
            svg
        })
        .collect()
}

/// Parse every Mermaid text with Mermaid's parser; panics naming each
/// diagram it rejects.
pub fn assert_mermaid_parses(diagrams: &[(&str, &str)]) {
    if !mermaid_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = diagrams
        .iter()
        .enumerate()
        .map(|(i, (_, text))| {
            let path = dir.path().join(format!("{i}.mmd"));
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mermaid_parse.mjs");
    let out = Command::new("node")
        .arg(script)
        .arg(clients_dir())
        .args(&files)
        .output()
        .expect("node runs");
    let report = String::from_utf8_lossy(&out.stdout);
    let failures: Vec<String> = report
        .lines()
        .filter(|l| l.starts_with("FAIL"))
        .map(|l| {
            let file = l["FAIL ".len()..].split(": ").next().unwrap_or("");
            let i: usize = Path::new(file)
                .file_stem()
                .and_then(|n| n.to_str()?.parse().ok())
                .unwrap_or(0);
            let (name, text) = diagrams[i];
            format!("{name}: {l}\n{text}")
        })
        .collect();
    assert!(
        out.status.success() && failures.is_empty(),
        "Mermaid rejects {} diagram(s):\n{}\n{}",
        failures.len(),
        failures.join("\n"),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        report.lines().filter(|l| l.starts_with("ok ")).count(),
        diagrams.len(),
        "Mermaid parsed fewer diagrams than given: {report}"
    );
}
