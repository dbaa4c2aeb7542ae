//! Indexing benchmark on real code: the crates under ~/.cargo/registry/src
//! and this repository.
//!
//! For each tree it measures, in the same run and with the same rayon
//! threads: parse-only time (tree-sitter alone over the same files, read
//! into memory beforehand), a cold full index into a new SQLite database
//! (as `graphctx index` makes it), a no-change re-index, and one-file edits
//! → index current: a body edit as the CLI and as a server run it (one
//! that checks the tree by `stat`, and one a file watch tells what
//! changed), and a new `pub fn` (an interface change), and a `pub fn` that
//! other files call renamed. It prints the index ÷ parse ratio, entities/s and
//! edges/s, and the peak RSS and database size of a child process that
//! does only the cold index.
//!
//! The edits are made in each file's language (a `//` or `#` comment, a
//! `pub fn`, a module-level `def` or an `export function`), so a Python
//! or TypeScript tree is measured the same way: the parse-only baseline parses each file with its
//! language's parser.
//!
//! Run: `cargo bench --bench index` (add crate directory names or paths as
//! arguments to choose the trees; default: regex-automata, syn, serde_json,
//! clap_builder and this repository; a Python tree such as an unpacked
//! wheel, `pip download --no-deps sympy==1.13.3` then `unzip`, is a path). `cargo bench --bench index --
//! registry` indexes every crate under ~/.cargo/registry/src as one tree
//! (the large-monorepo case; one cold run instead of the best of three).

use std::path::{Path, PathBuf};
use std::time::Instant;

use graphctx::index::polyglot::Extractors;
use graphctx::index::{
    index_location, index_repository, index_repository_cached, languages, walk, IndexOptions,
    InterfaceCache,
};
use graphctx::store::{Location, Store};
use rayon::prelude::*;

mod common;
use common::{copy_tree, find_crate};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// Child mode: cold-index one tree into a fresh database and print peak
/// RSS (KiB) and the database file's size (bytes).
fn child(root: &Path) {
    // As `graphctx index` runs (src/main.rs).
    graphctx::support::heap::purge_freed_pages_lazily();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.db");
    index_location(
        &Location::Sqlite(path.clone()),
        root,
        &IndexOptions::default(),
    )
    .unwrap();
    let db_bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    println!("{} {db_bytes}", peak_rss_kb().unwrap_or(0));
}

