//! TypeScript and JavaScript through the language seam: the `typescript`
//! fixture (a package with relative imports, a `.js` specifier for a
//! TypeScript file, a barrel `index.ts` with `export *` and an aliased
//! re-export, classes with fields, accessors, a private field and a
//! parameter property, an interface, a `.tsx` view, a JavaScript file,
//! a test file, callbacks typed by where they go, a `tsconfig.json` with
//! path aliases, CommonJS modules), golden entities and edges, and incremental equal to a
//! rebuild after TypeScript and configuration edits.

use crate::common;

use common::{assert_golden, copy_dir, dump, fixture, index, index_fresh};
use graphctx::graph::{self, EntityFilter};
use graphctx::store::{Params, Store};

fn edge_set(store: &Store) -> Vec<String> {
    let rows = store
        .read(
            "?[s, r, d] := *edge{graph: 'code', src: s, rel: r, dst: d}\n:order s, r, d",
            Params::new(),
        )
        .unwrap();
    rows.rows
        .iter()
        .map(|r| {
            format!(
                "{} -{}-> {}",
                r[0].get_str().unwrap(),
                r[1].get_str().unwrap(),
                r[2].get_str().unwrap()
            )
        })
        .collect()
}

const M: &str = "src/models.ts-src/models";
const S: &str = "src/store.ts-src/store";
const V: &str = "src/view.tsx-src/view";
const T: &str = "src/store.test.ts-src/store.test";
const U: &str = "src/util.js-src/util";
const HD: &str = "src/handlers.ts-src/handlers";
const P: &str = "src/page.tsx-src/page";
const J: &str = "src/jsx/jsx-runtime.ts-src/jsx/jsx-runtime";
const A: &str = "src/aliased.ts-src/aliased";
const L: &str = "src/legacy.cjs-src/legacy";
const C: &str = "src/app.cjs-src/app";

