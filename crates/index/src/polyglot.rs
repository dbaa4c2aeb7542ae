//! Every language of the registry asked as one: the layouts of a tree
//! ([`Layouts`]), a thread's extractors ([`Extractors`]), resolution
//! ([`resolve_files`]) and the symbol tables a server keeps ([`Tables`]).
//! Each language sees only its own files. With one language in the
//! registry, each call is that language's own, with nothing split.

use std::collections::{BTreeMap, BTreeSet};

use super::lang::{Extractor, Language, Layout, SymbolTable};
use super::languages;
use super::links::{FileLinks, RefsApart};
use crate::model::{ChildDecl, FileContext, FileExtract, LanguageId};

/// The language of an extract.
pub fn lang_of(extract: &FileExtract) -> &'static dyn Language {
    languages::get(extract.language)
}

/// One extractor per language, made when first asked for: what a thread
/// parses with.
#[derive(Default)]
pub struct Extractors {
    by_lang: Vec<Option<Box<dyn Extractor>>>,
}

impl Extractors {
    /// The extractor of `lang`.
    pub fn of(&mut self, lang: LanguageId) -> &mut dyn Extractor {
        let i = usize::from(lang.0);
        if self.by_lang.len() <= i {
            self.by_lang.resize_with(i + 1, || None);
        }
        &mut **self.by_lang[i].get_or_insert_with(|| languages::get(lang).extractor())
    }
}

/// Whether the registry holds one language: every file is of it.
fn one_language() -> bool {
    languages::all().len() == 1
}

/// A file in its context, with its extract.
type ContextExtract<'a> = (&'a FileContext, &'a FileExtract);

/// The files of each language among `files`, in registry order.
fn by_language<'a>(
    files: &[ContextExtract<'a>],
) -> Vec<(&'static dyn Language, Vec<ContextExtract<'a>>)> {
    languages::all()
        .iter()
        .map(|&lang| {
            let own = files
                .iter()
                .filter(|(_, ex)| ex.language == lang.id())
                .copied()
                .collect();
            (lang, own)
        })
        .collect()
}

/// The references held apart of the files of `lang`, taken out of `apart`.
fn apart_of(apart: &mut RefsApart, lang: &dyn Language) -> RefsApart {
    let (own, rest) = std::mem::take(apart)
        .into_iter()
        .partition(|(p, _)| languages::of_file(p).is_some_and(|l| l.id() == lang.id()));
    *apart = rest;
    own
}

/// Resolve the references of the files `wanted` picks, each language's
/// against a symbol table of all its `files` (see
/// [`Language::resolve_files`]).
pub fn resolve_files<'a>(
    files: &[(&'a FileContext, &'a FileExtract)],
    wanted: &dyn Fn(&str) -> bool,
    mut apart: RefsApart,
) -> BTreeMap<String, FileLinks<'a>> {
    if one_language() {
        return languages::all()[0].resolve_files(files, wanted, apart);
    }
    let mut out = BTreeMap::new();
    for (lang, own) in by_language(files) {
        let own_apart = apart_of(&mut apart, lang);
        out.extend(lang.resolve_files(&own, wanted, own_apart));
    }
    out
}

/// The symbol table of each language, kept by a long-lived process
/// between runs (see [`Language::symbol_table`]).
pub struct Tables {
    parts: Vec<(LanguageId, Box<dyn SymbolTable>)>,
}

impl Tables {
    /// The tables of these interfaces (whole extracts are fine too).
    pub fn build(files: Vec<(FileContext, FileExtract)>) -> Tables {
        if one_language() {
            let lang = languages::all()[0];
            return Tables {
                parts: vec![(lang.id(), lang.symbol_table(files))],
            };
        }
        let mut split: Vec<Vec<(FileContext, FileExtract)>> =
            languages::all().iter().map(|_| Vec::new()).collect();
        for file in files {
            if let Some(own) = split.get_mut(usize::from(file.1.language.0)) {
                own.push(file);
            }
        }
        let parts = languages::all()
            .iter()
            .zip(split)
            .map(|(lang, own)| (lang.id(), lang.symbol_table(own)))
            .collect();
        Tables { parts }
    }

    /// Resolve `files` against their languages' tables (see
    /// [`SymbolTable::resolve_files`]).
    pub fn resolve_files<'s>(
        &'s self,
        files: &[(&'s FileContext, &'s FileExtract)],
        mut apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'s>> {
        if let [(_, table)] = &self.parts[..] {
            return table.resolve_files(files, apart);
        }
        let mut out = BTreeMap::new();
        for ((lang, own), (_, table)) in by_language(files).into_iter().zip(&self.parts) {
            let own_apart = apart_of(&mut apart, lang);
            out.extend(table.resolve_files(&own, own_apart));
        }
        out
    }

    /// The tables with the files `changed` names taken out and `now` put
    /// in (see [`SymbolTable::update`]).
    pub fn update(
        self,
        changed: &dyn Fn(&str) -> bool,
        now: Vec<(FileContext, FileExtract)>,
    ) -> Tables {
        let one = self.parts.len() == 1;
        let mut now = now;
        let parts = self
            .parts
            .into_iter()
            .map(|(id, table)| {
                let own = match one {
                    true => std::mem::take(&mut now),
                    false => {
                        let (own, rest) = std::mem::take(&mut now)
                            .into_iter()
                            .partition(|(_, ex)| ex.language == id);
                        now = rest;
                        own
                    }
                };
                (id, table.update(changed, own))
            })
            .collect();
        Tables { parts }
    }

    /// Make the indexes an edit's update reads.
    pub fn prepare_edits(&mut self) {
        for (_, table) in &mut self.parts {
            table.prepare_edits();
        }
    }
}