fn bench_tree(label: &str, root: &Path) {
    // Work on a private copy so the edit step never touches the source.
    let work = tempfile::tempdir().unwrap();
    copy_tree(root, work.path());
    let root = work.path();
    let files = walk::walk(root).files;
    // One per file, in order (an unreadable file is empty).
    let sources: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(&f.abs_path).unwrap_or_default())
        .collect();
    let bytes: usize = sources.iter().map(String::len).sum();

    // Freed pages handled as the binary handles them (src/main.rs).
    graphctx::support::heap::purge_freed_pages_lazily();
    // Parse-only baseline, best of 3.
    let mut parse = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let n: usize = files
            .par_iter()
            .zip(&sources)
            .map_init(Extractors::default, |x, (f, s)| {
                parse_only(x, &f.ctx.path, s)
            })
            .sum();
        std::hint::black_box(n);
        parse = parse.min(ms(t.elapsed()));
    }

    // Cold full index into a fresh SQLite database, best of 3 (one run for
    // trees of thousands of files, where a run takes minutes).
    let mut cold = f64::MAX;
    let mut summary = None;
    let mut kept = None;
    let runs = if files.len() > 3000 { 1 } else { 3 };
    for _ in 0..runs {
        let db = tempfile::tempdir().unwrap();
        let location = Location::Sqlite(db.path().join("graph.db"));
        let t = Instant::now();
        let s = index_location(&location, root, &IndexOptions::default()).unwrap();
        cold = cold.min(ms(t.elapsed()));
        summary = Some(s);
        kept = Some((db, location));
    }
    let s = summary.unwrap();

    // Re-index with nothing changed, then one-file edits: a file at each
    // size quartile and the largest one. A body edit (a comment line at
    // the top: every line moves, no interface changes) as the CLI runs it
    // (interfaces read from the store) and as a server runs it (interfaces
    // and symbol table kept between runs); an interface edit (a new `pub
    // fn`, which no other file names). Typical figure: the median over
    // the files; worst: the largest file.
    let (_db, location) = kept.expect("one cold run at least");
    let store = Store::open(&location).unwrap();
    let t = Instant::now();
    index_repository(&store, root, &IndexOptions::default()).unwrap();
    let noop = ms(t.elapsed());
    let mut by_size: Vec<&walk::SourceFile> = files.iter().collect();
    by_size.sort_by_key(|f| f.bytes);
    let picks: Vec<PathBuf> = [0.25, 0.5, 0.75, 0.9, 1.0]
        .iter()
        .map(|q| {
            let i = ((by_size.len() - 1) as f64 * q).round() as usize;
            by_size[i].abs_path.clone()
        })
        .collect();
    let timed = |target: &Path, text: String, cache: Option<&mut InterfaceCache>| {
        std::fs::write(target, text).unwrap();
        let t = Instant::now();
        match cache {
            Some(c) => index_repository_cached(&store, root, &IndexOptions::default(), c).unwrap(),
            None => index_repository(&store, root, &IndexOptions::default()).unwrap(),
        };
        ms(t.elapsed())
    };
    let originals: Vec<String> = picks
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect();
    // As the CLI runs them: every run reads the interfaces from the store.
    let mut body_cli = Vec::new();
    for (target, original) in picks.iter().zip(&originals) {
        let syntax = Syntax::of(target);
        let cli: Vec<f64> = (0..3)
            .map(|i| {
                timed(
                    target,
                    format!("{} graphctx bench edit {i}\n{original}", syntax.comment),
                    None,
                )
            })
            .collect();
        timed(target, original.clone(), None);
        body_cli.push(median(cli));
    }
    // The command line as a user runs it: a whole process (start, open,
    // walk, run, exit) on the median file, nothing edited and after a
    // body edit.
    let process = |db: &Path| -> f64 {
        let t = Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_graphctx"))
            .arg("index")
            .arg(root)
            .arg("--db")
            .arg(db)
            .arg("--no-history")
            .output()
            .expect("graphctx runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        ms(t.elapsed())
    };
    let (process_noop, process_body) = match &location {
        Location::Sqlite(db) => {
            let (target, original) = (&picks[1], &originals[1]);
            let noop: Vec<f64> = (0..3).map(|_| process(db)).collect();
            let body: Vec<f64> = (0..3)
                .map(|i| {
                    let edit = format!(
                        "{} graphctx process edit {i}\n{original}",
                        Syntax::of(target).comment
                    );
                    std::fs::write(target, edit).unwrap();
                    process(db)
                })
                .collect();
            std::fs::write(target, original).unwrap();
            process(db);
            (median(noop), median(body))
        }
        _ => (0.0, 0.0),
    };
    // As a server runs them, one that has been up for a while: its first
    // run and its first interface edit (which reads every file's names)
    // are not timed.
    let mut cache = InterfaceCache::with_symbol_table();
    index_repository_cached(&store, root, &IndexOptions::default(), &mut cache).unwrap();
    let (first, first_original) = (&picks[0], &originals[0]);
    timed(
        first,
        format!("{first_original}\n{}", Syntax::of(first).new_fn("warm")),
        Some(&mut cache),
    );
    timed(first, first_original.clone(), Some(&mut cache));
    // A server that watches the tree is told which paths changed, and
    // looks only at those instead of `stat`-ing every file.
    let watched = |target: &Path, cache: &mut InterfaceCache| {
        cache.watched(walk::WatchedChanges {
            paths: [target.to_path_buf()].into(),
        });
    };
    let (mut body_server, mut body_watched, mut iface) = (Vec::new(), Vec::new(), Vec::new());
    for (target, original) in picks.iter().zip(&originals) {
        let syntax = Syntax::of(target);
        let server: Vec<f64> = (0..3)
            .map(|i| {
                let text = format!("{} graphctx bench edit {i}.\n{original}", syntax.comment);
                timed(target, text, Some(&mut cache))
            })
            .collect();
        let told: Vec<f64> = (0..3)
            .map(|i| {
                let text = format!("{} graphctx bench edit {i},\n{original}", syntax.comment);
                std::fs::write(target, text).unwrap();
                watched(target, &mut cache);
                let t = Instant::now();
                index_repository_cached(&store, root, &IndexOptions::default(), &mut cache)
                    .unwrap();
                ms(t.elapsed())
            })
            .collect();
        body_watched.push(median(told));
        let new_fn: Vec<f64> = (0..3)
            .map(|i| {
                let text = format!("{original}\n{}", syntax.new_fn(&format!("edit_{i}")));
                timed(target, text, Some(&mut cache))
            })
            .collect();
        timed(target, original.clone(), Some(&mut cache));
        body_server.push(median(server));
        iface.push(median(new_fn));
    }
    // A `pub fn` that other files call, renamed where it is defined (its
    // callers' references now resolve to nothing): the files that mention
    // the name are resolved again, as a server runs it.
    let rename = used_pub_fn(&files, &sources).map(|(file, name, users)| {
        let original = std::fs::read_to_string(&file).unwrap_or_default();
        let def = Syntax::of(&file).def;
        let renamed = original.replacen(
            &format!("{def}{name}("),
            &format!("{def}{name}_renamed("),
            1,
        );
        let (mut times, mut told) = (Vec::new(), Vec::new());
        let mut resolved = 0;
        let texts = [
            &renamed, &original, &renamed, &original, &renamed, &original,
        ];
        for (i, text) in texts.into_iter().enumerate() {
            std::fs::write(&file, text).unwrap();
            // The last three as a watching server runs them.
            let watching = i >= 3;
            if watching {
                watched(&file, &mut cache);
            }
            let t = Instant::now();
            let s = index_repository_cached(&store, root, &IndexOptions::default(), &mut cache)
                .unwrap();
            match watching {
                true => told.push(ms(t.elapsed())),
                false => times.push(ms(t.elapsed())),
            }
            resolved = s.files_resolved;
        }
        // The same rename and back from the command line, whole processes.
        let cli: Vec<f64> = match &location {
            Location::Sqlite(db) => [&renamed, &original]
                .into_iter()
                .map(|text| {
                    std::fs::write(&file, text).unwrap();
                    process(db)
                })
                .collect(),
            _ => Vec::new(),
        };
        index_repository_cached(&store, root, &IndexOptions::default(), &mut cache).unwrap();
        (
            name,
            users,
            resolved,
            median(times),
            median(told),
            median(cli),
        )
    });
    let worst = |v: &[f64]| v.last().copied().unwrap_or(0.0);
    let (body_cli_worst, body_server_worst, iface_worst) =
        (worst(&body_cli), worst(&body_server), worst(&iface));
    let body_watched_worst = worst(&body_watched);
    let (body_cli, body_server, iface) = (median(body_cli), median(body_server), median(iface));
    let body_watched = median(body_watched);

    let (rss, db_bytes) = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("--child")
        .arg(root)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| {
            let mut fields = s.split_whitespace().map(|f| f.parse::<u64>().ok());
            Some((fields.next()??, fields.next()??))
        })
        .unwrap_or((0, 0));

    println!(
        "{label:<22} {:>5} files {:>6} KiB | parse {:>7.1} ms | cold index {:>7.1} ms = {:>4.2}x parse | \
         no-op {:>6.1} ms | body edit: CLI {:>6.1} ms (largest file {:>6.1}), server {:>6.1} ms ({:>6.1}), watched {:>6.1} ms ({:>6.1}) | \
         new pub fn {:>6.1} ms ({:>6.1}) | {:>6} entities {:>6} edges | {:>8.0} entities/s {:>8.0} edges/s | peak RSS {:>5.1} MiB | database {:>6.1} MiB",
        files.len(),
        bytes / 1024,
        parse,
        cold,
        cold / parse,
        noop,
        body_cli,
        body_cli_worst,
        body_server,
        body_server_worst,
        body_watched,
        body_watched_worst,
        iface,
        iface_worst,
        s.entities,
        s.edges,
        s.entities as f64 / (cold / 1000.0),
        s.edges as f64 / (cold / 1000.0),
        rss as f64 / 1024.0,
        db_bytes as f64 / (1024.0 * 1024.0),
    );
    println!(
        "{label:<22} command line as a whole process: no-op {process_noop:>6.1} ms, body edit {process_body:>6.1} ms (the median file)"
    );
    if let Some((name, users, resolved, t, told, cli)) = rename {
        println!(
            "{label:<22} rename of `{name}` (a public function named in {users} other files): {t:>6.1} ms, watched {told:>6.1} ms, {resolved} of {} files resolved; command line (whole process) {cli:>6.1} ms",
            files.len()
        );
    }
}

