//! `graphctx view`: the page it writes, loaded in headless Chromium —
//! every node of the embedded selection drawn, a click on a node showing
//! its signature and location, the filters, hostile names shown as text
//! and never run, the bad inputs refused — plus where the page goes and
//! how `--open` hands it over.
//!
//! Screenshots of the runs are kept in `target/test-output/view/`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::chromium::{body_attr, element_text, percent_encode, Chromium};
use common::{copy_dir, fixture};
use serde_json::Value;

fn graphctx(dir: &Path, args: &[&str], path_env: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_graphctx"));
    cmd.args(args).current_dir(dir);
    if let Some(p) = path_env {
        cmd.env("PATH", p);
    }
    cmd.output().expect("graphctx runs")
}

fn ok(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn browser() -> Option<Chromium> {
    match Chromium::find() {
        Some(c) => Some(c),
        None if common::client_missing("chromium", "scripts/install-test-clients.sh") => None,
        None => unreachable!(),
    }
}

/// `target/test-output/view/`, where the screenshots stay.
fn output_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("test-output/view");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A copy of a fixture repository, indexed.
fn indexed(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(name), dir.path());
    ok(&graphctx(dir.path(), &["index"], None));
    dir
}

/// The graph a page embeds, as its script reads it.
fn embedded(page: &Path) -> Value {
    let html = std::fs::read_to_string(page).unwrap();
    let open = "<script type=\"application/json\" id=\"graph-data\">";
    let start = html.find(open).unwrap() + open.len();
    let len = html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..start + len]).unwrap()
}

fn attr(dom: &str, name: &str) -> String {
    body_attr(dom, name).unwrap_or_else(|| panic!("no {name} on <body>"))
}

fn text(dom: &str, id: &str) -> String {
    element_text(dom, id).unwrap_or_else(|| panic!("no #{id} in the document"))
}

fn nodes(graph: &Value) -> &Vec<Value> {
    graph["nodes"].as_array().unwrap()
}

fn click(key: &str) -> String {
    format!("click={}", percent_encode(key, ""))
}

#[test]
fn a_context_page_draws_its_selection_and_shows_a_clicked_node() {
    let Some(chromium) = browser() else { return };
    let repo = indexed("shapes");
    let out = graphctx(repo.path(), &["view", "src/lib.rs-crate-Area"], None);
    // The default place, printed.
    let page = repo.path().join(".graphctx/view.html");
    assert_eq!(ok(&out).trim(), page.display().to_string());
    let graph = embedded(&page);
    let all = nodes(&graph);
    assert!(all.len() > 3, "a trait with implementors: {graph}");
    assert_eq!(
        all.iter().filter(|n| n["base"] == true).count(),
        1,
        "one base entity"
    );

    // A node that is not the base, with a signature and a location.
    let other = all
        .iter()
        .find(|n| n["base"] == false && n["signature"].is_string() && n["lines"].is_array())
        .expect("a neighbour with a signature");
    let key = other["key"].as_str().unwrap();
    let dom = chromium.dump_dom(&page, &click(key));
    assert_eq!(attr(&dom, "data-ready"), "1");
    assert_eq!(attr(&dom, "data-rendered-nodes"), all.len().to_string());
    assert_eq!(
        attr(&dom, "data-rendered-edges"),
        graph["edges"].as_array().unwrap().len().to_string()
    );
    assert_eq!(attr(&dom, "data-selected"), key);
    assert_eq!(text(&dom, "d-key"), key);
    assert_eq!(
        text(&dom, "d-signature"),
        other["signature"].as_str().unwrap()
    );
    let lines = other["lines"].as_array().unwrap();
    let (start, end) = (lines[0].as_i64().unwrap(), lines[1].as_i64().unwrap());
    let place = if start == end {
        format!("{}:{start}", other["file"].as_str().unwrap())
    } else {
        format!("{}:{start}-{end}", other["file"].as_str().unwrap())
    };
    assert_eq!(text(&dom, "d-location"), place);
    // Its neighbours are listed, each by name.
    let index = all.iter().position(|n| n["key"] == key).unwrap();
    let neighbours = text(&dom, "d-neighbours");
    for e in graph["edges"].as_array().unwrap() {
        let (s, t) = (
            e["source"].as_u64().unwrap() as usize,
            e["target"].as_u64().unwrap() as usize,
        );
        if s == index || t == index {
            let far = if s == index { t } else { s };
            assert!(
                neighbours.contains(all[far]["name"].as_str().unwrap()),
                "{neighbours:?} lacks {}",
                all[far]["name"]
            );
        }
    }
    // The colours are the palette's.
    assert_eq!(graph["palette"]["kinds"]["trait"], "#f9e1b5");
    assert_eq!(graph["palette"]["base"]["colour"], "#d1400f");

    let png = output_dir().join("context.png");
    chromium.screenshot(&page, &click(key), &png);
    assert!(
        std::fs::metadata(&png).unwrap().len() > 5_000,
        "an empty screenshot"
    );
}

