//! Building a [`SymbolTable`] from the interfaces of every file.
//!
//! Three passes: every entity with the module tree (while another thread
//! indexes the keys); module items, function-local items and `use`s
//! (while another thread gathers the references that name impl blocks'
//! types and traits); then, from those, the owners and traits of impl
//! blocks and the associated items of types and traits
//! ([`SymbolTable::derive_impls`]). The first two read one file at a time
//! into the file's [`Slot`], which is what lets
//! [`SymbolTable::replace_file`] redo them for one file; the third reads
//! the slots, in order, whichever way they were made.

use std::sync::OnceLock;

use rustc_hash::FxHashSet as HashSet;

use super::{EntId, HashMap, ModId, Module, SymbolTable};
use crate::model::{
    Entity, EntityKind, FileContext, FileExtract, RawRef, RefKind, Signature, UseDecl, Visibility,
};

/// Where one file's entities sit among the table's ids, and what the
/// impl-block pass reads of the file.
pub(super) struct Slot<'a> {
    /// The file's ids are `base..base + cap`; the first `len` are used.
    pub base: EntId,
    pub cap: usize,
    pub len: usize,
    /// The file's associated items, each with its impl block or trait.
    pub members: Vec<(EntId, EntId)>,
    /// The `ImplOwner` and `Implements` references of its impl blocks.
    pub owner_refs: Vec<ImplRef<'a>>,
    pub trait_refs: Vec<ImplRef<'a>>,
    /// What each of those resolved to (see [`SymbolTable::derive_impls`]);
    /// empty until resolved.
    pub owner_hits: Vec<Vec<EntId>>,
    pub trait_hits: Vec<Option<Vec<EntId>>>,
    /// Its interface was replaced since the impl-block pass last ran:
    /// its parts are out of the maps and all its references unresolved.
    pub replaced: bool,
}

/// An impl block's reference to its self type or its trait, with the
/// block's id and crate.
pub(super) type ImplRef<'a> = (EntId, &'a str, &'a RawRef);

/// The ids a file of `n` entities gets: room for a few more, so that an
/// edit that adds an item or two moves no other file's ids.
pub(super) fn capacity(n: usize) -> usize {
    n + n / 4 + 4
}

/// What an unused id holds: no map of the table refers to it.
pub(super) fn hole() -> &'static Entity {
    static HOLE: OnceLock<Entity> = OnceLock::new();
    HOLE.get_or_init(|| Entity {
        key: "".into(),
        kind: EntityKind::Module,
        name: String::new(),
        visibility: Visibility::Private,
        file: "".into(),
        start_line: 0,
        end_line: 0,
        module_path: Vec::new().into(),
        doc: String::new(),
        signature: Signature::default(),
        is_test: false,
        owner: None,
        trait_name: None,
        parent: None,
        language: crate::ID,
    })
}

/// Put `id` into the ids under `name`, keeping them in id order.
pub(super) fn insert_id<'a>(map: &mut HashMap<&'a str, Vec<EntId>>, name: &'a str, id: EntId) {
    let ids = map.entry(name).or_default();
    let at = ids.partition_point(|&x| x < id);
    ids.insert(at, id);
}

/// The module tree of a [`SymbolTable`] apart from its other parts, so
/// that a pass can add modules while another thread reads the keys.
pub(super) struct ModuleTree<'t, 'a> {
    pub modules: &'t mut Vec<Module<'a>>,
    pub module_ids: &'t mut HashMap<(&'a str, Vec<&'a str>), ModId>,
    pub crate_roots: &'t mut HashMap<&'a str, ModId>,
}

impl<'a> ModuleTree<'_, 'a> {
    /// The module at `path` in `krate`, made (with its parents) when new.
    pub fn module(&mut self, krate: &'a str, path: &[&'a str]) -> ModId {
        if let Some(&m) = self.module_ids.get(&(krate, path.to_vec())) {
            return m;
        }
        let parent = path.split_last().map(|(_, p)| self.module(krate, p));
        let id = self.modules.len();
        self.modules.push(Module {
            krate,
            parent,
            ..Module::default()
        });
        self.module_ids.insert((krate, path.to_vec()), id);
        if let (Some(p), Some(last)) = (parent, path.last()) {
            self.modules[p].children.insert(last, id);
        }
        if path.is_empty() {
            self.crate_roots.insert(krate, id);
        }
        id
    }
}

/// A `use` with the module it is in.
pub(super) type ModuleUse<'a> = (ModId, &'a UseDecl);

/// What pass 2 reads of the table while it fills module items and locals.
pub(super) struct Placing<'t, 'a> {
    pub entities: &'t [(&'a Entity, &'a str)],
    pub key_to_ent: &'t HashMap<&'a str, EntId>,
    pub module_of_key: &'t HashMap<&'a str, ModId>,
    pub tree: ModuleTree<'t, 'a>,
    pub locals_of: &'t mut HashMap<EntId, HashMap<&'a str, Vec<EntId>>>,
}

