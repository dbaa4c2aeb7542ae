//! Attributes and visibility: `#[test]`/`#[cfg(test)]`, `#[path]`, derives, inner attributes.

use super::*;

impl<'t, 'x> Walker<'t, 'x> {
    #[inline(never)]
    pub(super) fn attrs(&mut self, range: Range<usize>) -> Attrs {
        let mut a = Attrs::default();
        for i in range {
            let Some(&c) = self.buf.get(i) else { break };
            match self.kind(c) {
                K::LineComment | K::BlockComment => {
                    let text = self.text(c);
                    push_comment_doc(&mut a.doc, text, false);
                }
                K::AttributeItem => self.attribute(c, &mut a),
                _ => {}
            }
        }
        trim_doc_end(&mut a.doc);
        a
    }

    /// Reads one `#[...]` / `#![...]` into `a`.
    #[inline(never)]
    pub(super) fn attribute(&mut self, item: Node<'t>, a: &mut Attrs) {
        let Some(attr) = self.find_child(item, |k| k == K::Attribute) else {
            return;
        };
        let Some(path) = self.find_child(attr, |k| {
            matches!(k, K::Ident | K::ScopedIdent | K::PathKw | K::Metavariable)
        }) else {
            return;
        };
        let f = &self.t.f;
        let p = self.text(path);
        let last = p.rsplit("::").next().unwrap_or(p).trim();
        match last {
            "test" | "rstest" => a.test = true,
            "derive" if p == "derive" => {
                if let Some(tt) = self.field(attr, f.arguments) {
                    let t = self.text(tt);
                    let inner = t.get(1..t.len().saturating_sub(1)).unwrap_or("");
                    for part in inner.split(',') {
                        let d = compact(part);
                        if !d.is_empty() {
                            a.derives.push(d);
                        }
                    }
                }
            }
            "cfg" if p == "cfg" => {
                if let Some(tt) = self.field(attr, f.arguments) {
                    if self.tt_has_test(tt) {
                        a.cfg_test = true;
                    }
                }
            }
            "doc" if p == "doc" => {
                let value = self.field(attr, f.value);
                // Only literal docs; `#[doc = include_str!(..)]` is skipped.
                if let Some(v) = value.filter(|v| v.kind().ends_with("string_literal")) {
                    let t = self.text(v);
                    if let (Some(s), Some(e)) = (t.find('"'), t.rfind('"')) {
                        if s < e {
                            for line in t[s + 1..e].split('\n') {
                                push_doc_line(&mut a.doc, line);
                            }
                        }
                    }
                }
            }
            "macro_export" => a.macro_export = true,
            "path" if p == "path" => {
                let value = self.field(attr, f.value);
                if let Some(v) = value.filter(|v| v.kind() == "string_literal") {
                    let t = self.text(v);
                    if let (Some(s), Some(e)) = (t.find('"'), t.rfind('"')) {
                        if s < e {
                            a.path = Some(t[s + 1..e].to_string());
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether a `cfg(...)` predicate mentions `test` outside a `not(...)`.
    #[inline(never)]
    pub(super) fn tt_has_test(&mut self, tt: Node<'t>) -> bool {
        if self.depth >= MAX_DEPTH {
            return false;
        }
        self.depth += 1;
        let range = self.load_children(tt);
        let start = range.start;
        let mut found = false;
        let mut after_not = false;
        for i in range {
            let c = self.buf[i];
            match self.kind(c) {
                K::Ident => {
                    let t = self.text(c);
                    if t == "test" {
                        found = true;
                        break;
                    }
                    after_not = t == "not";
                }
                K::TokenTree => {
                    if !after_not && self.tt_has_test(c) {
                        found = true;
                        break;
                    }
                    after_not = false;
                }
                _ => after_not = false,
            }
        }
        self.buf.truncate(start);
        self.depth -= 1;
        found
    }

    #[inline(never)]
    pub(super) fn inner_attribute(&mut self, n: Node<'t>, cx: &mut Cx) {
        let mut a = Attrs::default();
        self.attribute(n, &mut a);
        let target = &mut self.entities[cx.doc_target as usize];
        if !a.doc.is_empty() {
            if !target.doc.is_empty() {
                target.doc.push('\n');
            }
            target.doc.push_str(&a.doc);
        }
        if a.cfg_test {
            target.is_test = true;
            cx.is_test = true;
        }
    }

    // -- entities -----------------------------------------------------------

    pub(super) fn visibility(&mut self, n: Node<'t>) -> Visibility {
        match self.find_child(n, |k| k == K::VisibilityModifier) {
            Some(v) => classify_visibility(self.text(v)),
            None => Visibility::Private,
        }
    }
}