/// Every language's layout of a tree, in registry order.
#[derive(Default)]
pub struct Layouts {
    parts: Vec<(LanguageId, Box<dyn Layout>)>,
}

impl std::fmt::Debug for Layouts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.parts.iter().map(|(id, _)| languages::get(*id)))
            .finish()
    }
}

impl Layouts {
    /// The layout of each language from the manifests it reads
    /// (`manifests[i]` for the registry's `i`th language: a manifest's
    /// path → its text) and the paths of the files it claims.
    pub fn new(manifests: &[BTreeMap<String, String>], files: &[BTreeSet<String>]) -> Layouts {
        let empty = (BTreeMap::new(), BTreeSet::new());
        let parts = languages::all()
            .iter()
            .enumerate()
            .map(|(i, lang)| {
                let m = manifests.get(i).unwrap_or(&empty.0);
                let f = files.get(i).unwrap_or(&empty.1);
                (lang.id(), lang.layout(m, f))
            })
            .collect();
        Layouts { parts }
    }

    /// The manifests a layout could not read, and why, by path.
    pub fn unread(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> =
            self.parts.iter().flat_map(|(_, l)| l.unread()).collect();
        out.sort();
        out
    }

    /// What a file's stored hash and stat row are computed under: each
    /// language's extract version and layout digest. When it changes,
    /// every file is extracted again.
    pub fn key(&self) -> String {
        let key = |(id, layout): &(LanguageId, Box<dyn Layout>)| {
            format!(
                "{}/{}",
                languages::get(*id).extract_version(),
                layout.digest()
            )
        };
        match &self.parts[..] {
            [one] => key(one),
            parts => parts.iter().map(key).collect::<Vec<_>>().join("+"),
        }
    }

    fn layout(&self, lang: LanguageId) -> Option<&dyn Layout> {
        self.parts
            .iter()
            .find(|(id, _)| *id == lang)
            .map(|(_, l)| &**l)
    }

    /// Each language's layout with its files among `files` (all of them
    /// when the registry holds one language: the walk finds no others).
    fn split<'f>(
        &self,
        files: &'f BTreeSet<String>,
    ) -> Vec<(&dyn Layout, std::borrow::Cow<'f, BTreeSet<String>>)> {
        match &self.parts[..] {
            [(_, one)] => vec![(&**one, std::borrow::Cow::Borrowed(files))],
            parts => parts
                .iter()
                .map(|(id, layout)| {
                    let own = files
                        .iter()
                        .filter(|p| languages::of_file(p).is_some_and(|l| l.id() == *id))
                        .cloned()
                        .collect();
                    (&**layout, std::borrow::Cow::Owned(own))
                })
                .collect(),
        }
    }

    /// The context the path of a file of `lang` suggests.
    pub fn guess(&self, lang: LanguageId, rel: &str) -> FileContext {
        match self.layout(lang) {
            Some(l) => l.guess(rel),
            // Every language of the registry has a layout.
            None => FileContext {
                path: rel.to_string(),
                package: String::new(),
                unit: String::new(),
                module_path: Vec::new(),
                is_test_file: false,
                path_aliases: Vec::new(),
            },
        }
    }

    /// See [`Layout::contexts`].
    pub fn contexts<'m>(
        &self,
        files: &BTreeSet<String>,
        decls_of: &dyn Fn(&str) -> Option<&'m [ChildDecl]>,
    ) -> BTreeMap<String, FileContext> {
        let mut out = BTreeMap::new();
        for (layout, own) in self.split(files) {
            out.extend(layout.contexts(&own, decls_of));
        }
        out
    }

    /// See [`Layout::reached_contexts`].
    pub fn reached_contexts<'m>(
        &self,
        files: &BTreeSet<String>,
        decls_of: &dyn Fn(&str) -> Option<&'m [ChildDecl]>,
    ) -> BTreeMap<String, FileContext> {
        let mut out = BTreeMap::new();
        for (layout, own) in self.split(files) {
            out.extend(layout.reached_contexts(&own, decls_of));
        }
        out
    }

    /// See [`Layout::root_contexts`]: every language's roots.
    pub fn root_contexts(&self, files: &BTreeSet<String>) -> Vec<(String, FileContext)> {
        self.split(files)
            .into_iter()
            .flat_map(|(layout, own)| layout.root_contexts(&own))
            .collect()
    }

    /// See [`Layout::child_contexts`], for `file` of `lang`.
    pub fn child_contexts(
        &self,
        lang: LanguageId,
        file: &str,
        children_beside: bool,
        parent: &FileContext,
        decls: &[ChildDecl],
        files: &BTreeSet<String>,
    ) -> Vec<(String, bool, FileContext)> {
        match self.layout(lang) {
            Some(l) => l.child_contexts(file, children_beside, parent, decls, files),
            None => Vec::new(),
        }
    }
}