impl<'a> Placing<'_, 'a> {
    /// Pass 2 for one file whose ids start at `base`: every entity as an
    /// item of its module or a local item of its function. Returns the
    /// file's associated items (entity, impl block or trait) and its
    /// `use`s with the module each belongs to, in the file's order: the
    /// caller puts them in.
    pub fn file(
        &mut self,
        ctx: &'a FileContext,
        ex: &'a FileExtract,
        base: EntId,
    ) -> (Vec<(EntId, EntId)>, Vec<ModuleUse<'a>>) {
        let krate = ctx.unit.as_str();
        let mut members = Vec::new();
        // Entities in a row mostly share their parent (the items of a
        // module, the methods of an impl block): it is looked up once.
        let mut last: Option<(&'a str, Option<ModId>, Option<EntId>)> = None;
        for (i, e) in ex.entities.iter().enumerate() {
            let id = base + i;
            let (parent_mod, parent_ent) = match e.parent.as_deref() {
                Some(p) => match last {
                    Some((lp, m, f)) if lp == p => (m, f),
                    _ => {
                        let m = self.module_of_key.get(p).copied();
                        let f = self.key_to_ent.get(p).copied();
                        last = Some((p, m, f));
                        (m, f)
                    }
                },
                // A file's module entity: an item of its parent module.
                None => (self.file_parent_module(ctx), None),
            };
            if let Some(pm) = parent_mod {
                insert_id(&mut self.tree.modules[pm].items, &e.name, id);
            } else if let Some(f) = parent_ent {
                if matches!(
                    self.entities[f].0.kind,
                    EntityKind::Function | EntityKind::Method
                ) {
                    insert_id(self.locals_of.entry(f).or_default(), &e.name, id);
                }
            }
            if let Some(f) = parent_ent {
                if matches!(
                    self.entities[f].0.kind,
                    EntityKind::Impl | EntityKind::Trait
                ) {
                    members.push((id, f));
                }
            }
        }
        // A file's uses come scope by scope: the module is looked up when
        // the scope changes, not for every use.
        let mut uses = Vec::with_capacity(ex.uses.len());
        let mut last: Option<(&[String], ModId)> = None;
        for u in &ex.uses {
            let m = match last {
                Some((scope, m)) if scope == u.scope.as_slice() => m,
                _ => {
                    let scope: Vec<&str> = u.scope.iter().map(String::as_str).collect();
                    let m = self.tree.module(krate, &scope);
                    last = Some((u.scope.as_slice(), m));
                    m
                }
            };
            uses.push((m, u));
        }
        (members, uses)
    }

    /// The module one level above a file's own (made when new).
    pub fn file_parent_module(&mut self, ctx: &'a FileContext) -> Option<ModId> {
        let own: Vec<&str> = ctx.module_path.iter().map(String::as_str).collect();
        let (_, parent) = own.split_last()?;
        Some(self.tree.module(&ctx.unit, parent))
    }
}

/// The `ImplOwner` and `Implements` references of a file's impl blocks.
pub(super) fn impl_refs<'a>(
    ctx: &'a FileContext,
    ex: &'a FileExtract,
    key_to_ent: &HashMap<&'a str, EntId>,
) -> (Vec<ImplRef<'a>>, Vec<ImplRef<'a>>) {
    let mut owner_refs = Vec::new();
    let mut trait_refs = Vec::new();
    for r in &ex.refs {
        let list = match r.kind {
            RefKind::ImplOwner => &mut owner_refs,
            RefKind::Implements => &mut trait_refs,
            _ => continue,
        };
        if let Some(&imp) = key_to_ent.get(&*r.from) {
            list.push((imp, ctx.unit.as_str(), r));
        }
    }
    (owner_refs, trait_refs)
}

