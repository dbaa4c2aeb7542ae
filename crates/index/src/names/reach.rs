//! The names of every file turned around, for a process that finds the
//! scope of edit after edit (a server): from a name to the names it
//! touches and to the files that mention it.
//!
//! Spreading touched names (a language's `spread`) and finding the files that
//! mention them used to read every file's facts and names on every edit,
//! several times over until nothing more was touched: tens of
//! milliseconds on a tree of ten thousand files, for an edit whose reach
//! is a handful of names. [`NameReach`] holds both relations by name, so
//! an edit reads the entries of the names it touches and nothing else.
//!
//! Invariants:
//!
//! - The answers are those of a scan of every file's facts and names: an
//!   entity whose declared types mention a touched name is touched, a
//!   name a `use` binds to a touched name is touched, until nothing more
//!   is; a file is in scope when it mentions a touched name.
//! - A file replaced or removed leaves its old entries behind, stale by
//!   its version, and they are skipped; once stale entries outnumber the
//!   live ones the owner makes the index again ([`NameReach::is_worn`]),
//!   so the index stays within twice the size of the facts it turns.

use std::collections::BTreeSet;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::{Name, SpreadFacts};

/// The index's small size below which stale entries are never worth a
/// rebuild.
const WORN_FLOOR: usize = 1 << 16;

/// One inverted relation, name → (file, value), with per-file versions.
#[derive(Debug)]
struct Turned<V> {
    paths: Vec<String>,
    ids: HashMap<String, u32>,
    /// By file id: its version, whether it is live, and its entries.
    files: Vec<FileState>,
    by_name: HashMap<Name, Vec<(u32, u32, V)>>,
    live: usize,
    stale: usize,
}

#[derive(Debug, Clone, Copy)]
struct FileState {
    version: u32,
    live: bool,
    entries: usize,
}

impl<V> Default for Turned<V> {
    fn default() -> Self {
        Turned {
            paths: Vec::new(),
            ids: HashMap::default(),
            files: Vec::new(),
            by_name: HashMap::default(),
            live: 0,
            stale: 0,
        }
    }
}

impl<V: Copy> Turned<V> {
    fn id(&self, path: &str) -> Option<u32> {
        self.ids.get(path).copied()
    }

    /// `path`'s entries are `entries` from now on.
    fn set(&mut self, path: &str, entries: impl Iterator<Item = (Name, V)>) {
        let id = match self.id(path) {
            Some(id) => id,
            None => {
                let id = self.paths.len() as u32;
                self.paths.push(path.to_string());
                self.ids.insert(path.to_string(), id);
                self.files.push(FileState {
                    version: 0,
                    live: false,
                    entries: 0,
                });
                id
            }
        };
        self.retire(id);
        let file = &mut self.files[id as usize];
        file.version = file.version.wrapping_add(1);
        file.live = true;
        let version = file.version;
        let mut count = 0;
        for (name, value) in entries {
            self.by_name
                .entry(name)
                .or_default()
                .push((id, version, value));
            count += 1;
        }
        self.files[id as usize].entries = count;
        self.live += count;
    }

    fn remove(&mut self, path: &str) {
        if let Some(id) = self.id(path) {
            self.retire(id);
        }
    }

    fn retire(&mut self, id: u32) {
        let file = &mut self.files[id as usize];
        if file.live {
            file.live = false;
            self.live -= file.entries;
            self.stale += file.entries;
            file.entries = 0;
        }
    }

    /// The live entries of `name`, with their file ids.
    fn get(&self, name: Name) -> impl Iterator<Item = (u32, V)> + '_ {
        self.by_name
            .get(&name)
            .into_iter()
            .flatten()
            .filter(|(id, version, _)| {
                let file = self.files[*id as usize];
                file.live && file.version == *version
            })
            .map(|&(id, _, value)| (id, value))
    }

    fn is_worn(&self) -> bool {
        self.stale > self.live.max(WORN_FLOOR)
    }
}

/// Which names a touched name touches and which files mention it, by
/// name (see the module docs).
#[derive(Debug, Default)]
pub struct NameReach {
    /// A name → the names it touches (an entity whose declared types
    /// mention it, a name a `use` binds to it).
    touches: Turned<Name>,
    /// A name → the files that mention it.
    mentions: Turned<()>,
}

impl NameReach {
    /// `path`'s spread facts are `facts` from now on.
    pub fn set_facts(&mut self, path: &str, facts: &SpreadFacts) {
        self.touches.set(path, facts.edges());
    }

    /// `path` mentions `names` from now on.
    pub fn set_mentioned(&mut self, path: &str, names: &[Name]) {
        self.mentions.set(path, names.iter().map(|&n| (n, ())));
    }

    /// `path` is gone: neither its facts nor its names count any more.
    pub fn remove(&mut self, path: &str) {
        self.touches.remove(path);
        self.mentions.remove(path);
    }

    /// Whether stale entries outnumber the live ones: the owner should
    /// make the index again from the facts and names it holds.
    pub fn is_worn(&self) -> bool {
        self.touches.is_worn() || self.mentions.is_worn()
    }

