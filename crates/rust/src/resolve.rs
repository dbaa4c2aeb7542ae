//! Name resolution: raw references of all files → edges between entity keys.
//!
//! Resolution sees every file's extract at once and is a pure function of
//! them, which is what lets an incremental index equal a full rebuild: the
//! indexer re-runs it over stored extracts of unchanged files plus fresh
//! extracts of changed ones and stores only the difference.
//!
//! It follows Rust's rules where they are knowable from syntax: module paths
//! from the Cargo layout, `crate`/`self`/`super`/`Self`, items of the current
//! module, `use` declarations (renames, groups, globs, re-exports), other
//! workspace crates by name, associated items through the impl blocks of a
//! type, enum variants to their enum. Method calls go to the methods of the
//! receiver's type when the extractor saw it (`self`, a typed parameter or
//! `let`, a constructor, a struct field); a receiver of a type that is not
//! ours only reaches methods our impl blocks add to that type. Method calls
//! on unknown receivers resolve only when the method name is unambiguous (or
//! all candidates implement the same trait method). Anything else becomes an
//! unresolved reference with its text — never an edge to a key that does not
//! exist.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

mod build;
mod impl_maps;
mod patch;
mod resident;
mod typing;
use build::Slot;
pub use resident::ResidentTable;
use typing::Site;

use crate::model::{
    Entity, EntityKind, FileContext, FileExtract, RawRef, RefKind, UseDecl, Visibility,
};

/// Relationship names stored in `edge.rel`.
pub use crate::model::rel::name as rel;

use crate::index::links::LinksBuilder;
pub use crate::index::links::{FileLinks, HeldRefs, RefsApart};

/// Resolve the references of every file. The result has an entry for each
/// input file (possibly empty).
pub fn resolve<'a>(
    files: &[(&'a FileContext, &'a FileExtract)],
) -> BTreeMap<String, FileLinks<'a>> {
    resolve_files(files, |_| true, RefsApart::new())
}

/// Resolve the references of the files `wanted` picks (by path), against
/// a symbol table of all `files`. The table reads only what
/// [`super::interface`] keeps, so the files not picked may be interfaces
/// alone; the picked ones must be whole extracts, or interfaces whose
/// other references `apart` holds.
pub fn resolve_files<'a>(
    files: &[(&'a FileContext, &'a FileExtract)],
    wanted: impl Fn(&str) -> bool,
    apart: RefsApart,
) -> BTreeMap<String, FileLinks<'a>> {
    let table = SymbolTable::build(files);
    let picked: Vec<(&'a FileContext, &'a FileExtract)> = files
        .iter()
        .filter(|(_, e)| wanted(&e.path))
        .copied()
        .collect();
    resolve_against(&table, &picked, apart)
}

fn resolve_against<'a>(
    table: &SymbolTable<'a>,
    files: &[(&'a FileContext, &'a FileExtract)],
    mut apart: RefsApart,
) -> BTreeMap<String, FileLinks<'a>> {
    // Each file with the references held apart for it, resolved on every
    // core; a file's held references are dropped once it is resolved.
    let work: Vec<_> = files
        .iter()
        .map(|&(ctx, extract)| (ctx, extract, apart.remove(&extract.path)))
        .collect();
    work.into_par_iter()
        .map(|(ctx, extract, held_apart)| {
            let held_apart = held_apart
                .map(|h| h.into_refs(super::interface::decode_body))
                .unwrap_or_default();
            let links = resolve_one(table, ctx, extract, held_apart);
            (extract.path.clone(), links)
        })
        .collect()
}

/// The links of one file.
fn resolve_one<'a>(
    table: &SymbolTable<'a>,
    ctx: &'a FileContext,
    extract: &'a FileExtract,
    held_apart: Vec<RawRef>,
) -> FileLinks<'a> {
    let mut links = LinksBuilder::default();
    let krate = ctx.unit.as_str();
    // Containment from the syntax tree, and of a file's module by the
    // module one level up (`mod a;` in lib.rs contains src/a.rs).
    for e in &extract.entities {
        match &e.parent {
            Some(parent) => links.edge(parent, rel::CONTAINS, &e.key),
            None => {
                if let Some(parent_key) = table.parent_module_key(krate, &ctx.module_path) {
                    links.edge(parent_key, rel::CONTAINS, &e.key);
                }
            }
        }
    }
    // A type contains the methods of its impl blocks, wherever they are.
    for e in &extract.entities {
        for owner in table.owners_of_member(e) {
            links.edge(owner, rel::CONTAINS, &e.key);
        }
    }
    for r in extract.refs.iter().chain(&held_apart) {
        table.resolve_ref(krate, r, &mut links);
    }
    drop(held_apart);
    for u in &extract.uses {
        table.resolve_use(krate, u, &mut links);
    }
    links.seal()
}

type ModId = usize;
type EntId = usize;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Ns {
    Type,
    Value,
    Macro,
    Any,
}

fn in_ns(kind: EntityKind, ns: Ns) -> bool {
    use EntityKind::*;
    match ns {
        Ns::Any => !matches!(kind, Impl | Method),
        Ns::Type => matches!(kind, Struct | Enum | Union | Trait | TypeAlias | Module),
        Ns::Value => matches!(kind, Function | Const | Static | Struct),
        Ns::Macro => kind == Macro,
    }
}

#[derive(Default)]
struct Module<'a> {
    /// The crate the module belongs to: its `use` paths resolve there.
    krate: &'a str,
    key: Option<&'a str>,
    parent: Option<ModId>,
    items: HashMap<&'a str, Vec<EntId>>,
    children: HashMap<&'a str, ModId>,
    uses: Vec<&'a UseDecl>,
}

#[derive(Clone, Debug, PartialEq)]
enum Res {
    Module(ModId),
    Items(Vec<EntId>),
}

/// The answers of [`SymbolTable::lookup`] in one module and namespace,
/// by name.
type Answers = HashMap<Box<str>, Answer>;

/// Which answers of one module a lookup asks for: its namespace, and
/// whether the asker sees the module's private `use`s (it is the module or
/// inside it) or only its `pub use`s (a glob import from elsewhere: `pub
/// use self::cfi::*` does not bring what `cfi` imports privately).
type Asked = (ModId, Ns, bool);

/// What the lookup memo knows of one question.
#[derive(Clone, Debug)]
enum Answer {
    /// Being answered by the lookup this many lookups deep (the
    /// outermost is 1): asked again
    /// meanwhile (an import cycle), it answers "not found".
    Asking(u32),
    /// Answered while the question `.1` lookups deep was still being
    /// answered, and so without what that question finds: an answer only
    /// until that lookup returns.
    Provisional(Option<Res>, u32),
    /// Answered whatever else is being asked.
    Known(Option<Res>),
}

/// Where [`SymbolTable::lookup`] is in its recursion: which answers it
/// may keep.
struct Asking {
    /// Lookups under way; the outermost is the first.
    open: u32,
    /// The shallowest lookup under way that the current one read an
    /// unfinished answer of (`u32::MAX`: none; [`CUT_OFF`]: the search
    /// was cut off at [`MAX_DEPTH`]).
    reads_open: u32,
    /// Provisional answers, in the order they were given.
    provisional: Vec<(Asked, Box<str>)>,
}

/// One thread's state of [`SymbolTable::lookup`].
#[derive(Default)]
struct Lookups {
    /// Answers by module and namespace, then name: a question already
    /// answered is found without copying its name.
    memo: HashMap<Asked, Answers>,
    /// The lookups under way, for which answers the memo may keep.
    asking: Asking,
}

