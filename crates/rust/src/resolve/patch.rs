//! Replacing one file's interface in a built [`SymbolTable`], so that a
//! long-lived process whose user renamed a function does not build the
//! table of the whole repository again.
//!
//! The replacement redoes the first two passes of
//! [`SymbolTable::build`] for that one file, in its own ids, which keeps
//! every other file's ids and every list of ids in file order; the caller
//! then runs the third pass ([`SymbolTable::derive_impls`]) once for all
//! replaced files. The result is the table a build from every file's
//! interface now would give, up to the values of the ids (their order is
//! the same). Changes that would make or remove modules, that touch a
//! key another file also has, or that outgrow the file's ids are not
//! replaced: [`Unpatchable`] tells the caller to build the table again.

use std::collections::BTreeSet;

use rustc_hash::FxHashSet as HashSet;

use super::build::{hole, impl_refs};
use super::{bound_name, EntId, HashMap, ModId, SymbolTable};
use crate::interface::{same_entity_facts, same_use};
use crate::model::{Entity, EntityKind, FileContext, FileExtract, UseDecl};

/// Why a file's interface could not be replaced in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unpatchable {
    /// More entities than the file's ids have room for.
    Outgrown,
    /// Another crate or module path, other `mod` items, or `use`s in
    /// other scopes: the module tree would change.
    ModulesChanged,
    /// A key of the file is another file's too (or twice in the file).
    SharedKey,
    /// The table does not know the file as the caller says it is.
    Inconsistent,
}

pub(super) type File<'a> = (&'a FileContext, &'a FileExtract);

/// The `use`s of a table by each segment of their paths, each under its
/// address ([`SymbolTable::touched_names`] follows a changed name to the
/// `use`s that name it; a replacement takes out and puts in its file's).
pub(super) type UseWords<'a> = HashMap<&'a str, HashMap<usize, &'a UseDecl>>;

fn index_use<'a>(index: &mut UseWords<'a>, u: &'a UseDecl) {
    for segment in &u.path {
        index
            .entry(segment.as_str())
            .or_default()
            .insert(std::ptr::from_ref(u) as usize, u);
    }
}

fn unindex_use(index: &mut UseWords<'_>, u: &UseDecl) {
    for segment in &u.path {
        if let Some(uses) = index.get_mut(segment.as_str()) {
            uses.remove(&(std::ptr::from_ref(u) as usize));
        }
    }
}

impl<'a> SymbolTable<'a> {
    /// Replace the interface `old` of the file in slot `slot` by `new`.
    /// On error the table may be partly changed and must be dropped.
    /// Run [`SymbolTable::derive_impls`] after the last replacement.
    pub(super) fn replace_file(
        &mut self,
        slot: usize,
        old: File<'a>,
        new: File<'a>,
    ) -> Result<(), Unpatchable> {
        let (base, cap, len) = match self.slots.get(slot) {
            Some(s) => (s.base, s.cap, s.len),
            None => return Err(Unpatchable::Inconsistent),
        };
        if len != old.1.entities.len() {
            return Err(Unpatchable::Inconsistent);
        }
        if new.1.entities.len() > cap {
            return Err(Unpatchable::Outgrown);
        }
        self.check_modules(old, new)?;
        self.check_keys(base, old.1, new.1)?;
        self.withdraw_slot(slot);
        let uses_at = self.take_out(base, old)?;
        self.put_in(slot, base, new, uses_at)
    }

