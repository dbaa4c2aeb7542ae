//! One entity of a CodeGraphContext.json document, rendered at the levels
//! of detail the budget fitter steps through (seed 004's truncation order).
//!
//! Everything in `tdd_classification` and `lsp_metadata` is computed from
//! the graph; docs/context.md documents each rule.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::analyse::relevance::CRITICAL_FAN_IN;
use crate::analyse::select::Candidate;
pub use crate::graph::Details;
use crate::index::keys;
pub use crate::index::usage::Usage;
use crate::model::rel::name;

/// Levels of detail, in the order the fitter applies them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Detail {
    Full = 0,
    /// Signatures reduced to their one-line head; type information dropped.
    CompressedSignature = 1,
    /// And documentation cut to its first sentence.
    ShortDoc = 2,
    /// Key, kind, name, file, lines, relevance and level only.
    Minimal = 3,
}

pub const DETAILS: [Detail; 4] = [
    Detail::Full,
    Detail::CompressedSignature,
    Detail::ShortDoc,
    Detail::Minimal,
];

/// The path a key names, as its language writes it (`crate::a::Foo::new`,
/// `flask.app.Flask.run`), read from the key itself; a key no language
/// reads is shown as it is.
pub fn qualified_path(key: &str) -> String {
    keys::key_language(key).map_or_else(|| key.to_string(), |(l, tail)| l.qualified_name(tail))
}

/// The entity's own name, the last of the names its key's tail is made of.
pub fn item_name(key: &str) -> String {
    keys::key_language(key)
        .and_then(|(l, tail)| l.tail_names(tail).last().map(|n| n.to_string()))
        .unwrap_or_else(|| key.to_string())
}

/// Seed 004 `tdd_classification`, computed from the graph.
pub fn tdd(d: &Details, u: &Usage, c: &Candidate) -> Value {
    let deps = u.dependencies(&d.key).len();
    let lines = (d.end_line - d.start_line + 1).max(1);
    let complexity = if lines <= 15 && deps <= 3 {
        "low"
    } else if lines <= 60 && deps <= 10 {
        "medium"
    } else {
        "high"
    };
    let unsafe_ = d.sig_bool("unsafe");
    let testability = if unsafe_ || deps > 10 {
        "low"
    } else if d.sig_bool("async") || deps > 4 {
        "medium"
    } else {
        "high"
    };
    let coverage = coverage_estimate(u);
    let critical = c.fan_in >= CRITICAL_FAN_IN;
    let change_risk = if c.fan_in >= 2 * CRITICAL_FAN_IN || (critical && coverage < 0.5) {
        "high"
    } else if c.fan_in >= 3 || complexity == "high" || (coverage == 0.0 && !d.is_test) {
        "medium"
    } else {
        "low"
    };
    json!({
        "testability": testability,
        "complexity": complexity,
        "dependencies": deps,
        "test_coverage_estimate": coverage,
        "critical_path": critical,
        "change_risk": change_risk,
    })
}

/// Direct tests: 0.6 plus 0.1 per test, at most 1.0. Otherwise the share
/// of the entity's members (methods of a type, items of a module) that
/// tests call, scaled to at most 0.9. Untested: 0.0.
pub fn coverage_estimate(u: &Usage) -> f64 {
    let est = if u.tests > 0 {
        (0.6 + 0.1 * u.tests as f64).min(1.0)
    } else if u.members() > 0 {
        0.9 * u.tested_members as f64 / u.members() as f64
    } else {
        0.0
    };
    (est * 100.0).round() / 100.0
}

/// Rewrite the names in a written type to their qualified paths where the
/// entity's `uses_type` edges say what they are.
fn resolve_type_text(text: &str, names: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if !word.is_empty() {
            match names.get(word.as_str()) {
                Some(q) => out.push_str(q),
                None => out.push_str(word),
            }
            word.clear();
        }
    };
    let mut prev_colon = false;
    for ch in text.chars() {
        if ch.is_alphanumeric() || ch == '_' {
            if word.is_empty() && prev_colon {
                // Part of a written path (`a::B`): leave it as is.
                out.push(ch);
                continue;
            }
            word.push(ch);
        } else {
            flush(&mut word, &mut out);
            prev_colon = ch == ':';
            out.push(ch);
        }
    }
    flush(&mut word, &mut out);
    out
}

