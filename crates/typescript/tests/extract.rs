//! TypeScript and JavaScript through the crate's own API: one file's
//! entities (keys, kinds, ranges, docs, signatures), its imports and
//! exports, which names are references, bad input, and resolution over a
//! few files (barrels, aliases, `.js` specifiers, declaration files,
//! cycles).

use std::collections::BTreeMap;

use graphctx_base::model::{EntityKind, FileContext, FileExtract, ParseStatus, Recv};
use graphctx_index::links::RefsApart;
use graphctx_typescript::{layout, resolve, TsExtractor};

fn ctx(path: &str) -> FileContext {
    let l = layout::Layout::new(&BTreeMap::new(), &Default::default());
    l.context(path)
}

fn extract(path: &str, src: &str) -> FileExtract {
    TsExtractor::new().extract(&ctx(path), src)
}

/// `kind key start:end` per entity.
fn listing(ex: &FileExtract) -> Vec<String> {
    ex.entities
        .iter()
        .map(|e| {
            format!(
                "{} {} {}:{}",
                e.kind.as_str(),
                e.key,
                e.start_line,
                e.end_line
            )
        })
        .collect()
}

fn refs(ex: &FileExtract) -> Vec<String> {
    let mut v: Vec<String> = ex
        .refs
        .iter()
        .map(|r| {
            let from = r.from.rsplit(':').next().unwrap_or(&r.from);
            format!("{from} {:?} {}", r.kind, r.path.join("."))
        })
        .collect();
    v.sort();
    v
}

const SHAPES: &str = r#"/** Shapes and their areas. */

import { Base } from './base'

/** A point on the plane. */
export interface Point {
  x: number
  /** Moves it. */
  move(dx: number): Point
}

export type Pair<T> = [T, T]

export enum Color { Red, Green = 2 }

/**
 * The area of a square.
 */
export function area(side: number): number
export function area(side: string): number
export function area(side: any): number {
  return side * side
}

export const double = (n: number): number => n * 2
let counter = 0

@sealed
export class Square extends Base implements Point {
  #secret = 1
  x: number
  static count = 0
  constructor(private readonly side: number, y: number) {
    super()
    this.x = y
  }
  get size(): number { return this.side }
  set size(v: number) { this.x = v }
  move(dx: number): Point { return this }
}

namespace Geometry {
  export const unit = 1
  export function scale(p: Point) { return unit }
}
"#;

#[test]
fn declarations_become_entities_with_keys_kinds_and_ranges() {
    let ex = extract("src/shapes.ts", SHAPES);
    assert_eq!(ex.status, ParseStatus::Ok);
    let m = "src/shapes.ts-src/shapes";
    let expected = [
        format!("module {m} 1:46"),
        format!("trait {m}:Point 6:10"),
        format!("attribute {m}:Point.x 7:7"),
        format!("method {m}:Point.move 9:9"),
        format!("type_alias {m}:Pair 12:12"),
        format!("enum {m}:Color 14:14"),
        format!("function {m}:area 19:23"),
        format!("const {m}:double 25:25"),
        format!("variable {m}:counter 26:26"),
        format!("class {m}:Square 28:40"),
        format!("attribute {m}:Square.#secret 30:30"),
        format!("attribute {m}:Square.x 31:31"),
        format!("attribute {m}:Square.count 32:32"),
        format!("method {m}:Square.constructor 33:36"),
        format!("attribute {m}:Square.side 33:33"),
        format!("property {m}:Square.size 37:38"),
        format!("method {m}:Square.move 39:39"),
        format!("module {m}:Geometry 42:45"),
        format!("const {m}:Geometry.unit 43:43"),
        format!("function {m}:Geometry.scale 44:44"),
    ];
    assert_eq!(listing(&ex), expected);
    let get = |name: &str| ex.entities.iter().find(|e| e.key.ends_with(name)).unwrap();
    assert_eq!(ex.entities[0].doc, "Shapes and their areas.");
    assert_eq!(get(":Point").doc, "A point on the plane.");
    assert_eq!(get(":Point.move").doc, "Moves it.");
    assert_eq!(get(":area").doc, "The area of a square.");
    let double = get(":double");
    assert_eq!(double.signature.parameters[0].name, "n");
    assert_eq!(double.signature.return_type.as_deref(), Some("number"));
    assert_eq!(
        double.signature.text,
        "export const double = (n: number): number"
    );
    let square = get(":Square");
    assert_eq!(&*square.signature.bases, ["Base", "Point"]);
    assert_eq!(&*square.signature.decorators, ["sealed"]);
    assert_eq!(
        get(":Square.#secret").visibility,
        graphctx_base::model::Visibility::Private
    );
    assert_eq!(
        get(":counter").visibility,
        graphctx_base::model::Visibility::Private
    );
    assert_eq!(get(":Color").signature.fields.len(), 2);
    assert_eq!(get(":Geometry").kind, EntityKind::Module);
    assert!(ex.entities.iter().all(|e| !e.is_test));
}