impl Lookups {
    /// Keep the answer `r` of the lookup `at` deep (begun when the
    /// lookups outside it had read `outer_reads`, after
    /// `provisional_before` provisional answers): for good, until the
    /// shallowest open question it read returns, or not at all.
    fn settle(
        &mut self,
        asked: Asked,
        name: &str,
        r: &Option<Res>,
        at: u32,
        outer_reads: u32,
        provisional_before: usize,
    ) {
        let Lookups { memo, asking } = self;
        asking.open -= 1;
        let reads = asking.reads_open;
        if reads < at && asking.open > 0 {
            // Lacks an answer still open further up; so do the answers
            // given meanwhile that lacked this one's.
            for (pasked, pname) in &asking.provisional[provisional_before..] {
                if let Some(Answer::Provisional(_, open)) =
                    memo.get_mut(pasked).and_then(|n| n.get_mut(pname))
                {
                    *open = (*open).min(reads);
                }
            }
            asking.provisional.push((asked, name.into()));
            asking.reads_open = outer_reads.min(reads);
            if let Some(answer) = memo.get_mut(&asked).and_then(|n| n.get_mut(name)) {
                *answer = Answer::Provisional(r.clone(), reads);
            }
        } else {
            // Complete: so are the answers given meanwhile without it.
            for (pasked, pname) in asking.provisional.drain(provisional_before..) {
                if let Some(answers) = memo.get_mut(&pasked) {
                    answers.remove(&pname);
                }
            }
            asking.reads_open = outer_reads;
            let answers = memo.get_mut(&asked);
            if reads == CUT_OFF {
                // The outermost lookup, cut off at its depth: its answer
                // is for this depth only.
                if let Some(answers) = answers {
                    answers.remove(name);
                }
            } else if let Some(answer) = answers.and_then(|n| n.get_mut(name)) {
                *answer = Answer::Known(r.clone());
            }
        }
    }
}

/// A value per thread of rayon's pool, and one for any other thread (the
/// one that builds or patches the table). Each slot is used by its thread
/// alone; the lock only makes that safe to share. Made with a slot for
/// each thread of the pool the table is built on; a thread of a larger
/// pool gets a slot of its own when it first asks, so that no two threads
/// of a pool ever share one (their open questions would mix).
struct PerThread<T> {
    slots: Box<[Mutex<T>]>,
    /// Slots of thread indexes beyond `slots`, made as they are asked for.
    more: Mutex<Vec<Arc<Mutex<T>>>>,
}

impl<T: Default> Default for PerThread<T> {
    fn default() -> Self {
        let slots = rayon::current_num_threads() + 1;
        PerThread {
            slots: (0..slots).map(|_| Default::default()).collect(),
            more: Mutex::default(),
        }
    }
}

impl<T: Default> PerThread<T> {
    /// `f` over this thread's value; `f` must not call `with` again.
    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let slot = rayon::current_thread_index().map_or(0, |i| i + 1);
        if let Some(value) = self.slots.get(slot) {
            return f(&mut lock(value));
        }
        let extra = {
            let mut more = lock(&self.more);
            let i = slot - self.slots.len();
            if more.len() <= i {
                more.resize_with(i + 1, Arc::default);
            }
            Arc::clone(&more[i])
        };
        let mut value = lock(&extra);
        f(&mut value)
    }

    /// `f` over every thread's value.
    fn each(&mut self, mut f: impl FnMut(&mut T)) {
        for value in self.slots.iter_mut() {
            f(value.get_mut().unwrap_or_else(PoisonError::into_inner));
        }
        for value in lock(&self.more).iter() {
            f(&mut lock(value));
        }
    }
}

/// `m` locked; a panic of another holder leaves the value as it was.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// [`Asking::reads_open`] of a search cut off at [`MAX_DEPTH`]: shallower
/// than any lookup.
const CUT_OFF: u32 = 0;

impl Default for Asking {
    fn default() -> Self {
        Asking {
            open: 0,
            reads_open: u32::MAX,
            provisional: Vec::new(),
        }
    }
}

/// Every name the references of a repository can reach, read from the
/// interfaces of its files (see [`super::interface`]).
///
/// Entity ids are positions: each file has a run of ids (its [`Slot`],
/// in the order of the files the table was built from) with room to
/// grow, so a file's interface can be replaced without moving the ids of
/// any other file (see [`SymbolTable::replace_file`]). Every list of ids
/// in the table is in id order, which is file order.
struct SymbolTable<'a> {
    /// By id: the entity and its crate; the unused ids of a slot hold a
    /// placeholder no map refers to.
    entities: Vec<(&'a Entity, &'a str)>,
    /// Per file, in build order: its ids and what the impl-block pass
    /// reads of it.
    slots: Vec<Slot<'a>>,
    key_to_ent: HashMap<&'a str, EntId>,
    /// Keys that more than one entity has: `key_to_ent` holds the last.
    dup_keys: rustc_hash::FxHashSet<&'a str>,
    modules: Vec<Module<'a>>,
    module_ids: HashMap<(&'a str, Vec<&'a str>), ModId>,
    module_of_key: HashMap<&'a str, ModId>,
    crate_roots: HashMap<&'a str, ModId>,
    /// Associated items by owner entity (type or trait).
    assoc: HashMap<EntId, HashMap<&'a str, Vec<EntId>>>,
    methods_by_name: HashMap<&'a str, Vec<EntId>>,
    macros_by_name: HashMap<&'a str, Vec<EntId>>,
    /// Owner types resolved per impl block.
    impl_owner: HashMap<EntId, Vec<EntId>>,
    /// Each thread's memo of [`SymbolTable::lookup`] and its lookups under
    /// way: files are resolved on every core, each thread with its own
    /// memo (the answers a memo keeps do not depend on which question
    /// came first, so neither does the graph on which thread asked).
    lookups: PerThread<Lookups>,
    /// Impl blocks whose self type is not ours (`impl Ext for String`), by
    /// the type's last segment, with the traits they implement.
    ext_impls: HashMap<&'a str, Vec<(EntId, Vec<EntId>)>>,
    /// The methods of those impl blocks, by the type's last segment, then
    /// name, in id order: what a method call on a value of a type that is
    /// not ours can reach without scanning every method of that name.
    ext_methods: HashMap<&'a str, HashMap<&'a str, Vec<EntId>>>,
    /// The impl references by the words they may read, made when a file
    /// is first replaced (see `impl_maps`).
    ref_words: Option<impl_maps::RefWords<'a>>,
    /// The `use`s of every module by the path segments they name, made
    /// when a file is first replaced and kept current by each replacement
    /// (see `patch`): what a changed name reaches through `use`s is found
    /// without reading every `use` of the repository.
    use_words: Option<patch::UseWords<'a>>,
    /// Items declared in a function's body, by function.
    locals_of: HashMap<EntId, HashMap<&'a str, Vec<EntId>>>,
    /// Traits our types implement (from `impl Trait for Type`), each
    /// with its impl block, in the impl blocks' id order.
    type_traits: HashMap<EntId, Vec<(EntId, EntId)>>,
}

/// The name a `use` brings into its module.
fn bound_name(u: &UseDecl) -> &str {
    let bound = match &u.alias {
        Some(a) => a.as_str(),
        None => u.path.last().map(String::as_str).unwrap_or(""),
    };
    if bound == "self" {
        // `use a::b::{self}` binds `b`.
        u.path.iter().rev().nth(1).map(String::as_str).unwrap_or("")
    } else {
        bound
    }
}

/// How deep a name search may go (each path segment and each `use`
/// followed is one level). Import cycles are stopped by the memo, not by
/// this: it only bounds the stack. A name re-exported through several
/// crates is 10–20 levels deep; a limit that real code reaches makes an
/// answer depend on where the search began (and so on which file asked
/// first, see [`SymbolTable::lookup`]).
const MAX_DEPTH: u32 = 64;

