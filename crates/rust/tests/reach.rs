//! The inverted index of names (`graphctx_index::names::NameReach`)
//! over real Rust code: it answers as a scan of every file would.

use graphctx_index::names::{Name, NameReach, SpreadFacts};
use graphctx_index::{languages, walk};
use rustc_hash::FxHashSet as HashSet;

/// What the index answers, by a scan of every file's facts and names
/// until nothing more is touched.
fn scanned(
    files: &[(String, Vec<Name>, SpreadFacts)],
    start: &HashSet<Name>,
) -> (Vec<Name>, Vec<String>) {
    let mut touched = start.clone();
    loop {
        let before = touched.len();
        for (_, _, facts) in files {
            for (from, to) in facts.edges() {
                if touched.contains(&from) {
                    touched.insert(to);
                }
            }
        }
        if touched.len() == before {
            break;
        }
    }
    let mut names: Vec<Name> = touched.iter().copied().collect();
    names.sort();
    let paths = files
        .iter()
        .filter(|(_, mentioned, _)| mentioned.iter().any(|n| touched.contains(n)))
        .map(|(p, _, _)| p.clone())
        .collect();
    (names, paths)
}

fn reached(reach: &NameReach, start: &HashSet<Name>) -> (Vec<Name>, Vec<String>) {
    let mut touched = start.clone();
    reach.spread(&mut touched, &[], &[]);
    let mut names: Vec<Name> = touched.iter().copied().collect();
    names.sort();
    let paths = reach
        .mentioning(&touched)
        .into_iter()
        .map(str::to_string)
        .collect();
    (names, paths)
}

/// This project's sources: every entity name of every tenth file
/// touched in turn, the index answering as a scan does, also after
/// files were swapped for one another and removed (their old entries
/// stale), and once it is made again.
#[test]
fn answers_as_a_scan_of_every_file_over_real_code() {
    languages::install(vec![&graphctx_rust::Rust]);
    // The workspace's root, two levels above this crate.
    let root = &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files: Vec<(String, Vec<Name>, SpreadFacts)> = walk::walk(root)
        .files
        .into_iter()
        .filter(|f| f.ctx.path.starts_with("crates/"))
        .map(|f| {
            let text = std::fs::read_to_string(&f.abs_path).unwrap();
            let lang = languages::get(f.lang);
            let ex = lang.extractor().extract(&f.ctx, &text);
            (f.ctx.path, lang.mentioned(&ex), lang.spread_facts(&ex))
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(files.len() > 50);
    let starts: Vec<HashSet<Name>> = files
        .iter()
        .step_by(10)
        .map(|(_, _, facts)| facts.typed.iter().map(|(n, _)| *n).collect())
        .filter(|s: &HashSet<Name>| !s.is_empty())
        .collect();
    let mut reach = NameReach::default();
    for (path, mentioned, facts) in &files {
        reach.set_facts(path, facts);
        reach.set_mentioned(path, mentioned);
    }
    let check = |reach: &NameReach, files: &[(String, Vec<Name>, SpreadFacts)]| {
        for start in &starts {
            assert_eq!(reached(reach, start), scanned(files, start));
        }
    };
    check(&reach, &files);
    assert!(starts.iter().any(|s| reached(&reach, s).1.len() > 3));
    // Each of the first files takes the next one's facts and names,
    // and the last of them goes.
    for i in 0..20 {
        let (next_mentioned, next_facts) = (files[i + 1].1.clone(), files[i + 1].2.clone());
        reach.set_facts(&files[i].0, &next_facts);
        reach.set_mentioned(&files[i].0, &next_mentioned);
        files[i].1 = next_mentioned;
        files[i].2 = next_facts;
    }
    let gone = files.remove(20);
    reach.remove(&gone.0);
    check(&reach, &files);
    let mut again = NameReach::default();
    for (path, mentioned, facts) in &files {
        again.set_facts(path, facts);
        again.set_mentioned(path, mentioned);
    }
    check(&again, &files);
}