impl<'a> SymbolTable<'a> {
    pub(super) fn build(files: &[(&'a FileContext, &'a FileExtract)]) -> SymbolTable<'a> {
        let mut bases = Vec::with_capacity(files.len());
        let mut ids = 0;
        for (_, ex) in files {
            bases.push(ids);
            ids += capacity(ex.entities.len());
        }
        // Sized up front: growing maps of half a million keys rehashes
        // them several times over.
        let total: usize = files.iter().map(|(_, ex)| ex.entities.len()).sum();
        // Pass 1: entities and the module tree, while another thread
        // indexes the keys (a key given twice keeps the last one).
        let ((key_to_ent, dup_keys), mut t) = rayon::join(
            || {
                let mut key_to_ent: HashMap<&'a str, EntId> = HashMap::default();
                key_to_ent.reserve(total);
                let mut dups = HashSet::default();
                for ((_, ex), &base) in files.iter().zip(&bases) {
                    for (i, e) in ex.entities.iter().enumerate() {
                        if key_to_ent.insert(e.key.as_ref(), base + i).is_some() {
                            dups.insert(e.key.as_ref());
                        }
                    }
                }
                (key_to_ent, dups)
            },
            || {
                let mut t = SymbolTable::empty(ids);
                for ((ctx, ex), &base) in files.iter().zip(&bases) {
                    t.add_file_entities(ctx, ex, base);
                }
                t
            },
        );
        t.key_to_ent = key_to_ent;
        t.dup_keys = dup_keys;
        // Pass 2: module items and uses, while another thread gathers the
        // references that name the owners and traits of impl blocks.
        let (members, refs): (Vec<_>, Vec<_>) = {
            let mut placing = t.placing();
            let key_to_ent = placing.key_to_ent;
            rayon::join(
                || {
                    let mut members = Vec::with_capacity(files.len());
                    for ((ctx, ex), &base) in files.iter().zip(&bases) {
                        let (m, uses) = placing.file(ctx, ex, base);
                        for (module, u) in uses {
                            placing.tree.modules[module].uses.push(u);
                        }
                        members.push(m);
                    }
                    members
                },
                || {
                    files
                        .iter()
                        .map(|(ctx, ex)| impl_refs(ctx, ex, key_to_ent))
                        .collect()
                },
            )
        };
        t.slots = files
            .iter()
            .zip(bases)
            .zip(members.into_iter().zip(refs))
            .map(
                |(((_, ex), base), (members, (owner_refs, trait_refs)))| Slot {
                    base,
                    cap: capacity(ex.entities.len()),
                    len: ex.entities.len(),
                    members,
                    owner_refs,
                    trait_refs,
                    owner_hits: Vec::new(),
                    trait_hits: Vec::new(),
                    replaced: false,
                },
            )
            .collect();
        // Pass 3.
        t.derive_impls(None);
        t
    }

    /// The parts pass 2 reads and fills.
    pub(super) fn placing(&mut self) -> Placing<'_, 'a> {
        let SymbolTable {
            entities,
            key_to_ent,
            modules,
            module_ids,
            module_of_key,
            locals_of,
            crate_roots,
            ..
        } = self;
        Placing {
            entities,
            key_to_ent,
            module_of_key,
            tree: ModuleTree {
                modules,
                module_ids,
                crate_roots,
            },
            locals_of,
        }
    }

    /// A table of `ids` unused ids and nothing else.
    fn empty(ids: usize) -> SymbolTable<'a> {
        SymbolTable {
            entities: vec![(hole(), ""); ids],
            slots: Vec::new(),
            key_to_ent: HashMap::default(),
            dup_keys: HashSet::default(),
            modules: Vec::new(),
            module_ids: HashMap::default(),
            module_of_key: HashMap::default(),
            crate_roots: HashMap::default(),
            assoc: HashMap::default(),
            methods_by_name: HashMap::default(),
            macros_by_name: HashMap::default(),
            impl_owner: HashMap::default(),
            lookups: Default::default(),
            ext_impls: HashMap::default(),
            ext_methods: HashMap::default(),
            ref_words: None,
            use_words: None,
            locals_of: HashMap::default(),
            type_traits: HashMap::default(),
        }
    }

    /// Pass 1 for one file whose ids start at `base`, but the key index:
    /// its entities with their crate, its methods and macros by name, and
    /// the modules of the file and its `mod` items.
    pub(super) fn add_file_entities(
        &mut self,
        ctx: &'a FileContext,
        ex: &'a FileExtract,
        base: EntId,
    ) {
        let krate = ctx.unit.as_str();
        let file_mod: Vec<&str> = ctx.module_path.iter().map(String::as_str).collect();
        let fm = self.module(krate, &file_mod);
        if let Some(first) = ex.entities.first().filter(|e| e.kind == EntityKind::Module) {
            self.modules[fm].key.get_or_insert(first.key.as_ref());
            self.module_of_key.insert(first.key.as_ref(), fm);
        }
        for (i, e) in ex.entities.iter().enumerate() {
            let id = base + i;
            self.entities[id] = (e, krate);
            match e.kind {
                EntityKind::Method => insert_id(&mut self.methods_by_name, &e.name, id),
                EntityKind::Macro => insert_id(&mut self.macros_by_name, &e.name, id),
                _ => {}
            }
            if e.kind == EntityKind::Module && !self.module_of_key.contains_key(e.key.as_ref()) {
                let mut own: Vec<&str> = e.module_path.iter().map(String::as_str).collect();
                own.push(&e.name);
                let m = self.module(krate, &own);
                self.modules[m].key.get_or_insert(e.key.as_ref());
                self.module_of_key.insert(e.key.as_ref(), m);
            }
        }
    }

    pub(super) fn module(&mut self, krate: &'a str, path: &[&'a str]) -> ModId {
        ModuleTree {
            modules: &mut self.modules,
            module_ids: &mut self.module_ids,
            crate_roots: &mut self.crate_roots,
        }
        .module(krate, path)
    }
}
