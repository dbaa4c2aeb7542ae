//! Extraction of real Rust snippets: entities, references, `use` trees, bindings.

use super::*;

fn ctx(path: &str, module: &[&str]) -> FileContext {
    FileContext {
        path: path.to_string(),
        package: "demo".to_string(),
        unit: "demo".to_string(),
        module_path: module.iter().map(|s| s.to_string()).collect(),
        is_test_file: false,
        path_aliases: Vec::new(),
    }
}

fn run(src: &str) -> FileExtract {
    RustExtractor::new().extract(&ctx("src/lib.rs", &[]), src)
}

fn ent<'a>(x: &'a FileExtract, key: &str) -> &'a Entity {
    x.entities
        .iter()
        .find(|e| &*e.key == key)
        .unwrap_or_else(|| {
            let keys: Vec<_> = x.entities.iter().map(|e| &e.key).collect();
            panic!("no entity {key}; have {keys:#?}")
        })
}

fn refs_of(x: &FileExtract, kind: RefKind) -> Vec<Vec<&str>> {
    x.refs
        .iter()
        .filter(|r| r.kind == kind)
        .map(|r| r.path.iter().map(String::as_str).collect())
        .collect()
}

fn has_ref(x: &FileExtract, kind: RefKind, path: &[&str]) -> bool {
    x.refs.iter().any(|r| r.kind == kind && r.path == path)
}

#[test]
fn file_module_entity_for_root_and_submodule() {
    let src = "//! Crate docs.\n//! Second line.\n\nfn a() {}\n";
    let x = run(src);
    assert_eq!(x.status, ParseStatus::Ok);
    assert_eq!(x.syntax_errors, 0);
    let m = &x.entities[0];
    assert_eq!(&*m.key, "src/lib.rs-crate-demo");
    assert_eq!(m.kind, EntityKind::Module);
    assert_eq!(m.name, "demo");
    assert!(m.module_path.is_empty());
    assert_eq!(m.doc, "Crate docs.\nSecond line.");
    assert_eq!((m.start_line, m.end_line), (1, 4));
    assert_eq!(m.parent, None);
    assert_eq!(m.visibility, Visibility::Public);
    let f = ent(&x, "src/lib.rs-crate-a");
    assert_eq!(f.parent.as_deref(), Some("src/lib.rs-crate-demo"));

    let x = RustExtractor::new().extract(&ctx("src/a/b.rs", &["a", "b"]), "pub fn f() {}");
    let m = &x.entities[0];
    assert_eq!(&*m.key, "src/a/b.rs-a-b");
    assert_eq!(m.name, "b");
    assert_eq!(m.module_path.to_vec(), vec!["a".to_string()]);
    assert_eq!(m.end_line, 1);
    let f = ent(&x, "src/a/b.rs-a::b-f");
    assert_eq!(
        f.module_path.to_vec(),
        vec!["a".to_string(), "b".to_string()]
    );
    assert_eq!(f.visibility, Visibility::Public);
    assert_eq!(f.parent.as_deref(), Some("src/a/b.rs-a-b"));
}

#[test]
fn trait_impls_of_same_method_get_distinct_keys() {
    let src = r#"
use std::fmt;
struct X;
impl fmt::Display for X {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { write!(f, "x") }
}
impl fmt::Debug for X {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}
impl X {
    pub fn new() -> Self { X }
    fn helper(&self) {}
}
"#;
    let x = run(src);
    let d = ent(&x, "src/lib.rs-crate-<X as fmt::Display>::fmt");
    assert_eq!(d.kind, EntityKind::Method);
    assert_eq!(d.owner.as_deref(), Some("X"));
    assert_eq!(d.trait_name.as_deref(), Some("fmt::Display"));
    assert_eq!(d.visibility, Visibility::Public);
    assert_eq!(
        d.parent.as_deref(),
        Some("src/lib.rs-crate-impl fmt::Display for X")
    );
    assert_eq!(d.signature.self_type.as_deref(), Some("X"));
    assert_eq!(d.signature.trait_ref.as_deref(), Some("fmt::Display"));
    assert_eq!(
        d.signature.parameters[0],
        Param {
            name: "self".into(),
            ty: "&Self".into(),
            pattern: ParamPattern::Ref,
            default: None,
        }
    );
    assert_eq!(d.signature.parameters[1].pattern, ParamPattern::MutRef);
    ent(&x, "src/lib.rs-crate-<X as fmt::Debug>::fmt");
    let imp = ent(&x, "src/lib.rs-crate-impl fmt::Debug for X");
    assert_eq!(imp.kind, EntityKind::Impl);
    assert_eq!(imp.name, "impl fmt::Debug for X");
    assert_eq!(imp.owner.as_deref(), Some("X"));
    assert_eq!(imp.trait_name.as_deref(), Some("fmt::Debug"));
    assert_eq!(imp.signature.text, "impl fmt::Debug for X");
    let new = ent(&x, "src/lib.rs-crate-X::new");
    assert_eq!(new.visibility, Visibility::Public);
    assert_eq!(new.trait_name, None);
    assert_eq!(new.signature.return_type.as_deref(), Some("Self"));
    let helper = ent(&x, "src/lib.rs-crate-X::helper");
    assert_eq!(helper.visibility, Visibility::Private);
    ent(&x, "src/lib.rs-crate-impl X");
    // Implements / ImplOwner refs come from the impl blocks.
    let imp_refs: Vec<_> = x
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Implements)
        .map(|r| (&*r.from, r.path.join("::")))
        .collect();
    assert_eq!(
        imp_refs,
        vec![
            (
                "src/lib.rs-crate-impl fmt::Display for X",
                "fmt::Display".to_string()
            ),
            (
                "src/lib.rs-crate-impl fmt::Debug for X",
                "fmt::Debug".to_string()
            ),
        ]
    );
    assert_eq!(
        refs_of(&x, RefKind::ImplOwner),
        vec![vec!["X"], vec!["X"], vec!["X"]]
    );
    // Self type recorded on refs inside impls.
    let w = x
        .refs
        .iter()
        .find(|r| r.kind == RefKind::MacroCall && r.path == ["write"])
        .unwrap();
    assert_eq!(w.self_type.as_deref(), Some("X"));
    assert_eq!(&*w.from, "src/lib.rs-crate-<X as fmt::Display>::fmt");
}

