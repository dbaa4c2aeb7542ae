#!/usr/bin/env python3
"""Baseline file-localisation scores on the mined queries: graphctx search (today's weights) vs BM25.

Why: before any weight is fitted we need the numbers to beat, measured the way the evaluations
measure them, on the same leakage-free queries the fit will use (mine.py). And "pool recall" - the
share of gold files anywhere in graphctx's list - is the ceiling of any re-weighting of that list.

For each repository's WORK/<owner+name>/queries.jsonl, in its checkout at the cut (WORK/.../tree):
  graphctx  `graphctx search --query-file F --json --limit 200` (the text passed through a file,
            never the shell); files in order of first appearance in the entity list, restricted to
            the universe below (as localize.py does);
  bm25      localize.py's baseline: Okapi BM25 (k1 1.2, b 0.75) over each file's path and text split
            into identifier words, query words as a set; ties broken by path.
  universe  the files of the repository's language at the cut (`git ls-files`, tests included).
Metrics per query: recall@K (share of gold files in the first K files), acc@K (all of them),
top-1 (the first file is gold); for graphctx also pool recall (gold files among all listed files)
and the pool size; for BM25, recall at graphctx's pool size for the same query (a like-for-like
depth). Reported per repository and overall (mean over queries, and mean over repositories).

Writes WORK/<repo>/baseline.jsonl (one line per query: ranks of the gold files, the first 20 files
of each tool, the metrics), WORK/<repo>/gc-entities.jsonl (graphctx's entities per query in
func_localize.py's PREDICTIONS form, to score against functions-gold.jsonl with --strict), and
WORK/baseline-summary.json; the table goes to stdout.

usage: baseline.py [--repos repos.txt] [--only owner/name ...] [--work /tmp/search-fit]
                   [--graphctx BIN] [--limit 200] [--k 5]
Standard library only; runs itself at nice 19, one search at a time.
"""
import argparse

import collections
import json
import math
import os
import re
import subprocess
import sys
import time

# The binary of this checkout, built with `cargo build --release`.
DEFAULT_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "target", "release", "graphctx")

HERE = os.path.dirname(os.path.abspath(__file__))
LANG_EXTS = {"rs": ("rs",), "py": ("py",), "ts": ("ts", "tsx", "js", "jsx", "mjs", "cjs")}


def read_repos(path):
    rows = []
    for line in open(path):
        parts = line.split("#", 1)[0].split()
        if parts:
            rows.append({"repo": parts[0], "lang": parts[1]})
    return rows


# ------------------------------------------------------------------------------ BM25 (localize.py)

def words(text):
    """localize.py's tokeniser: identifiers split at '_' and camelCase humps, lower case, >= 2 chars."""
    out = []
    for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        for part in re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", tok):
            if len(part) > 1:
                out.append(part.lower())
    return out


class Bm25:
    """localize.py's bm25 with the documents read once per repository instead of once per query."""

    def __init__(self, root, universe):
        self.docs = {}
        for f in universe:
            try:
                with open(os.path.join(root, f), errors="replace") as fh:
                    self.docs[f] = collections.Counter(words(f + " " + fh.read()))
            except OSError:
                pass
        self.n = len(self.docs)
        self.lens = {f: sum(c.values()) for f, c in self.docs.items()}
        self.avg = sum(self.lens.values()) / max(1, self.n)
        self.df = collections.Counter(w for c in self.docs.values() for w in c)
        self.postings = collections.defaultdict(list)
        for f, c in self.docs.items():
            for w in c:
                self.postings[w].append(f)

    def rank(self, query):
        scores = dict.fromkeys(self.docs, 0.0)
        for w in set(words(query)):
            df = self.df.get(w, 0)
            if not df:
                continue
            idf = math.log(1 + (self.n - df + 0.5) / (df + 0.5))
            for f in self.postings[w]:
                tf = self.docs[f][w]
                scores[f] += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * self.lens[f] / self.avg))
        return [f for f, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))]


# ---------------------------------------------------------------------------------------- graphctx

