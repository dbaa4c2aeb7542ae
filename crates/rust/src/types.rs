//! Types as the resolver sees them: declared types parsed from signature
//! text, and what the standard library's common types do to them.
//!
//! The resolver types a method call's receiver by following declared
//! types — a parameter's type, a function's return type, a field's type —
//! so it needs their structure (`Result<Vec<Config>, Error>` is a `Result`
//! whose first argument is a `Vec` of `Config`), not only the last name.
//! The standard library is not indexed, so the few facts about its types
//! that typing needs (`?` and `unwrap` take the first argument of a
//! `Result`/`Option`, a `Vec`'s elements are its argument, `Box` derefs to
//! its content) live here as tables.

/// A type written in Rust syntax, reduced to what typing needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ty {
    /// `a::B<C, D>`: segments, generic arguments of the last segment, and
    /// associated-type bindings (`Iterator<Item = X>`).
    Path {
        segs: Vec<String>,
        args: Vec<Ty>,
        bindings: Vec<(String, Ty)>,
    },
    /// `&T`, `&mut T`, `*const T`.
    Ref(Box<Ty>),
    /// `[T]`, `[T; N]`.
    Slice(Box<Ty>),
    Tuple(Vec<Ty>),
    /// `dyn A + B`, `impl A + B`: the trait bounds (paths).
    Bounds(Vec<Ty>),
    /// Anything else (`fn(..)`, `!`, qualified paths).
    Other,
}

impl Ty {
    /// The last path segment, if this is a path.
    pub fn last(&self) -> Option<&str> {
        match self {
            Ty::Path { segs, .. } => segs.last().map(String::as_str),
            _ => None,
        }
    }

    pub fn arg(&self, i: usize) -> Option<&Ty> {
        match self {
            Ty::Path { args, .. } => args.get(i),
            _ => None,
        }
    }

    pub fn binding(&self, name: &str) -> Option<&Ty> {
        match self {
            Ty::Path { bindings, .. } => bindings.iter().find(|(n, _)| n == name).map(|(_, t)| t),
            Ty::Bounds(bs) => bs.iter().find_map(|b| b.binding(name)),
            _ => None,
        }
    }

    /// A one-segment path without arguments.
    pub fn named(name: &str) -> Ty {
        Ty::Path {
            segs: vec![name.to_string()],
            args: vec![],
            bindings: vec![],
        }
    }
}

/// Parses a type as written. Unparseable text gives [`Ty::Other`].
pub fn parse(text: &str) -> Ty {
    let toks = tokenize(text);
    let mut p = Parser { toks, pos: 0 };
    p.ty(0).unwrap_or(Ty::Other)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Lifetime,
    Punct(char),
    PathSep,
    Arrow,
}