#[test]
fn generic_trait_impls_are_distinct() {
    let src = "struct X;\nimpl From<u8> for X { fn from(v: u8) -> Self { X } }\nimpl From< u16 > for X { fn from(v: u16) -> Self { X } }\nimpl<T: Clone> Wrapper for Vec<T> { type Out = T; const N: usize = 1; }\n";
    let x = run(src);
    ent(&x, "src/lib.rs-crate-<X as From<u8>>::from");
    ent(&x, "src/lib.rs-crate-<X as From<u16>>::from");
    let i = ent(&x, "src/lib.rs-crate-impl From<u16> for X");
    assert_eq!(i.trait_name.as_deref(), Some("From"));
    assert_eq!(i.signature.trait_ref.as_deref(), Some("From< u16 >"));
    let v = ent(&x, "src/lib.rs-crate-impl Wrapper for Vec");
    assert_eq!(v.owner.as_deref(), Some("Vec"));
    assert_eq!(v.signature.self_type.as_deref(), Some("Vec<T>"));
    assert_eq!(v.signature.generics.to_vec(), vec!["T: Clone"]);
    assert_eq!(v.signature.text, "impl<T: Clone> Wrapper for Vec<T>");
    let out = ent(&x, "src/lib.rs-crate-<Vec as Wrapper>::Out");
    assert_eq!(out.kind, EntityKind::TypeAlias);
    assert_eq!(out.owner.as_deref(), Some("Vec"));
    assert_eq!(out.signature.ty.as_deref(), Some("T"));
    let n = ent(&x, "src/lib.rs-crate-<Vec as Wrapper>::N");
    assert_eq!(n.kind, EntityKind::Const);
    assert!(has_ref(&x, RefKind::ImplOwner, &["Vec"]));
    assert!(has_ref(&x, RefKind::Implements, &["From"]));
    // `T` is a generic parameter, never a Type ref.
    assert!(!has_ref(&x, RefKind::Type, &["T"]));
}

#[test]
fn blanket_impl_has_no_owner_ref() {
    let x = run("impl<T: Display> Show for T {}\nimpl<'a, T> Tr for &'a mut Foo<T> {}");
    assert_eq!(refs_of(&x, RefKind::ImplOwner), vec![vec!["Foo"]]);
    ent(&x, "src/lib.rs-crate-impl Show for T");
    ent(&x, "src/lib.rs-crate-impl Tr for Foo");
    assert!(has_ref(&x, RefKind::Type, &["Display"]));
}

#[test]
fn duplicate_keys_get_ordinals() {
    let src = "#[cfg(unix)]\nfn f() {}\n#[cfg(windows)]\nfn f() {}\n";
    let x = run(src);
    ent(&x, "src/lib.rs-crate-f");
    let f2 = ent(&x, "src/lib.rs-crate-f#2");
    assert_eq!(f2.start_line, 4);
}

#[test]
fn nested_inline_modules() {
    let src = r#"
pub mod outer {
    //! Outer inner doc.
    pub(crate) mod inner {
        pub fn deep() { super::sibling(); }
        pub(super) struct S;
    }
    fn sibling() {}
}
"#;
    let x = RustExtractor::new().extract(&ctx("src/m.rs", &["m"]), src);
    assert_eq!(&*x.entities[0].key, "src/m.rs-crate-m");
    let outer = ent(&x, "src/m.rs-m-outer");
    assert_eq!(outer.kind, EntityKind::Module);
    assert_eq!(outer.module_path.to_vec(), vec!["m"]);
    assert_eq!(outer.doc, "Outer inner doc.");
    assert_eq!(outer.parent.as_deref(), Some("src/m.rs-crate-m"));
    assert_eq!(outer.signature.text, "pub mod outer");
    let inner = ent(&x, "src/m.rs-m::outer-inner");
    assert_eq!(inner.visibility, Visibility::Crate);
    assert_eq!(inner.parent.as_deref(), Some("src/m.rs-m-outer"));
    let deep = ent(&x, "src/m.rs-m::outer::inner-deep");
    assert_eq!(deep.module_path.to_vec(), vec!["m", "outer", "inner"]);
    assert_eq!(deep.parent.as_deref(), Some("src/m.rs-m::outer-inner"));
    let s = ent(&x, "src/m.rs-m::outer::inner-S");
    assert_eq!(s.visibility, Visibility::Restricted);
    ent(&x, "src/m.rs-m::outer-sibling");
    let call = x
        .refs
        .iter()
        .find(|r| r.kind == RefKind::Call)
        .expect("call ref");
    assert_eq!(call.path, vec!["super", "sibling"]);
    assert_eq!(&*call.scope, ["m", "outer", "inner"]);
    assert_eq!(&*call.from, "src/m.rs-m::outer::inner-deep");
}

#[test]
fn cfg_test_modules_and_test_fns() {
    let src = r#"
pub fn prod() {}
#[cfg(test)]
mod tests {
    use super::*;
    fn helper() {}
    #[test]
    fn it_works() { prod(); assert_eq!(helper_value(2), 4); }
}
#[tokio::test]
async fn async_test() {}
#[cfg(not(test))]
fn not_test() {}
#[cfg(any(test, feature = "x"))]
fn maybe_test() {}
"#;
    let x = run(src);
    assert!(!ent(&x, "src/lib.rs-crate-prod").is_test);
    assert!(ent(&x, "src/lib.rs-crate-tests").is_test);
    assert!(ent(&x, "src/lib.rs-tests-helper").is_test);
    assert!(ent(&x, "src/lib.rs-tests-it_works").is_test);
    let at = ent(&x, "src/lib.rs-crate-async_test");
    assert!(at.is_test);
    assert!(at.signature.is_async);
    assert!(!ent(&x, "src/lib.rs-crate-not_test").is_test);
    assert!(ent(&x, "src/lib.rs-crate-maybe_test").is_test);
    let u = &x.uses[0];
    assert_eq!(u.path, vec!["super"]);
    assert!(u.glob);
    assert_eq!(u.from, "src/lib.rs-crate-tests");
    assert_eq!(u.scope, vec!["tests"]);
    // Refs inside macro token trees.
    let c: Vec<_> = x
        .refs
        .iter()
        .filter(|r| &*r.from == "src/lib.rs-tests-it_works")
        .map(|r| (r.kind, r.path.join("::")))
        .collect();
    assert!(c.contains(&(RefKind::Call, "prod".to_string())));
    assert!(c.contains(&(RefKind::MacroCall, "assert_eq".to_string())));
    assert!(c.contains(&(RefKind::Call, "helper_value".to_string())));
}