def graphctx(exe, tree, text, limit, qfile):
    """(files in order of first appearance, entities, milliseconds, error or None)."""
    with open(qfile, "w") as fo:
        fo.write(text)
    t = time.time()
    p = subprocess.run([exe, "search", "--query-file", qfile, "--json", "--limit", str(limit)],
                       cwd=tree, capture_output=True)
    ms = round((time.time() - t) * 1000, 1)
    if p.returncode != 0:
        return [], [], ms, f"rc {p.returncode}: {p.stderr.decode(errors='replace').strip()[:300]}"
    try:
        hits = json.loads(p.stdout)
    except ValueError as e:
        return [], [], ms, f"bad JSON ({e}): {p.stdout[:200]!r}"
    if not isinstance(hits, list):
        return [], [], ms, f"not a list: {str(hits)[:200]}"
    files = []
    for h in hits:
        if h.get("file") and h["file"] not in files:
            files.append(h["file"])
    ents = [{k: h.get(k) for k in ("file", "start_line", "end_line", "name", "kind", "key")} for h in hits]
    return files, ents, ms, None


# ----------------------------------------------------------------------------------------- metrics

def metrics(ranked, gold, k):
    gold = set(gold)
    top = ranked[:k]
    hit = len(gold & set(top))
    return {f"recall@{k}": hit / len(gold), f"acc@{k}": float(hit == len(gold)),
            "top1": float(bool(ranked) and ranked[0] in gold)}