#[test]
fn the_typescript_fixture_gives_its_golden_entities_and_edges() {
    let (store, summary) = index_fresh(&fixture("typescript"));
    assert_eq!(summary.files_skipped, 0, "{:?}", summary.skipped);
    let entities = graph::list_entities(&store, "code", &EntityFilter::default()).unwrap();
    let text: String = entities
        .iter()
        .map(|e| format!("{} {} {}:{}\n", e.kind, e.key, e.start_line, e.end_line))
        .collect();
    assert_golden("typescript_entities.txt", &text);
    let edges = edge_set(&store);
    assert_golden("typescript_edges.txt", &(edges.join("\n") + "\n"));
    let has = |s: String, r: &str, d: String| {
        assert!(
            edges.contains(&format!("{s} -{r}-> {d}")),
            "{s} -{r}-> {d}\n{edges:#?}"
        )
    };
    let lacks = |s: String, r: &str, d: String| {
        assert!(
            !edges.contains(&format!("{s} -{r}-> {d}")),
            "unexpected {s} -{r}-> {d}"
        )
    };
    // Imports: module to module, and to each name's original definition,
    // through a barrel and a `.js` specifier.
    has(S.into(), "imports", M.into());
    has(S.into(), "imports", format!("{M}:Cart"));
    has(S.into(), "imports", U.into());
    has(S.into(), "imports", format!("{U}:cheapest"));
    has(V.into(), "imports", format!("{S}:openStore"));
    has(V.into(), "imports", format!("{M}:Item"));
    has(T.into(), "imports", format!("{M}:Cart"));
    // Calls, `new`, JSX, `this` members and types.
    has(format!("{S}:Store.buy"), "calls", format!("{M}:Item"));
    has(
        format!("{S}:Store.buy"),
        "references",
        format!("{S}:Store.#cart"),
    );
    has(format!("{S}:Store.best"), "calls", format!("{U}:cheapest"));
    has(format!("{S}:Store.buy"), "uses_type", format!("{M}:Money"));
    has(format!("{S}:openStore"), "calls", format!("{S}:Store"));
    has(format!("{S}:Store"), "calls", format!("{M}:Cart"));
    has(
        format!("{M}:Cart.add"),
        "references",
        format!("{M}:Cart.items"),
    );
    has(format!("{M}:Item"), "implements", format!("{M}:Priced"));
    has(
        format!("{M}:Cart.total"),
        "references",
        format!("{M}:Cart.items"),
    );
    has(format!("{V}:View"), "calls", format!("{V}:Label"));
    has(format!("{V}:View"), "calls", format!("{S}:openStore"));
    has(
        format!("{U}:cheapest"),
        "references",
        format!("{U}:byPrice"),
    );
    // The test file's callbacks are its module's: calls and tests.
    has(T.into(), "calls", format!("{S}:openStore"));
    has(T.into(), "tests", format!("{S}:openStore"));
    has(T.into(), "calls", format!("{M}:Cart"));
    // A local declared with a type reaches its members, and a field made
    // with `new` reaches its class's.
    has(T.into(), "calls", format!("{M}:Cart.add"));
    has(format!("{S}:Store.buy"), "calls", format!("{M}:Cart.add"));
    // A callback's parameter written without a type is typed by where
    // the callback goes: an overloaded call signature's handler (an alias
    // of a union of function types), a rest parameter, a declared return
    // type; a chain goes on through what a method returns.
    has(HD.into(), "calls", format!("{HD}:Ctx.json"));
    has(HD.into(), "references", format!("{HD}:Ctx.cart"));
    has(HD.into(), "references", format!("{M}:Cart.items"));
    has(HD.into(), "references", format!("{HD}:Ctx.path"));
    has(format!("{HD}:logger"), "calls", format!("{HD}:Ctx.json"));
    // An array's elements: `for … of`, an array method's callback, and
    // what `slice` and `at` give.
    has(format!("{HD}:firstCart"), "calls", format!("{HD}:Ctx.json"));
    has(
        format!("{HD}:firstCart"),
        "references",
        format!("{HD}:Ctx.path"),
    );
    has(
        format!("{HD}:firstCart"),
        "references",
        format!("{HD}:Ctx.cart"),
    );
    // A destructuring's keys are members of its value, and its names
    // reach on through their types.
    has(
        format!("{HD}:destructured"),
        "references",
        format!("{HD}:Ctx.cart"),
    );
    has(
        format!("{HD}:destructured"),
        "references",
        format!("{HD}:Ctx.path"),
    );
    has(
        format!("{HD}:destructured"),
        "references",
        format!("{M}:Cart.items"),
    );
    // A module's `const app = new Router()` reaches its members, and the
    // keys of an object passed where a type is expected are its members.
    has(HD.into(), "calls", format!("{HD}:Router.get"));
    has(HD.into(), "calls", format!("{HD}:Router.use"));
    has(HD.into(), "references", format!("{HD}:Options.strict"));
    has(HD.into(), "references", format!("{HD}:Options.base"));
    // An object literal of a union is the alternative that declares its
    // keys; a member read on a union is every alternative's.
    has(HD.into(), "references", format!("{HD}:ByPath.path"));
    has(HD.into(), "references", format!("{HD}:ByPath.strict"));
    lacks(HD.into(), "references", format!("{HD}:ByName.strict"));
    has(
        format!("{HD}:find"),
        "references",
        format!("{HD}:ByPath.strict"),
    );
    has(
        format!("{HD}:find"),
        "references",
        format!("{HD}:ByName.strict"),
    );
    // A binding's value asserted to a type (`impl as unknown as Make`)
    // has that type: its call's object keys are its parameter's members.
    has(HD.into(), "references", format!("{HD}:MakeOptions.prefix"));
    // An intrinsic JSX element is a member of the `JSX.IntrinsicElements`
    // of the file's `@jsxImportSource`, and its attributes that member's.
    has(
        format!("{P}:Page"),
        "references",
        format!("{J}:JSX.IntrinsicElements.div"),
    );
    has(
        format!("{P}:Page"),
        "references",
        format!("{J}:DivProps.title"),
    );
    // A bare specifier through the `tsconfig.json`'s paths (`@app/*`), and
    // one naming the tree's own package by its `package.json` name.
    has(A.into(), "imports", M.into());
    has(A.into(), "imports", format!("{M}:Cart"));
    has(A.into(), "imports", format!("{S}:openStore"));
    has(format!("{A}:fresh"), "calls", format!("{M}:Cart"));
    has(format!("{A}:shop"), "calls", format!("{S}:openStore"));
    // A subpath the `package.json`'s `exports` maps (`shop/till` →
    // `src/util.js`).
    has(A.into(), "imports", U.into());
    has(format!("{A}:bargain"), "calls", format!("{U}:cheapest"));
    // A name destructured from a namespace import is that module's export.
    has(format!("{A}:sale"), "calls", format!("{U}:cheapest"));
    // CommonJS: `require` imports, `exports.x =` declares and exports.
    has(L.into(), "imports", U.into());
    has(L.into(), "imports", format!("{U}:cheapest"));
    has(format!("{L}:pick"), "calls", format!("{U}:cheapest"));
    has(format!("{L}:fresh"), "calls", format!("{M}:Cart"));
    has(C.into(), "imports", L.into());
    has(C.into(), "imports", M.into());
    has(C.into(), "calls", format!("{L}:pick"));
    // Locals are no references: `item` in `View` is a local.
    assert!(!edges
        .iter()
        .any(|e| e.starts_with(&format!("{V}:View -references-> {M}:Item"))));
    let test_module = entities.iter().find(|e| &*e.key == T).unwrap();
    assert!(test_module.is_test);
    // `describe`/`it`/`test` blocks are test entities named by their
    // titles, nested as written; the calls inside a block are its `tests`
    // edges (the module keeps its calls). A callback-less `it.todo` is no
    // block, and `t.test` is a subtest only inside a block.
    let mut tests: Vec<(String, String)> = entities
        .iter()
        .filter(|e| e.kind == "test")
        .map(|e| (e.key.to_string(), e.name.clone()))
        .collect();
    tests.sort();
    let mut expected: Vec<(String, String)> = [
        ("store", "store"),
        ("store.buys", "buys"),
        ("store.when empty", "when empty"),
        (
            "store.when empty.totals %i carts at zero",
            "totals %i carts at zero",
        ),
        ("store.when empty.opens twice", "opens twice"),
        ("a store by name", "a store by name"),
        ("a store by name.opens", "opens"),
    ]
    .iter()
    .map(|(k, n)| (format!("{T}:{k}"), n.to_string()))
    .collect();
    expected.sort();
    assert_eq!(tests, expected);
    assert!(entities
        .iter()
        .filter(|e| e.kind == "test")
        .all(|e| e.is_test));
    has(format!("{T}:store.buys"), "tests", format!("{S}:openStore"));
    has(format!("{T}:store.buys"), "tests", format!("{S}:Store.buy"));
    has(format!("{T}:store.buys"), "tests", format!("{M}:Cart.add"));
    has(
        format!("{T}:store.when empty.totals %i carts at zero"),
        "tests",
        format!("{M}:Cart"),
    );
    has(
        format!("{T}:store.when empty.opens twice"),
        "tests",
        format!("{S}:openStore"),
    );
    has(
        format!("{T}:a store by name.opens"),
        "tests",
        format!("{S}:openStore"),
    );
    // Only a block's own calls: `opens twice` makes no `Cart`.
    assert!(!edges.contains(&format!(
        "{T}:store.when empty.opens twice -tests-> {M}:Cart"
    )));
}

