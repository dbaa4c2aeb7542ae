#!/usr/bin/env python3
"""Mine doc-sentence queries: the first sentence of a documented function's,
method's or type's documentation -> that entity.

Why: commit messages say what changed, and the changes land in long
functions; an agent or a user also asks for code by what it does ("Parse a
duration from a human-readable string"), and then the entity whose own
documentation says so is the answer however short it is. Fitted on commit
messages alone, the weights learn the first and not the second; these
queries, a share of each repository's weight in fit.py, teach both. They
come from the same checkouts at the same cut commit as the commit messages
(mine.py), so nothing of a repository the ranking is measured on enters.

usage: docs.py [--root /tmp/search-fit] [--per-repo 80] [REPO_DIR_NAME ...]
Writes ROOT/<owner+name>/doc-queries.jsonl (id, text, words, source "doc",
gold_files, gold_functions) from the index in ROOT/<owner+name>/tree
(dump.py brings it current first). The binary is $GRAPHCTX (default:
target/release/graphctx of this checkout).
"""
import argparse, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BIN = os.path.join(HERE, "..", "..", "target", "release", "graphctx")
KINDS = ["function", "method", "struct", "enum", "trait", "class", "interface"]
SCRIPT = (
    "?[id, kind, file, doc] := *node{graph: 'code', id, kind, doc}, kind in $kinds, doc != '', "
    "*code_usage{graph: 'code', id, file, is_test}, !is_test"
)


def first_sentence(doc):
    """The first sentence of a doc comment's first line, if it is a
    sentence of at least four words (the rule of benches/search.rs)."""
    lines = doc.splitlines()
    if not lines:
        return None
    line = lines[0].strip()
    end = line.find(". ")
    s = line if end < 0 else line[:end + 1]
    return s if len(s.split()) >= 4 and not s.startswith("#") else None


def mine(binary, d, per_repo):
    tree = os.path.join(d, "tree")
    if not os.path.isdir(os.path.join(tree, ".graphctx")):
        return None
    out = subprocess.run([binary, "query", "--json", "--param", "kinds=" + json.dumps(KINDS), SCRIPT],
                         cwd=tree, capture_output=True, text=True, check=True).stdout
    rows = sorted(json.loads(out)["rows"])
    pool = []
    for key, kind, file, doc in rows:
        s = first_sentence(doc)
        if s:
            pool.append((key, kind, file, s))
    # Every k-th, in key order: spread over the repository, the same on
    # every run.
    step = max(1, len(pool) // per_repo)
    name = os.path.basename(d)
    with open(os.path.join(d, "doc-queries.jsonl"), "w") as f:
        for key, kind, file, s in pool[::step][:per_repo]:
            f.write(json.dumps({"id": f"{name}#doc:{key}", "text": s, "words": len(s.split()),
                                "source": "doc", "gold_files": [file],
                                "gold_functions": [{"key": key, "kind": kind}]}) + "\n")
    return min(per_repo, len(pool[::step])), len(pool)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/tmp/search-fit")
    ap.add_argument("--per-repo", type=int, default=80)
    ap.add_argument("repos", nargs="*")
    a = ap.parse_args()
    binary = os.path.abspath(os.environ.get("GRAPHCTX", DEFAULT_BIN))
    for name in a.repos or sorted(os.listdir(a.root)):
        d = os.path.join(a.root, name)
        if not os.path.isdir(d):
            continue
        r = mine(binary, d, a.per_repo)
        if r:
            print(f"{name}: {r[0]} doc-sentence queries of {r[1]} documented entities", flush=True)


if __name__ == "__main__":
    sys.exit(main())
