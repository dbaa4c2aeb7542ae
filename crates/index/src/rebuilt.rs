//! A [`SymbolTable`] for a language whose table is built whole: it keeps
//! every file's interface beside the table that borrows them, resolves
//! against it for as long as no interface changes (a body edit resolves
//! the edited file alone), and builds it again on an interface edit —
//! for a language whose imports, re-exports and bases reach across
//! modules further than a swap in place could follow, and whose table is
//! quick to build beside a save's parse.

use std::collections::BTreeMap;

use crate::lang::{self, SymbolTable};
use crate::links::{FileLinks, RefsApart};
use crate::model::{FileContext, FileExtract};

/// A language's table over every file's interface.
pub trait WholeTable: Send + Sync + 'static {
    /// The table of these interfaces.
    fn build(files: &[(&'static FileContext, &'static FileExtract)]) -> Self;
    /// Resolve `files` against the table.
    fn resolve<'s>(
        &'s self,
        files: &[(&'s FileContext, &'s FileExtract)],
        apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'s>>;
}

/// The table a server keeps, rebuilt on an interface edit.
pub struct Rebuilt<T: WholeTable> {
    // Declared before the interfaces it borrows, so dropped first.
    table: T,
    /// Every file's interface, in path order. Never changed while the
    /// table lives: the table refers into this vector's elements, which
    /// stay where they are when the vector itself moves.
    files: Vec<(FileContext, FileExtract)>,
}

impl<T: WholeTable> Rebuilt<T> {
    /// The table of these interfaces (of whole extracts, their interface
    /// parts are kept).
    pub fn build(mut files: Vec<(FileContext, FileExtract)>) -> Rebuilt<T> {
        for (_, extract) in &mut files {
            extract.refs.clear();
        }
        // SAFETY: `files` moves into the returned value with the table,
        // which is dropped before it, and is not changed while the table
        // lives (see `lang::unbound`).
        let refs: Vec<(&'static FileContext, &'static FileExtract)> =
            files.iter().map(|f| unsafe { lang::unbound(f) }).collect();
        let table = T::build(&refs);
        Rebuilt { table, files }
    }
}

impl<T: WholeTable> SymbolTable for Rebuilt<T> {
    fn resolve_files<'s>(
        &'s self,
        files: &[(&'s FileContext, &'s FileExtract)],
        apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'s>> {
        self.table.resolve(files, apart)
    }

    fn update(
        self: Box<Self>,
        changed: &dyn Fn(&str) -> bool,
        now: Vec<(FileContext, FileExtract)>,
    ) -> Box<dyn SymbolTable> {
        if now.is_empty() && !self.files.iter().any(|(_, e)| changed(&e.path)) {
            return self;
        }
        let Rebuilt { table, files } = *self;
        drop(table);
        let mut files: Vec<(FileContext, FileExtract)> = files
            .into_iter()
            .filter(|(_, e)| !changed(&e.path))
            .collect();
        files.extend(now);
        files.sort_by(|a, b| a.1.path.cmp(&b.1.path));
        Box::new(Rebuilt::<T>::build(files))
    }

    fn prepare_edits(&mut self) {}
}
