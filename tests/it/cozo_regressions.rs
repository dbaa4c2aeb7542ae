//! Regression tests for CozoDB behaviour graphctx depends on.
//!
//! The `cozo` 0.7.6 release returns wrong rows in both cases below; the
//! pinned `cozo-ce` fork does not. If a dependency change brings either bug
//! back, these fail before any graphctx query silently loses rows.

use graphctx::store::{Params, Store};

fn strings(rows: &cozo::NamedRows) -> Vec<Vec<String>> {
    rows.rows
        .iter()
        .map(|r| {
            r.iter()
                .map(graphctx::store::value::display)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn fresh() -> Store {
    Store::memory().expect("in-memory store opens")
}

#[test]
fn lookup_through_an_index_on_a_non_key_column_finds_the_rows() {
    let s = fresh();
    s.write(
        "{:create t {a: String => b: String, c: String}}",
        Params::new(),
    )
    .unwrap();
    s.write("{::index create t:by_c {c, a}}", Params::new())
        .unwrap();
    s.write(
        "?[a, b, c] <- [['k1', 'b1', 'x'], ['k2', 'b2', 'y'], ['k3', 'b3', 'x']] :put t {a => b, c}",
        Params::new(),
    )
    .unwrap();
    let rows = s
        .read("?[a] := *t{a, c: 'x'}\n:order a", Params::new())
        .unwrap();
    assert_eq!(strings(&rows), vec![vec!["k1"], vec!["k3"]]);
    // The same through a parameter, as graphctx's queries do it.
    let rows = s
        .read(
            "?[a, b] := *t{a, b, c: $c}\n:order a",
            Params::new().with("c", "x"),
        )
        .unwrap();
    assert_eq!(strings(&rows), vec![vec!["k1", "b1"], vec!["k3", "b3"]]);
}

#[test]
fn greater_or_equal_on_a_key_keeps_the_boundary_row_with_value_columns() {
    let s = fresh();
    s.write("{:create r {k: Int => v: String}}", Params::new())
        .unwrap();
    s.write(
        "?[k, v] <- [[1, 'a'], [2, 'b'], [3, 'c'], [4, 'd']] :put r {k => v}",
        Params::new(),
    )
    .unwrap();
    let rows = s
        .read("?[k, v] := *r{k, v}, k >= 2\n:order k", Params::new())
        .unwrap();
    assert_eq!(
        strings(&rows),
        vec![vec!["2", "b"], vec!["3", "c"], vec!["4", "d"]]
    );
    let rows = s
        .read(
            "?[k] := *r{k, v}, k >= $lo, k <= $hi\n:order k",
            Params::new().with("lo", 2).with("hi", 3),
        )
        .unwrap();
    assert_eq!(strings(&rows), vec![vec!["2"], vec!["3"]]);
}

#[test]
fn the_edge_index_by_destination_answers_incoming_edges() {
    // graphctx's own shape of the first bug: incoming edges via edge:by_dst.
    let s = fresh();
    s.write(
        "?[graph, src, rel, dst, origin, weight] <- [['g', 'a', 'calls', 'b', 'f.rs', 1.0], ['g', 'c', 'calls', 'b', 'f.rs', 1.0], ['g', 'b', 'calls', 'a', 'f.rs', 1.0]] :put edge {graph, src, rel, dst, origin => weight}",
        Params::new(),
    )
    .unwrap();
    let rows = s
        .read(
            graphctx::store::queries::EDGES_IN,
            Params::new().with("graph", "g").with("key", "b"),
        )
        .unwrap();
    let srcs: Vec<String> = strings(&rows).into_iter().map(|r| r[0].clone()).collect();
    assert_eq!(srcs, vec!["a", "c"]);
}
