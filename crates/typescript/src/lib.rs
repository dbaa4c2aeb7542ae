//! TypeScript and JavaScript: everything the index knows about the
//! languages, behind [`Language`] (see [`crate::index::lang`]).
//!
//! - [`layout`] — package roots (`package.json`) and the module of every
//!   file: its path below its root, extension dropped; [`config`] the
//!   path aliases of its `tsconfig.json`.
//! - [`extract`] — one file's parse into entities, imports and exports
//!   ([`imports`], CommonJS's in [`commonjs`]) and references ([`refs`]), the receivers of members
//!   read from what a unit's own text tells ([`typing`]).
//! - [`table`] — the symbol table: files by path, relative specifiers,
//!   each module's exports through re-exports and barrels.
//! - [`resolve`] — references and imports into edges over the table;
//!   [`receivers`] the class a receiver is, from declared types.
//! - [`interface`] — what of a file other files' resolution reads, and
//!   the stored forms.
//! - [`names`] — the names a file mentions and an interface edit
//!   touches.
//! - [`texts`] — the literals and comments of bodies, for the text index.
//!
//! One grammar crate reads both: TypeScript's grammar for `.ts`, `.mts`,
//! `.cts` (and `.d.ts`), TSX's — a superset of JavaScript with JSX — for
//! `.tsx`, `.js`, `.jsx`, `.mjs`, `.cjs`.
//!
//! Keys: `{file}-{module}` for a file's module
//! (`src/hono-base.ts-src/hono-base`), `{file}-{module}:{qualname}` for
//! what it declares, nesting levels joined by `.`
//! (`…-src/hono-base:Hono.route`); a twin gets `#2`.
//!
//! Nothing outside this crate names it but the binary's assembly
//! (`src/languages.rs`).
use graphctx_base::model;
use graphctx_index as index;

mod commonjs;
mod config;
pub mod extract;
pub mod imports;
pub mod interface;
pub mod layout;
mod names;
mod receivers;
pub mod refs;
pub mod resolve;
mod syntax;
pub mod table;
mod test_blocks;
mod texts;
mod typing;

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashSet as HashSet;
use tree_sitter::Tree;

pub use extract::TsExtractor;

use crate::index::lang::{self, Extractor, Language, Stored, SymbolTable};
use crate::index::links::{FileLinks, RefsApart};
use crate::index::names::{Name, SpreadFacts};
use crate::index::rebuilt::{Rebuilt, WholeTable};
use crate::model::{Entity, FileContext, FileExtract, LanguageId, RawRef};

/// TypeScript's place in the registry.
pub const ID: LanguageId = LanguageId(2);

/// Changes whenever the extractor or the stored extract changes.
pub const EXTRACT_VERSION: &str = "graphctx-typescript-3";

/// TypeScript and JavaScript.
pub struct TypeScript;