/// A public function (Rust's `pub fn`, Python's module-level `def`)
/// defined once and named in a few other files (2 to 20): the one named
/// in the most, first by path on ties. `(file, name, files that name it
/// besides its own)`.
fn used_pub_fn(files: &[walk::SourceFile], sources: &[String]) -> Option<(PathBuf, String, usize)> {
    use std::collections::{BTreeMap, BTreeSet};
    let idents = |text: &str| -> BTreeSet<String> {
        text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| w.len() >= 6)
            .map(str::to_string)
            .collect()
    };
    let mut named_in: BTreeMap<String, usize> = BTreeMap::new();
    let mut defined: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (file, text)) in files.iter().zip(sources).enumerate() {
        for w in idents(text) {
            *named_in.entry(w).or_default() += 1;
        }
        let def = Syntax::of(&file.abs_path).def;
        for part in text.split(def).skip(1) {
            let name: String = part
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name.len() >= 6 && part[name.len()..].starts_with('(') {
                defined.entry(name).or_default().push(i);
            }
        }
    }
    defined
        .into_iter()
        .filter(|(_, at)| at.len() == 1)
        .map(|(name, at)| {
            let users = named_in.get(&name).copied().unwrap_or(1) - 1;
            (users, name, at[0])
        })
        .filter(|(users, _, _)| (2..=20).contains(users))
        .max_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(&a.2)))
        .map(|(users, name, i)| (files[i].abs_path.clone(), name, users))
}