#[test]
fn references_are_non_local_names_in_bodies_and_types() {
    let ex = extract("src/shapes.ts", SHAPES);
    let r = refs(&ex);
    for want in [
        "Square Implements Base",
        "Square Implements Point",
        "Square Value sealed",
        "Square.constructor Value this.x",
        "Square.size Value this.side",
        "Square.move Type Point",
        "Point.move Type Point",
        "Geometry.scale Value unit",
        "Geometry.scale Type Point",
    ] {
        assert!(r.contains(&want.to_string()), "{want} not in {r:#?}");
    }
    // Parameters are locals.
    assert!(
        !r.iter().any(|x| x.ends_with(" side") || x.ends_with(" dx")),
        "{r:#?}"
    );
}

#[test]
fn locals_of_every_kind_are_not_references() {
    let src = r#"
import { helper, Thing } from './lib'
export function run<T>(input: T, { a, b: [c] }: Opts = defaults) {
  const local = helper(input)
  let [x, ...rest] = list
  for (const item of items) { item(); }
  try { local() } catch (err) { err.stack }
  function inner(y: number) { return y + a + c + x + rest.length }
  class Tmp {}
  new Tmp()
  type K = { [P in keyof T]: T[P] }
  const f = (z) => z + outer
  return new Thing<T>(inner(1), f)
}
"#;
    let ex = extract("src/run.ts", src);
    let r = refs(&ex);
    // The destructured keys `a` and `b` are members of `Opts`, read
    // through it; the names they bind are locals.
    assert_eq!(
        r,
        [
            "run Call Thing",
            "run Call helper",
            "run Field a",
            "run Field b",
            "run Type Opts",
            "run Value defaults",
            "run Value items",
            "run Value list",
            "run Value outer",
        ],
        "{r:#?}"
    );
}

#[test]
fn imports_and_exports_are_use_declarations() {
    let src = r#"
import def, { a, b as c } from './x'
import type { T } from '../types'
import * as ns from './ns'
import './side-effect'
import fs = require('fs')
export { d, e as f } from './y'
export * from './z'
export * as zz from './zz'
const g = 1
export { g, g as h }
export default g
"#;
    let ex = extract("src/m.ts", src);
    let uses: Vec<String> = ex
        .uses
        .iter()
        .map(|u| {
            format!(
                "{} {} {}{}",
                u.path.join(" "),
                u.alias.as_deref().unwrap_or("-"),
                if u.glob { "glob " } else { "" },
                if u.is_pub { "pub" } else { "" }
            )
        })
        .collect();
    assert_eq!(
        uses,
        [
            "./x default def ",
            "./x a a ",
            "./x b c ",
            "../types T T ",
            "./ns ns ",
            "./side-effect - ",
            "fs fs ",
            "./y d d pub",
            "./y e f pub",
            "./z - glob pub",
            "./zz zz pub",
            " g g pub",
            " g h pub",
            " g default pub",
        ]
    );
}