    /// The module tree stays as it is: the same crate and module path,
    /// the same `mod` items, `use`s in the same scopes.
    fn check_modules(&self, old: File<'a>, new: File<'a>) -> Result<(), Unpatchable> {
        let same_place = old.0.unit == new.0.unit && old.0.module_path == new.0.module_path;
        let modules = |ex: &'a FileExtract| {
            ex.entities
                .iter()
                .enumerate()
                .filter(|(_, e)| e.kind == EntityKind::Module)
                .map(|(i, e)| (i == 0, &e.key, &e.name, &e.module_path))
                .collect::<Vec<_>>()
        };
        let scopes = |ex: &'a FileExtract| {
            ex.uses
                .iter()
                .map(|u| u.scope.as_slice())
                .collect::<BTreeSet<_>>()
        };
        if same_place && modules(old.1) == modules(new.1) && scopes(old.1) == scopes(new.1) {
            Ok(())
        } else {
            Err(Unpatchable::ModulesChanged)
        }
    }

    /// Every key of the file, before and after, is the file's alone.
    fn check_keys(
        &self,
        base: EntId,
        old: &'a FileExtract,
        new: &'a FileExtract,
    ) -> Result<(), Unpatchable> {
        for (i, e) in old.entities.iter().enumerate() {
            let key = e.key.as_ref();
            if self.dup_keys.contains(key) || self.key_to_ent.get(key) != Some(&(base + i)) {
                return Err(Unpatchable::SharedKey);
            }
        }
        let own = base..base + old.entities.len();
        let mut seen = HashSet::default();
        for e in &new.entities {
            let key = e.key.as_ref();
            let elsewhere = self.key_to_ent.get(key).is_some_and(|id| !own.contains(id));
            if !seen.insert(key) || elsewhere || self.dup_keys.contains(key) {
                return Err(Unpatchable::SharedKey);
            }
        }
        Ok(())
    }

    /// Take the file's entities and `use`s out of every map. Returns, per
    /// module its `use`s were in, where they were in that module's list.
    fn take_out(&mut self, base: EntId, old: File<'a>) -> Result<Vec<(ModId, usize)>, Unpatchable> {
        let (ctx, ex) = old;
        let file_parent = {
            let own: Vec<&str> = ctx.module_path.iter().map(String::as_str).collect();
            match own.split_last() {
                Some((_, parent)) => Some(self.existing_module(&ctx.unit, parent)?),
                None => None,
            }
        };
        for (i, e) in ex.entities.iter().enumerate() {
            let id = base + i;
            self.key_to_ent.remove(e.key.as_ref());
            match e.kind {
                EntityKind::Method => remove_id(&mut self.methods_by_name, &e.name, id),
                EntityKind::Macro => remove_id(&mut self.macros_by_name, &e.name, id),
                _ => {}
            }
            let module = match e.parent.as_deref() {
                Some(p) => self.module_of_key.get(p).copied(),
                None => file_parent,
            };
            if let Some(m) = module {
                remove_id(&mut self.modules[m].items, &e.name, id);
            }
            // The local items of the file's functions are the file's.
            self.locals_of.remove(&id);
            self.entities[id] = (hole(), "");
        }
        let ours = ex.uses.as_ptr_range();
        let is_ours = |u: &&UseDecl| ours.contains(&(*u as *const UseDecl));
        let mut uses_at = Vec::new();
        let scopes: BTreeSet<&[String]> = ex.uses.iter().map(|u| u.scope.as_slice()).collect();
        for scope in scopes {
            let path: Vec<&str> = scope.iter().map(String::as_str).collect();
            let m = self.existing_module(&ctx.unit, &path)?;
            let uses = &mut self.modules[m].uses;
            let at = uses
                .iter()
                .position(is_ours)
                .ok_or(Unpatchable::Inconsistent)?;
            uses.retain(|u| !is_ours(u));
            uses_at.push((m, at));
        }
        if let Some(index) = &mut self.use_words {
            for u in &ex.uses {
                unindex_use(index, u);
            }
        }
        Ok(uses_at)
    }

    /// Passes 1 and 2 of a build for the file, in its ids, with its `use`s
    /// where the old ones were.
    fn put_in(
        &mut self,
        slot: usize,
        base: EntId,
        new: File<'a>,
        uses_at: Vec<(ModId, usize)>,
    ) -> Result<(), Unpatchable> {
        let (ctx, ex) = new;
        let modules_before = self.modules.len();
        self.add_file_entities(ctx, ex, base);
        for (i, e) in ex.entities.iter().enumerate() {
            self.key_to_ent.insert(e.key.as_ref(), base + i);
        }
        let (members, uses) = self.placing().file(ctx, ex, base);
        if self.modules.len() != modules_before {
            return Err(Unpatchable::ModulesChanged);
        }
        let mut next: HashMap<ModId, usize> = uses_at.into_iter().collect();
        for (m, u) in uses {
            let at = next.get_mut(&m).ok_or(Unpatchable::ModulesChanged)?;
            self.modules[m].uses.insert(*at, u);
            *at += 1;
            if let Some(index) = &mut self.use_words {
                index_use(index, u);
            }
        }
        let (owner_refs, trait_refs) = impl_refs(ctx, ex, &self.key_to_ent);
        let s = &mut self.slots[slot];
        s.len = ex.entities.len();
        s.members = members;
        s.owner_refs = owner_refs;
        s.trait_refs = trait_refs;
        // Resolved again, all of them, by the impl-block pass.
        s.owner_hits.clear();
        s.trait_hits.clear();
        s.replaced = true;
        Ok(())
    }

    fn existing_module(&self, krate: &'a str, path: &[&'a str]) -> Result<ModId, Unpatchable> {
        self.module_ids
            .get(&(krate, path.to_vec()))
            .copied()
            .ok_or(Unpatchable::Inconsistent)
    }
}

