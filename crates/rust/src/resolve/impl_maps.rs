//! Pass 3 of a [`SymbolTable`]: what impl blocks make of the table —
//! the owners of impl blocks, the traits our types implement, impl blocks
//! of types that are not ours, and the associated items of types and
//! traits.
//!
//! Each impl block or trait adds a [`Part`] to those maps: its members
//! under its owners (or under itself, for a trait), its traits under its
//! owners, or itself under the name of a type that is not ours. Every
//! list in the maps is kept in id order, so a part can be taken out and
//! put back where it was: after a file's interface is replaced, only the
//! parts of the replaced files and of the impl blocks whose references
//! resolve differently now are taken out and put in again, and the maps
//! are the ones a build would make from every part in order.
//!
//! Invariant: the maps hold exactly the parts of the table's slots as
//! their references last resolved ([`Slot::owner_hits`],
//! [`Slot::trait_hits`]); a slot about to be replaced takes its parts out
//! first ([`SymbolTable::withdraw_slot`]).

use rustc_hash::FxHashSet as HashSet;

use super::build::{ImplRef, Slot};
use super::typing::Site;
use super::{EntId, HashMap, Ns, Res, SymbolTable};
use crate::model::{EntityKind, RawRef};

/// The impl references that may read a word, by word: slot, whether it
/// is a trait reference (else an owner one), its place in the slot's list.
/// Entries of a slot's earlier interface stay after it is replaced (a
/// reference named by one is resolved again for nothing, and one past
/// the end of the list is skipped); the table is built again long before
/// they add up.
pub(super) type RefWords<'a> = HashMap<&'a str, Vec<(usize, bool, usize)>>;

/// What one impl block or trait adds to the maps.
struct Part {
    id: EntId,
    /// Its associated items, in id order.
    members: Vec<EntId>,
    /// For an impl block: the types its `ImplOwner` reference names (the
    /// last reference that names any).
    owners: Vec<EntId>,
    /// For an impl block: the traits its `Implements` references name.
    traits: Vec<EntId>,
}

/// Answers of impl references that changed, to put in once the old parts
/// are out: (slot, place in the slot's list, the new answer).
#[derive(Default)]
struct Answers {
    owners: Vec<(usize, usize, Vec<EntId>)>,
    traits: Vec<(usize, usize, Option<Vec<EntId>>)>,
}

impl<'a> SymbolTable<'a> {
    /// Pass 3, from the slots in order.
    ///
    /// The impl blocks' references are resolved as a build's first pass
    /// over them sees the table: without any of the maps this pass makes,
    /// and with no lookup remembered from before. What each resolved to is
    /// kept in its slot. After a replacement (`touched` is `Some`) only the
    /// references of the replaced files and those that may read a
    /// `touched` name ([`SymbolTable::ref_words`]) are resolved again, and
    /// only the parts whose answers changed are taken out and put back;
    /// with `None` every reference is resolved and the maps are made
    /// anew. The lookup memo is left empty: answers given without
    /// associated items are not kept.
    pub(super) fn derive_impls(&mut self, touched: Option<&HashSet<&str>>) {
        let maps = (
            std::mem::take(&mut self.assoc),
            std::mem::take(&mut self.impl_owner),
            std::mem::take(&mut self.type_traits),
            std::mem::take(&mut self.ext_impls),
            std::mem::take(&mut self.ext_methods),
        );
        self.lookups.each(|l| l.memo.clear());
        let mut slots = std::mem::take(&mut self.slots);
        for slot in slots.iter_mut().filter(|s| touched.is_none() || s.replaced) {
            slot.owner_hits = slot.owner_refs.iter().map(|r| self.owners_at(r)).collect();
            slot.trait_hits = slot.trait_refs.iter().map(|r| self.traits_of(r)).collect();
        }
        let again = self.refs_to_recheck(touched, &slots);
        let answers = self.changed_answers(again, &slots);
        self.lookups.each(|l| l.memo.clear());
        if touched.is_none() {
            // Made anew from every slot; the old maps are dropped. No slot
            // stays marked replaced: its parts are in the maps now, and a
            // later replacement must not put them in again.
            drop(maps);
            for slot in slots.iter_mut() {
                for part in self.parts(slot, None) {
                    self.add_part(&part);
                }
                slot.replaced = false;
            }
            self.slots = slots;
            return;
        }
        (
            self.assoc,
            self.impl_owner,
            self.type_traits,
            self.ext_impls,
            self.ext_methods,
        ) = maps;
        self.put_back_changed(&mut slots, answers);
        for slot in slots.iter_mut().filter(|s| s.replaced) {
            for part in self.parts(slot, None) {
                self.add_part(&part);
            }
            slot.replaced = false;
        }
        self.slots = slots;
    }