#[test]
fn test_files_jsx_and_javascript_are_read() {
    let src = r#"
import { render } from './render'
import { Button } from './button'
describe('button', () => {
  it('renders', () => {
    const el = <Button label="x"><span /></Button>
    expect(render(el)).toBe(true)
  })
})
"#;
    let ex = extract("src/button.test.tsx", src);
    assert!(ex.entities.iter().all(|e| e.is_test));
    let r = refs(&ex);
    assert!(
        r.contains(&"src/button.test.tsx-src/button.test Call Button".to_string()),
        "{r:#?}"
    );
    assert!(
        r.contains(&"src/button.test.tsx-src/button.test Call render".to_string()),
        "{r:#?}"
    );
    // `span` is no name read, and `el` a local: only `span` as a member
    // of the intrinsic elements, and `label` as a prop of `Button`.
    assert!(
        !r.iter()
            .any(|x| x.ends_with("Value span") || x.ends_with(" el")),
        "{r:#?}"
    );
    let through = |name: &str| {
        ex.refs
            .iter()
            .find(|x| x.path == [name])
            .and_then(|x| x.receiver.clone())
    };
    assert_eq!(
        through("span"),
        Some(Recv::Type("JSX.IntrinsicElements".into()))
    );
    assert_eq!(
        through("label"),
        Some(Recv::Param(Box::new(Recv::Value(vec!["Button".into()])), 0))
    );
    let js = extract(
        "lib/a.js",
        "export function f(a) { return g(a) }\nfunction g(x) { return x }\n",
    );
    assert_eq!(listing(&js).len(), 3);
    assert!(refs(&js).contains(&"f Call g".to_string()));
}

#[test]
fn bad_input_never_panics_and_keeps_what_parses() {
    let broken = extract(
        "src/bad.ts",
        "export function ok() {}\nfunction broken( {\nexport const z = 1\n",
    );
    assert_eq!(broken.status, ParseStatus::Partial);
    assert!(broken.entities.iter().any(|e| e.name == "ok"));
    let minified = format!("var a=1;{}\n", "function f(){return 1};".repeat(400));
    let m = extract("dist/app.min.js", &minified);
    assert_eq!(m.entities.len(), 1);
    let bom = extract(
        "src/bom.ts",
        "\u{feff}export const a = 1\r\nexport const b = a\r\n",
    );
    assert_eq!(bom.status, ParseStatus::Ok);
    assert_eq!(
        listing(&bom)[1..],
        [
            "const src/bom.ts-src/bom:a 1:1",
            "const src/bom.ts-src/bom:b 2:2"
        ]
    );
    let deep = format!("const x = {}1{}\n", "(".repeat(5000), ")".repeat(5000));
    let _ = extract("src/deep.ts", &deep);
    let _ = extract("src/empty.ts", "");
    let _ = extract("src/junk.tsx", "<<<>>> }}} @@@ class { get set");
}