/// Edit a copy of the fixture step by step; after each step, an
/// incremental index of the copy equals a fresh index of it.
#[test]
fn incremental_typescript_index_equals_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("typescript"), dir.path());
    let store = Store::memory().unwrap();
    index(&store, dir.path());
    let root = dir.path();
    let edit = |rel: &str, f: &dyn Fn(String) -> String| {
        let p = root.join(rel);
        let before = std::fs::read_to_string(&p).unwrap_or_default();
        std::fs::write(&p, f(before)).unwrap();
    };
    // Each step with whether it keeps every interface (then it resolves
    // the edited file alone).
    let steps: Vec<(bool, Box<dyn Fn()>)> = vec![
        // A body edit.
        (
            true,
            Box::new(|| {
                edit("src/store.ts", &|s| {
                    s.replace(
                        "return cheapest(this.#cart.items)",
                        "return cheapest(this.#cart.items) ?? undefined",
                    )
                })
            }),
        ),
        // A callback's body: its parameter still typed by the call.
        (
            true,
            Box::new(|| {
                edit("src/handlers.ts", &|s| {
                    s.replace("c.json(c.cart.items)", "c.json(c.cart.total())")
                })
            }),
        ),
        // A function type alias now gives its callbacks another type.
        (
            false,
            Box::new(|| {
                edit("src/handlers.ts", &|s| {
                    s.replace(
                        "export type Middleware = (c: Ctx) => void",
                        "export type Middleware = (c: Cart) => void",
                    )
                })
            }),
        ),
        // A new export no file names: the files that mention its name.
        (
            true,
            Box::new(|| {
                edit("src/models.ts", &|s| {
                    s + "\nexport function unusedHelper(): Money {\n  return 0\n}\n"
                })
            }),
        ),
        // A member's declared type changes: what reads `label` through a
        // receiver is resolved again, not every file.
        (
            true,
            Box::new(|| {
                edit("src/models.ts", &|s| {
                    s.replace("  label(): string\n}", "  label(): Money\n}")
                })
            }),
        ),
        // A type that members are declared with: `Money` reaches `price`,
        // `total`, and what reads them.
        (
            true,
            Box::new(|| {
                edit("src/models.ts", &|s| {
                    s.replace("export type Money = number", "export type Money = bigint")
                })
            }),
        ),
        // The package's `exports` sends `shop/till` elsewhere: its
        // importer's names follow.
        (
            false,
            Box::new(|| {
                edit("package.json", &|s| {
                    s.replace(
                        "\"./till\": \"./src/util.js\"",
                        "\"./till\": \"./src/store.ts\"",
                    )
                })
            }),
        ),
        // The configuration loses its paths: `@app/models` names nothing.
        (
            false,
            Box::new(|| {
                edit("tsconfig.json", &|s| {
                    s.replace("\"paths\": { \"@app/*\": [\"./src/*\"], },", "")
                })
            }),
        ),
        // A renamed export: its importers' names go unresolved.
        (
            false,
            Box::new(|| {
                edit("src/util.js", &|s| {
                    s.replace("function cheapest", "function cheapestOf")
                })
            }),
        ),
        // A barrel loses its `export *`.
        (
            false,
            Box::new(|| {
                edit("src/index.ts", &|s| {
                    s.replace("export * from './models'\n", "")
                })
            }),
        ),
        // A new module, and a file deleted.
        (
            false,
            Box::new(|| {
                edit("src/extra.ts", &|_| {
                    "import { Item } from './models'\nexport const make = () => new Item('x', 1)\n"
                        .into()
                })
            }),
        ),
        (
            false,
            Box::new(|| {
                let _ = std::fs::remove_file(root.join("src/view.tsx"));
            }),
        ),
        // A syntax error in the middle of a module.
        (
            false,
            Box::new(|| {
                edit("src/models.ts", &|s| {
                    s.replace("add(item: Item): Cart {", "add(item: Item: Cart {")
                })
            }),
        ),
    ];
    for (i, (bounded, step)) in steps.iter().enumerate() {
        step();
        let summary = index(&store, root);
        let (fresh, _) = index_fresh(root);
        assert_eq!(dump(&store), dump(&fresh), "after step {i}");
        if *bounded {
            assert!(
                summary.files_resolved < summary.files_seen,
                "step {i} resolved {} of {} files",
                summary.files_resolved,
                summary.files_seen
            );
        }
    }
}