/// The edits the bench makes, in the syntax of a file's language.
struct Syntax {
    /// What starts a line comment.
    comment: &'static str,
    /// What a public function's definition starts with, at a line's start
    /// (after the newline it follows).
    def: &'static str,
    /// A new public function named after a suffix, which no other file
    /// names.
    new_fn: fn(&str) -> String,
}

impl Syntax {
    fn of(path: &Path) -> Syntax {
        match path.extension().and_then(|e| e.to_str()) {
            Some("py" | "pyi") => Syntax {
                comment: "#",
                def: "\ndef ",
                new_fn: |s| format!("\ndef graphctx_bench_{s}():\n    return 1\n"),
            },
            Some("ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs") => Syntax {
                comment: "//",
                def: "export function ",
                new_fn: |s| format!("export function graphctx_bench_{s}() {{ return 1 }}\n"),
            },
            _ => Syntax {
                comment: "//",
                def: "pub fn ",
                new_fn: |s| format!("pub fn graphctx_bench_{s}() -> u32 {{ 1 }}\n"),
            },
        }
    }

    fn new_fn(&self, suffix: &str) -> String {
        (self.new_fn)(suffix)
    }
}

/// Parse `source` alone with its language's parser (0 for a file no
/// language claims).
fn parse_only(x: &mut Extractors, path: &str, source: &str) -> usize {
    languages::of_file(path)
        .and_then(|lang| x.of(lang.id()).parse(source, None))
        .map_or(0, |t| t.root_node().child_count())
}

fn main() {
    graphctx::languages::install();
    // As the binary does (src/main.rs): before any parser exists.
    graphctx::index::parser_memory::parsers_use_mimalloc();
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--child") {
        child(Path::new(&args[1]));
        return;
    }
    println!(
        "graphctx index benchmark, {} rayon threads",
        rayon::current_num_threads()
    );
    let names: Vec<String> = if args.is_empty() {
        ["regex-automata", "syn", "serde_json", "clap_builder"]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .into_iter()
            .chain([env!("CARGO_MANIFEST_DIR").to_string()])
            .collect()
    } else {
        args
    };
    for name in names {
        let path = PathBuf::from(&name);
        let (label, root) = if name == "registry" {
            match common::registry_src() {
                Some(src) => ("registry tree".to_string(), src),
                None => {
                    println!("registry: no ~/.cargo/registry/src, skipped");
                    continue;
                }
            }
        } else if path.is_dir() {
            let label = if name == env!("CARGO_MANIFEST_DIR") {
                "graphctx (this repo)".to_string()
            } else {
                path.file_name().unwrap().to_string_lossy().into_owned()
            };
            (label, path)
        } else if let Some(p) = find_crate(&name) {
            (p.file_name().unwrap().to_string_lossy().into_owned(), p)
        } else {
            println!("{name}: not found in the cargo registry, skipped");
            continue;
        };
        bench_tree(&label, &root);
    }
}