/// `src rel dst` per edge, tails only.
fn edges(files: &[(&str, &str)]) -> Vec<String> {
    let extracts: Vec<(FileContext, FileExtract)> =
        files.iter().map(|(p, s)| (ctx(p), extract(p, s))).collect();
    let refs: Vec<(&FileContext, &FileExtract)> = extracts.iter().map(|(c, e)| (c, e)).collect();
    let links = resolve::resolve_files(&refs, &|_| true, RefsApart::default());
    let short = |k: &str| {
        if k.contains(".d.ts-") {
            return k.to_string();
        }
        k.split_once(".ts-")
            .or(k.split_once(".tsx-"))
            .map_or(k.to_string(), |(_, t)| t.to_string())
    };
    let mut out = Vec::new();
    for l in links.values() {
        for ((s, r, d), _) in l.edges.iter() {
            if *r != "contains" {
                out.push(format!("{} {r} {}", short(s), short(d)));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_default_export_is_read_where_it_is_a_name_not_where_it_is_declared() {
    let e = edges(&[
        (
            "src/delay.ts",
            "export default async function delay(ms: number) {}
",
        ),
        (
            "src/retry.ts",
            "function retry() {}
export default retry
",
        ),
        (
            "src/use.ts",
            "import delay from './delay'
import retry from './retry'
export function go() { delay(1); retry() }
",
        ),
    ]);
    for want in [
        "src/retry imports src/retry:retry",
        "src/use imports src/delay:delay",
        "src/use imports src/retry:retry",
        "src/use:go calls src/delay:delay",
        "src/use:go calls src/retry:retry",
    ] {
        assert!(e.contains(&want.to_string()), "{want} not in {e:#?}");
    }
    assert!(
        !e.contains(&"src/delay imports src/delay:delay".to_string()),
        "{e:#?}"
    );
}

#[test]
fn a_value_of_either_of_two_expressions_has_the_first_type_that_tells() {
    let src = "export function go(first?: Request) {\n  const r = first ?? new Request()\n  r.send()\n  const s = first ? undefined : new Socket()\n  s.open()\n}\n";
    let ex = extract("src/go.ts", src);
    let through = |name: &str| -> Vec<Recv> {
        ex.refs
            .iter()
            .filter(|x| x.path == [name])
            .filter_map(|x| x.receiver.clone())
            .collect()
    };
    assert_eq!(through("send"), [Recv::Type("Request".into())]);
    assert_eq!(through("open"), [Recv::Type("Socket".into())]);
}

#[test]
fn a_member_of_a_union_is_read_in_each_alternative_that_has_it() {
    let e = edges(&[(
        "src/issues.ts",
        "export interface TooBig { code: 'big'; max: number }\nexport interface TooSmall { code: 'small'; min: number }\nexport type Issue = TooBig | TooSmall\nexport function explain(issue: Issue) { return issue.code }\nexport function least(i: TooBig | TooSmall | undefined) { return i.min }\n",
    )]);
    for want in [
        "src/issues:explain references src/issues:TooBig.code",
        "src/issues:explain references src/issues:TooSmall.code",
        "src/issues:least references src/issues:TooSmall.min",
    ] {
        assert!(e.contains(&want.to_string()), "{want} not in {e:#?}");
    }
    assert!(!e.iter().any(|x| x.ends_with("TooBig.min")), "{e:#?}");
}

#[test]
fn an_indexed_access_type_reads_the_member_it_names() {
    let e = edges(&[(
        "src/env.ts",
        "export interface Env { Bindings: Bindings; name: string }\nexport interface Bindings { KV: string }\nexport function kv(b: Env['Bindings']) { return b.KV }\nexport type Named = Env[\"name\"]\n",
    )]);
    for want in [
        "src/env:kv references src/env:Env.Bindings",
        "src/env:kv references src/env:Bindings.KV",
        "src/env:Named references src/env:Env.name",
    ] {
        assert!(e.contains(&want.to_string()), "{want} not in {e:#?}");
    }
}

#[test]
fn types_and_values_are_looked_up_in_their_own_namespaces() {
    let e = edges(&[
        (
            "src/errors.ts",
            "type Error = NodeJS.ErrnoException\nexport function bigint() { return 1n }\nexport interface Shape { a: 1 }\n",
        ),
        (
            "src/use.ts",
            "import { bigint, Shape } from './errors'\ntype Error = { code: string }\nexport function fail(v: bigint): Error { throw new Error('x') }\nexport const s: Shape = { a: 1 }\n",
        ),
    ]);
    // `new Error` is the global class, not the alias; `v: bigint` the
    // primitive, not the function; an import binds a type as well.
    assert!(
        !e.contains(&"src/use:fail calls src/use:Error".to_string()),
        "{e:#?}"
    );
    assert!(
        e.contains(&"src/use:fail uses_type src/use:Error".to_string()),
        "{e:#?}"
    );
    assert!(
        !e.iter()
            .any(|x| x.starts_with("src/use:fail") && x.ends_with("src/errors:bigint")),
        "{e:#?}"
    );
    assert!(
        e.contains(&"src/use imports src/errors:Shape".to_string()),
        "{e:#?}"
    );
    assert!(
        e.contains(&"src/use imports src/errors:bigint".to_string()),
        "{e:#?}"
    );
}

#[test]
fn imports_resolve_through_barrels_aliases_and_js_specifiers() {
    let e = edges(&[
        ("src/core/hono.ts", "export class Hono { route() {} }\nexport type Env = {}\n"),
        ("src/core/index.ts", "export * from './hono'\nexport { Hono as App } from './hono.js'\n"),
        ("src/index.ts", "import { Hono } from './core'\nexport { Hono }\nexport * from './index'\n"),
        ("src/types.d.ts", "export type Env = {}\n"),
        ("src/types.ts", "export type Env = { x: 1 }\n"),
        (
            "src/app.ts",
            "import { App, type Env } from './core/index'\nimport { Hono } from '.'\nimport * as core from './core'\nimport type { Env as E2 } from './types'\nimport { z } from 'zod'\n\nexport function make(e: E2): Env { return new App() }\nexport const h = new core.Hono()\n",
        ),
        ("src/app.test.ts", "import { make } from './app'\ntest('x', () => { make() })\n"),
    ]);
    for want in [
        "src/app imports src/core/index",
        "src/app imports src/core/hono:Hono",
        "src/app imports src/core/hono:Env",
        "src/app imports src/index",
        "src/app imports src/types",
        "src/app imports src/types:Env",
        "src/app:make calls src/core/hono:Hono",
        "src/app:make uses_type src/core/hono:Env",
        "src/app:make uses_type src/types:Env",
        "src/app calls src/core/hono:Hono",
        "src/index imports src/core/hono:Hono",
        "src/core/index imports src/core/hono",
        "src/core/index imports src/core/hono:Hono",
        "src/app.test calls src/app:make",
        "src/app.test tests src/app:make",
    ] {
        assert!(e.contains(&want.to_string()), "{want} not in {e:#?}");
    }
    // The declaration file loses to the source of the same module.
    assert!(!e.iter().any(|x| x.contains("types.d")), "{e:#?}");
}

#[test]
fn newer_syntax_the_grammar_lacks_is_read_through_a_repair() {
    let src = "export type * from './types'\nexport interface Handlers {\n  <A>(a: A): [A]\n\n  <A, B>(a: A, b: B): [A, B]\n}\nexport function pick<const T extends string[]>(xs: T): T { return xs }\nexport type After = 1\n";
    let ex = extract("src/h.ts", src);
    assert_eq!(ex.status, ParseStatus::Ok, "{:?}", listing(&ex));
    let names: Vec<&str> = ex.entities.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["h", "Handlers", "pick", "After"]);
    assert!(ex.uses.iter().any(|u| u.glob && u.path == ["./types"]));
}

#[test]
fn each_binding_is_typed_in_its_own_scope_and_callbacks_by_where_they_go() {
    let src = r#"
describe('a', () => {
  it('one', () => {
    const app = new Hono()
    app.get('/', (c) => c.json(1))
  })
  it('two', () => {
    const app = new Router()
    app.add()
  })
})
export const mw = (): MiddlewareHandler => async (c, next) => {
  c.header('x')
}
"#;
    let ex = extract("src/app.test.ts", src);
    // Not counting a test block's, which are its module's calls again.
    let block = |key: &str| {
        ex.entities
            .iter()
            .any(|e| &*e.key == key && e.kind == EntityKind::Test)
    };
    let through = |name: &str| -> Vec<Recv> {
        ex.refs
            .iter()
            .filter(|x| x.path == [name] && !block(&x.from))
            .filter_map(|x| x.receiver.clone())
            .collect()
    };
    let ty = |t: &str| Recv::Type(t.into());
    assert_eq!(through("get"), [ty("Hono")]);
    assert_eq!(through("add"), [ty("Router")]);
    let handler = Recv::Arg(Box::new(Recv::Field(Box::new(ty("Hono")), "get".into())), 1);
    assert_eq!(through("json"), [Recv::Param(Box::new(handler), 0)]);
    assert_eq!(
        through("header"),
        [Recv::Param(Box::new(ty("MiddlewareHandler")), 0)]
    );
}

#[test]
fn an_untyped_binding_hides_a_typed_one_and_a_pragma_is_read_from_comments_only() {
    let src = r#"
function setup() {
  const app = new Express()
  function mount(app) {
    app.use(1)
  }
  app.listen()
}
const s = "/* @jsxImportSource preact */"
"#;
    let ex = extract("src/server.ts", src);
    let through = |name: &str| -> Vec<Option<Recv>> {
        ex.refs
            .iter()
            .filter(|x| x.path == [name])
            .map(|x| x.receiver.clone())
            .collect()
    };
    assert_eq!(through("use"), Vec::<Option<Recv>>::new());
    assert_eq!(through("listen"), [Some(Recv::Type("Express".into()))]);
    let tsx = extract(
        "src/page.tsx",
        "const s = \"/* @jsxImportSource preact */\"\nexport const P = () => <div />\n",
    );
    let div = tsx.refs.iter().find(|r| r.path == ["div"]).unwrap();
    assert_eq!(
        div.receiver,
        Some(Recv::Type("JSX.IntrinsicElements".into()))
    );
}