fn lsp_metadata(d: &Details, u: &Usage, detail: Detail) -> Value {
    let mut meta = Map::new();
    if detail == Detail::Full {
        let names: HashMap<String, String> = u
            .targets(name::USES_TYPE)
            .into_iter()
            .map(|k| (item_name(k), qualified_path(k)))
            .collect();
        let mut resolved = Map::new();
        for group in ["fields", "parameters"] {
            if let Some(items) = d.signature.get(group).and_then(Value::as_array) {
                for it in items {
                    let (Some(n), Some(t)) = (
                        it.get("name").and_then(Value::as_str),
                        it.get("type").and_then(Value::as_str),
                    ) else {
                        continue;
                    };
                    if !t.is_empty() {
                        resolved.insert(n.to_string(), json!(resolve_type_text(t, &names)));
                    }
                }
            }
        }
        if let Some(t) = d.signature.get("return_type").and_then(Value::as_str) {
            resolved.insert("return".into(), json!(resolve_type_text(t, &names)));
        }
        let derives: Vec<Value> = d
            .signature
            .get("traits")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let explicit: Vec<String> = u
            .targets(name::IMPLEMENTS)
            .into_iter()
            .map(item_name)
            .collect();
        let mut ti = Map::new();
        ti.insert("resolved_types".into(), Value::Object(resolved));
        if !derives.is_empty() || !explicit.is_empty() {
            ti.insert(
                "trait_impls".into(),
                json!({ "inferred": derives, "explicit": explicit }),
            );
        }
        meta.insert("type_information".into(), Value::Object(ti));
    }
    let imports: Vec<String> = u
        .dependencies(&d.key)
        .into_iter()
        .filter(|k| !k.starts_with(&format!("{}-", d.file)))
        .map(|k| keys::key_language(k).map_or_else(|| k.to_string(), |(l, t)| l.import_line(t)))
        .collect();
    meta.insert(
        "usage_analysis".into(),
        json!({
            "references": u.references,
            "call_sites": u.call_sites,
            "imports": imports,
        }),
    );
    let mut modifiers = vec![json!(d.visibility), json!("declaration")];
    for m in ["async", "unsafe", "const"] {
        if d.sig_bool(m) {
            modifiers.push(json!(m));
        }
    }
    if d.is_test {
        modifiers.push(json!("test"));
    }
    meta.insert(
        "semantic_tokens".into(),
        json!({ "type": d.kind, "modifier": modifiers }),
    );
    Value::Object(meta)
}

/// The first sentence of a doc comment, at most `max_chars` characters.
pub fn first_sentence(doc: &str, max_chars: usize) -> String {
    let para = doc.split("\n\n").next().unwrap_or("").replace('\n', " ");
    let sentence = match para.find(". ") {
        Some(i) => &para[..=i],
        None => para.as_str(),
    };
    let s = sentence.trim();
    if s.chars().count() <= max_chars {
        s.to_string()
    } else {
        let cut: String = s.chars().take(max_chars.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    }
}

fn compressed_signature(d: &Details) -> Value {
    let head = d.head();
    let head = if head.chars().count() > 160 {
        format!("{}…", head.chars().take(159).collect::<String>())
    } else {
        head
    };
    json!({ "text": head })
}

/// Render one entity at a level of detail, as one line of compact JSON.
pub fn render(d: &Details, u: &Usage, c: &Candidate, detail: Detail) -> String {
    let mut sig = Map::new();
    sig.insert("entity_type".into(), json!(d.kind));
    sig.insert("name".into(), json!(d.name));
    if detail < Detail::Minimal {
        sig.insert("visibility".into(), json!(d.visibility));
    }
    sig.insert("file_path".into(), json!(d.file));
    sig.insert(
        "line_range".into(),
        json!({ "start": d.start_line, "end": d.end_line }),
    );
    if detail < Detail::Minimal {
        let signature = if detail == Detail::Full {
            d.signature.clone()
        } else {
            compressed_signature(d)
        };
        sig.insert("signature".into(), signature);
        sig.insert("module_path".into(), json!(d.module_path));
        let doc = if detail >= Detail::ShortDoc {
            first_sentence(&d.doc, 120)
        } else {
            d.doc.clone()
        };
        sig.insert("documentation".into(), json!(doc));
    }
    let mut e = Map::new();
    e.insert("isgl1_key".into(), json!(d.key));
    e.insert("interface_signature".into(), Value::Object(sig));
    if detail < Detail::Minimal {
        e.insert("tdd_classification".into(), tdd(d, u, c));
        e.insert("lsp_metadata".into(), lsp_metadata(d, u, detail));
    }
    // What depends on the request (relevance, level) goes on a line of its
    // own: the first line is the same in every context the entity appears
    // in at this level of detail, so its token count is cached once (the
    // tokenizer always splits before a line starting with `"`).
    let mut text = serde_json::to_string(&Value::Object(e)).unwrap_or_default();
    text.pop();
    text.push_str(&format!(
        ",\n\"relevance_score\":{},\"dependency_level\":{}}}",
        json!(c.relevance),
        c.level
    ));
    text
}
