#!/usr/bin/env python3
"""Dump what the search ranking sees for every mined query: each listed
file's features, role and hand score (`graphctx search --batch --features
--scoring hand`), run in the checkout at the cut commit that mine.py
indexed, so nothing after the cut is in the index or its history.

usage: dump.py [--root /tmp/search-fit] [REPO_DIR_NAME ...]
Writes ROOT/<owner+name>/features.jsonl next to queries.jsonl, and
doc-features.jsonl next to doc-queries.jsonl (docs.py) where there is one.
The binary is $GRAPHCTX (default: target/release/graphctx of this checkout).
"""
import argparse, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BIN = os.path.join(HERE, "..", "..", "target", "release", "graphctx")


def dump(binary, d):
    tree, queries = os.path.join(d, "tree"), os.path.join(d, "queries.jsonl")
    if not (os.path.isdir(tree) and os.path.isfile(queries)):
        return None
    t = time.time()
    # Bring the index (and its history, which a search leaves as it is)
    # current for this binary.
    subprocess.run(["nice", "-n", "19", binary, "index"], cwd=tree, stdout=subprocess.DEVNULL, check=True)
    n = 0
    # The commit messages (mine.py) and the doc sentences (docs.py).
    for qname, fname in (("queries.jsonl", "features.jsonl"), ("doc-queries.jsonl", "doc-features.jsonl")):
        qpath, out = os.path.join(d, qname), os.path.join(d, fname)
        if not os.path.isfile(qpath):
            continue
        with open(out + ".part", "w") as f:
            subprocess.run(["nice", "-n", "19", binary, "search", "--batch", qpath, "--features",
                            "--scoring", "hand", "--limit", "60"], cwd=tree, stdout=f, check=True)
        os.replace(out + ".part", out)
        n += sum(1 for _ in open(out))
    return n, time.time() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/tmp/search-fit")
    ap.add_argument("repos", nargs="*")
    a = ap.parse_args()
    binary = os.path.abspath(os.environ.get("GRAPHCTX", DEFAULT_BIN))
    names = a.repos or sorted(os.listdir(a.root))
    for name in names:
        d = os.path.join(a.root, name)
        if not os.path.isdir(d):
            continue
        r = dump(binary, d)
        if r:
            print(f"{name}: {r[0]} queries in {r[1]:.1f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