impl Language for TypeScript {
    fn name(&self) -> &'static str {
        "typescript"
    }

    fn id(&self) -> LanguageId {
        ID
    }

    fn extract_version(&self) -> &'static str {
        EXTRACT_VERSION
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"]
    }

    fn common_file_names(&self) -> &'static [&'static str] {
        &[
            "index.ts",
            "index.tsx",
            "index.d.ts",
            "index.js",
            "index.jsx",
            "index.mjs",
            "index.cjs",
        ]
    }

    fn directory_module_stems(&self) -> &'static [&'static str] {
        &["index"]
    }

    fn output_dirs(&self) -> &'static [&'static str] {
        &["node_modules", "dist"]
    }

    fn tail_names<'k>(&self, tail: &'k str) -> Vec<&'k str> {
        let (module, qualname) = tail_parts(tail);
        module
            .split('/')
            .chain(qualname.into_iter().flat_map(|q| q.split('.')))
            .map(|s| s.trim_end_matches("()"))
            .filter(|s| !s.is_empty())
            .collect()
    }

    fn qualified_name(&self, tail: &str) -> String {
        match tail_parts(tail) {
            (module, None) => module.to_string(),
            (module, Some(qualname)) => format!("{module}:{qualname}"),
        }
    }

    fn import_line(&self, tail: &str) -> String {
        match tail_parts(tail) {
            (module, None) => {
                let name = module.rsplit('/').next().unwrap_or(module);
                let name: String = name
                    .chars()
                    .map(|c| if c.is_alphanumeric() { c } else { '_' })
                    .collect();
                format!("import * as {name} from './{module}'")
            }
            (module, Some(qualname)) => {
                let first = qualname.split('.').next().unwrap_or(qualname);
                format!(
                    "import {{ {} }} from './{module}'",
                    first.trim_end_matches("()")
                )
            }
        }
    }

    fn manifests(&self) -> &'static [&'static str] {
        &["package.json", "tsconfig.json", "jsconfig.json"]
    }

    fn declaration_words(&self) -> &'static str {
        "typescript dts"
    }

    /// A tool's configuration (`vite.config.ts`, `jest.config.js`) builds;
    /// a story (`button.stories.tsx`) shows a component; a `.d.ts`
    /// declares types; the rest by their directories.
    fn file_role(&self, path: &str, is_test: bool) -> lang::FileRole {
        let name = path.rsplit('/').next().unwrap_or(path);
        let stem = layout::module_of(name);
        if stem.ends_with(".config") || stem.contains(".config.") {
            lang::FileRole::Build
        } else if stem.ends_with(".stories") || stem.ends_with(".story") {
            lang::FileRole::Example
        } else if !is_test && layout::is_declaration(name) {
            lang::FileRole::Declarations
        } else {
            lang::default_role(path, is_test)
        }
    }

    /// Also the configurations a `tsconfig.json` extends or refers to
    /// (`tsconfig.base.json`, `tsconfig-base.json`, `jsconfig.base.json`).
    fn is_manifest(&self, name: &str) -> bool {
        self.manifests().contains(&name)
            || (name.starts_with("tsconfig") || name.starts_with("jsconfig"))
                && name.ends_with(".json")
    }

    fn layout(
        &self,
        manifests: &BTreeMap<String, String>,
        files: &BTreeSet<String>,
    ) -> Box<dyn lang::Layout> {
        Box::new(layout::Layout::new(manifests, files))
    }

    fn extractor(&self) -> Box<dyn Extractor> {
        Box::new(TsExtractor::new())
    }

    fn encode(&self, extract: &FileExtract) -> Stored {
        interface::encode(extract)
    }

    fn decode_interface(&self, bytes: &[u8]) -> Option<FileExtract> {
        interface::decode_interface(bytes)
    }

    fn decode_body(&self, bytes: &[u8]) -> Option<Vec<RawRef>> {
        interface::decode_body(bytes)
    }

    fn take_apart(&self, extract: &mut FileExtract) -> Vec<RawRef> {
        interface::take_apart(extract)
    }

    fn join(&self, iface: FileExtract, body: Vec<RawRef>) -> FileExtract {
        interface::join(iface, body)
    }

    fn interface_copy(&self, extract: &FileExtract) -> FileExtract {
        interface::interface_copy(extract)
    }

    fn keep_interface(&self, extract: &mut FileExtract) {
        extract.refs.clear();
    }

    fn same_interface(&self, a: &FileExtract, b: &FileExtract) -> bool {
        interface::same_interface(a, b)
    }

    fn same_entity_facts(&self, a: &Entity, b: &Entity) -> bool {
        interface::same_entity_facts(a, b)
    }

    fn mentioned(&self, extract: &FileExtract) -> Vec<Name> {
        names::mentioned(extract, &[])
    }

    fn mentioned_with(&self, extract: &FileExtract, apart: &[RawRef]) -> Vec<Name> {
        names::mentioned(extract, apart)
    }

    fn changed_names(&self, before: &FileExtract, after: &FileExtract) -> Option<HashSet<Name>> {
        names::changed(before, after)
    }

    fn spread_facts(&self, extract: &FileExtract) -> SpreadFacts {
        names::spread_facts(extract)
    }

    fn resolve_files<'a>(
        &self,
        files: &[(&'a FileContext, &'a FileExtract)],
        wanted: &dyn Fn(&str) -> bool,
        apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'a>> {
        resolve::resolve_files(files, wanted, apart)
    }

    fn symbol_table(&self, files: Vec<(FileContext, FileExtract)>) -> Box<dyn SymbolTable> {
        Box::new(Rebuilt::<table::Table<'static>>::build(files))
    }
}