#[test]
fn the_hop_and_relationship_filters_hide_what_they_leave_out() {
    let Some(chromium) = browser() else { return };
    let repo = indexed("shapes");
    let page = repo.path().join("area.html");
    ok(&graphctx(
        repo.path(),
        &["view", "src/lib.rs-crate-Area", "--output", "area.html"],
        None,
    ));
    let graph = embedded(&page);
    let edges = graph["edges"].as_array().unwrap();
    let base = nodes(&graph)
        .iter()
        .position(|n| n["base"] == true)
        .unwrap();
    // Hop 0: the base alone.
    let dom = chromium.dump_dom(&page, "hops=0");
    assert_eq!(attr(&dom, "data-rendered-nodes"), "1");
    // One hop over `implements` only: the base and what implements it.
    let implementors: std::collections::BTreeSet<u64> = edges
        .iter()
        .filter(|e| e["rel"] == "implements")
        .filter_map(|e| {
            let (s, t) = (e["source"].as_u64()?, e["target"].as_u64()?);
            (t == base as u64)
                .then_some(s)
                .or((s == base as u64).then_some(t))
        })
        .collect();
    assert!(!implementors.is_empty(), "{graph}");
    let dom = chromium.dump_dom(&page, "hops=1&rels=implements");
    assert_eq!(
        attr(&dom, "data-rendered-nodes"),
        (1 + implementors.len()).to_string()
    );
}

#[test]
fn cycles_are_marked_in_the_data_and_counted_on_the_page() {
    let Some(chromium) = browser() else { return };
    let repo = indexed("cycles");
    let cycles = ok(&graphctx(repo.path(), &["cycles", "--json"], None));
    let found: Value = serde_json::from_str(&cycles).unwrap();
    let member = found[0]["members"][0].as_str().unwrap().to_string();
    let out = graphctx(repo.path(), &["view", &member, "--output", "c.html"], None);
    ok(&out);
    let page = repo.path().join("c.html");
    let graph = embedded(&page);
    let on_cycle = graph["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cycle"] == true)
        .count();
    assert!(on_cycle >= 1, "{graph}");
    let dom = chromium.dump_dom(&page, &click(&member));
    assert_eq!(
        text(&dom, "cycle-count"),
        format!("{on_cycle} edges on cycles")
    );
    assert!(text(&dom, "d-kind").contains("on a cycle"));
    chromium.screenshot(&page, &click(&member), &output_dir().join("cycles.png"));
}