#[test]
fn test_file_marks_everything() {
    let mut c = ctx("tests/it.rs", &[]);
    c.is_test_file = true;
    let x = RustExtractor::new().extract(&c, "fn a() {}\nstruct B;");
    assert!(x.entities.iter().all(|e| e.is_test));
}

#[test]
fn inner_cfg_test_marks_file() {
    let x = run("#![cfg(test)]\nfn a() {}");
    assert!(x.entities.iter().all(|e| e.is_test));
}

#[test]
fn macro_rules_definitions() {
    let src = "/// Makes things.\n#[macro_export]\nmacro_rules! make { ($x:expr) => { foo($x) }; }\nmacro_rules! private_one { () => {} }\nfn user() { make!(1); crate::private_one!(); }";
    let x = run(src);
    let m = ent(&x, "src/lib.rs-crate-make");
    assert_eq!(m.kind, EntityKind::Macro);
    assert_eq!(m.visibility, Visibility::Public);
    assert_eq!(m.doc, "Makes things.");
    assert_eq!(m.signature.text, "macro_rules! make");
    assert_eq!(
        ent(&x, "src/lib.rs-crate-private_one").visibility,
        Visibility::Private
    );
    assert!(has_ref(&x, RefKind::MacroCall, &["make"]));
    assert!(has_ref(&x, RefKind::MacroCall, &["crate", "private_one"]));
    // Macro definitions' bodies are not scanned.
    assert!(!has_ref(&x, RefKind::Call, &["foo"]));
}

#[test]
fn use_trees_are_flattened() {
    let src = "use ::a::{b, c as d, e::*, f::{self, g}};\npub(crate) use crate::x::Y;\nextern crate foo as bar;\nuse std::io::{self as sio};\nfn f() { use inner::Thing; }";
    let x = run(src);
    let u: Vec<_> = x
        .uses
        .iter()
        .map(|u| {
            (
                u.path.join("::"),
                u.alias.clone(),
                u.glob,
                u.is_pub,
                u.from.as_str(),
            )
        })
        .collect();
    let m = "src/lib.rs-crate-demo";
    assert_eq!(
        u,
        vec![
            ("a::b".to_string(), None, false, false, m),
            ("a::c".to_string(), Some("d".to_string()), false, false, m),
            ("a::e".to_string(), None, true, false, m),
            ("a::f".to_string(), None, false, false, m),
            ("a::f::g".to_string(), None, false, false, m),
            ("crate::x::Y".to_string(), None, false, true, m),
            ("foo".to_string(), Some("bar".to_string()), false, false, m),
            (
                "std::io".to_string(),
                Some("sio".to_string()),
                false,
                false,
                m
            ),
            (
                "inner::Thing".to_string(),
                None,
                false,
                false,
                "src/lib.rs-crate-f"
            ),
        ]
    );
    assert!(x.uses.iter().all(|u| u.scope.is_empty()));
    assert_eq!(x.uses[5].line, 2);
}

#[test]
fn generic_fn_signature() {
    let src = "/// Loads.\n///\n/// More.\n#[inline]\npub async fn load<'a, T: Clone + Send, const N: usize>(\n    &mut self,\n    path: &'a Path,\n    out: &mut Vec<T>,\n    mut count: usize,\n    (a, b): (u8, u8),\n) -> Result<Config, Error>\nwhere\n    T: Debug,\n{\n    let v: Vec<T> = Vec::new();\n    T::default();\n    let arr = [0u8; N];\n}\n";
    let x = run(src);
    let f = ent(&x, "src/lib.rs-crate-load");
    assert_eq!(f.kind, EntityKind::Function);
    assert_eq!(f.doc, "Loads.\n\nMore.");
    assert_eq!(f.start_line, 5);
    assert_eq!(f.end_line, 18);
    let s = &f.signature;
    assert!(s.is_async);
    assert!(!s.is_unsafe);
    assert_eq!(
        s.generics.to_vec(),
        vec!["'a", "T: Clone + Send", "const N: usize"]
    );
    assert_eq!(s.where_clause.to_vec(), vec!["T: Debug"]);
    assert_eq!(s.return_type.as_deref(), Some("Result<Config, Error>"));
    let p: Vec<_> = s
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.ty.as_str(), p.pattern))
        .collect();
    assert_eq!(
        p,
        vec![
            ("self", "&mut Self", ParamPattern::MutRef),
            ("path", "&'a Path", ParamPattern::Ref),
            ("out", "&mut Vec<T>", ParamPattern::MutRef),
            ("count", "usize", ParamPattern::Owned),
            ("(a, b)", "(u8, u8)", ParamPattern::Owned),
        ]
    );
    assert_eq!(
            s.text,
            "pub async fn load<'a, T: Clone + Send, const N: usize>( &mut self, path: &'a Path, out: &mut Vec<T>, mut count: usize, (a, b): (u8, u8), ) -> Result<Config, Error> where T: Debug,"
        );
    let types = refs_of(&x, RefKind::Type);
    for t in [
        "Clone", "Send", "Path", "Vec", "Result", "Config", "Error", "Debug",
    ] {
        assert!(types.contains(&vec![t]), "missing Type {t}: {types:?}");
    }
    assert!(!types.contains(&vec!["T"]));
    assert!(!has_ref(&x, RefKind::Value, &["N"]));
    // `T::default()` names an item of `T`'s bounds: the resolver looks there.
    assert!(has_ref(&x, RefKind::Call, &["T", "default"]));
    assert!(has_ref(&x, RefKind::Call, &["Vec", "new"]));
    // Vec is referenced twice in the fn but deduped.
    assert_eq!(types.iter().filter(|t| **t == vec!["Vec"]).count(), 1);
}

