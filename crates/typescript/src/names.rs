//! Who an edit of a TypeScript interface can affect.
//!
//! A file's exports reach other files through re-exports, `export *`
//! barrels and aliases, further than a name can bound cheaply: an edit
//! that changes a file's interface (its entities as the table sees them,
//! its imports or exports, its context) resolves every file of the
//! language; one that keeps it resolves the edited file alone. The names
//! a file mentions are still kept, for the index's bookkeeping.
//!
//! Names are 32-bit hashes (see [`crate::index::names`]).

use rustc_hash::FxHashSet as HashSet;

use super::interface::same_interface;
use crate::index::names::{hash, Name};
use crate::model::{FileExtract, RawRef};

/// The names a whole extract mentions (sorted).
pub fn mentioned(extract: &FileExtract, apart: &[RawRef]) -> Vec<Name> {
    let mut out = HashSet::default();
    out.extend(extract.context.module_path.iter().map(|s| hash(s)));
    for e in &extract.entities {
        out.insert(hash(&e.name));
        for b in e.signature.bases.iter() {
            out.insert(hash(b));
        }
    }
    for r in extract.refs.iter().chain(apart) {
        out.extend(r.path.iter().map(|s| hash(s)));
    }
    for u in &extract.uses {
        out.extend(u.path.iter().map(|s| hash(s)));
        if let Some(a) = &u.alias {
            out.insert(hash(a));
        }
    }
    let mut v: Vec<Name> = out.into_iter().collect();
    v.sort_unstable();
    v
}

/// Nothing when the interface stayed; `None` (every file) when it changed.
pub fn changed(before: &FileExtract, after: &FileExtract) -> Option<HashSet<Name>> {
    same_interface(before, after).then(HashSet::default)
}