fn tokenize(text: &str) -> Vec<Tok> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if c == ':' && b.get(i + 1) == Some(&b':') {
            out.push(Tok::PathSep);
            i += 2;
        } else if c == '-' && b.get(i + 1) == Some(&b'>') {
            out.push(Tok::Arrow);
            i += 2;
        } else if c == '\'' {
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Lifetime);
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < b.len() && ((b[i] as char).is_alphanumeric() || b[i] == b'_' || b[i] >= 0x80)
            {
                i += 1;
            }
            out.push(Tok::Ident(text[start..i].to_string()));
        } else {
            out.push(Tok::Punct(c));
            i += c.len_utf8();
        }
    }
    out
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_ident(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Ident(w)) if w == word) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Skips a balanced `open … close` group starting at the cursor.
    fn skip_group(&mut self, open: char, close: char) {
        let mut level = 0;
        while let Some(t) = self.peek() {
            match t {
                Tok::Punct(c) if *c == open => level += 1,
                Tok::Punct(c) if *c == close => {
                    level -= 1;
                    if level == 0 {
                        self.pos += 1;
                        return;
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
    }

    fn ty(&mut self, depth: u32) -> Option<Ty> {
        if depth > 24 {
            return None;
        }
        match self.peek()?.clone() {
            Tok::Punct('&') => {
                self.pos += 1;
                while self.peek() == Some(&Tok::Lifetime) {
                    self.pos += 1;
                }
                self.eat_ident("mut");
                Some(Ty::Ref(Box::new(self.ty(depth + 1)?)))
            }
            Tok::Punct('*') => {
                self.pos += 1;
                if !self.eat_ident("const") {
                    self.eat_ident("mut");
                }
                Some(Ty::Ref(Box::new(self.ty(depth + 1)?)))
            }
            Tok::Punct('[') => {
                self.pos += 1;
                let inner = self.ty(depth + 1)?;
                // `; N` up to the closing bracket.
                let mut level = 0;
                while let Some(t) = self.peek() {
                    match t {
                        Tok::Punct('[') => level += 1,
                        Tok::Punct(']') if level == 0 => break,
                        Tok::Punct(']') => level -= 1,
                        _ => {}
                    }
                    self.pos += 1;
                }
                self.eat_punct(']');
                Some(Ty::Slice(Box::new(inner)))
            }
            Tok::Punct('(') => {
                self.pos += 1;
                let mut items = Vec::new();
                while !self.eat_punct(')') {
                    items.push(self.ty(depth + 1)?);
                    if !self.eat_punct(',') {
                        if !self.eat_punct(')') {
                            return None;
                        }
                        break;
                    }
                }
                Some(match items.len() {
                    1 => items.pop()?,
                    _ => Ty::Tuple(items),
                })
            }
            Tok::Punct('<') => {
                // `<T as Trait>::Assoc`: not followed further.
                self.skip_group('<', '>');
                while self.peek() == Some(&Tok::PathSep) {
                    self.pos += 1;
                    self.pos += 1;
                }
                Some(Ty::Other)
            }
            Tok::Ident(w) if w == "dyn" || w == "impl" => {
                self.pos += 1;
                let mut bounds = Vec::new();
                loop {
                    if self.peek() == Some(&Tok::Lifetime) {
                        self.pos += 1;
                    } else if self.eat_punct('?') {
                        self.path(depth + 1)?;
                    } else {
                        bounds.push(self.path(depth + 1)?);
                    }
                    if !self.eat_punct('+') {
                        break;
                    }
                }
                Some(Ty::Bounds(bounds))
            }
            Tok::Ident(w) if w == "fn" || w == "unsafe" || w == "extern" => Some(Ty::Other),
            Tok::Ident(_) | Tok::PathSep => self.path(depth + 1),
            Tok::Punct('!') => Some(Ty::Other),
            _ => None,
        }
    }

    fn path(&mut self, depth: u32) -> Option<Ty> {
        let mut segs = Vec::new();
        let mut args = Vec::new();
        let mut bindings = Vec::new();
        self.eat_ident("for"); // `for<'a> Fn(&'a T)` — the bound after it
        if self.peek() == Some(&Tok::PathSep) {
            self.pos += 1;
        }
        loop {
            match self.peek()? {
                Tok::Ident(w) => {
                    segs.push(w.clone());
                    self.pos += 1;
                }
                _ => return None,
            }
            // Generic arguments (`<..>` or `::<..>`), or `Fn(A) -> B` sugar.
            let turbofish = self.peek() == Some(&Tok::PathSep)
                && self.toks.get(self.pos + 1) == Some(&Tok::Punct('<'));
            if turbofish {
                self.pos += 1;
            }
            if self.eat_punct('<') {
                args.clear();
                bindings.clear();
                while !self.eat_punct('>') {
                    if self.peek() == Some(&Tok::Lifetime) {
                        self.pos += 1;
                    } else if let (Some(Tok::Ident(name)), Some(Tok::Punct('='))) =
                        (self.peek().cloned(), self.toks.get(self.pos + 1))
                    {
                        self.pos += 2;
                        bindings.push((name, self.ty(depth + 1)?));
                    } else if matches!(self.peek(), Some(Tok::Punct('{')) | Some(Tok::Punct('-'))) {
                        return None;
                    } else {
                        args.push(self.ty(depth + 1)?);
                    }
                    if !self.eat_punct(',') {
                        if !self.eat_punct('>') {
                            return None;
                        }
                        break;
                    }
                }
            } else if self.peek() == Some(&Tok::Punct('(')) {
                // `Fn(A, B) -> C`: the arguments and output are not typed.
                self.skip_group('(', ')');
                if self.peek() == Some(&Tok::Arrow) {
                    self.pos += 1;
                    bindings.push(("Output".to_string(), self.ty(depth + 1)?));
                }
            }
            if self.peek() == Some(&Tok::PathSep) {
                self.pos += 1;
                continue;
            }
            break;
        }
        Some(Ty::Path {
            segs,
            args,
            bindings,
        })
    }
}

/// Wrappers a method call sees through (auto-deref) when they are not the
/// repository's own types.
pub fn is_transparent(last: &str) -> bool {
    matches!(
        last,
        "Box"
            | "Rc"
            | "Arc"
            | "Cow"
            | "RefCell"
            | "Cell"
            | "Ref"
            | "RefMut"
            | "Pin"
            | "ManuallyDrop"
            | "MutexGuard"
            | "RwLockReadGuard"
            | "RwLockWriteGuard"
    )
}

/// Types whose first generic argument `?` and `unwrap`-like methods give.
pub fn is_fallible(last: &str) -> bool {
    matches!(last, "Result" | "Option" | "Poll" | "LockResult")
}

/// Collections whose elements are their first generic argument.
pub fn is_collection(last: &str) -> bool {
    matches!(
        last,
        "Vec"
            | "VecDeque"
            | "HashSet"
            | "BTreeSet"
            | "IndexSet"
            | "BinaryHeap"
            | "LinkedList"
            | "SmallVec"
            | "Option"
            | "IntoIter"
            | "Iter"
            | "IterMut"
            | "Peekable"
            | "Rev"
            | "Skip"
            | "Take"
            | "Drain"
    )
}

/// Maps whose values are their second generic argument.
pub fn is_map(last: &str) -> bool {
    matches!(
        last,
        "HashMap" | "BTreeMap" | "IndexMap" | "FxHashMap" | "DashMap"
    )
}

/// What a std method returns in terms of its receiver, for the common
/// types: `Same` (`clone`, `iter`, `as_ref`), `Arg0` (`unwrap` of an
/// `Option<T>`), `OptionOfElement` (`first` of a `Vec<T>`), and so on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdReturn {
    Same,
    Arg0,
    OptionOfArg0,
    OptionOfElement,
    OptionOfValue,
    ResultOfArg0,
    ElementsOfValues,
}

/// The effect of std method `name` on a receiver whose last segment is
/// `last` (`None` when not known: the chain stops there).
pub fn std_method(last: Option<&str>, name: &str) -> Option<StdReturn> {
    use StdReturn::*;
    // Methods every type has that keep the value's type.
    if matches!(
        name,
        "clone" | "to_owned" | "borrow" | "borrow_mut" | "as_ref" | "as_mut" | "deref" | "by_ref"
    ) {
        return Some(Same);
    }
    let last = last?;
    if is_fallible(last) {
        return match name {
            "unwrap" | "expect" | "unwrap_or" | "unwrap_or_default" | "unwrap_or_else"
            | "unwrap_unchecked" | "into_inner" => Some(Arg0),
            "ok" | "as_deref" | "as_deref_mut" => Some(OptionOfArg0),
            "take" | "cloned" | "copied" | "or" | "or_else" | "filter" | "replace" => Some(Same),
            "iter" | "into_iter" => Some(Same),
            _ => None,
        };
    }
    if matches!(last, "Mutex" | "RwLock") {
        return match name {
            "lock" | "read" | "write" | "try_lock" => Some(ResultOfArg0),
            "into_inner" | "get_mut" => Some(ResultOfArg0),
            _ => None,
        };
    }
    if is_map(last) {
        return match name {
            "get" | "get_mut" | "remove" => Some(OptionOfValue),
            "values" | "values_mut" | "into_values" => Some(ElementsOfValues),
            _ => None,
        };
    }
    if is_collection(last) || last == "slice" {
        return match name {
            "iter" | "iter_mut" | "into_iter" | "drain" | "rev" | "skip" | "take" | "peekable"
            | "skip_while" | "take_while" | "filter" | "chain" | "cycle" | "step_by" | "sorted" => {
                Some(Same)
            }
            "get" | "get_mut" | "first" | "last" | "first_mut" | "last_mut" | "pop"
            | "pop_front" | "pop_back" | "front" | "back" | "next" | "next_back" | "peek"
            | "nth" | "min" | "max" | "find" => Some(OptionOfElement),
            _ => None,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(segs: &[&str], args: Vec<Ty>) -> Ty {
        Ty::Path {
            segs: segs.iter().map(|s| s.to_string()).collect(),
            args,
            bindings: vec![],
        }
    }

    #[test]
    fn declared_types_parse_into_their_structure() {
        assert_eq!(
            parse("Result<Vec<crate::Config>, io::Error>"),
            path(
                &["Result"],
                vec![
                    path(&["Vec"], vec![path(&["crate", "Config"], vec![])]),
                    path(&["io", "Error"], vec![])
                ]
            )
        );
        assert_eq!(
            parse("&'a mut [Item; 4]"),
            Ty::Ref(Box::new(Ty::Slice(Box::new(path(&["Item"], vec![])))))
        );
        let it = parse("impl Iterator<Item = &'a Entry> + Send");
        assert_eq!(
            it.binding("Item"),
            Some(&Ty::Ref(Box::new(Ty::named("Entry"))))
        );
        assert_eq!(
            parse("Box<dyn Fn(u8) -> Out>")
                .arg(0)
                .map(|t| matches!(t, Ty::Bounds(_))),
            Some(true)
        );
        assert_eq!(parse("<T as Trait>::Assoc"), Ty::Other);
        assert_eq!(
            parse("(A, B)"),
            Ty::Tuple(vec![Ty::named("A"), Ty::named("B")])
        );
        assert_eq!(parse("Vec::<u8>").arg(0), Some(&Ty::named("u8")));
        assert_eq!(parse(""), Ty::Other);
        assert_eq!(parse("Foo<"), Ty::Other);
    }

    #[test]
    fn std_methods_follow_their_receivers() {
        assert_eq!(std_method(Some("Option"), "unwrap"), Some(StdReturn::Arg0));
        assert_eq!(
            std_method(Some("Vec"), "first"),
            Some(StdReturn::OptionOfElement)
        );
        assert_eq!(
            std_method(Some("HashMap"), "get"),
            Some(StdReturn::OptionOfValue)
        );
        assert_eq!(std_method(None, "clone"), Some(StdReturn::Same));
        assert_eq!(std_method(Some("Vec"), "len"), None);
    }
}
