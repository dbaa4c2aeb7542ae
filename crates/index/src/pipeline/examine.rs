//! One file's examination: read, hash and, when it changed, parse it
//! into its extract and stored forms. Never panics on content.

use std::io::Read;

use crate::held_trees::HeldTrees;
use crate::lang::Stored;
use crate::languages;
use crate::model::{FileExtract, ParseStatus};
use crate::names;
use crate::polyglot::{lang_of, Extractors};
use crate::state::StoredFile;
use crate::text::{self, FileWords};
use crate::walk::{self, SourceFile};

/// What examining one file found.
pub(super) enum Outcome {
    Unchanged,
    Parsed {
        hash: String,
        extract: Box<FileExtract>,
        /// Its stored form (interface and other references, compressed),
        /// made on the parsing thread. The extract keeps only its
        /// interface's references: the others are held in this form.
        stored: Stored,
        /// The names the whole extract mentions, encoded ([`names`]).
        names: Vec<u8>,
        note: Option<String>,
        /// The file's words for the file-level text index, when it is
        /// written (`IndexOptions::text_index`).
        words: Option<FileWords>,
    },
    Skipped(String),
}

/// What a file's stored hash and stat row were computed under: every
/// language's extract version and layout (see [`crate::polyglot::Layouts::key`]).
/// A stat row made under another version vouches for nothing, so a new
/// graphctx parses again.
pub(super) fn layout_key(walked: &walk::WalkResult) -> String {
    // The text index reads entities' words from parses (see
    // `text::TEXT_VERSION`): a new text version parses every file again.
    format!("{} text {}", walked.layout.key(), text::TEXT_VERSION)
}

/// The stored hash of a file: blake3 over its language's extract
/// version, the layout key (a file may belong to another crate when the
/// targets change) and the bytes.
pub(super) fn content_hash(file: &SourceFile, bytes: &[u8], layout_digest: &str) -> String {
    let mut h = blake3::Hasher::new();
    h.update(languages::get(file.lang).extract_version().as_bytes());
    h.update(&[0]);
    h.update(layout_digest.as_bytes());
    h.update(&[0]);
    h.update(bytes);
    h.finalize().to_hex().to_string()
}

/// Read, hash and (if changed) parse one file. Never panics on content.
pub(super) fn examine(
    extractors: &mut Extractors,
    file: &SourceFile,
    stored: Option<&StoredFile>,
    max_bytes: u64,
    layout_digest: &str,
    with_words: bool,
    trees: Option<&HeldTrees>,
) -> Outcome {
    if file.bytes > max_bytes {
        return Outcome::Skipped(format!(
            "larger than the {max_bytes}-byte limit ({} bytes)",
            file.bytes
        ));
    }
    let mut bytes = Vec::with_capacity(file.bytes as usize);
    let read = std::fs::File::open(&file.abs_path)
        .and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        return Outcome::Skipped(format!("unreadable: {e}"));
    }
    if bytes.len() as u64 > max_bytes {
        return Outcome::Skipped(format!("larger than the {max_bytes}-byte limit"));
    }
    let hash = content_hash(file, &bytes, layout_digest);
    if let Some(s) = stored {
        if s.hash == hash && s.status != "skipped" {
            return Outcome::Unchanged;
        }
    }
    if bytes.contains(&0) {
        return Outcome::Skipped("binary file (contains NUL bytes)".into());
    }
    let (text, note) = languages::get(file.lang).decode(bytes);
    // A save parses one file: its words, and then its stored forms, are
    // made on the other core while the extract, and then the other form,
    // are (a quarter of a large file's parse each; a first index has
    // every core busy with files, and these are simply queued).
    let extractor = extractors.of(file.lang);
    let (extract, words) = rayon::join(
        || {
            Box::new(match trees {
                Some(trees) => trees.extract(extractor, &file.ctx, &text),
                None => extractor.extract(&file.ctx, &text),
            })
        },
        || with_words.then(|| FileWords::of(&file.ctx.path, &text)),
    );
    let mut extract = extract;
    let lang = lang_of(&extract);
    let (stored, names) = rayon::join(
        || lang.encode(&extract),
        || names::encode(&lang.mentioned(&extract)),
    );
    // The other references are read again only when the file is resolved,
    // from `stored.body`: held decoded until then, they were a fifth of a
    // large tree's memory.
    drop(lang.take_apart(&mut extract));
    Outcome::Parsed {
        hash,
        extract,
        stored,
        names,
        note,
        words,
    }
}

/// `ok` or `partial`, and why, for a file's row.
pub(super) fn parse_status(extract: &FileExtract, note: Option<&str>) -> (&'static str, String) {
    let status = match extract.status {
        ParseStatus::Ok if note.is_none() => "ok",
        _ => "partial",
    };
    let reason = match (note, extract.syntax_errors) {
        (Some(n), _) => n.to_string(),
        (None, 0) => String::new(),
        (None, n) => format!("{n} syntax error(s); kept what parsed"),
    };
    (status, reason)
}