    /// Spread `touched` until nothing more is touched, through the facts
    /// held of every file but the `skipped` ones, and through the facts
    /// `now` (of files as they are now, the held ones being the last
    /// run's).
    pub fn spread(&self, touched: &mut HashSet<Name>, skipped: &[&str], now: &[SpreadFacts]) {
        let skipped: HashSet<u32> = skipped
            .iter()
            .filter_map(|path| self.touches.id(path))
            .collect();
        let mut fresh: HashMap<Name, Vec<Name>> = HashMap::default();
        for (from, to) in now.iter().flat_map(SpreadFacts::edges) {
            fresh.entry(from).or_default().push(to);
        }
        let mut queue: Vec<Name> = touched.iter().copied().collect();
        while let Some(name) = queue.pop() {
            let held = self
                .touches
                .get(name)
                .filter(|(id, _)| !skipped.contains(id))
                .map(|(_, to)| to);
            let now = fresh.get(&name).into_iter().flatten().copied();
            for to in held.chain(now) {
                if touched.insert(to) {
                    queue.push(to);
                }
            }
        }
    }

    /// The files that mention a name of `touched`.
    pub fn mentioning(&self, touched: &HashSet<Name>) -> BTreeSet<&str> {
        let mut files: HashSet<u32> = HashSet::default();
        for &name in touched {
            files.extend(self.mentions.get(name).map(|(id, ())| id));
        }
        files
            .into_iter()
            .map(|id| self.mentions.paths[id as usize].as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(typed: &[(Name, &[Name])], bindings: &[(Name, Name)]) -> SpreadFacts {
        SpreadFacts {
            typed: typed.iter().map(|(n, m)| (*n, m.to_vec())).collect(),
            bindings: bindings.to_vec(),
        }
    }

    fn spread(reach: &NameReach, start: &[Name], instead: &[(&str, SpreadFacts)]) -> Vec<Name> {
        let mut touched: HashSet<Name> = start.iter().copied().collect();
        let skipped: Vec<&str> = instead.iter().map(|(p, _)| *p).collect();
        let now: Vec<SpreadFacts> = instead.iter().map(|(_, f)| f.clone()).collect();
        reach.spread(&mut touched, &skipped, &now);
        let mut out: Vec<Name> = touched.into_iter().collect();
        out.sort();
        out
    }

    #[test]
    fn spreads_through_types_and_bindings_to_a_fixed_point() {
        let mut reach = NameReach::default();
        // 2 mentions 1 in its type; 3 is bound to 2 by a `use`; 9 is
        // unrelated.
        reach.set_facts("a.rs", &facts(&[(2, &[1, 7])], &[]));
        reach.set_facts("b.rs", &facts(&[(9, &[8])], &[(3, 2)]));
        assert_eq!(spread(&reach, &[1], &[]), vec![1, 2, 3]);
        assert_eq!(spread(&reach, &[8], &[]), vec![8, 9]);
    }

    #[test]
    fn a_replaced_file_counts_with_its_facts_now_and_a_removed_one_not_at_all() {
        let mut reach = NameReach::default();
        reach.set_facts("a.rs", &facts(&[(2, &[1])], &[]));
        reach.set_facts("b.rs", &facts(&[(3, &[2])], &[]));
        // a.rs now: 4 mentions 1, 2 no longer does.
        let now = [("a.rs", facts(&[(4, &[1])], &[]))];
        assert_eq!(spread(&reach, &[1], &now), vec![1, 4]);
        // Skipped with no facts now (a file that is no longer parsed).
        let skipped = NameReach::spread;
        let mut touched: HashSet<Name> = [1].into_iter().collect();
        skipped(&reach, &mut touched, &["a.rs"], &[]);
        assert_eq!(touched.len(), 1);
        reach.set_facts("a.rs", &now[0].1);
        assert_eq!(spread(&reach, &[1], &[]), vec![1, 4]);
        assert_eq!(spread(&reach, &[2], &[]), vec![2, 3]);
        reach.remove("b.rs");
        assert_eq!(spread(&reach, &[2], &[]), vec![2]);
    }

    #[test]
    fn files_mentioning_a_touched_name_as_they_mention_now() {
        let mut reach = NameReach::default();
        reach.set_mentioned("a.rs", &[1, 2]);
        reach.set_mentioned("b.rs", &[2, 3]);
        let touched: HashSet<Name> = [2].into_iter().collect();
        assert_eq!(
            reach.mentioning(&touched).into_iter().collect::<Vec<_>>(),
            vec!["a.rs", "b.rs"]
        );
        reach.set_mentioned("a.rs", &[1]);
        reach.remove("b.rs");
        assert!(reach.mentioning(&touched).is_empty());
        reach.set_mentioned("b.rs", &[2]);
        assert_eq!(
            reach.mentioning(&touched).into_iter().collect::<Vec<_>>(),
            vec!["b.rs"]
        );
    }

    #[test]
    fn stale_entries_wear_the_index_out() {
        let mut reach = NameReach::default();
        let names: Vec<Name> = (0..WORN_FLOOR as Name).collect();
        reach.set_mentioned("a.rs", &names);
        assert!(!reach.is_worn());
        reach.set_mentioned("a.rs", &names);
        assert!(!reach.is_worn());
        reach.set_mentioned("a.rs", &names);
        assert!(reach.is_worn());
    }
}