#[test]
fn struct_fields_visibility_and_derives() {
    let src = "#[derive(Debug, Clone, serde::Serialize)]\npub struct User<T> where T: Send {\n    pub id: u64,\n    pub(crate) name: String,\n    /// doc\n    secret: Option<T>,\n}\npub struct Pair(pub u8, String);\nstruct Unit;\nunion U { a: u32, pub b: f32 }";
    let x = run(src);
    let u = ent(&x, "src/lib.rs-crate-User");
    assert_eq!(u.kind, EntityKind::Struct);
    assert_eq!(
        u.signature.traits.to_vec(),
        vec!["Debug", "Clone", "serde::Serialize"]
    );
    assert_eq!(u.signature.text, "pub struct User<T> where T: Send");
    assert_eq!(u.signature.generics.to_vec(), vec!["T"]);
    assert_eq!(u.signature.where_clause.to_vec(), vec!["T: Send"]);
    let fields: Vec<_> = u
        .signature
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.ty.as_str(), f.visibility))
        .collect();
    assert_eq!(
        fields,
        vec![
            ("id", "u64", Visibility::Public),
            ("name", "String", Visibility::Crate),
            ("secret", "Option<T>", Visibility::Private),
        ]
    );
    let p = ent(&x, "src/lib.rs-crate-Pair");
    let fields: Vec<_> = p
        .signature
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.ty.as_str(), f.visibility))
        .collect();
    assert_eq!(
        fields,
        vec![
            ("0", "u8", Visibility::Public),
            ("1", "String", Visibility::Private)
        ]
    );
    assert_eq!(p.signature.text, "pub struct Pair");
    assert_eq!(
        ent(&x, "src/lib.rs-crate-Unit").signature.text,
        "struct Unit"
    );
    let un = ent(&x, "src/lib.rs-crate-U");
    assert_eq!(un.kind, EntityKind::Union);
    assert_eq!(un.signature.fields.len(), 2);
    assert!(has_ref(&x, RefKind::Type, &["String"]));
    assert!(has_ref(&x, RefKind::Type, &["Option"]));
    assert!(!has_ref(&x, RefKind::Type, &["T"]));
    assert!(!has_ref(&x, RefKind::Type, &["User"]));
}

#[test]
fn enum_variants() {
    let src = "pub(crate) enum E<T> {\n    /// a\n    A,\n    B(u8, String),\n    C { a: u8, b: T },\n    D = 4,\n}";
    let x = run(src);
    let e = ent(&x, "src/lib.rs-crate-E");
    let v: Vec<_> = e
        .signature
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.ty.as_str(), f.visibility))
        .collect();
    assert_eq!(
        v,
        vec![
            ("A", "", Visibility::Crate),
            ("B", "(u8, String)", Visibility::Crate),
            ("C", "{ a: u8, b: T }", Visibility::Crate),
            ("D", "", Visibility::Crate),
        ]
    );
    assert_eq!(e.signature.text, "pub(crate) enum E<T>");
    assert_eq!(refs_of(&x, RefKind::Type), vec![vec!["String"]]);
    assert!(refs_of(&x, RefKind::Value).is_empty());
}

#[test]
fn trait_with_default_method_and_supertraits() {
    let src = "/// A shape.\npub unsafe trait Shape: Clone + fmt::Debug + 'static {\n    type Unit: Copy;\n    const SIDES: u32;\n    fn area(&self) -> f64;\n    fn describe(&self) -> String { format!(\"{}\", self.area()) }\n}\ntrait Private { fn p(); }";
    let x = run(src);
    let t = ent(&x, "src/lib.rs-crate-Shape");
    assert_eq!(t.kind, EntityKind::Trait);
    assert_eq!(t.doc, "A shape.");
    assert!(t.signature.is_unsafe);
    assert_eq!(
        t.signature.supertraits.to_vec(),
        vec!["Clone", "fmt::Debug", "'static"]
    );
    assert_eq!(
        t.signature.text,
        "pub unsafe trait Shape: Clone + fmt::Debug + 'static"
    );
    let area = ent(&x, "src/lib.rs-crate-Shape::area");
    assert_eq!(area.kind, EntityKind::Method);
    assert_eq!(area.owner.as_deref(), Some("Shape"));
    assert_eq!(area.trait_name, None);
    assert_eq!(area.visibility, Visibility::Public);
    assert_eq!(area.parent.as_deref(), Some("src/lib.rs-crate-Shape"));
    assert_eq!(area.signature.text, "fn area(&self) -> f64");
    let d = ent(&x, "src/lib.rs-crate-Shape::describe");
    assert_eq!(d.signature.return_type.as_deref(), Some("String"));
    let unit = ent(&x, "src/lib.rs-crate-Shape::Unit");
    assert_eq!(unit.kind, EntityKind::TypeAlias);
    assert_eq!(unit.owner.as_deref(), Some("Shape"));
    let sides = ent(&x, "src/lib.rs-crate-Shape::SIDES");
    assert_eq!(sides.kind, EntityKind::Const);
    assert_eq!(sides.signature.ty.as_deref(), Some("u32"));
    assert_eq!(
        ent(&x, "src/lib.rs-crate-Private::p").visibility,
        Visibility::Private
    );
    let mc = x
        .refs
        .iter()
        .find(|r| r.kind == RefKind::MethodCall && r.path == ["area"])
        .expect("self.area() inside format!");
    assert!(mc.on_self);
    assert_eq!(mc.self_type.as_deref(), Some("Shape"));
    assert!(has_ref(&x, RefKind::Type, &["Clone"]));
    assert!(has_ref(&x, RefKind::Type, &["fmt", "Debug"]));
    assert!(has_ref(&x, RefKind::Type, &["Copy"]));
}

#[test]
fn doc_comment_forms() {
    let src = "/** Block doc\n * second line\n */\n#[doc = \" attr doc\"]\n#[doc = include_str!(\"x.md\")]\n#[doc(hidden)]\n// plain comment\n/// line doc\npub const MAX: usize = 10;\n//// not a doc\nstatic mut COUNTER: u32 = 0;";
    let x = run(src);
    let c = ent(&x, "src/lib.rs-crate-MAX");
    assert_eq!(c.doc, "Block doc\nsecond line\nattr doc\nline doc");
    assert_eq!(c.kind, EntityKind::Const);
    assert_eq!(c.signature.text, "pub const MAX: usize");
    assert_eq!(c.signature.ty.as_deref(), Some("usize"));
    assert_eq!(c.start_line, 9);
    let s = ent(&x, "src/lib.rs-crate-COUNTER");
    assert_eq!(s.kind, EntityKind::Static);
    assert!(s.signature.is_mut);
    assert_eq!(s.doc, "");
}