impl Extractor for TsExtractor {
    fn extract(&mut self, ctx: &FileContext, source: &str) -> FileExtract {
        TsExtractor::extract(self, ctx, source)
    }

    fn parse(&mut self, source: &str, old: Option<&Tree>) -> Option<Tree> {
        TsExtractor::parse(self, source, old)
    }

    fn extract_tree(&mut self, ctx: &FileContext, source: &str, tree: &Tree) -> FileExtract {
        TsExtractor::extract_tree(self, ctx, source, tree)
    }
}

/// The table a server keeps, built again on an interface edit (see
/// `index::rebuilt`).
impl WholeTable for table::Table<'static> {
    fn build(files: &[(&'static FileContext, &'static FileExtract)]) -> Self {
        table::Table::build(files)
    }

    fn resolve<'s>(
        &'s self,
        files: &[(&'s FileContext, &'s FileExtract)],
        apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'s>> {
        resolve::resolve_against(self, files, apart)
    }
}

/// A key's tail read back: its module and, for what a module declares,
/// its qualified name, without a twin mark (`src/a:B.c#2` → `src/a`,
/// `B.c`). Only a trailing `#` and digits is a twin mark: `#x` is a
/// private name.
fn tail_parts(tail: &str) -> (&str, Option<&str>) {
    let tail = strip_twin(tail);
    match tail.split_once(':') {
        Some((module, qualname)) => (module, Some(qualname)),
        None => (tail, None),
    }
}

/// `x#2` → `x`; `#x`, `a.#x` and `x` unchanged.
pub(crate) fn strip_twin(s: &str) -> &str {
    match s.rsplit_once('#') {
        Some((head, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_read_back_as_names_and_paths() {
        let ts = TypeScript;
        assert_eq!(
            ts.tail_names("src/utils/http-status:Hono.#addRoute#2"),
            ["src", "utils", "http-status", "Hono", "#addRoute"]
        );
        assert_eq!(ts.tail_names("src/jsx/index"), ["src", "jsx", "index"]);
        assert_eq!(
            ts.qualified_name("src/hono-base:Hono.route"),
            "src/hono-base:Hono.route"
        );
        assert_eq!(
            ts.import_line("src/hono-base:Hono.route"),
            "import { Hono } from './src/hono-base'"
        );
        assert_eq!(
            ts.import_line("src/hono-base"),
            "import * as hono_base from './src/hono-base'"
        );
        assert_eq!(strip_twin("#x"), "#x");
        assert_eq!(strip_twin("A.#x#3"), "A.#x");
    }

    #[test]
    fn configurations_build_stories_show_and_directories_tell_the_rest() {
        use lang::FileRole::*;
        let ts = TypeScript;
        assert_eq!(ts.file_role("vite.config.ts", false), Build);
        assert_eq!(ts.file_role("packages/a/tsdown.config.mts", false), Build);
        assert_eq!(ts.file_role("src/button.stories.tsx", false), Example);
        assert_eq!(ts.file_role("benchmarks/handle.ts", false), Bench);
        assert_eq!(ts.file_role("src/a.test.ts", true), Test);
        assert_eq!(ts.file_role("docs/guide/app.ts", false), Docs);
        assert_eq!(ts.file_role("examples/app/index.js", false), Example);
        assert_eq!(ts.file_role("src/config.ts", false), Code);
        assert_eq!(ts.file_role("types/index.d.ts", false), Declarations);
        assert_eq!(ts.file_role("src/globals.d.mts", false), Declarations);
        assert_eq!(ts.file_role("test/env.d.ts", true), Test);
        assert_eq!(lang::role_of(&ts, "dist/axios.js", false), Generated);
        assert_eq!(
            lang::role_of(&ts, "packages/ui/dist/index.d.ts", false),
            Generated
        );
        assert_eq!(lang::role_of(&ts, "src/dist.ts", false), Code);
    }
}
