//! The text index of a code graph (schema 12): `code_text` (an entity's
//! words, see [`search_text`] and `word_list`) and
//! `code_word` (its postings), kept in step with the entities by every
//! index run, in the same transaction.
//!
//! An entity that appeared, changed or went (what `write_entities`
//! reports) and whose words are not the stored ones has its old postings
//! deleted — read from its stored word list — and its new ones put. A graph whose rows are of another
//! [`TEXT_VERSION`], or have none (indexed before schema 12), gets every
//! entity's rows written anew, as `code_usage` does.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::Entity;
use crate::model::{FileContext, FileExtract};
use crate::store::rows::{
    decode_first, decode_rows, query_rows, CodeTextRow, CodeTextVersionRow, CodeWordRow, Str,
};
use crate::store::value::str_list;
use crate::store::{queries, Batch, Params, Store, StoreError};
use crate::support::words::{index_words, stored_words, word_list};

/// Version of what the text rows hold (the text and the tokeniser).
///
/// 2: `code_text.text` holds the word list, not the text; the file path is
/// in the text of the file's module entity only.
pub const TEXT_VERSION: i64 = 2;

query_rows! {
    /// `queries/text_of.cozo`.
    TextOfRow = "text_of" {
        key { id: Str<'a> }
        value { text: Str<'a> }
    }
    /// `queries/text_version.cozo`.
    TextVersionRow = "text_version" {
        key { graph: Str<'a> }
        value { version: i64 }
    }
    /// `queries/text_keys.cozo`.
    TextKeyRow = "text_keys" {
        key { graph: Str<'a>, id: Str<'a> }
    }
    /// `queries/word_keys.cozo`.
    WordKeyRow = "word_keys" {
        key { graph: Str<'a>, word: Str<'a>, id: Str<'a> }
    }
}

/// Whether `graph`'s text rows are of [`TEXT_VERSION`].
pub fn is_current(store: &Store, graph: &str) -> Result<bool, StoreError> {
    let rows = store.read(queries::TEXT_VERSION, Params::new().with("graph", graph))?;
    Ok(decode_first::<TextVersionRow>(&rows)?.is_some_and(|r| r.version == TEXT_VERSION))
}

/// Stage the text rows of the entities in `touched` (appeared, changed or
/// gone), or of every entity when `None`.
pub fn write(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    extracts: &BTreeMap<String, (FileContext, FileExtract)>,
    touched: Option<&BTreeSet<String>>,
) -> Result<(), StoreError> {
    if touched.is_some_and(|t| t.is_empty()) {
        return Ok(());
    }
    let wanted = |k: &str| touched.is_none_or(|t| t.contains(k));
    // Stored text of the entities concerned (none when all are rewritten).
    let mut old: BTreeMap<String, String> = BTreeMap::new();
    match touched {
        Some(t) => {
            let keys: Vec<&str> = t.iter().map(String::as_str).collect();
            let rows = store.read(
                queries::TEXT_OF,
                Params::new()
                    .with("graph", graph)
                    .with("keys", str_list(keys)),
            )?;
            for r in decode_rows::<TextOfRow>(&rows)? {
                old.insert(r.id.into_owned(), r.text.into_owned());
            }
        }
        None => {
            // Rows of another version: every one goes.
            let p = Params::new().with("graph", graph);
            let rows = store.read(queries::WORD_KEYS, p.clone())?;
            for r in decode_rows::<WordKeyRow>(&rows)? {
                batch.delete_key::<CodeWordRow>(vec![
                    graph.into(),
                    r.word.as_ref().into(),
                    r.id.as_ref().into(),
                ]);
            }
            let rows = store.read(queries::TEXT_KEYS, p)?;
            for r in decode_rows::<TextKeyRow>(&rows)? {
                batch.delete_key::<CodeTextRow>(vec![graph.into(), r.id.as_ref().into()]);
            }
            batch.put_row(CodeTextVersionRow {
                graph: graph.into(),
                version: TEXT_VERSION,
            });
        }
    }
    let delete_words = |batch: &mut Batch, id: &str, list: &str| {
        for word in stored_words(list) {
            batch.delete_key::<CodeWordRow>(vec![graph.into(), word.into(), id.into()]);
        }
    };
    // Entities whose words are as stored (a body edit moves lines, not
    // words) keep their rows.
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for e in extracts.values().flat_map(|(_, ex)| ex.entities.iter()) {
        if !wanted(&e.key) {
            continue;
        }
        seen.insert(&e.key);
        let (words, len) = index_words(&search_text(e));
        let list = word_list(&words);
        if let Some(before) = old.get(&e.key) {
            if *before == list {
                continue;
            }
            delete_words(batch, &e.key, before);
        }
        for (word, tf) in words {
            batch.put_row(CodeWordRow {
                graph: graph.into(),
                word: word.into(),
                id: e.key.as_str().into(),
                tf,
                len,
            });
        }
        batch.put_row(CodeTextRow {
            graph: graph.into(),
            id: e.key.as_str().into(),
            text: list.into(),
        });
    }
    for (id, text) in old.iter().filter(|(id, _)| !seen.contains(id.as_str())) {
        delete_words(batch, id, text);
        batch.delete_key::<CodeTextRow>(vec![graph.into(), id.as_str().into()]);
    }
    Ok(())
}

/// The text of an entity: what its postings are made from.
///
/// Its name, owner type and trait (for methods and impl blocks), the first
/// [`MAX_DOC`] bytes of its doc comment and its signature head. The file's
/// path is part of the text of the file's module entity only: every entity
/// of a file would otherwise hold the same path words (a posting each, and
/// a file with many entities would match a path word many times over),
/// while a query naming a component (`serde_derive: …`, `the lexer …`)
/// means the file, which search reads from the module entity. Long doc
/// comments count with their summary: the examples below it mostly repeat
/// other entities' names.
pub fn search_text(e: &Entity) -> String {
    let doc = &e.doc;
    let mut end = doc.len().min(MAX_DOC);
    while !doc.is_char_boundary(end) {
        end -= 1;
    }
    let doc = &doc[..end];
    let head = &e.signature.text;
    if e.parent.is_none() {
        return format!("{} {} {doc} {head}", e.name, e.file);
    }
    let owner = e.owner.as_deref().unwrap_or("");
    let tr = e.trait_name.as_deref().unwrap_or("");
    format!("{} {owner} {tr} {doc} {head}", e.name)
}

/// See [`search_text`].
pub const MAX_DOC: usize = 240;