    /// The references of the slots not replaced that may read a touched
    /// name, found through the index of words (made at the first
    /// replacement, and brought up to date with the replaced slots); none
    /// without `touched`, when the index is dropped.
    fn refs_to_recheck(
        &mut self,
        touched: Option<&HashSet<&str>>,
        slots: &[Slot<'a>],
    ) -> Vec<(usize, bool, usize)> {
        let mut again: Vec<(usize, bool, usize)> = Vec::new();
        match touched {
            Some(names) => {
                let index = match self.ref_words.take() {
                    Some(mut index) => {
                        for (s, slot) in slots.iter().enumerate().filter(|(_, s)| s.replaced) {
                            self.index_ref_words(&mut index, s, slot);
                        }
                        index
                    }
                    None => self.all_ref_words(slots),
                };
                again = names
                    .iter()
                    .filter_map(|n| index.get(n))
                    .flatten()
                    .copied()
                    .filter(|&(s, _, _)| !slots[s].replaced)
                    .collect();
                again.sort_unstable();
                again.dedup();
                self.ref_words = Some(index);
            }
            None => self.ref_words = None,
        }
        again
    }

    /// Resolves the references `again` anew and keeps the answers that
    /// differ from what their slots hold.
    fn changed_answers(&self, again: Vec<(usize, bool, usize)>, slots: &[Slot<'a>]) -> Answers {
        let mut answers = Answers::default();
        for (s, is_trait, k) in again {
            let slot = &slots[s];
            if is_trait {
                if let Some(r) = slot.trait_refs.get(k) {
                    let hits = self.traits_of(r);
                    if slot.trait_hits[k] != hits {
                        answers.traits.push((s, k, hits));
                    }
                }
            } else if let Some(r) = slot.owner_refs.get(k) {
                let hits = self.owners_at(r);
                if slot.owner_hits[k] != hits {
                    answers.owners.push((s, k, hits));
                }
            }
        }
        answers
    }

    /// Takes the parts of the impl blocks whose answers changed out of the
    /// maps, keeps the new answers in their slots, and puts the parts back.
    fn put_back_changed(&mut self, slots: &mut [Slot<'a>], answers: Answers) {
        // The impl blocks whose answers changed, by slot.
        let mut changed: HashMap<usize, HashSet<EntId>> = HashMap::default();
        for &(s, k, _) in &answers.owners {
            changed
                .entry(s)
                .or_default()
                .insert(slots[s].owner_refs[k].0);
        }
        for &(s, k, _) in &answers.traits {
            changed
                .entry(s)
                .or_default()
                .insert(slots[s].trait_refs[k].0);
        }
        for (&s, ids) in &changed {
            for part in self.parts(&slots[s], Some(ids)) {
                self.remove_part(&part);
            }
        }
        for (s, k, hits) in answers.owners {
            slots[s].owner_hits[k] = hits;
        }
        for (s, k, hits) in answers.traits {
            slots[s].trait_hits[k] = hits;
        }
        for (&s, ids) in &changed {
            for part in self.parts(&slots[s], Some(ids)) {
                self.add_part(&part);
            }
        }
    }

    /// Take the parts of the file in `slot` out of the maps, before its
    /// interface is replaced (they are read from the interface it has).
    pub(super) fn withdraw_slot(&mut self, slot: usize) {
        let parts = self.parts(&self.slots[slot], None);
        for part in &parts {
            self.remove_part(part);
        }
    }

    /// The parts of the impl blocks and traits of `slot` (those in `only`).
    fn parts(&self, slot: &Slot<'a>, only: Option<&HashSet<EntId>>) -> Vec<Part> {
        let wanted = |id: &EntId| only.is_none_or(|o| o.contains(id));
        let mut owners: HashMap<EntId, &[EntId]> = HashMap::default();
        for (&(imp, _, _), hits) in slot.owner_refs.iter().zip(&slot.owner_hits) {
            if !hits.is_empty() && wanted(&imp) {
                owners.insert(imp, hits);
            }
        }
        let mut traits: HashMap<EntId, Vec<EntId>> = HashMap::default();
        for (&(imp, _, _), hits) in slot.trait_refs.iter().zip(&slot.trait_hits) {
            if let Some(hits) = hits.as_ref().filter(|_| wanted(&imp)) {
                traits.entry(imp).or_default().extend(hits);
            }
        }
        let mut members: HashMap<EntId, Vec<EntId>> = HashMap::default();
        for &(id, parent) in &slot.members {
            if wanted(&parent) {
                members.entry(parent).or_default().push(id);
            }
        }
        (slot.base..slot.base + slot.len)
            .filter(|id| wanted(id))
            .filter(|&id| {
                matches!(
                    self.entities[id].0.kind,
                    EntityKind::Impl | EntityKind::Trait
                )
            })
            .map(|id| Part {
                id,
                members: members.remove(&id).unwrap_or_default(),
                owners: owners.get(&id).map_or_else(Vec::new, |o| o.to_vec()),
                traits: traits.remove(&id).unwrap_or_default(),
            })
            .collect()
    }

    /// Put `part` into the maps, each list keeping id order.
    fn add_part(&mut self, part: &Part) {
        let members = self.member_names(part);
        let e = self.entities[part.id].0;
        match e.kind {
            EntityKind::Trait => put_members(&mut self.assoc, part.id, &members),
            EntityKind::Impl if !part.owners.is_empty() => {
                self.impl_owner.insert(part.id, part.owners.clone());
                for &o in &part.owners {
                    if !part.traits.is_empty() {
                        let list = self.type_traits.entry(o).or_default();
                        let at = list.partition_point(|&(i, _)| i < part.id);
                        list.splice(at..at, part.traits.iter().map(|&t| (part.id, t)));
                    }
                    put_members(&mut self.assoc, o, &members);
                }
            }
            EntityKind::Impl => {
                // An impl block of a type that is not ours.
                let Some(owner) = e.owner.as_deref().filter(|o| !o.is_empty()) else {
                    return;
                };
                let impls = self.ext_impls.entry(owner).or_default();
                let at = impls.partition_point(|&(i, _)| i < part.id);
                impls.insert(at, (part.id, part.traits.clone()));
                let methods = self.ext_methods.entry(owner).or_default();
                for &(m, name, kind) in &members {
                    if kind == EntityKind::Method {
                        insert_sorted(methods.entry(name).or_default(), m);
                    }
                }
            }
            _ => {}
        }
    }

    /// Take `part` (as [`SymbolTable::add_part`] put it in) out of the
    /// maps, and every list and map it leaves empty.
    fn remove_part(&mut self, part: &Part) {
        let members = self.member_names(part);
        let e = self.entities[part.id].0;
        match e.kind {
            EntityKind::Trait => take_members(&mut self.assoc, part.id, &members),
            EntityKind::Impl if !part.owners.is_empty() => {
                self.impl_owner.remove(&part.id);
                for &o in &part.owners {
                    if let Some(list) = self.type_traits.get_mut(&o) {
                        list.retain(|&(i, _)| i != part.id);
                        if list.is_empty() {
                            self.type_traits.remove(&o);
                        }
                    }
                    take_members(&mut self.assoc, o, &members);
                }
            }
            EntityKind::Impl => {
                let Some(owner) = e.owner.as_deref().filter(|o| !o.is_empty()) else {
                    return;
                };
                if let Some(impls) = self.ext_impls.get_mut(owner) {
                    impls.retain(|&(i, _)| i != part.id);
                    if impls.is_empty() {
                        self.ext_impls.remove(owner);
                    }
                }
                if let Some(methods) = self.ext_methods.get_mut(owner) {
                    for &(m, name, kind) in &members {
                        if kind == EntityKind::Method {
                            remove_from(methods, name, m);
                        }
                    }
                    if methods.is_empty() {
                        self.ext_methods.remove(owner);
                    }
                }
            }
            _ => {}
        }
    }

    /// A part's members with their names and kinds.
    fn member_names(&self, part: &Part) -> Vec<(EntId, &'a str, EntityKind)> {
        part.members
            .iter()
            .map(|&m| {
                let e = self.entities[m].0;
                (m, e.name.as_str(), e.kind)
            })
            .collect()
    }

    /// The types an impl block's `ImplOwner` reference names (none when
    /// it names no type of ours).
    fn owners_at(&self, &(imp, krate, r): &ImplRef<'a>) -> Vec<EntId> {
        let site = self.impl_site(imp, krate, r);
        let segs: Vec<&str> = r.path.iter().map(String::as_str).collect();
        let file = self.entities[imp].0.file.as_ref();
        match self.resolve_in(&site, &segs, Ns::Type) {
            Some(Res::Items(items)) => self.nearest(
                file,
                items
                    .into_iter()
                    .filter(|&i| self.entities[i].0.kind.is_type_like())
                    .collect(),
            ),
            _ => Vec::new(),
        }
    }

    /// The traits an impl block's `Implements` reference names; `None`
    /// when it names no item at all.
    fn traits_of(&self, &(imp, krate, r): &ImplRef<'a>) -> Option<Vec<EntId>> {
        let site = self.impl_site(imp, krate, r);
        let segs: Vec<&str> = r.path.iter().map(String::as_str).collect();
        let file = self.entities[imp].0.file.as_ref();
        match self.resolve_in(&site, &segs, Ns::Type) {
            Some(Res::Items(items)) => Some(
                self.nearest(
                    file,
                    items
                        .into_iter()
                        .filter(|&i| self.entities[i].0.kind == EntityKind::Trait)
                        .collect(),
                ),
            ),
            _ => None,
        }
    }

    /// The words resolving an impl block's reference may read: the
    /// segments of its path, and the words of the generic parameters and
    /// `where` clauses it is written under (the bounds a generic
    /// parameter's path goes through, as `bounds_of` reads them).
    fn ref_words(&self, &(imp, _, r): &ImplRef<'a>, mut word: impl FnMut(&'a str)) {
        for s in &r.path {
            word(s);
        }
        for (_, e) in self.enclosing(imp).take(16) {
            let sig = &e.signature;
            for clause in sig.generics.iter().chain(&sig.where_clause) {
                clause
                    .split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                    .filter(|w| !w.is_empty())
                    .for_each(&mut word);
            }
        }
    }

    /// Make the index of words of every impl reference now, if it is not
    /// made: a server does it ahead of the first edit, which would
    /// otherwise make it (see `derive_impls`).
    pub(super) fn index_ref_words_now(&mut self) {
        if self.ref_words.is_none() {
            let slots = std::mem::take(&mut self.slots);
            self.ref_words = Some(self.all_ref_words(&slots));
            self.slots = slots;
        }
    }

    /// The index of words of the impl references of every slot.
    fn all_ref_words(&self, slots: &[Slot<'a>]) -> RefWords<'a> {
        let mut index = RefWords::default();
        for (s, slot) in slots.iter().enumerate() {
            self.index_ref_words(&mut index, s, slot);
        }
        index
    }

    /// Add the impl references of `slots[s]` to the index of words
    /// ([`SymbolTable::ref_words`]).
    fn index_ref_words(&self, index: &mut RefWords<'a>, s: usize, slot: &Slot<'a>) {
        for (k, r) in slot.owner_refs.iter().enumerate() {
            self.ref_words(r, |w| index.entry(w).or_default().push((s, false, k)));
        }
        for (k, r) in slot.trait_refs.iter().enumerate() {
            self.ref_words(r, |w| index.entry(w).or_default().push((s, true, k)));
        }
    }

    /// The site of an impl block's own `ImplOwner`/`Implements`
    /// reference: `Self` is what is being found, not known.
    fn impl_site(&self, imp: EntId, krate: &'a str, r: &'a RawRef) -> Site<'a> {
        Site {
            krate,
            scope: self.scope_of(krate, &r.scope),
            self_type: None,
            from: Some(imp),
            self_ent: None,
        }
    }
}

/// Associated items by owner (type or trait), then name.
type Assoc<'a> = HashMap<EntId, HashMap<&'a str, Vec<EntId>>>;

/// Put `members` under `owner`, each list keeping id order.
fn put_members<'a>(assoc: &mut Assoc<'a>, owner: EntId, members: &[(EntId, &'a str, EntityKind)]) {
    let by_name = assoc.entry(owner).or_default();
    for &(m, name, _) in members {
        insert_sorted(by_name.entry(name).or_default(), m);
    }
}

/// Take `members` (as [`put_members`] put them) from under `owner`, and
/// every list and map left empty.
fn take_members(assoc: &mut Assoc<'_>, owner: EntId, members: &[(EntId, &str, EntityKind)]) {
    if let Some(by_name) = assoc.get_mut(&owner) {
        for &(m, name, _) in members {
            remove_from(by_name, name, m);
        }
        if by_name.is_empty() {
            assoc.remove(&owner);
        }
    }
}

/// Put `id` into an id-ordered list of distinct ids. A member is under
/// its owner once however many times its impl block's part is put in:
/// an edit that re-derives every part after parts were put in place must
/// not list a method twice (the table built from scratch lists it once).
fn insert_sorted(list: &mut Vec<EntId>, id: EntId) {
    if let Err(at) = list.binary_search(&id) {
        list.insert(at, id);
    }
}

/// Take every `id` out of the list under `name`, and the name when its
/// list is left empty.
fn remove_from(map: &mut HashMap<&str, Vec<EntId>>, name: &str, id: EntId) {
    if let Some(list) = map.get_mut(name) {
        let (lo, hi) = (
            list.partition_point(|&i| i < id),
            list.partition_point(|&i| i <= id),
        );
        list.drain(lo..hi);
        if list.is_empty() {
            map.remove(name);
        }
    }
}

#[cfg(test)]
impl SymbolTable<'_> {
    /// The maps of pass 3 with every id written as its key, one line per
    /// entry, sorted: two tables whose ids differ compare equal when their
    /// maps hold the same parts in the same order.
    pub(super) fn impl_maps_by_key(&self) -> Vec<String> {
        let key = |id: &EntId| self.entities[*id].0.key.as_ref();
        let keys = |ids: &[EntId]| ids.iter().map(key).collect::<Vec<_>>().join(", ");
        let mut lines = Vec::new();
        for (o, by_name) in &self.assoc {
            for (name, ids) in by_name {
                lines.push(format!("assoc {} {name}: {}", key(o), keys(ids)));
            }
        }
        for (imp, owners) in &self.impl_owner {
            lines.push(format!("owner {}: {}", key(imp), keys(owners)));
        }
        for (o, list) in &self.type_traits {
            let pairs: Vec<String> = list
                .iter()
                .map(|(i, t)| format!("{} {}", key(i), key(t)))
                .collect();
            lines.push(format!("traits {}: {}", key(o), pairs.join(", ")));
        }
        for (name, impls) in &self.ext_impls {
            for (i, traits) in impls {
                lines.push(format!("ext {name} {}: {}", key(i), keys(traits)));
            }
        }
        for (owner, by_name) in &self.ext_methods {
            for (name, ids) in by_name {
                lines.push(format!("ext method {owner} {name}: {}", keys(ids)));
            }
        }
        lines.sort();
        lines
    }
}
