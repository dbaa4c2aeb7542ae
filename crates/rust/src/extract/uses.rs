//! `use` trees flattened into one declaration per imported name, and `extern crate`.

use super::*;

impl<'t, 'x> Walker<'t, 'x> {
    #[inline(never)]
    pub(super) fn use_decl(&mut self, n: Node<'t>, cx: &Cx) {
        let is_pub = self.find_child(n, |k| k == K::VisibilityModifier).is_some();
        if let Some(arg) = self.field(n, self.t.f.argument) {
            let mut prefix = Vec::new();
            self.flatten_use(arg, &mut prefix, is_pub, cx);
        }
    }

    #[inline(never)]
    pub(super) fn push_use(
        &mut self,
        path: &[&str],
        alias: Option<&str>,
        glob: bool,
        is_pub: bool,
        n: Node<'t>,
        cx: &Cx,
    ) {
        if path.is_empty() {
            return;
        }
        self.uses.push(UseDecl {
            from: self.entities[cx.from as usize].key.to_string(),
            scope: self.children[cx.module as usize].path.to_vec(),
            path: path.iter().map(|s| s.to_string()).collect(),
            alias: alias.map(str::to_string),
            glob,
            is_pub,
            line: line_of(n),
        });
    }

    #[inline(never)]
    pub(super) fn flatten_use(
        &mut self,
        n: Node<'t>,
        prefix: &mut Vec<&'t str>,
        is_pub: bool,
        cx: &Cx,
    ) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        let f = &self.t.f;
        let mark = prefix.len();
        match self.kind(n) {
            K::Ident | K::PathKw | K::Metavariable | K::ScopedIdent if self.use_path(n, prefix) => {
                self.push_use(prefix, None, false, is_pub, n, cx);
            }
            K::UseAsClause => {
                let alias = self.field(n, f.alias).map(|a| self.text(a));
                if let Some(p) = self.field(n, f.path) {
                    if self.use_path(p, prefix) {
                        self.push_use(prefix, alias, false, is_pub, n, cx);
                    }
                }
            }
            K::UseWildcard => {
                if let Some(p) = n.named_child(0) {
                    if self.collect_path(p, prefix) {
                        self.push_use(prefix, None, true, is_pub, n, cx);
                    }
                }
            }
            K::UseList => {
                let range = self.load_children(n);
                let start = range.start;
                for i in range {
                    let c = self.buf[i];
                    if c.is_named() && !self.kind(c).is_comment() {
                        self.flatten_use(c, prefix, is_pub, cx);
                    }
                }
                self.buf.truncate(start);
            }
            K::ScopedUseList => {
                let ok = match self.field(n, f.path) {
                    Some(p) => self.collect_path(p, prefix),
                    None => true,
                };
                if ok {
                    if let Some(list) = self.field(n, f.list) {
                        self.flatten_use(list, prefix, is_pub, cx);
                    }
                }
            }
            _ => {}
        }
        prefix.truncate(mark);
        self.depth -= 1;
    }

    /// Appends a use leaf's path to `prefix`; a trailing `self` (`a::{self}`)
    /// names the prefix itself.
    pub(super) fn use_path(&self, n: Node<'t>, prefix: &mut Vec<&'t str>) -> bool {
        let mark = prefix.len();
        if !self.collect_path(n, prefix) {
            return false;
        }
        if prefix.len() > 1 && prefix.last() == Some(&"self") && mark > 0 {
            prefix.pop();
        }
        true
    }

    #[inline(never)]
    pub(super) fn extern_crate(&mut self, n: Node<'t>, cx: &Cx) {
        let f = &self.t.f;
        let is_pub = self.find_child(n, |k| k == K::VisibilityModifier).is_some();
        let name = match self.field(n, f.name) {
            Some(x) => Some(self.text(x)),
            None => self
                .find_child(n, |k| k == K::PathKw)
                .map(|x| self.text(x))
                .filter(|t| *t != "crate"),
        };
        let alias = self.field(n, f.alias).map(|a| self.text(a));
        if let Some(name) = name {
            self.push_use(&[name], alias, false, is_pub, n, cx);
        }
    }
}
