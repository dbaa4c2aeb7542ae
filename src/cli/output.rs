//! Human and JSON renderings shared by the subcommands.

use std::io::Write;

use anyhow::Result;
use graphctx::index::IndexSummary;

pub fn print_json(value: &impl serde::Serialize) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

pub fn print_index_summary(s: &IndexSummary, json: bool) -> Result<()> {
    if json {
        return print_json(s);
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "indexed {}: {} files seen, {} parsed, {} unchanged, {} deleted, {} skipped, {} partial",
        s.root,
        s.files_seen,
        s.files_parsed,
        s.files_unchanged,
        s.files_deleted,
        s.files_skipped,
        s.files_partial
    )?;
    writeln!(
        out,
        "graph: {} entities, {} edges, {} unresolved references ({} ambiguous) (seq {}) in {:.0} ms",
        s.entities, s.edges, s.unresolved, s.ambiguous, s.seq, s.elapsed_ms
    )?;
    for note in &s.skipped {
        writeln!(out, "skipped {}: {}", note.path, note.reason)?;
    }
    for note in &s.partial {
        writeln!(out, "partial {}: {}", note.path, note.reason)?;
    }
    Ok(())
}

/// Print rows as aligned columns.
pub fn print_table(headers: &[&str], rows: &[Vec<String>]) -> Result<()> {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
    }
    let mut out = std::io::stdout().lock();
    let line = |cells: Vec<&str>| -> String {
        let n = cells.len();
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i + 1 == n {
                    c.to_string()
                } else {
                    format!("{c:<w$}", w = widths[i])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    writeln!(out, "{}", line(headers.to_vec()))?;
    for r in rows {
        writeln!(out, "{}", line(r.iter().map(String::as_str).collect()))?;
    }
    Ok(())
}