#[test]
fn calls_values_and_types_in_bodies() {
    let src = r#"
fn body(x: Foo) {
    let v = Vec::<u8>::with_capacity(MAX_LEN);
    <Bar as Tr>::f();
    <Baz>::g();
    (self.f)();
    x.method().other();
    let s = Point { x: 1, y: Ordering::Less };
    let t = Wrapper(3);
    match y { Kind::A(z) => {}, Kind::B { .. } => {}, LIMIT => {}, local => {} }
    let r = y as Target;
    let f = crate::util::helper;
    let closure = |c: Config| c;
    lower_case_local;
    Self::assoc();
}
"#;
    let x = run(src);
    let calls = refs_of(&x, RefKind::Call);
    assert!(calls.contains(&vec!["Vec", "with_capacity"]));
    assert!(calls.contains(&vec!["Tr", "f"]));
    assert!(calls.contains(&vec!["Baz", "g"]));
    assert!(calls.contains(&vec!["Wrapper"]));
    assert!(calls.contains(&vec!["Self", "assoc"]));
    assert_eq!(calls.len(), 5, "{calls:?}");
    let mut mc = refs_of(&x, RefKind::MethodCall);
    mc.sort();
    assert_eq!(mc, vec![vec!["method"], vec!["other"]]);
    let vals = refs_of(&x, RefKind::Value);
    for v in [
        vec!["MAX_LEN"],
        vec!["Ordering", "Less"],
        vec!["Kind", "A"],
        vec!["LIMIT"],
        vec!["crate", "util", "helper"],
    ] {
        assert!(vals.contains(&v), "missing {v:?} in {vals:?}");
    }
    assert_eq!(vals.len(), 5, "{vals:?}");
    let types = refs_of(&x, RefKind::Type);
    for t in [
        vec!["Foo"],
        vec!["Bar"],
        vec!["Point"],
        vec!["Kind", "B"],
        vec!["Target"],
        vec!["Config"],
    ] {
        assert!(types.contains(&t), "missing {t:?} in {types:?}");
    }
    assert!(x.refs.iter().all(|r| &*r.from == "src/lib.rs-crate-body"));
    let line = x.refs.iter().find(|r| r.path == ["Target"]).map(|r| r.line);
    assert_eq!(line, Some(11));
}

/// A receiver in a compact form: `Vec<Foo>` (a written type),
/// `f()`, `x.m()`, `x.f`, `x?`, `elem(x)`.
fn show(r: &Recv) -> String {
    match r {
        Recv::Type(t) => t.clone(),
        Recv::Call(p) => format!("{}()", p.join("::")),
        Recv::Method(v, m) => format!("{}.{m}()", show(v)),
        Recv::Field(v, f) => format!("{}.{f}", show(v)),
        Recv::Try(v) => format!("{}?", show(v)),
        Recv::Element(v) => format!("elem({})", show(v)),
        Recv::Value(p) => p.join("::"),
        Recv::Arg(v, n) => format!("arg{n}({})", show(v)),
        Recv::Param(v, n) => format!("param{n}({})", show(v)),
        Recv::Literal(v, keys) => format!("{}{{{}}}", show(v), keys.join(", ")),
    }
}

/// Receivers of the method calls `.method()` made from `from`, in
/// source order (`None`: nothing known).
fn recvs(x: &FileExtract, from: &str, method: &str) -> Vec<Option<String>> {
    x.refs
        .iter()
        .filter(|r| r.kind == RefKind::MethodCall && r.path == [method])
        .filter(|r| r.from.ends_with(&format!("-{from}")))
        .map(|r| r.receiver.as_ref().map(show))
        .collect()
}

fn recv(x: &FileExtract, from: &str, method: &str) -> Option<String> {
    let all = recvs(x, from, method);
    assert_eq!(all.len(), 1, "calls of .{method}() from {from}: {all:?}");
    all.into_iter().next().flatten()
}

fn some(s: &str) -> Option<String> {
    Some(s.to_string())
}

#[test]
fn receivers_from_parameters() {
    let src = r#"
fn f<T: Tr>(
    a: &mut Vec<Foo>,
    b: Box<a::Foo>,
    g: T,
    (p, q): (A, B),
    j: impl Iterator<Item = u8>,
) {
    a.m1(); b.m2(); g.m6(); p.m8(); j.m10();
    undeclared.m12();
}
"#;
    let x = run(src);
    assert_eq!(recv(&x, "f", "m1"), some("&mut Vec<Foo>"));
    assert_eq!(recv(&x, "f", "m2"), some("Box<a::Foo>"));
    // Generic parameters are typed by their bounds in the resolver.
    assert_eq!(recv(&x, "f", "m6"), some("T"));
    assert_eq!(recv(&x, "f", "m8"), None, "tuple pattern");
    assert_eq!(recv(&x, "f", "m10"), some("impl Iterator<Item = u8>"));
    assert_eq!(recv(&x, "f", "m12"), None);
}

#[test]
fn receivers_from_let_bindings_and_chains() {
    let src = r#"
fn f(p: &Path) {
    let a: Foo = make();
    let b = Foo::new();
    let d = Baz { x: 1 };
    let g = lower::func();
    let k = Box::new(Qux::new());
    let l = Config::load(p)?;
    let n = &Wrap::new();
    let o = b;
    a.m1(); b.m2(); d.m4(); g.m6(); k.m10(); l.m11(); n.m12(); o.m13(); p.m17();
    Builder::new().name("x").build().run();
    self.cfg.items[0].go();
    for it in self.list.iter() { it.each(); }
}
"#;
    let x = run(src);
    assert_eq!(recv(&x, "f", "m1"), some("Foo"));
    assert_eq!(recv(&x, "f", "m2"), some("Foo::new()"));
    assert_eq!(recv(&x, "f", "m4"), some("Baz"));
    assert_eq!(recv(&x, "f", "m6"), some("lower::func()"));
    assert_eq!(recv(&x, "f", "m10"), some("Qux::new()"));
    assert_eq!(recv(&x, "f", "m11"), some("Config::load()?"));
    assert_eq!(recv(&x, "f", "m12"), some("Wrap::new()"));
    assert_eq!(recv(&x, "f", "m13"), some("Foo::new()"));
    assert_eq!(recv(&x, "f", "m17"), some("&Path"));
    assert_eq!(recv(&x, "f", "run"), some("Builder::new().name().build()"));
    // No `self` parameter in a free function: nothing known.
    assert_eq!(recv(&x, "f", "go"), None);
}

