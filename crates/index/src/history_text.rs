//! History as text: what earlier commits said about each file.
//!
//! A bug report or a task speaks the vocabulary of the project's past
//! changes ("the reconnect backoff", "flaky on Windows") more than that of
//! the code's identifiers, and the messages of the commits that changed a
//! file are where that vocabulary is written next to the file. Each file
//! keeps the words of the newest [`MESSAGES_PER_FILE`] messages of commits
//! that changed it, split and stemmed as entity texts are; search scores
//! them with BM25 as a signal of its own (`code_history_word`).
//!
//! Messages that say nothing about the code they touch are left out:
//! bots', releases, merges, reverts and version bumps, and sweeps of more
//! than [`MAX_FILES_PER_COMMIT`] files. Trailers (`Signed-off-by: …`),
//! URLs and bare numbers (issue references) are not words of the change.

use std::collections::BTreeMap;

use crate::history::{Commit, MAX_FILES_PER_COMMIT};
use crate::support::words::index_words;

/// The version of what is derived here: a change of the rules below
/// changes it, so stored histories are read again.
pub const VERSION: u32 = 1;

/// The newest messages a file keeps.
pub const MESSAGES_PER_FILE: usize = 50;

/// One file's history text: per word, how many of its messages hold it,
/// and how many words its messages hold in all.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FileText {
    pub words: BTreeMap<String, i64>,
    pub length: i64,
}

/// Each file's history text, from commits newest first.
pub fn words_of_files(commits: &[Commit]) -> BTreeMap<String, FileText> {
    let mut kept: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out: BTreeMap<String, FileText> = BTreeMap::new();
    for commit in commits {
        if commit.files.is_empty()
            || commit.files.len() > MAX_FILES_PER_COMMIT
            || !speaks_of_the_code(commit)
        {
            continue;
        }
        let words = message_words(&commit.message);
        if words.is_empty() {
            continue;
        }
        for file in &commit.files {
            let n = kept.entry(file.as_str()).or_insert(0);
            if *n >= MESSAGES_PER_FILE {
                continue;
            }
            *n += 1;
            let text = out.entry(file.clone()).or_default();
            for (word, count) in &words {
                *text.words.entry(word.clone()).or_insert(0) += 1;
                text.length += count;
            }
        }
    }
    out
}

/// Whether a commit's message is about the change it makes: not a bot's,
/// a release, a merge, a revert or a version bump.
fn speaks_of_the_code(commit: &Commit) -> bool {
    let author = commit.author.to_ascii_lowercase();
    if author.contains("[bot]")
        || ["dependabot", "renovate", "github-actions", "pre-commit-ci"]
            .iter()
            .any(|b| author.starts_with(b))
    {
        return false;
    }
    let subject = commit
        .message
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let starts_version = subject
        .trim_start_matches('v')
        .split('.')
        .take(2)
        .filter(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        .count()
        == 2;
    !(starts_version
        || [
            "merge ",
            "revert",
            "release",
            "bump ",
            "prepare release",
            "version ",
        ]
        .iter()
        .any(|p| subject.starts_with(p)))
}

/// The distinct words of a message with how often each occurs: its lines
/// without trailers, URLs and bare numbers.
fn message_words(message: &str) -> Vec<(String, i64)> {
    let mut text = String::new();
    for line in message.lines() {
        if is_trailer(line) {
            continue;
        }
        for token in line.split_whitespace() {
            if token.contains("://") || token.trim_start_matches('#').parse::<u64>().is_ok() {
                continue;
            }
            text.push_str(token);
            text.push(' ');
        }
        text.push('\n');
    }
    let (words, _) = index_words(&text);
    words
        .into_iter()
        .filter(|(w, _)| !w.chars().all(|c| c.is_ascii_digit()))
        .collect()
}

/// `Signed-off-by: …`, `Co-authored-by: …`, `Fixes: …`-style trailer lines.
fn is_trailer(line: &str) -> bool {
    let Some((key, _)) = line.split_once(": ") else {
        return false;
    };
    key.contains('-') && key.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(author: &str, message: &str, files: &[&str]) -> Commit {
        Commit {
            author: author.into(),
            message: message.into(),
            files: files.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn a_file_holds_the_words_of_the_messages_that_changed_it() {
        let commits = [
            commit(
                "ann",
                "Fix reconnect backoff after timeout\n\nSigned-off-by: Ann <a@b.c>",
                &["src/net.rs", "src/retry.rs"],
            ),
            commit("bob", "retry: cap the backoff (#123)", &["src/retry.rs"]),
        ];
        let text = words_of_files(&commits);
        let retry = &text["src/retry.rs"];
        assert_eq!(retry.words.get("backoff"), Some(&2), "{retry:?}");
        assert_eq!(retry.words.get("reconnect"), Some(&1));
        assert!(!retry.words.contains_key("123"), "{retry:?}");
        assert!(!retry.words.contains_key("sign"), "{retry:?}");
        assert!(!text["src/net.rs"].words.contains_key("cap"));
    }

    #[test]
    fn bots_releases_merges_and_sweeps_say_nothing_of_a_file() {
        let many: Vec<String> = (0..=MAX_FILES_PER_COMMIT)
            .map(|i| format!("f{i}.rs"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let commits = [
            commit("dependabot[bot]", "Update serde requirement", &["a.rs"]),
            commit("ann", "Release 1.2.0", &["a.rs"]),
            commit("ann", "v1.2.0", &["a.rs"]),
            commit("ann", "Revert \"parser rewrite\"", &["a.rs"]),
            commit("ann", "Rename everything", &many),
        ];
        assert!(words_of_files(&commits).is_empty());
    }

    #[test]
    fn a_file_keeps_its_newest_messages_only() {
        let mut commits: Vec<Commit> = (0..MESSAGES_PER_FILE)
            .map(|_| commit("ann", "tune the parser", &["a.rs"]))
            .collect();
        commits.push(commit("ann", "first lexer draft", &["a.rs"]));
        let text = words_of_files(&commits);
        assert_eq!(text["a.rs"].words.get("parser"), Some(&50));
        assert!(!text["a.rs"].words.contains_key("lexer"));
    }
}