/// A configuration that is not JSON even with comments is reported in the
/// summary with its reason; the tree is indexed all the same.
#[test]
fn an_unreadable_configuration_is_reported_and_the_rest_indexed() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("typescript"), dir.path());
    std::fs::write(dir.path().join("tsconfig.json"), "{ \"compilerOptions\": ").unwrap();
    std::fs::write(dir.path().join("package.json"), "not json").unwrap();
    let (store, summary) = index_fresh(dir.path());
    let reason = |path: &str| {
        summary
            .skipped
            .iter()
            .find(|n| n.path == path)
            .map(|n| n.reason.clone())
            .unwrap_or_default()
    };
    assert!(
        reason("tsconfig.json").contains("not JSON"),
        "{:?}",
        summary.skipped
    );
    assert!(
        reason("package.json").contains("not JSON"),
        "{:?}",
        summary.skipped
    );
    let edges = edge_set(&store);
    assert!(edges.contains(&format!("{S} -imports-> {M}")));
    // Without its paths, `@app/models` names nothing.
    assert!(!edges.contains(&format!("{A} -imports-> {M}")));
}

/// A package whose own `.gitignore` matches its `package.json` (build
/// tools ignore the copies they generate; git tracks the package's own):
/// the manifest still names the package, and an import by that name
/// reaches its source.
#[test]
fn an_ignored_package_json_in_a_walked_directory_still_names_its_package() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "package.json",
        "{ \"name\": \"monorepo\", \"private\": true }\n",
    );
    write("packages/ui/.gitignore", "**/package.json\ndist\n");
    write(
        "packages/ui/package.json",
        "{ \"name\": \"@acme/ui\", \"exports\": { \"./button\": \"./src/widgets/button.ts\" } }\n",
    );
    write(
        "packages/ui/src/widgets/button.ts",
        "export function button(label: string) { return label }\n",
    );
    write(
        "apps/web/main.ts",
        "import { button } from '@acme/ui/button'\nexport const page = () => button('go')\n",
    );
    let (store, summary) = index_fresh(root);
    assert_eq!(summary.files_skipped, 0, "{:?}", summary.skipped);
    let edges = edge_set(&store);
    let want = "apps/web/main.ts-apps/web/main:page -calls-> packages/ui/src/widgets/button.ts-src/widgets/button:button";
    assert!(edges.iter().any(|e| e == want), "{want}\n{edges:#?}");
}