#[test]
fn receivers_of_self_fields_and_elements() {
    let src = r#"
impl S {
    fn m(&self, other: &Self) {
        self.go();
        other.go2();
        self.inner.run();
        format!("{}", self.inner.in_macro());
        for it in self.list.iter() { it.each(); }
        self.items[0].first_one();
    }
}
"#;
    let x = run(src);
    assert_eq!(recv(&x, "S::m", "go"), some("Self"));
    assert_eq!(recv(&x, "S::m", "go2"), some("&Self"));
    assert_eq!(recv(&x, "S::m", "run"), some("Self.inner"));
    assert_eq!(recv(&x, "S::m", "in_macro"), some("Self.inner"));
    assert_eq!(recv(&x, "S::m", "each"), some("elem(Self.list.iter())"));
    assert_eq!(recv(&x, "S::m", "first_one"), some("elem(Self.items)"));
    let go = x.refs.iter().find(|r| r.path == ["go"]).unwrap();
    assert!(go.on_self);
    // A field read is a reference of its own.
    let fields: Vec<String> = x
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Field)
        .map(|r| format!("{}.{}", show(r.receiver.as_ref().unwrap()), r.path[0]))
        .collect();
    assert!(fields.contains(&"Self.inner".to_string()), "{fields:?}");
    assert!(fields.contains(&"Self.list".to_string()), "{fields:?}");
}

#[test]
fn later_bindings_shadow_earlier_ones() {
    let src = r#"
fn f(r: Rect, items: Vec<Circle>, o: Option<Rect>) {
    r.a();
    for r in r.iter_all() { r.d(); }
    r.after_for();
}
fn g(r: Rect) {
    let r = Circle::new();
    r.b();
    let r = compute;
    r.c();
    let r: Rect = r.convert();
    r.e();
}
fn h(r: Rect, o: Option<Rect>) {
    let f = |r| r.cl();
    r.after_closure();
}
fn i(r: Rect, o: Option<Rect>) {
    match o { _ if r.guard() => {}, Some(r) => r.arm(), None => {} }
}
fn k(r: Rect, pair: (u8, u8)) {
    let (r, _) = pair;
    r.tuple();
}
fn outer(r: Rect) {
    fn inner() { r.nested(); }
    r.after_nested();
}
"#;
    let x = run(src);
    assert_eq!(recv(&x, "f", "a"), some("Rect"));
    // The iterated expression still sees the parameter; the loop
    // variable is an element of it.
    assert_eq!(recv(&x, "f", "iter_all"), some("Rect"));
    assert_eq!(recv(&x, "f", "d"), some("elem(Rect.iter_all())"));
    assert_eq!(recv(&x, "g", "b"), some("Circle::new()"));
    assert_eq!(recv(&x, "g", "c"), None);
    assert_eq!(recv(&x, "g", "e"), some("Rect"));
    assert_eq!(recv(&x, "h", "cl"), None);
    assert_eq!(recv(&x, "h", "after_closure"), None);
    // A guard is not a pattern: it binds nothing.
    assert_eq!(recv(&x, "i", "guard"), some("Rect"));
    assert_eq!(recv(&x, "i", "arm"), None);
    assert_eq!(recv(&x, "k", "tuple"), None);
    assert_eq!(
        recv(&x, "outer()::inner", "nested"),
        None,
        "items do not see locals"
    );
    assert_eq!(recv(&x, "outer", "after_nested"), some("Rect"));
}

#[test]
fn method_refs_are_deduplicated_per_receiver() {
    let src = r#"
impl S {
    fn m(&self, x: A, y: B) {
        x.go(); y.go(); x.go(); z.go(); z.go();
    }
}
"#;
    let x = run(src);
    assert_eq!(recvs(&x, "S::m", "go"), vec![some("A"), some("B"), None]);
}

#[test]
fn refs_inside_assert_macros() {
    let src = "#[test]\nfn t() {\n    assert_eq!(compute(1, 2), 3);\n    assert!(util::check(&v), \"msg {}\", fmt_it(x));\n    assert!(self.ok());\n    vec![fn_in_vec(), v.len()];\n    let _ = std::format!(\"{}\", x);\n}";
    let x = run(src);
    let calls = refs_of(&x, RefKind::Call);
    assert!(calls.contains(&vec!["compute"]));
    assert!(calls.contains(&vec!["util", "check"]));
    assert!(calls.contains(&vec!["fmt_it"]));
    assert!(calls.contains(&vec!["fn_in_vec"]));
    let macros = refs_of(&x, RefKind::MacroCall);
    assert!(macros.contains(&vec!["assert_eq"]));
    assert!(macros.contains(&vec!["std", "format"]));
    let ok = x
        .refs
        .iter()
        .find(|r| r.kind == RefKind::MethodCall && r.path == ["ok"])
        .unwrap();
    assert!(ok.on_self);
    let len = x
        .refs
        .iter()
        .find(|r| r.kind == RefKind::MethodCall && r.path == ["len"])
        .unwrap();
    assert!(!len.on_self);
    assert!(ent(&x, "src/lib.rs-crate-t").is_test);
}

#[test]
fn macro_heuristic_skips_incomplete_paths() {
    let src = "fn t() { assert!(Vec::<u8>::new().is_empty()); v!(::std::mem::take(x), <X as Tr>::f(), fn g() {}, Self(1)); }";
    let x = run(src);
    let calls = refs_of(&x, RefKind::Call);
    assert_eq!(calls, vec![vec!["std", "mem", "take"]]);
    assert!(has_ref(&x, RefKind::MethodCall, &["is_empty"]));
}