#[test]
fn hostile_names_in_an_ontology_show_as_text_and_never_run() {
    let Some(chromium) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let db = db.to_str().unwrap();
    let input = fixture("ontology/hostile.json");
    ok(&graphctx(
        dir.path(),
        &[
            "--db",
            db,
            "--graph",
            "hostile",
            "graph",
            "import",
            input.to_str().unwrap(),
        ],
        None,
    ));
    let out = graphctx(
        dir.path(),
        &[
            "--db", db, "--graph", "hostile", "view", "--output", "h.html",
        ],
        None,
    );
    ok(&out);
    let page = dir.path().join("h.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // The data element and the page's script, nothing else.
    assert_eq!(html.matches("<script").count(), 2);
    assert!(!html.contains("<img") && !html.contains("<svg"));
    let graph = embedded(&page);
    assert_eq!(nodes(&graph).len(), 4);

    for n in nodes(&graph) {
        let key = n["key"].as_str().unwrap();
        let dom = chromium.dump_dom(&page, &click(key));
        assert_eq!(body_attr(&dom, "data-pwned"), None, "script ran: {dom}");
        assert_eq!(attr(&dom, "data-rendered-nodes"), "4");
        assert_eq!(attr(&dom, "data-selected"), key);
        assert_eq!(text(&dom, "d-name"), n["name"].as_str().unwrap());
        assert_eq!(text(&dom, "d-caption"), n["caption"].as_str().unwrap_or(""));
        assert_eq!(text(&dom, "d-doc"), n["doc"].as_str().unwrap_or("—"));
    }
    // What the fixture says, literally (names the store keeps as given).
    let captions: Vec<&str> = nodes(&graph)
        .iter()
        .filter_map(|n| n["caption"].as_str())
        .collect();
    for expected in [
        "Quotes \"double\" and 'single'",
        "Emoji 😀 user",
        "A & B < C > D",
        "Close </title></textarea><img src=x onerror=\"document.body.dataset.pwned='1'\">",
    ] {
        assert!(
            captions.contains(&expected),
            "{captions:?} lacks {expected}"
        );
    }
    let docs: Vec<&str> = nodes(&graph)
        .iter()
        .filter_map(|n| n["doc"].as_str())
        .collect();
    assert!(
        docs.contains(&"line one\nline two & <b>not bold</b>"),
        "{docs:?}"
    );
    chromium.screenshot(
        &page,
        &click("Close.UC.001"),
        &output_dir().join("hostile.png"),
    );
}

#[test]
fn an_empty_graph_and_a_one_node_selection_are_valid_pages() {
    let Some(chromium) = browser() else { return };
    // An ontology graph whose nodes were all removed.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let db = db.to_str().unwrap();
    let input = fixture("ontology/order.json");
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "{\"nodes\": [], \"relationships\": []}").unwrap();
    let with = |args: &[&str]| -> Output {
        let mut all = vec!["--db", db, "--graph", "order"];
        all.extend_from_slice(args);
        graphctx(dir.path(), &all, None)
    };
    ok(&with(&["graph", "import", input.to_str().unwrap()]));
    ok(&with(&[
        "graph",
        "import",
        "--replace",
        empty.to_str().unwrap(),
    ]));
    ok(&with(&["view", "--output", "empty.html"]));
    let page = dir.path().join("empty.html");
    assert_eq!(nodes(&embedded(&page)).len(), 0);
    let dom = chromium.dump_dom(&page, "");
    assert_eq!(attr(&dom, "data-ready"), "1");
    assert_eq!(attr(&dom, "data-rendered-nodes"), "0");
    assert_eq!(text(&dom, "empty"), "the graph has no nodes");

    // A base entity and no hops: one node.
    let repo = indexed("shapes");
    ok(&graphctx(
        repo.path(),
        &[
            "view",
            "src/util.rs-util-clamp_scale",
            "--hops",
            "0",
            "-o",
            "one.html",
        ],
        None,
    ));
    let page = repo.path().join("one.html");
    assert_eq!(nodes(&embedded(&page)).len(), 1);
    let dom = chromium.dump_dom(&page, &click("src/util.rs-util-clamp_scale"));
    assert_eq!(attr(&dom, "data-rendered-nodes"), "1");
    assert_eq!(attr(&dom, "data-selected"), "src/util.rs-util-clamp_scale");
    assert!(text(&dom, "d-location").starts_with("src/util.rs:"));
    assert_eq!(text(&dom, "d-neighbours"), "none");
}

#[test]
fn bad_requests_are_clear_errors_and_write_nothing() {
    let repo = indexed("shapes");
    let cases: &[(&[&str], &str)] = &[
        (&["view", "src/lib.rs-crate-Nope"], "src/lib.rs-crate-Nope"),
        (&["view"], "give base entities"),
        (
            &["view", "--name", "no_such_name_anywhere"],
            "no entity named",
        ),
        (&["view", "src/lib.rs-crate-Area", "--hops", "9"], "--hops"),
        (
            &["view", "src/lib.rs-crate-Area", "--budget", "0"],
            "--budget",
        ),
        (&["--graph", "nothing_here", "view"], "nothing_here"),
    ];
    for (args, says) in cases {
        let out = graphctx(repo.path(), args, None);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert!(!repo.path().join(".graphctx/view.html").exists());
}

/// A stand-in `xdg-open` first in PATH: records what it was given, or fails.
#[cfg(target_os = "linux")]
fn fake_opener(dir: &Path, exit: i32) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("xdg-open");
    let log = dir.join("opened.txt");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > '{}'\nexit {exit}\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[cfg(target_os = "linux")]
#[test]
fn open_hands_the_page_to_the_browser_and_a_failure_is_only_a_warning() {
    let repo = indexed("shapes");
    // Runs `view --open` with an opener that exits with `exit`; returns
    // the output and the opener's directory (with its record).
    let view_opened = |page: &str, exit: i32| {
        let opener = tempfile::tempdir().unwrap();
        let path = fake_opener(opener.path(), exit);
        let args = ["view", "src/lib.rs-crate-Area", "-o", page, "--open"];
        let out = graphctx(repo.path(), &args, Some(&path));
        assert_eq!(ok(&out).trim(), page);
        assert!(repo.path().join(page).is_file());
        (out, opener)
    };
    let (_, opener) = view_opened("a.html", 0);
    let opened = std::fs::read_to_string(opener.path().join("opened.txt")).unwrap();
    assert_eq!(
        Path::new(&opened),
        repo.path().join("a.html").canonicalize().unwrap()
    );

    let (out, _) = view_opened("b.html", 3);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning: could not open"), "{err}");
}