def ranks(ranked, gold):
    pos = {f: i + 1 for i, f in enumerate(ranked)}
    return {g: pos.get(g) for g in gold}


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def score_repo(row, args):
    repo, lang = row["repo"], row["lang"]
    work = os.path.join(args.work, repo.replace("/", "+"))
    qpath = os.path.join(work, "queries.jsonl")
    if not os.path.exists(qpath):
        print(f"{repo}: no {qpath}, skipped", file=sys.stderr)
        return []
    queries = [json.loads(l) for l in open(qpath) if l.strip()]
    tree = os.path.join(work, "tree")
    head = subprocess.run(["git", "-C", tree, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    if queries and head != queries[0]["cut"]:
        sys.exit(f"{repo}: the checkout is at {head}, the queries were mined at {queries[0]['cut']}; rerun mine.py")
    exts = LANG_EXTS[lang]
    listed = subprocess.run(["git", "-C", tree, "-c", "core.quotepath=off", "ls-files", "-z"],
                            capture_output=True).stdout.decode("utf-8", errors="replace").split("\0")
    universe = {f for f in listed if f and f.rsplit(".", 1)[-1] in exts}
    t = time.time()
    bm25 = Bm25(tree, universe)
    print(f"== {repo}: {len(queries)} queries, {len(universe)} files, BM25 read in {time.time() - t:.1f}s",
          file=sys.stderr, flush=True)
    k = args.k
    rows, errors = [], 0
    qfile = os.path.join(work, "query.txt")
    with open(os.path.join(work, "baseline.jsonl"), "w") as out, \
            open(os.path.join(work, "gc-entities.jsonl"), "w") as ents_out:
        for q in queries:
            gold = q["gold_files"]
            gfiles, ents, ms, err = graphctx(args.graphctx, tree, q["text"], args.limit, qfile)
            if err:
                errors += 1
                if errors <= 3:
                    print(f"   {q['id']}: graphctx {err}", file=sys.stderr)
            gfiles = [f for f in gfiles if f in universe]
            bfiles = bm25.rank(q["text"])
            gc = {**metrics(gfiles, gold, k), "pool": len(set(gold) & set(gfiles)) / len(gold),
                  "pool_files": len(gfiles), "ms": ms, "error": err}
            depth = max(k, len(gfiles))
            bm = {**metrics(bfiles, gold, k), "recall@pool": len(set(gold) & set(bfiles[:depth])) / len(gold)}
            r = {"id": q["id"], "repo": repo, "lang": lang, "words": q["words"], "fix_like": q["fix_like"],
                 "gold_files": gold, "graphctx": gc, "bm25": bm,
                 "graphctx_ranks": ranks(gfiles, gold), "bm25_ranks": ranks(bfiles, gold),
                 "graphctx_files": gfiles[:20], "bm25_files": bfiles[:20]}
            out.write(json.dumps(r) + "\n")
            ents_out.write(json.dumps({"instance_id": q["id"], "entities": ents}) + "\n")
            rows.append(r)
    if errors:
        print(f"   {repo}: {errors} graphctx errors", file=sys.stderr)
    return rows


def summarize(rows, k):
    return {
        "n": len(rows),
        "gc_recall": mean(r["graphctx"][f"recall@{k}"] for r in rows),
        "gc_acc": mean(r["graphctx"][f"acc@{k}"] for r in rows),
        "gc_top1": mean(r["graphctx"]["top1"] for r in rows),
        "gc_pool": mean(r["graphctx"]["pool"] for r in rows),
        "gc_pool_files": mean(r["graphctx"]["pool_files"] for r in rows),
        "gc_ms": mean(r["graphctx"]["ms"] for r in rows),
        "bm_recall": mean(r["bm25"][f"recall@{k}"] for r in rows),
        "bm_acc": mean(r["bm25"][f"acc@{k}"] for r in rows),
        "bm_top1": mean(r["bm25"]["top1"] for r in rows),
        "bm_recall_pool": mean(r["bm25"]["recall@pool"] for r in rows),
    }


def table(summaries, k):
    head = (f"{'repo':26s} {'n':>4s} | {'gc R@' + str(k):>7s} {'A@' + str(k):>5s} {'top1':>5s} {'pool':>5s} "
            f"{'files':>5s} | {'bm R@' + str(k):>7s} {'A@' + str(k):>5s} {'top1':>5s} {'R@pool':>6s} | {'ms':>5s}")
    lines = [head, "-" * len(head)]
    for name, s in summaries:
        if not s["n"]:
            continue
        lines.append(f"{name:26s} {s['n']:4d} | {s['gc_recall']:7.3f} {s['gc_acc']:5.3f} {s['gc_top1']:5.3f} "
                     f"{s['gc_pool']:5.3f} {s['gc_pool_files']:5.0f} | {s['bm_recall']:7.3f} {s['bm_acc']:5.3f} "
                     f"{s['bm_top1']:5.3f} {s['bm_recall_pool']:6.3f} | {s['gc_ms']:5.0f}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repos", default=os.path.join(HERE, "repos.txt"))
    ap.add_argument("--only", nargs="*", help="owner/name of the repositories to score (default: all)")
    ap.add_argument("--work", default="/tmp/search-fit")
    ap.add_argument("--graphctx", default=DEFAULT_BIN, help="the graphctx binary (default: this checkout's target/release/graphctx)")
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--k", type=int, default=5)
    args = ap.parse_args()
    os.nice(19)
    repos = read_repos(args.repos)
    if args.only:
        repos = [r for r in repos if r["repo"] in args.only]
    per_repo, all_rows = [], []
    for row in repos:
        rows = score_repo(row, args)
        all_rows += rows
        if rows:
            per_repo.append((row["repo"], summarize(rows, args.k)))
            print(table(per_repo[-1:], args.k).splitlines()[-1], file=sys.stderr, flush=True)
    k = args.k
    overall = [("ALL (mean over queries)", summarize(all_rows, k))]
    if per_repo:
        keys = per_repo[0][1].keys()
        overall.append(("ALL (mean over repos)", {key: (sum(s["n"] for _, s in per_repo) if key == "n" else
                                                        mean(s[key] for _, s in per_repo)) for key in keys}))
    subsets = [(f"{lang} (queries)", summarize([r for r in all_rows if r["lang"] == lang], k)) for lang in LANG_EXTS]
    subsets += [("fix-like (queries)", summarize([r for r in all_rows if r["fix_like"]], k)),
                ("words>=30 (queries)", summarize([r for r in all_rows if r["words"] >= 30], k))]
    print(table(per_repo + overall + subsets, k))
    with open(os.path.join(args.work, "baseline-summary.json"), "w") as fo:
        json.dump({"k": k, "limit": args.limit, "per_repo": dict(per_repo), "overall": dict(overall),
                   "subsets": dict(subsets)}, fo, indent=1)


if __name__ == "__main__":
    main()