/// Method names of std's common types and traits (sorted). A call of one
/// of these on a receiver of unknown type is not resolved by name.
const STD_METHOD_NAMES: &[&str] = &[
    "and_then",
    "append",
    "as_bytes",
    "as_mut",
    "as_ref",
    "as_slice",
    "as_str",
    "borrow",
    "borrow_mut",
    "chars",
    "clear",
    "clone",
    "cloned",
    "cmp",
    "collect",
    "contains",
    "contains_key",
    "copied",
    "count",
    "default",
    "deref",
    "display",
    "drain",
    "ends_with",
    "entry",
    "eq",
    "expect",
    "extend",
    "filter",
    "filter_map",
    "find",
    "first",
    "flat_map",
    "flatten",
    "flush",
    "fmt",
    "fold",
    "from",
    "get",
    "get_mut",
    "hash",
    "insert",
    "into",
    "into_iter",
    "is_empty",
    "is_none",
    "is_some",
    "iter",
    "iter_mut",
    "join",
    "keys",
    "last",
    "len",
    "lines",
    "lock",
    "map",
    "map_err",
    "max",
    "min",
    "next",
    "ok",
    "ok_or",
    "parse",
    "partial_cmp",
    "peek",
    "pop",
    "push",
    "push_str",
    "read",
    "remove",
    "replace",
    "retain",
    "rev",
    "skip",
    "sort",
    "sort_by",
    "split",
    "starts_with",
    "sum",
    "take",
    "to_owned",
    "to_string",
    "to_vec",
    "trim",
    "truncate",
    "try_from",
    "try_into",
    "unwrap",
    "unwrap_or",
    "unwrap_or_default",
    "unwrap_or_else",
    "values",
    "write",
    "write_all",
    "zip",
];

impl<'a> SymbolTable<'a> {
    fn scope_of(&self, krate: &'a str, scope: &[String]) -> Option<ModId> {
        let path: Vec<&str> = scope.iter().map(String::as_str).collect();
        self.module_ids.get(&(krate, path)).copied()
    }