/// Take `id` out of the ids under `name`, and the name when none is left.
fn remove_id(map: &mut HashMap<&str, Vec<EntId>>, name: &str, id: EntId) {
    if let Some(ids) = map.get_mut(name) {
        ids.retain(|&x| x != id);
        if ids.is_empty() {
            map.remove(name);
        }
    }
}

impl<'a> SymbolTable<'a> {
    /// Make the index of every module's `use`s by the segments they
    /// name now, if it is not made: a server does it ahead of the first
    /// edit, which would otherwise make it (see `touched_names`).
    pub(super) fn index_use_words_now(&mut self) -> &UseWords<'a> {
        let modules = &self.modules;
        self.use_words.get_or_insert_with(|| {
            let mut index = UseWords::default();
            for u in modules.iter().flat_map(|m| &m.uses) {
                index_use(&mut index, u);
            }
            index
        })
    }

    /// The names whose lookup in some module may answer otherwise after
    /// these replacements (old, new): the names of the entities that
    /// changed, came, went or moved to another id (with an enum's
    /// variants), the names their `use`s bind, and then every name a
    /// `use` anywhere binds through one of those. `None` when a glob
    /// `use` changed or goes through such a name: any name may then
    /// answer otherwise.
    pub(super) fn touched_names(
        &mut self,
        replaced: &[(File<'a>, File<'a>)],
    ) -> Option<HashSet<&'a str>> {
        let index = self.index_use_words_now();
        let mut names: HashSet<&'a str> = HashSet::default();
        let add = |e: &'a Entity, names: &mut HashSet<&'a str>| {
            names.insert(e.name.as_str());
            if e.kind == EntityKind::Enum {
                names.extend(e.signature.fields.iter().map(|f| f.name.as_str()));
            }
        };
        for ((_, old), (_, new)) in replaced {
            let n = old.entities.len().max(new.entities.len());
            for i in 0..n {
                match (old.entities.get(i), new.entities.get(i)) {
                    (Some(a), Some(b)) if same_entity_facts(a, b) => {}
                    (a, b) => {
                        for e in a.into_iter().chain(b) {
                            add(e, &mut names);
                        }
                    }
                }
            }
            let n = old.uses.len().max(new.uses.len());
            for i in 0..n {
                match (old.uses.get(i), new.uses.get(i)) {
                    (Some(a), Some(b)) if same_use(a, b) => {}
                    (a, b) => {
                        for u in a.into_iter().chain(b) {
                            if u.glob {
                                return None;
                            }
                            names.insert(bound_name(u));
                        }
                    }
                }
            }
        }
        // Through `use`s: every `use` whose path names a touched name
        // binds a touched name, until no more are added.
        let mut queue: Vec<&'a str> = names.iter().copied().collect();
        while let Some(name) = queue.pop() {
            for u in index.get(name).into_iter().flat_map(|uses| uses.values()) {
                if u.glob {
                    return None;
                }
                let bound = bound_name(u);
                if names.insert(bound) {
                    queue.push(bound);
                }
            }
        }
        Some(names)
    }
}