#[test]
fn generic_params_are_not_type_refs() {
    let src = "struct S<T, U = Default>(T, U);\nimpl<K: Hash, V> Map<K, V> {\n    fn get<Q: ?Sized>(&self, k: &Q) -> Option<&V> where K: Borrow<Q> { None }\n}\nfn outside(t: T) {}\ntype Alias<X> = Vec<X>;\ntrait Tr<A> { fn m(&self, a: A) -> Self; }";
    let x = run(src);
    let types = refs_of(&x, RefKind::Type);
    for g in ["K", "V", "Q", "U", "X", "A", "Self"] {
        assert!(!types.contains(&vec![g]), "generic {g} emitted: {types:?}");
    }
    // `T` outside any generic scope is a real type name.
    let t_refs: Vec<_> = x
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Type && r.path == ["T"])
        .map(|r| &*r.from)
        .collect();
    assert_eq!(t_refs, vec!["src/lib.rs-crate-outside"]);
    for t in ["Default", "Hash", "Option", "Borrow", "Vec", "Sized"] {
        assert!(types.contains(&vec![t]), "missing {t}: {types:?}");
    }
    let alias = ent(&x, "src/lib.rs-crate-Alias");
    assert_eq!(alias.kind, EntityKind::TypeAlias);
    assert_eq!(alias.signature.ty.as_deref(), Some("Vec<X>"));
    assert_eq!(alias.signature.text, "type Alias<X> = Vec<X>");
}

#[test]
fn scoped_types_emit_path_and_args() {
    let x = run("fn f(a: a::b::Foo<Bar>, c: <T as Iterator>::Item) {}");
    assert!(has_ref(&x, RefKind::Type, &["a", "b", "Foo"]));
    assert!(has_ref(&x, RefKind::Type, &["Bar"]));
    assert!(has_ref(&x, RefKind::Type, &["Iterator", "Item"]));
    assert!(has_ref(&x, RefKind::Type, &["T"]));
}

#[test]
fn nested_items_in_fn_bodies_and_const_blocks() {
    let src = "fn outer() {\n    fn inner() { helper(); }\n    struct Local;\n    impl Local { fn m(&self) {} }\n}\nconst _: () = {\n    impl Foo for Bar {}\n};\n";
    let x = run(src);
    // Items of a function body are the function's: key and parent say so.
    let inner = ent(&x, "src/lib.rs-crate-outer()::inner");
    assert_eq!(inner.kind, EntityKind::Function);
    assert_eq!(inner.parent.as_deref(), Some("src/lib.rs-crate-outer"));
    let m = ent(&x, "src/lib.rs-crate-outer()::Local::m");
    assert_eq!(m.kind, EntityKind::Method);
    let call = x.refs.iter().find(|r| r.path == ["helper"]).unwrap();
    assert_eq!(&*call.from, "src/lib.rs-crate-outer()::inner");
    let i = ent(&x, "src/lib.rs-crate-impl Foo for Bar");
    assert_eq!(i.parent.as_deref(), Some("src/lib.rs-crate-demo"));
    assert!(!x.entities.iter().any(|e| e.name == "_"));
}

#[test]
fn foreign_items_and_modifiers() {
    let src = "extern \"C\" { fn ext(x: i32) -> i32; static ERRNO: i32; }\npub const unsafe fn cu() {}\nunsafe impl Send for X {}\nimpl !Sync for X {}\npub(in crate::a) fn restricted() {}";
    let x = run(src);
    let e = ent(&x, "src/lib.rs-crate-ext");
    assert_eq!(e.kind, EntityKind::Function);
    assert_eq!(e.signature.text, "fn ext(x: i32) -> i32");
    ent(&x, "src/lib.rs-crate-ERRNO");
    let cu = ent(&x, "src/lib.rs-crate-cu");
    assert!(cu.signature.is_const && cu.signature.is_unsafe);
    assert!(
        ent(&x, "src/lib.rs-crate-impl Send for X")
            .signature
            .is_unsafe
    );
    let neg = ent(&x, "src/lib.rs-crate-impl !Sync for X");
    assert_eq!(neg.trait_name.as_deref(), Some("Sync"));
    assert_eq!(
        ent(&x, "src/lib.rs-crate-restricted").visibility,
        Visibility::Restricted
    );
}

#[test]
fn syntax_errors_keep_good_items() {
    let src = "fn good() {}\nfn broken( { let x = ; }\nstruct Fine;\nimpl Foo {\n    fn a(&self) {\n}\nfn z() {}\n";
    let x = run(src);
    assert_eq!(x.status, ParseStatus::Partial);
    assert!(x.syntax_errors >= 1);
    ent(&x, "src/lib.rs-crate-good");
    ent(&x, "src/lib.rs-crate-Fine");
    assert!(x.entities.iter().any(|e| e.name == "a"));
}

#[test]
fn empty_and_garbage_inputs_do_not_panic() {
    let x = run("");
    assert_eq!(x.status, ParseStatus::Ok);
    assert_eq!(x.entities.len(), 1);
    assert_eq!(x.entities[0].end_line, 1);
    assert!(x.refs.is_empty() && x.uses.is_empty());

    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let garbage = String::from_utf8_lossy(&bytes);
    let x = run(&garbage);
    assert_eq!(x.entities[0].kind, EntityKind::Module);

    let snippets = [
        "fn",
        "impl",
        "impl for {",
        "use ::{",
        "use a::{b::{c::{",
        "#[derive(",
        "#[cfg(test)] mod",
        "macro_rules! {",
        "struct S { a: }",
        "enum E { A(, }",
        "fn f() { a!(b(c, d!(e::f(",
        "trait T: { fn",
        "pub(in) fn x",
        "const _",
        "/// doc only",
        "/** unterminated",
        "\"unterminated string",
        "'",
        "r#\"raw",
        "impl<T> !",
        "extern crate ;",
        "fn f(self: Box<Self>, ...) {}",
        "\u{feff}fn bom() {}",
        "fn f() { x.0(); (a.b)(); foo::<>(); <>::x(); }",
    ];
    for s in snippets {
        let _ = run(s);
    }
}