    fn key(&self, id: EntId) -> &'a str {
        self.entities[id].0.key.as_ref()
    }

    /// Look a single name up in a module: its own items and child modules,
    /// then its `use` declarations (named, then globs).
    ///
    /// Memoised per (module, name, namespace): with glob imports the same
    /// question is asked along many paths, and without the memo the
    /// search is exponential in the length of glob chains. A question
    /// already being answered further up the stack (an import cycle)
    /// answers "not found". What was answered with such an unfinished
    /// answer (or cut off at [`MAX_DEPTH`]) depends on where the search
    /// began: `base` re-exports `matrix::*` and `unit::*`, `matrix` imports
    /// `base::Unit`; asked of `base` first, `matrix` finds no `Unit` while
    /// `base`'s question is open. Such answers are kept only until the
    /// question they lacked returns, so every answer the memo keeps is the
    /// one a search from that question alone gives, whichever file asked
    /// first (a first index resolves every file with one memo, a later
    /// run only the changed ones: they must agree).
    fn lookup(&self, m: ModId, name: &str, ns: Ns, depth: u32) -> Option<Res> {
        self.lookup_as((m, ns, true), name, depth)
    }

    /// [`Self::lookup`] of what `asked` sees of its module.
    fn lookup_as(&self, asked: Asked, name: &str, depth: u32) -> Option<Res> {
        if depth > MAX_DEPTH {
            // Cut off: what is found depends on the depth the search
            // began at, so nothing answered above is kept past it (nor
            // past a cut in `resolve_path`).
            self.lookups.with(|l| l.asking.reads_open = CUT_OFF);
            return None;
        }
        let begun = self.lookups.with(|l| {
            let asking = &mut l.asking;
            match l.memo.get(&asked).and_then(|n| n.get(name)) {
                Some(Answer::Known(r)) => return Err(r.clone()),
                Some(Answer::Provisional(r, open)) => {
                    asking.reads_open = asking.reads_open.min(*open);
                    return Err(r.clone());
                }
                Some(Answer::Asking(open)) => {
                    asking.reads_open = asking.reads_open.min(*open);
                    return Err(None);
                }
                None => {}
            }
            asking.open += 1;
            let at = asking.open;
            let outer = std::mem::replace(&mut asking.reads_open, u32::MAX);
            l.memo
                .entry(asked)
                .or_default()
                .insert(name.into(), Answer::Asking(at));
            Ok((at, outer, asking.provisional.len()))
        });
        let (at, outer_reads, provisional_before) = match begun {
            Ok(begun) => begun,
            Err(known) => return known,
        };
        let r = self.lookup_uncached(asked, name, depth);
        self.lookups
            .with(|l| l.settle(asked, name, &r, at, outer_reads, provisional_before));
        r
    }

    fn lookup_uncached(&self, asked: Asked, name: &str, depth: u32) -> Option<Res> {
        let (m, ns, inside) = asked;
        let module = &self.modules[m];
        let krate = module.krate;
        let seen = |u: &&&UseDecl| inside || u.is_pub;
        if let Some(items) = module.items.get(name) {
            let hits: Vec<EntId> = items
                .iter()
                .copied()
                .filter(|&i| in_ns(self.entities[i].0.kind, ns))
                .collect();
            if !hits.is_empty() {
                // A module item is better answered as the module itself.
                if hits.len() == 1 && self.entities[hits[0]].0.kind == EntityKind::Module {
                    if let Some(&cm) = module.children.get(name) {
                        return Some(Res::Module(cm));
                    }
                }
                return Some(Res::Items(hits));
            }
        }
        if ns != Ns::Value && ns != Ns::Macro {
            if let Some(&cm) = module.children.get(name) {
                return Some(Res::Module(cm));
            }
        }
        for u in module.uses.iter().filter(|u| !u.glob).filter(seen) {
            let bound = bound_name(u);
            if bound != name || bound == "_" {
                continue;
            }
            let segs: Vec<&str> = u
                .path
                .iter()
                .map(String::as_str)
                .filter(|s| *s != "self" || u.path.len() == 1)
                .collect();
            if let Some(r) = self.resolve_use_path(krate, Some(m), &segs, ns, depth + 1) {
                return Some(r);
            }
        }
        // Every glob that offers the name: two that offer different items
        // make the name ambiguous (the caller's `settle` reports it).
        let mut glob_items: Vec<EntId> = Vec::new();
        for u in module.uses.iter().filter(|u| u.glob).filter(seen) {
            let segs: Vec<&str> = u.path.iter().map(String::as_str).collect();
            match self.resolve_use_path(krate, Some(m), &segs, Ns::Type, depth + 1) {
                Some(Res::Module(gm)) if gm != m => {
                    match self.lookup_as((gm, ns, self.is_within(m, gm)), name, depth + 1) {
                        Some(Res::Items(items)) => glob_items.extend(items),
                        Some(r) if glob_items.is_empty() => return Some(r),
                        _ => {}
                    }
                }
                Some(Res::Items(items)) => {
                    // `use Enum::*` brings variants: they resolve to the enum.
                    if let Some(&en) = items
                        .iter()
                        .find(|&&i| self.entities[i].0.kind == EntityKind::Enum)
                    {
                        if self.enum_has_variant(en, name) {
                            glob_items.push(en);
                        }
                    }
                }
                _ => {}
            }
        }
        glob_items.sort_unstable();
        glob_items.dedup();
        (!glob_items.is_empty()).then_some(Res::Items(glob_items))
    }

    /// Whether module `m` is `outer` or inside it: what sees `outer`'s
    /// private names.
    fn is_within(&self, m: ModId, outer: ModId) -> bool {
        let mut at = Some(m);
        while let Some(here) = at {
            if here == outer {
                return true;
            }
            at = self.modules[here].parent;
        }
        false
    }

    fn enum_has_variant(&self, en: EntId, name: &str) -> bool {
        self.entities[en]
            .0
            .signature
            .fields
            .iter()
            .any(|f| f.name == name)
    }

    /// The path of a `use` in scope module `scope` of crate `krate`. Unlike
    /// a path elsewhere, one segment alone may name another crate: `use
    /// serde;`, or `use slab::*` in a test crate that is itself called
    /// `slab`.
    fn resolve_use_path(
        &self,
        krate: &'a str,
        scope: Option<ModId>,
        segs: &[&str],
        ns: Ns,
        depth: u32,
    ) -> Option<Res> {
        let found = self.resolve_path(krate, scope, segs, ns, None, depth);
        match (found, segs) {
            (None, [name]) if ns != Ns::Value && ns != Ns::Macro => {
                self.crate_roots.get(name).map(|&root| Res::Module(root))
            }
            (found, _) => found,
        }
    }

    /// Resolve a path in scope module `scope` of crate `krate`.
    fn resolve_path(
        &self,
        krate: &'a str,
        scope: Option<ModId>,
        segs: &[&str],
        ns: Ns,
        self_type: Option<&str>,
        depth: u32,
    ) -> Option<Res> {
        if segs.is_empty() {
            return None;
        }
        if depth > MAX_DEPTH {
            // Cut off, as in `lookup`: no answer above is kept past it.
            self.lookups.with(|l| l.asking.reads_open = CUT_OFF);
            return None;
        }
        let last = segs.len() == 1;
        let first_ns = if last { ns } else { Ns::Type };
        let (cur, rest) = match segs[0] {
            "crate" | "$crate" => (Res::Module(*self.crate_roots.get(krate)?), &segs[1..]),
            "self" if !last => (Res::Module(scope?), &segs[1..]),
            "super" => {
                let mut m = scope?;
                let mut i = 0;
                while segs.get(i) == Some(&"super") {
                    m = self.modules[m].parent?;
                    i += 1;
                }
                (Res::Module(m), &segs[i..])
            }
            "Self" => {
                let st = self_type?;
                let r = self.resolve_path(krate, scope, &[st], Ns::Type, None, depth + 1)?;
                (r, &segs[1..])
            }
            first => {
                let found = scope.and_then(|m| self.lookup(m, first, first_ns, depth));
                match found {
                    Some(r) => (r, &segs[1..]),
                    None => {
                        // Another crate of the workspace (or this one by name).
                        let root = self.crate_roots.get(first).copied()?;
                        if last {
                            return None;
                        }
                        (Res::Module(root), &segs[1..])
                    }
                }
            }
        };
        self.walk_rest(cur, rest, ns, depth)
    }

    /// Follows the segments after a resolved first one: module items,
    /// associated items of types, an enum's variants (which name the enum).
    fn walk_rest(&self, mut cur: Res, mut rest: &[&str], ns: Ns, depth: u32) -> Option<Res> {
        while let Some((&seg, tail)) = rest.split_first() {
            let seg_ns = if tail.is_empty() { ns } else { Ns::Type };
            cur = match cur {
                Res::Module(m) => self.lookup(m, seg, seg_ns, depth + 1)?,
                Res::Items(items) => {
                    let mut next = Vec::new();
                    for &i in &items {
                        if let Some(hits) = self.assoc.get(&i).and_then(|a| a.get(seg)) {
                            next.extend(hits.iter().copied());
                        }
                    }
                    if next.is_empty() {
                        // An enum variant names its enum; stop there.
                        let en = items.iter().copied().find(|&i| {
                            self.entities[i].0.kind == EntityKind::Enum
                                && self.enum_has_variant(i, seg)
                        })?;
                        return Some(Res::Items(vec![en]));
                    }
                    Res::Items(next)
                }
            };
            rest = tail;
        }
        Some(cur)
    }

    /// Owner types of a member of an impl block (empty for anything else).
    fn owners_of_member(&self, e: &Entity) -> Vec<&'a str> {
        let Some(&pid) = e.parent.as_deref().and_then(|p| self.key_to_ent.get(p)) else {
            return vec![];
        };
        self.impl_owner
            .get(&pid)
            .map(|owners| owners.iter().map(|&o| self.key(o)).collect())
            .unwrap_or_default()
    }

    /// Key of the module entity one level above a file's module.
    fn parent_module_key(&self, krate: &'a str, module_path: &[String]) -> Option<&'a str> {
        let (_, parent) = module_path.split_last()?;
        let m = self.scope_of(krate, parent)?;
        self.module_key(m)
    }

    fn module_key(&self, m: ModId) -> Option<&'a str> {
        self.modules[m].key
    }

    fn res_keys(&self, r: &Res) -> Vec<EntId> {
        match r {
            Res::Module(m) => self
                .module_key(*m)
                .and_then(|k| self.key_to_ent.get(k).copied())
                .into_iter()
                .collect(),
            Res::Items(items) => items.clone(),
        }
    }

    fn resolve_use(&self, krate: &'a str, u: &'a UseDecl, links: &mut LinksBuilder<'a>) {
        let segs: Vec<&str> = u
            .path
            .iter()
            .map(String::as_str)
            .filter(|s| *s != "self" || u.path.len() == 1)
            .collect();
        let scope = self.scope_of(krate, &u.scope);
        let hits = self
            .resolve_use_path(krate, scope, &segs, Ns::Any, 0)
            .map(|r| self.res_keys(&r))
            .unwrap_or_default();
        if hits.is_empty() {
            let mut text = u.path.join("::");
            if u.glob {
                text.push_str("::*");
            }
            links.unresolved(&u.from, rel::IMPORTS, text, u.line);
        } else {
            for h in hits {
                links.edge(&u.from, rel::IMPORTS, self.key(h));
            }
        }
        // The modules the path goes through (`a` of `use crate::a::B`); a
        // glob's path ends in its module, which is imported, not passed.
        let site = Site {
            krate,
            scope,
            self_type: None,
            from: None,
            self_ent: None,
        };
        let through = if u.glob {
            &segs[..]
        } else {
            segs.split_last().map_or(&[][..], |(_, p)| p)
        };
        for m in self.modules_through(&site, through) {
            if let Some(k) = self.module_key(m) {
                links.edge(&u.from, rel::REFERENCES, k);
            }
        }
    }

    /// Modules named by the leading segments `segs` of a path (`crate`,
    /// `super` and named modules; not `self`).
    fn modules_through(&self, site: &Site<'a>, segs: &[&str]) -> Vec<ModId> {
        let mut out = Vec::new();
        let mut cur: Option<ModId> = None;
        for (i, &seg) in segs.iter().enumerate() {
            let next = match (i, seg) {
                (0, "crate" | "$crate") => self.crate_roots.get(site.krate).copied(),
                (0, "self") => {
                    cur = site.scope;
                    continue;
                }
                (_, "super") => match cur.or(if i == 0 { site.scope } else { None }) {
                    Some(m) => self.modules[m].parent,
                    None => None,
                },
                (0, name) => match self.resolve_in(site, &[name], Ns::Type) {
                    Some(Res::Module(m)) => Some(m),
                    _ => None,
                },
                (_, name) => match cur.and_then(|m| self.lookup(m, name, Ns::Type, 0)) {
                    Some(Res::Module(m)) => Some(m),
                    _ => None,
                },
            };
            let Some(m) = next else { break };
            out.push(m);
            cur = Some(m);
        }
        out
    }

    /// One target for a reference written in `file`: the candidates
    /// nearest to it ([`SymbolTable::nearest`]), and cfg twins (keys that
    /// differ only by `#N`) count once; `Err(n)` when `n` different
    /// entities remain.
    fn settle(&self, file: &str, mut hits: Vec<EntId>) -> Result<Vec<EntId>, u32> {
        hits.sort_unstable();
        hits.dedup();
        if hits.len() < 2 {
            return Ok(hits);
        }
        let hits = self.nearest(file, hits);
        if hits.len() < 2 {
            return Ok(hits);
        }
        let base = |k: &'a str| -> &'a str {
            match k.rsplit_once('#') {
                Some((b, n)) if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) => b,
                _ => k,
            }
        };
        let mut by_base: Vec<(&str, EntId)> =
            hits.iter().map(|&h| (base(self.key(h)), h)).collect();
        by_base.sort_by(|a, b| {
            a.0.cmp(b.0)
                .then(self.key(a.1).len().cmp(&self.key(b.1).len()))
        });
        by_base.dedup_by(|a, b| a.0 == b.0);
        if by_base.len() == 1 {
            return Ok(vec![by_base[0].1]);
        }
        Err(by_base.len() as u32)
    }

    /// Of several candidates for one name, those nearest to `file`, where
    /// the name is written, among the ones that are alternatives of each
    /// other: the same item (crate, module path and name) defined in
    /// several files. Such definitions are alternatives under `cfg` — one
    /// file per target (`#[cfg(unix)] #[path = "unix/net.rs"] mod net;`),
    /// of which a build compiles one — and the code next to one is written
    /// against that one: the one in `file` is kept, else those in its
    /// directory, else those in the deepest directory it shares with any.
    /// Alternatives all as near as each other stay, as do candidates that
    /// are different items (a method name several types have).
    fn nearest(&self, file: &str, hits: Vec<EntId>) -> Vec<EntId> {
        if hits.len() < 2 {
            return hits;
        }
        // Called for every reference with several candidates: a type that
        // each of twenty per-target modules defines is twenty candidates
        // for each of a file's thousand uses of it, so nothing here
        // allocates per candidate beyond one vector.
        let dir = parent_dir(file);
        let nearness = |h: EntId| -> usize {
            let there = self.entities[h].0.file.as_ref();
            if there == file {
                return usize::MAX;
            }
            let there_dir = parent_dir(there);
            if there_dir == dir {
                return usize::MAX - 1;
            }
            shared_dirs(dir, there_dir)
        };
        // The item a key names, without the file it is defined in.
        let item = |h: EntId| {
            let (e, krate) = self.entities[h];
            (krate, e.key.strip_prefix(e.file.as_ref()).unwrap_or(&e.key))
        };
        // (item, nearness, position in `hits`), grouped by item, nearest
        // first within each.
        let mut ranked: Vec<((&str, &str), usize, usize)> = hits
            .iter()
            .enumerate()
            .map(|(at, &h)| (item(h), nearness(h), at))
            .collect();
        ranked.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        if ranked.windows(2).all(|w| w[0].0 != w[1].0) {
            return hits;
        }
        let mut keep = vec![false; hits.len()];
        let mut best = (("", ""), 0);
        for (i, &(item, near, at)) in ranked.iter().enumerate() {
            if i == 0 || item != best.0 {
                best = (item, near);
            }
            keep[at] = near == best.1;
        }
        hits.into_iter()
            .zip(keep)
            .filter_map(|(h, k)| k.then_some(h))
            .collect()
    }

    /// The links of one reference. The reference may live shorter than
    /// the table (references held apart from their extracts, see
    /// [`RefsApart`]): what the links keep is borrowed from the table —
    /// the key of the entity the reference is written in, not its copy in
    /// the reference — and the reference is read through the table seen
    /// at the reference's lifetime (`t`).
    fn resolve_ref<'r>(&self, krate: &'a str, r: &'r RawRef, links: &mut LinksBuilder<'a>)
    where
        'a: 'r,
    {
        // Every reference is written in an entity of its file.
        let Some((&src, &from)) = self.key_to_ent.get_key_value(&*r.from) else {
            return;
        };
        let file = self.entities[from].0.file.as_ref();
        let t: &SymbolTable<'r> = self;
        let segs: Vec<&str> = r.path.iter().map(String::as_str).collect();
        let site = t.site_of(krate, r, from);
        let scope = site.scope;
        let from_ent = site.from;
        let from_is_test_fn = from_ent.is_some_and(|i| {
            let e = self.entities[i].0;
            e.is_test && matches!(e.kind, EntityKind::Function | EntityKind::Method)
        });
        let (rel, hits): (&'static str, Vec<EntId>) = match r.kind {
            // The impl header names its type.
            RefKind::ImplOwner => (rel::USES_TYPE, self.impl_owners(from_ent)),
            RefKind::Implements => return self.implements_links(&site, src, r, &segs, links),
            RefKind::Field => return self.field_links(&site, src, file, r, links),
            RefKind::Type => (
                rel::USES_TYPE,
                t.resolve_in(&site, &segs, Ns::Type)
                    .map(|x| self.res_keys(&x))
                    .unwrap_or_default(),
            ),
            RefKind::Value => (
                rel::REFERENCES,
                t.resolve_in(&site, &segs, Ns::Value)
                    .or_else(|| t.resolve_in(&site, &segs, Ns::Type))
                    .map(|x| self.res_keys(&x))
                    .unwrap_or_default(),
            ),
            RefKind::Call => self.call_hits(&site, &segs),
            RefKind::MacroCall => (rel::CALLS, self.resolve_macro(krate, scope, &segs)),
            RefKind::MethodCall => (rel::CALLS, t.resolve_method(&site, r)),
        };
        if matches!(r.kind, RefKind::Call | RefKind::Value | RefKind::Type) {
            self.qualifiers(&site, src, &segs, links);
        }
        let Some(hits) = self.settled_or_noted(file, src, rel, r, hits, links) else {
            return;
        };
        for h in hits {
            let dst = self.key(h);
            links.edge(src, rel, dst);
            if rel == rel::CALLS && from_is_test_fn && !self.entities[h].0.is_test {
                links.edge(src, rel::TESTS, dst);
            }
        }
    }

    /// The types an impl block (the entity `from_ent`) is for.
    fn impl_owners(&self, from_ent: Option<EntId>) -> Vec<EntId> {
        from_ent
            .and_then(|i| self.impl_owner.get(&i).cloned())
            .unwrap_or_default()
    }

    /// `impl Trait for T`: links type → trait when the type is ours, else
    /// impl block → trait, and the path's qualifiers; an unknown trait is
    /// noted as unresolved.
    fn implements_links<'r>(
        &self,
        site: &Site<'r>,
        src: &'a str,
        r: &RawRef,
        segs: &[&str],
        links: &mut LinksBuilder<'a>,
    ) where
        'a: 'r,
    {
        let traits: Vec<EntId> = self
            .resolve_in(site, segs, Ns::Type)
            .map(|x| self.res_keys(&x))
            .unwrap_or_default()
            .into_iter()
            .filter(|&i| self.entities[i].0.kind == EntityKind::Trait)
            .collect();
        if traits.is_empty() {
            links.unresolved(src, rel::IMPLEMENTS, r.path.join("::"), r.line);
            return;
        }
        // Type → trait when the type is ours, else impl block → trait.
        let owners = self.impl_owners(site.from);
        for &tr in &traits {
            if owners.is_empty() {
                links.edge(src, rel::IMPLEMENTS, self.key(tr));
            }
            for &o in &owners {
                links.edge(self.key(o), rel::IMPLEMENTS, self.key(tr));
            }
        }
        self.qualifiers(site, src, segs, links);
    }

    /// A field read links the struct that has the field (when the value's
    /// type is known and settles on our structs).
    fn field_links<'r>(
        &self,
        site: &Site<'r>,
        src: &'a str,
        file: &str,
        r: &RawRef,
        links: &mut LinksBuilder<'a>,
    ) where
        'a: 'r,
    {
        let t: &SymbolTable<'r> = self;
        if let Some(typed) = r.receiver.as_ref().and_then(|v| t.typed_of(site, v, 0)) {
            if let Ok(owners) = self.settle(file, t.field_owners(&typed, &r.path[0])) {
                for o in owners {
                    links.edge(src, rel::REFERENCES, self.key(o));
                }
            }
        }
    }

    /// A call's targets (a value, else a type); it `calls` them when all
    /// are callable, else it uses them as a type (a tuple struct, a variant).
    fn call_hits<'r>(&self, site: &Site<'r>, segs: &[&str]) -> (&'static str, Vec<EntId>)
    where
        'a: 'r,
    {
        let t: &SymbolTable<'r> = self;
        let hits = self
            .resolve_in(site, segs, Ns::Value)
            .or_else(|| t.resolve_in(site, segs, Ns::Type))
            .map(|x| self.res_keys(&x))
            .unwrap_or_default();
        let callable = hits.iter().all(|&i| {
            matches!(
                self.entities[i].0.kind,
                EntityKind::Function | EntityKind::Method | EntityKind::Macro
            )
        });
        (if callable { rel::CALLS } else { rel::USES_TYPE }, hits)
    }

    /// The targets that stand after [`Self::settle`]; none found or too
    /// many left are noted (unresolved or ambiguous) and give `None`.
    fn settled_or_noted(
        &self,
        file: &str,
        src: &'a str,
        rel: &'static str,
        r: &RawRef,
        hits: Vec<EntId>,
        links: &mut LinksBuilder<'a>,
    ) -> Option<Vec<EntId>> {
        let text = || match r.kind {
            RefKind::MethodCall => format!(".{}()", r.path.join("::")),
            RefKind::MacroCall => format!("{}!", r.path.join("::")),
            _ => r.path.join("::"),
        };
        match self.settle(file, hits) {
            Ok(h) if !h.is_empty() => Some(h),
            Ok(_) => {
                links.unresolved(src, rel, text(), r.line);
                None
            }
            Err(n) => {
                links.ambiguous(src, rel, text(), r.line, n);
                None
            }
        }
    }

    /// What the leading segments of a path name besides its target: the
    /// type of `T::new`, `T::CONST`, `Enum::Variant` (`uses_type`), and
    /// the modules it passes through (`references`).
    fn qualifiers<'r>(
        &self,
        site: &Site<'r>,
        src: &'a str,
        segs: &[&str],
        links: &mut LinksBuilder<'a>,
    ) where
        'a: 'r,
    {
        let t: &SymbolTable<'r> = self;
        let Some((_, prefix)) = segs.split_last() else {
            return;
        };
        if prefix.is_empty() {
            return;
        }
        let mods = t.modules_through(site, prefix);
        for &m in &mods {
            if let Some(k) = self.module_key(m) {
                links.edge(src, rel::REFERENCES, k);
            }
        }
        if mods.len() == prefix.len() {
            return;
        }
        if let Some(Res::Items(items)) = t.resolve_in(site, prefix, Ns::Type) {
            let site_file = site.from.map_or("", |i| self.entities[i].0.file.as_ref());
            let types: Vec<EntId> = items
                .into_iter()
                .filter(|&i| self.entities[i].0.kind.is_type_like())
                .collect();
            if let Ok(types) = self.settle(site_file, types) {
                for t in types {
                    links.edge(src, rel::USES_TYPE, self.key(t));
                }
            }
        }
    }

    fn resolve_macro(&self, krate: &'a str, scope: Option<ModId>, segs: &[&str]) -> Vec<EntId> {
        let Some(&name) = segs.last() else {
            return vec![];
        };
        if segs.len() == 1 {
            if let Some(Res::Items(i)) = scope.and_then(|m| self.lookup(m, name, Ns::Macro, 0)) {
                return i;
            }
        }
        let Some(all) = self.macros_by_name.get(name) else {
            return vec![];
        };
        // `macro_rules!` is visible textually within its crate, exported ones everywhere.
        let target_crate = match segs.first() {
            Some(&first) if segs.len() > 1 && first != "crate" && first != "$crate" => first,
            _ => krate,
        };
        let same: Vec<EntId> = all
            .iter()
            .copied()
            .filter(|&i| self.entities[i].1 == target_crate)
            .collect();
        if !same.is_empty() {
            return same;
        }
        // Another crate's macro reaches an unqualified call only when it is
        // `#[macro_export]`ed (and the only one of that name): a private
        // test helper such as a crate's own `assert_eq` must not capture
        // every `assert_eq!` of the workspace.
        if all.len() == 1
            && segs.len() == 1
            && self.entities[all[0]].0.visibility == Visibility::Public
        {
            return all.clone();
        }
        vec![]
    }

    /// Methods named `name` that our impl blocks give a type that is not
    /// ours (last segment `owner`): their own, else the default methods of
    /// the traits they implement.
    fn extension_methods(&self, owner: &str, name: &str) -> Vec<EntId> {
        let Some(impls) = self.ext_impls.get(owner) else {
            return vec![];
        };
        if let Some(own) = self.ext_methods.get(owner).and_then(|m| m.get(name)) {
            return own.clone();
        }
        let mut defaults: Vec<EntId> = impls
            .iter()
            .flat_map(|(_, traits)| traits)
            .filter_map(|t| self.assoc.get(t).and_then(|a| a.get(name)))
            .flatten()
            .copied()
            .filter(|&i| self.entities[i].0.kind == EntityKind::Method)
            .collect();
        defaults.sort_unstable();
        defaults.dedup();
        defaults
    }

    /// Methods called `name` among the associated items of `owners`.
    fn methods_of(&self, owners: &[EntId], name: &str) -> Vec<EntId> {
        owners
            .iter()
            .filter_map(|o| self.assoc.get(o).and_then(|a| a.get(name)))
            .flatten()
            .copied()
            .filter(|&i| self.entities[i].0.kind == EntityKind::Method)
            .collect()
    }

    fn resolve_method(&self, site: &Site<'a>, r: &RawRef) -> Vec<EntId> {
        let Some(name) = r.path.last().map(String::as_str) else {
            return vec![];
        };
        if let Some(t) = r.receiver.as_ref().and_then(|v| self.typed_of(site, v, 0)) {
            match self.classify(&t, 0) {
                typing::Kind::Foreign(last, _) => {
                    // A type that is not ours (`String`, `Vec`): only
                    // methods our impl blocks add to that very type.
                    return self.extension_methods(&last, name);
                }
                typing::Kind::Unknown => {}
                kind => {
                    let hits = self.methods_for(&kind, name);
                    if !hits.is_empty() {
                        return hits;
                    }
                    // Ours, but the method is neither its own nor its
                    // traits' (a derive): fall back to the name.
                }
            }
        }
        // Guessing by name alone is wrong for the names std types use
        // everywhere (`x.len()` on a Vec is not our one `len` method).
        if STD_METHOD_NAMES.binary_search(&name).is_ok() {
            return vec![];
        }
        let Some(cands) = self.methods_by_name.get(name) else {
            return vec![];
        };
        if cands.len() == 1 {
            return cands.clone();
        }
        // Several methods of that name: one trait declaration plus impls of
        // that same trait is a call of the trait method.
        let decls: Vec<EntId> = cands
            .iter()
            .copied()
            .filter(|&i| {
                let parent = self.entities[i].0.parent.as_deref();
                parent
                    .and_then(|p| self.key_to_ent.get(p))
                    .is_some_and(|&p| self.entities[p].0.kind == EntityKind::Trait)
            })
            .collect();
        if let [decl] = decls[..] {
            let trait_name = self.entities[decl].0.owner.as_deref().unwrap_or("");
            let all_impls_of_it = cands.iter().all(|&i| {
                i == decl
                    || self.entities[i]
                        .0
                        .trait_name
                        .as_deref()
                        .is_some_and(|t| t.rsplit("::").next() == Some(trait_name))
            });
            if all_impls_of_it {
                return vec![decl];
            }
        }
        // Left to `settle`: one if they are cfg twins, else ambiguous.
        cands.clone()
    }
}

/// The directory part of a repository-relative path (`""` at the root).
fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// How many leading `/`-separated components two paths share: what
/// `a.split('/').zip(b.split('/')).take_while(equal).count()` says,
/// from one comparison of their bytes.
fn shared_dirs(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let whole = a[..common].iter().filter(|&&c| c == b'/').count();
    // The component the first difference falls in counts when both
    // paths end it right there.
    let ends_there = |s: &[u8]| common == s.len() || s[common] == b'/';
    whole + usize::from(ends_there(a) && ends_there(b))
}

#[cfg(test)]
mod shared_dirs_tests {
    #[test]
    fn shared_dirs_counts_components_as_splitting_does() {
        let paths = [
            "", "a", "ab", "a/b", "a/bc", "a/b/c", "ab/c", "a/", "/a", "a/b/", "x/b/c", "a//b",
        ];
        for a in paths {
            for b in paths {
                let split = a
                    .split('/')
                    .zip(b.split('/'))
                    .take_while(|(x, y)| x == y)
                    .count();
                assert_eq!(super::shared_dirs(a, b), split, "{a:?} {b:?}");
            }
        }
    }
}

#[cfg(test)]
mod std_names {
    #[test]
    fn the_std_method_list_is_sorted_for_binary_search() {
        let mut sorted = super::STD_METHOD_NAMES.to_vec();
        sorted.sort();
        assert_eq!(sorted, super::STD_METHOD_NAMES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::RustExtractor;

    #[test]
    fn every_thread_of_a_larger_pool_than_the_tables_has_its_own_lookups() {
        // Made where one thread runs (two slots: the pool's and any other
        // thread's), used on four: each thread must still see its own
        // value, or the open questions of two threads would mix.
        let small = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let mut per_thread: PerThread<Vec<usize>> = small.install(PerThread::default);
        let large = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        large.broadcast(|ctx| per_thread.with(|seen| seen.push(ctx.index())));
        let mut seen = Vec::new();
        per_thread.each(|v| seen.push(v.clone()));
        seen.retain(|v| !v.is_empty());
        seen.sort();
        assert_eq!(seen, vec![vec![0], vec![1], vec![2], vec![3]]);
    }

    /// Links of a one-file crate `demo` at `src/lib.rs`.
    fn links(src: &str) -> FileLinks<'static> {
        let ctx = FileContext {
            path: "src/lib.rs".to_string(),
            package: "demo".to_string(),
            unit: "demo".to_string(),
            module_path: vec![],
            is_test_file: false,
            path_aliases: Vec::new(),
        };
        let ex = RustExtractor::new().extract(&ctx, src);
        // The links borrow from the extract; a test can afford to leak it.
        let (ctx, ex): (&'static FileContext, &'static FileExtract) =
            (Box::leak(Box::new(ctx)), Box::leak(Box::new(ex)));
        resolve(&[(ctx, ex)]).remove("src/lib.rs").unwrap()
    }

    /// Items (key without the `src/lib.rs-crate-` prefix) called by `from`.
    fn calls(l: &FileLinks, from: &str) -> Vec<String> {
        let src = format!("src/lib.rs-crate-{from}");
        l.edge_keys()
            .filter(|(s, r, _)| *s == src && *r == rel::CALLS)
            .map(|(_, _, d)| d.trim_start_matches("src/lib.rs-crate-").to_string())
            .collect()
    }

    fn unresolved_calls(l: &FileLinks, from: &str) -> Vec<String> {
        let src = format!("src/lib.rs-crate-{from}");
        l.unresolved_keys()
            .filter(|(s, r, _)| *s == src && *r == rel::CALLS)
            .map(|(_, _, t)| t.clone())
            .collect()
    }

    const SHAPES: &str = r#"
trait Area { fn area(&self) -> f64; fn is_empty(&self) -> bool { self.area() == 0.0 } }
struct Rect;
struct Circle;
struct Holder { shape: Box<Circle> }
impl Area for Rect { fn area(&self) -> f64 { 1.0 } }
impl Area for Circle { fn area(&self) -> f64 { 2.0 } }
impl Rect { fn width(&self) -> f64 { 1.0 } }
mod alias { pub use super::Rect as Rectangle; }
"#;

    #[test]
    fn method_calls_follow_the_receiver_type() {
        let src = format!(
            "{SHAPES}
fn describe(r: &alias::Rectangle) -> f64 {{ r.area() }}
fn made() -> f64 {{ let c = Circle {{}}; c.area() }}
impl Holder {{ fn total(&self) -> f64 {{ self.shape.area() }} }}
fn unknown(x: u8) -> f64 {{ y.area() }}
"
        );
        let l = links(&src);
        assert_eq!(calls(&l, "describe"), vec!["<Rect as Area>::area"]);
        assert_eq!(calls(&l, "made"), vec!["<Circle as Area>::area"]);
        assert_eq!(calls(&l, "Holder::total"), vec!["<Circle as Area>::area"]);
        // No hint: as before, all candidates implement one trait method.
        assert_eq!(calls(&l, "unknown"), vec!["Area::area"]);
    }

    #[test]
    fn methods_the_type_lacks_fall_back_to_the_name() {
        // `is_empty` is a default method of `Area`, not in `Rect`'s impls.
        let src = format!("{SHAPES}\nfn f(r: Rect) -> bool {{ r.is_empty() }}\n");
        let l = links(&src);
        assert_eq!(calls(&l, "f"), vec!["Area::is_empty"]);
    }

    #[test]
    fn receivers_of_foreign_types_do_not_guess_our_methods() {
        let src = r#"
struct Mine;
impl Mine { fn len(&self) -> usize { 0 } fn weigh(&self) -> usize { 0 } }
fn f(s: String, v: &Vec<u8>) -> usize { s.len() + v.len() }
fn g() -> usize { unknown.len() }
fn h() -> usize { unknown.weigh() }
"#;
        let l = links(src);
        assert_eq!(calls(&l, "f"), Vec::<String>::new());
        assert_eq!(unresolved_calls(&l, "f"), vec![".len()"]);
        // Without a hint, a name std uses everywhere is not guessed…
        assert_eq!(calls(&l, "g"), Vec::<String>::new());
        // …while a name of our own still resolves when it is unique.
        assert_eq!(calls(&l, "h"), vec!["Mine::weigh"]);
    }

    /// Edges of relationship `rel` from `from` (keys without the
    /// `src/lib.rs-crate-` prefix).
    fn targets(l: &FileLinks, from: &str, rel: &str) -> Vec<String> {
        let src = format!("src/lib.rs-crate-{from}");
        l.edge_keys()
            .filter(|(s, r, _)| *s == src && *r == rel)
            .map(|(_, _, d)| d.trim_start_matches("src/lib.rs-crate-").to_string())
            .collect()
    }

    #[test]
    fn receivers_are_typed_through_declarations() {
        let src = r#"
pub struct Config { pub items: Vec<Item>, inner: Inner }
pub struct Item;
pub struct Inner;
pub struct Builder { name: String }
pub type Result<T> = std::result::Result<T, Error>;
pub struct Error;
impl Builder {
    pub fn new() -> Builder { Builder { name: String::new() } }
    pub fn name(mut self, n: &str) -> Self { self }
    pub fn build(self) -> Config { todo!() }
}
impl Config {
    pub fn load() -> Result<Config> { todo!() }
    pub fn first(&self) -> Option<&Item> { self.items.first() }
    pub fn inner(&self) -> &Inner { &self.inner }
}
impl Item { pub fn weigh(&self) -> u32 { 0 } }
impl Inner { pub fn poke(&self) {} }
fn chain() { Builder::new().name("x").build().inner().poke(); }
fn tried() -> Result<()> { let c = Config::load()?; c.inner().poke(); Ok(()) }
fn unwrapped() { let c = Config::load().unwrap(); c.first().unwrap().weigh(); }
fn loops(c: &Config) { for it in &c.items { it.weigh(); } for it in c.items.iter() { it.weigh(); } }
fn fields(c: Config) -> usize { c.items.len() }
"#;
        let l = links(src);
        assert_eq!(
            calls(&l, "chain"),
            vec![
                "Builder::build",
                "Builder::name",
                "Builder::new",
                "Config::inner",
                "Inner::poke"
            ]
        );
        assert_eq!(
            calls(&l, "tried"),
            vec!["Config::inner", "Config::load", "Inner::poke"]
        );
        assert_eq!(
            calls(&l, "unwrapped"),
            vec!["Config::first", "Config::load", "Item::weigh"]
        );
        assert_eq!(calls(&l, "loops"), vec!["Item::weigh"]);
        // A field read references the struct that has the field.
        assert!(targets(&l, "fields", rel::REFERENCES).contains(&"Config".to_string()));
        // `T::new()` references `T` as well as `T::new`.
        assert!(targets(&l, "chain", rel::USES_TYPE).contains(&"Builder".to_string()));
    }

    #[test]
    fn trait_methods_through_bounds_and_trait_objects() {
        let src = r#"
pub trait Matcher { fn is_match(&self) -> bool; fn name(&self) -> &str { "" } }
pub struct Exact;
impl Matcher for Exact { fn is_match(&self) -> bool { true } }
impl Exact { fn path(&self) {} }
pub trait Entry { fn path(&self); }
impl Entry for Exact { fn path(&self) {} }
fn generic<M: Matcher>(m: M) -> bool { m.is_match() }
fn bounded<M>(m: &M) -> bool where M: Matcher + Send { m.is_match() }
fn object(m: &dyn Matcher) -> bool { m.is_match() }
fn opaque(m: impl Matcher) -> &'static str { m.name() }
fn concrete(e: Exact) -> bool { e.is_match() }
fn default_method(e: Exact) -> &'static str { e.name() }
fn inherent_first(e: &Exact) { e.path() }
"#;
        let l = links(src);
        assert_eq!(calls(&l, "generic"), vec!["Matcher::is_match"]);
        assert_eq!(calls(&l, "bounded"), vec!["Matcher::is_match"]);
        assert_eq!(calls(&l, "object"), vec!["Matcher::is_match"]);
        assert_eq!(calls(&l, "opaque"), vec!["Matcher::name"]);
        assert_eq!(calls(&l, "concrete"), vec!["<Exact as Matcher>::is_match"]);
        assert_eq!(calls(&l, "default_method"), vec!["Matcher::name"]);
        assert_eq!(calls(&l, "inherent_first"), vec!["Exact::path"]);
    }

    /// The types each function of module `base::matrix` uses.
    fn matrix_types(src: &str) -> Vec<(String, String)> {
        let l = links(src);
        let mut out: Vec<(String, String)> = l
            .edge_keys()
            .filter(|(s, r, _)| s.starts_with("src/lib.rs-base::matrix-") && *r == rel::USES_TYPE)
            .map(|(s, _, d)| {
                let item = |k: &str| k.trim_start_matches("src/lib.rs-").to_string();
                (item(s), item(d))
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn names_found_through_an_import_cycle_do_not_depend_on_who_asked_first() {
        // `base` re-exports `matrix::*` and `unit::*`; `matrix` imports
        // `Unit` back through `base`. Whether `Unit` is first asked of
        // `base` (by `first`) or of `matrix`, `norm` finds it.
        let base = r#"
pub mod base {
    pub use self::matrix::*;
    pub use self::unit::*;
    pub mod matrix { use crate::base::Unit; pub fn norm(u: Unit) -> Unit { u } }
    pub mod unit { pub struct Unit; }
}
"#;
        let first = "pub fn first(u: base::Unit) {}\n";
        let expected = vec![(
            "base::matrix-norm".to_string(),
            "base::unit-Unit".to_string(),
        )];
        assert_eq!(matrix_types(&format!("{base}{first}")), expected);
        assert_eq!(matrix_types(&format!("{first}{base}")), expected);
    }

    #[test]
    fn a_long_chain_of_re_exports_resolves_from_its_far_end() {
        // Each module re-exports the next one's `Locale`: a name that
        // travels through several crates' re-exports is found from
        // wherever it is first asked, not only where a shallower
        // question happened to leave the answer in the memo.
        let mut src = String::from("pub fn read(l: m0::Locale) {}\n");
        for i in 0..10 {
            src.push_str(&format!(
                "pub mod m{i} {{ pub use crate::m{}::Locale; }}\n",
                i + 1
            ));
        }
        src.push_str("pub mod m10 { pub struct Locale; }\n");
        assert_eq!(
            targets(&links(&src), "read", rel::USES_TYPE),
            vec!["src/lib.rs-m10-Locale"]
        );
    }

    #[test]
    fn a_glob_brings_what_a_module_exports_not_what_it_imports_privately() {
        // `read` re-exports `cfi::*` and `op::*`; `cfi` imports the
        // variants of its enum privately, one of them named `Expression`.
        // From outside `read`, `read::Expression` is `op`'s struct alone;
        // inside `cfi`, a child's `use super::*` still sees the variant.
        let src = r#"
pub mod read {
    pub use self::cfi::*;
    pub use self::op::*;
    pub mod cfi {
        use self::Instruction::*;
        pub enum Instruction { Expression(u8), Nop }
        pub mod inner { use super::*; pub fn expr() { let _ = Expression(1); } }
    }
    pub mod op { pub struct Expression; }
}
pub fn convert(e: read::Expression) {}
"#;
        let l = links(src);
        assert_eq!(
            targets(&l, "convert", rel::USES_TYPE),
            vec!["src/lib.rs-read::op-Expression"]
        );
        let expr: Vec<&str> = l
            .edge_keys()
            .filter(|(s, r, _)| *s == "src/lib.rs-read::cfi::inner-expr" && *r == rel::USES_TYPE)
            .map(|(_, _, d)| &d[..])
            .collect();
        assert_eq!(expr, vec!["src/lib.rs-read::cfi-Instruction"]);
    }

    #[test]
    fn local_items_belong_to_their_function_and_never_fan_out() {
        let src = r#"
fn one() { type A = u8; struct Local {} let _x: A = 0; let _y = Local {}; }
fn two() { type A = u16; let _z: A = 0; }
pub struct Shape;
mod a { pub fn go() {} }
mod b { pub fn go() {} }
use a::*;
use b::*;
fn ambiguous() { go(); }
"#;
        let l = links(src);
        assert_eq!(
            targets(&l, "one", rel::USES_TYPE),
            vec!["one()::A", "one()::Local"]
        );
        assert_eq!(targets(&l, "two", rel::USES_TYPE), vec!["two()::A"]);
        // Two glob imports offer `go`: neither is guessed, and the
        // unresolved record says how many there were.
        assert!(calls(&l, "ambiguous").is_empty());
        let (_, _, n) = l
            .unresolved
            .iter()
            .find(|((s, _, t), _)| s.ends_with("-ambiguous") && t == "go")
            .map(|(_, v)| *v)
            .expect("an unresolved record for go()");
        assert_eq!(n, 2);
    }

    #[test]
    fn extension_methods_of_foreign_types_resolve() {
        let src = r#"
trait Shout { fn shout(&self) -> String; fn twice(&self) -> String { self.shout() } }
impl Shout for String { fn shout(&self) -> String { self.twice() } }
struct Other;
impl Other { fn shout(&self) -> String { String::new() } }
fn f(s: String) { s.shout(); s.twice(); }
"#;
        let l = links(src);
        assert_eq!(
            calls(&l, "f"),
            vec!["<String as Shout>::shout", "Shout::twice"]
        );
        assert_eq!(calls(&l, "<String as Shout>::shout"), vec!["Shout::twice"]);
    }
}

#[cfg(test)]
mod cross_crate_macros {
    use super::*;
    use crate::RustExtractor;

    /// Callees of `user` in crate `b` when crate `a` defines `macro_src`.
    fn callees(macro_src: &str) -> Vec<String> {
        let files = [
            ("a/src/lib.rs", "a", macro_src),
            (
                "b/src/lib.rs",
                "b",
                "pub fn user() { assert_eq!(1, 1); make!(); }",
            ),
        ];
        let parsed: Vec<(&'static FileContext, &'static FileExtract)> = files
            .iter()
            .map(|(path, krate, src)| {
                let ctx = FileContext {
                    path: path.to_string(),
                    package: krate.to_string(),
                    unit: krate.to_string(),
                    module_path: vec![],
                    is_test_file: false,
                    path_aliases: Vec::new(),
                };
                let ex = RustExtractor::new().extract(&ctx, src);
                let leaked: (&'static FileContext, &'static FileExtract) =
                    (Box::leak(Box::new(ctx)), Box::leak(Box::new(ex)));
                leaked
            })
            .collect();
        let links = resolve(&parsed);
        links["b/src/lib.rs"]
            .edge_keys()
            .filter(|(_, r, _)| *r == rel::CALLS)
            .map(|(_, _, d)| d.to_string())
            .collect()
    }

    #[test]
    fn a_private_macro_of_another_crate_is_not_the_callee() {
        let got = callees(
            "#[cfg(test)] mod tests { macro_rules! assert_eq { ($a:expr, $b:expr) => {}; } }\n\
             macro_rules! make { () => {}; }",
        );
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn an_exported_macro_of_another_crate_is() {
        let got = callees("#[macro_export]\nmacro_rules! make { () => {}; }");
        assert_eq!(got, vec!["a/src/lib.rs-crate-make".to_string()]);
    }
}