#[test]
fn deep_nesting_does_not_overflow_small_stacks() {
    let mut src = String::from("fn f() { let x = ");
    for _ in 0..5000 {
        src.push_str("a + ");
    }
    src.push_str("FINAL; ");
    for _ in 0..3000 {
        src.push_str("{ ");
    }
    src.push_str("g();");
    for _ in 0..3000 {
        src.push_str("} ");
    }
    src.push_str("foo!(");
    for _ in 0..3000 {
        src.push('(');
    }
    for _ in 0..3000 {
        src.push(')');
    }
    src.push_str(");\n");
    for _ in 0..2000 {
        src.push_str("mod m { ");
    }
    for _ in 0..2000 {
        src.push('}');
    }
    src.push('}');
    // Release frames need well under 2 MiB at the depth bound (measured:
    // 640 KiB suffice); unoptimised frames are several times larger.
    let stack = if cfg!(debug_assertions) { 8 } else { 2 } * 1024 * 1024;
    let handle = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || run(&src).entities.len())
        .unwrap();
    assert!(handle.join().unwrap() >= 2);
}

#[test]
fn unicode_and_crlf_sources() {
    let src = "/// Größe\r\nfn größe() -> &'static str { \"ü\" }\r\n";
    let x = run(src);
    let f = ent(&x, "src/lib.rs-crate-größe");
    assert_eq!(f.doc, "Größe");
    assert_eq!(f.start_line, 2);
    assert_eq!(x.entities[0].end_line, 2);
}

#[test]
fn signature_text_is_capped() {
    let mut src = String::from("fn long(");
    for i in 0..100 {
        src.push_str(&format!("arg{i}: u32, "));
    }
    src.push_str(") {}");
    let x = run(&src);
    let f = ent(&x, "src/lib.rs-crate-long");
    assert_eq!(f.signature.text.chars().count(), TEXT_CAP);
    assert_eq!(f.signature.parameters.len(), 100);
}

#[test]
fn extracts_this_file() {
    let src = include_str!("mod.rs");
    let c = ctx(
        "src/index/rust/extract/mod.rs",
        &["index", "rust", "extract"],
    );
    let x = RustExtractor::new().extract(&c, src);
    assert_eq!(x.status, ParseStatus::Ok);
    let e = ent(
        &x,
        "src/index/rust/extract/mod.rs-index::rust::extract-RustExtractor::extract",
    );
    assert_eq!(e.kind, EntityKind::Method);
    assert_eq!(e.owner.as_deref(), Some("RustExtractor"));
    assert_eq!(e.visibility, Visibility::Public);
    assert_eq!(
        e.doc,
        "Parse `source` once and extract everything from that one tree."
    );
    assert_eq!(
        e.signature.text,
        "pub fn extract(&mut self, ctx: &FileContext, source: &str) -> FileExtract"
    );
    let tests = ctx(
        "src/index/rust/extract/tests.rs",
        &["index", "rust", "extract", "tests"],
    );
    let t = RustExtractor::new().extract(&tests, include_str!("tests.rs"));
    let t = ent(
        &t,
        "src/index/rust/extract/tests.rs-index::rust::extract::tests-extracts_this_file",
    );
    assert!(t.is_test);
    ent(
        &x,
        "src/index/rust/extract/mod.rs-index::rust::extract-<RustExtractor as Default>::default",
    );
    assert!(x
        .uses
        .iter()
        .any(|u| u.path == ["crate", "index", "keys", "KeyAllocator"]));
}

#[test]
fn parse_only_counts_children() {
    let mut p = new_rust_parser();
    assert_eq!(parse_only(&mut p, "fn a() {}\nfn b() {}"), 2);
    assert_eq!(parse_only(&mut p, ""), 0);
}

#[test]
fn extractor_is_reusable() {
    let mut ex = RustExtractor::new();
    let c = ctx("src/lib.rs", &[]);
    let a = ex.extract(&c, "fn a() { b(); }");
    let b = ex.extract(&c, "fn a() { b(); }");
    assert_eq!(a, b);
}

/// Throwaway robustness sweep over the crates in the cargo registry:
/// `cargo test --release --lib rust_extract -- --ignored --nocapture`.
#[test]
#[ignore]
fn sweep_cargo_registry() {
    let Some(home) = std::env::var_os("HOME") else {
        return;
    };
    let root = std::path::Path::new(&home).join(".cargo/registry/src");
    let mut stack = vec![root];
    let mut files = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in rd.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                files.push(p);
            }
        }
    }
    let mut ex = RustExtractor::new();
    let mut parser = new_rust_parser();
    let (mut bytes, mut ents, mut refs, mut uses, mut partial) = (0usize, 0, 0, 0, 0);
    let (mut t_parse, mut t_extract) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
    for p in &files {
        let Ok(content) = std::fs::read(p) else {
            continue;
        };
        let src = String::from_utf8_lossy(&content);
        let c = ctx(&p.to_string_lossy(), &["m"]);
        let t0 = std::time::Instant::now();
        parse_only(&mut parser, &src);
        let t1 = std::time::Instant::now();
        let x = ex.extract(&c, &src);
        t_extract += t1.elapsed();
        t_parse += t1 - t0;
        bytes += src.len();
        ents += x.entities.len();
        refs += x.refs.len();
        uses += x.uses.len();
        if x.status == ParseStatus::Partial {
            partial += 1;
        }
        let mut keys = std::collections::HashSet::new();
        for e in &x.entities {
            assert!(keys.insert(e.key.as_ref()), "duplicate key {}", e.key);
            assert!(e.start_line >= 1 && e.end_line >= e.start_line);
        }
        for r in &x.refs {
            assert!(!r.path.is_empty() && r.path.iter().all(|s| !s.is_empty()));
            assert!(keys.contains(&*r.from));
        }
    }
    println!(
            "{} files, {} MB, {ents} entities, {refs} refs, {uses} uses, {partial} partial; parse {:?}, parse+extract {:?} ({:.2}x)",
            files.len(),
            bytes / 1_000_000,
            t_parse,
            t_extract,
            t_extract.as_secs_f64() / t_parse.as_secs_f64().max(1e-9)
        );
}
