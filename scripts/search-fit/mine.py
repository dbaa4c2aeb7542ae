#!/usr/bin/env python3
"""Mine (commit message -> changed files and functions) queries from git histories, leakage-free.

Why: the search weights are to be fitted, not set by hand, on many repositories' own histories
(docs/search.md, "Fitted weights"). A commit message stands in for a bug report and
the files and functions the commit modified are its gold answer. To keep the index from knowing the
answer, each repository is indexed once at a cut commit C and only commits made *after* C are asked:
`graphctx index` reads co-change and history from `git log` at HEAD = C, so it sees none of them.
Staleness (C is older than each commit's parent) only makes the task harder.

Per repository (one line `owner/name lang [cut]` of repos.txt):
  1. the cut C: a commit on the default branch's first-parent line (at most --max-age years before
     the tip) after which about --target qualifying commits follow within --months; chosen once and
     written back to repos.txt, so a rerun asks the same queries;
  2. a checkout at C (`git clone --shared`, detached HEAD = C) and `graphctx index` in it;
  3. the qualifying commits X: every non-merge commit in C..tip (first-parent or not: merge-based
     projects keep their descriptive commits on side branches) committed within --months of C that
     passes the filters below; each rejection is counted under the first filter it fails;
  4. gold files: the non-test source files X modified. Test = graphctx's own `is_test` of the
     file's module entity at C (the file's, not an inline `mod tests`), or a test directory or
     file name (`is_test_path`: graphctx's TypeScript layout does not count `test/` as tests).
     Examples, docs and build scripts stay gold (the fit learns their role weights). A gold file
     graphctx does not index at C (Python's setup.py is read as a manifest) is kept and listed in
     `gold_unindexed`;
  5. gold functions: X's old-side changed lines (an insertion: the two lines around it), carried
     to C's line numbers through `git diff -U0 C X^` (a line written in between goes to the
     nearest surviving line; the share of exactly carried lines is `gold_lines_mapped`), then the
     innermost entity at C holding the line: a function or method if one holds it, else the class
     / impl / type; never a module (as func_localize.py); lines in test entities (`#[cfg(test)]`)
     are left out, lines in no entity leave only the file (`module_level_only`);
  6. WORK/<owner+name>/queries.jsonl, one query per line:
       {id "<repo>@<sha12>", repo, lang, commit, cut, date, text (subject, blank line, body with
        trailers stripped), words, fix_like, gold_files, gold_entities (keys at C), gold_functions
        ({file, key, name, kind, start_line, end_line} at C), gold_lines, gold_lines_mapped,
        gold_unindexed},
     functions-gold.jsonl (the same gold in func_localize.py's GOLD form, so
     `func_localize.py GOLD DUMP --strict` scores a dump directly) and mine-summary.json
     (per-filter counts and the rest); the summary also on stdout.

Filters, in the order they are applied (the design's list, made exact):
  bot               author matches a bot name
  subject:<kind>    subject starts like merge / revert / release / version / bump / chore / ci / docs /
                    style / build / changelog or dependency update / format / typo / clippy / lint
  files>15          more than 15 files changed in total (sweeps)
  no source         no non-test source file of the repository's language modified
  source>8          more than 8 non-test source files
  added/deleted     a gold file added, deleted or renamed (renames are not detected: delete + add)
  missing at C      a gold file that does not exist at C
  lines>400         more than 400 lines added + deleted in the gold files (a big new test is fine)
  words<5           fewer than 5 words of >= 2 letters after stripping trailers, URLs and #123
  dup subject       the normalised subject (lower case, numbers and "(#123)" dropped) equals the
                    subject of a commit <= C (cherry-picks, backports, reapplied changes)
  formatting        `git diff -w` shows no change in any gold file (whitespace-only)
A kept query is tagged fix_like when its text says fix / bug / crash / panic / error / wrong /
incorrect / regression / fail.

usage: mine.py [--repos repos.txt] [--only owner/name ...] [--work /tmp/search-fit]
               [--target 300] [--months 24] [--max-age 6] [--recut] [--graphctx BIN]
Standard library only; runs itself at nice 19 and one process at a time.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

# The binary of this checkout, built with `cargo build --release`.
DEFAULT_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "target", "release", "graphctx")

HERE = os.path.dirname(os.path.abspath(__file__))
# Where the repositories are: DIR/<owner+name>/repo, bare clones (override with --mirrors).
MIRRORS = os.environ.get("MIRROR_ROOT", "/work/.mirror")
LANG_EXTS = {"rs": ("rs",), "py": ("py",), "ts": ("ts", "tsx", "js", "jsx", "mjs", "cjs")}
MONTH = 30.44 * 86400
MAX_FILES = 15
MAX_SOURCE = 8
MAX_LINES = 400
MIN_WORDS = 5
FUNC_KINDS = {"function", "method", "nested_function", "macro"}  # func_localize.py's FUNC_KINDS

BOT = re.compile(r"\[bot\]|dependabot|renovate|github-actions|pre-commit-ci|mergify|allcontributors", re.I)
SUBJECT_SKIP = [
    ("merge", r"merge\b"),
    ("revert", r"revert\b|reapply\b"),
    ("release", r"(release|prepare)\b|v?\d+\.\d+(\.\d+)?\b|changelog\b|update (the )?changelog\b"),
    ("bump", r"bump\b|update (dependencies|dependency|deps|cargo\.lock|lockfile|msrv)\b"),
    ("chore", r"(chore|ci|build|deps)(\([^)]*\))?!?:"),
    ("docs", r"docs?(\([^)]*\))?!?:"),
    ("format", r"(style(\([^)]*\))?!?:|(cargo |run )?(fmt|rustfmt|format|black|isort|ruff format|prettier)\b|reformat)"),
    ("typo", r"(fix(ed)? )?typos?\b"),
    ("lint", r"(clippy|lints?|linting)\b|fix (clippy|lint)"),
]
SUBJECT_SKIP = [(k, re.compile(r"^\s*(" + p + ")", re.I)) for k, p in SUBJECT_SKIP]
TRAILER = re.compile(
    r"^\s*([A-Za-z][A-Za-z0-9-]*-by|co-authored-by|signed-off-by|pr-url|change-id|reviewed-on|refs?|cc|"
    r"closes|part-of|backport-of|cherry-picked-from|original-commit|bors-?retry)\s*:", re.I)
CHERRY = re.compile(r"^\s*\(cherry picked from commit [0-9a-f]+\)\s*$", re.I)
RULE = re.compile(r"^\s*-{3,}\s*$")
URL = re.compile(r"https?://\S+|www\.\S+")
REF = re.compile(r"\(#\d+\)|#\d+\b|\bgh-\d+\b", re.I)
FIX_LIKE = re.compile(r"\b(fix(es|ed|ing)?|bugs?|crash(es|ed|ing)?|panic(s|ked|king)?|errors?|wrong|"
                      r"incorrect(ly)?|regressions?|fail(s|ed|ing|ure|ures)?)\b", re.I)
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
TEST_DIRS = {"tests", "test", "testing", "benches", "__tests__", "__mocks__", "__fixtures__", "e2e",
             "testdata", "test_data", "test-data", "fixtures"}


# ---------------------------------------------------------------------------------------------- git

def run(args, cwd=None, check=True):
    """stdout of a command as text (undecodable bytes replaced), raising on failure when check."""
    p = subprocess.run(args, cwd=cwd, capture_output=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({p.returncode}): {p.stderr.decode(errors='replace')[:500]}")
    return p.stdout.decode("utf-8", errors="replace")


def git(repo, *args, check=True):
    return run(["git", "-C", repo, "-c", "core.quotepath=off", *args], check=check)


class Commit:
    __slots__ = ("sha", "parents", "author", "time", "subject", "body", "status", "lines")

    def __init__(self, sha, parents, author, time_, message):
        self.sha, self.parents, self.author, self.time = sha, parents, author, time_
        self.subject, self.body = split_message(message)
        self.status = {}  # path -> A/M/D/T (renames are not detected)
        self.lines = {}   # path -> lines added + deleted (0 for binary)


def read_history(mirror, tip, exts):
    """Every non-merge commit reachable from tip: message, files with status, changed lines of the
    source files (only those: the mirrors are partial clones whose few absent blobs are media and
    data files, which a line count of every file would need)."""
    commits = {}
    fmt = "--format=%x01%H%x02%P%x02%an <%ae>%x02%ct%x02%B%x02"
    out = git(mirror, "log", "--no-merges", "--no-renames", "-z", fmt, "--name-status", tip)
    for chunk in out.split("\x01")[1:]:
        sha, parents, author, ct, msg, rest = chunk.split("\x02", 5)
        c = Commit(sha, parents.split(), author, int(ct), msg)
        items = rest.lstrip("\x00\n").split("\x00")
        for i in range(0, len(items) - 1, 2):
            if items[i]:
                c.status[items[i + 1]] = items[i][0]
        commits[sha] = c
    out = git(mirror, "log", "--no-merges", "--no-renames", "-z", "--format=%x01%H", "--numstat", tip,
              "--", *(f"*.{e}" for e in exts))
    for chunk in out.split("\x01")[1:]:
        sha, _, rest = chunk.partition("\x00")
        c = commits.get(sha)
        for item in rest.lstrip("\n").split("\x00"):
            parts = item.lstrip("\n").split("\t", 2)
            if c is not None and len(parts) == 3:
                a, d, path = parts
                c.lines[path] = (int(a) if a.isdigit() else 0) + (int(d) if d.isdigit() else 0)
    return commits


def split_message(message):
    """(subject, body): the subject is the first paragraph joined (git's %s), the body has its
    trailers, cherry-pick notes and `---` rules removed."""
    lines = message.strip().splitlines()
    head = []
    while lines and lines[0].strip():
        head.append(lines.pop(0).strip())
    body = [l.rstrip() for l in lines if not (TRAILER.match(l) or CHERRY.match(l) or RULE.match(l))]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(body)).strip()
    return " ".join(head), body


def norm_subject(s):
    s = REF.sub(" ", s.lower())
    s = re.sub(r"\d+", " ", s)
    return " ".join(re.findall(r"[a-z_]+", s))


def hunks(text):
    """(a, b, c, d) of every `@@ -a,b +c,d @@` of a -U0 diff."""
    out = []
    for line in text.splitlines():
        m = HUNK.match(line)
        if m:
            a, b, c, d = m.groups()
            out.append((int(a), 1 if b is None else int(b), int(c), 1 if d is None else int(d)))
    return out


# --------------------------------------------------------------------------------------- test files

def is_test_path(path):
    """A test by its path alone (graphctx's module `is_test` is consulted besides, when indexed)."""
    parts = path.split("/")
    if any(p in TEST_DIRS for p in parts[:-1]):
        return True
    name = parts[-1]
    stem = name.split(".", 1)[0]
    return (stem.startswith("test_") or stem.endswith("_test") or stem.endswith("_tests")
            or stem in ("test", "tests", "conftest")
            or ".test." in name or ".spec." in name or ".bench." in name)


def source_files(c, exts):
    return [p for p in c.status if p.rsplit(".", 1)[-1] in exts]


# --------------------------------------------------------------------------------------- filtering

def message_words(c):
    txt = REF.sub(" ", URL.sub(" ", c.subject + "\n" + c.body))
    return len(re.findall(r"[A-Za-z]{2,}", txt))


def reject_reason(c, exts, at_c, subjects_at_c, is_test, whitespace_only=None):
    """The first filter commit c fails (None: kept). at_c: the files at C; subjects_at_c: the
    normalised subjects of the commits <= C; whitespace_only(c, gold) -> bool, skipped if None."""
    if BOT.search(c.author):
        return "bot"
    for kind, rx in SUBJECT_SKIP:
        if rx.match(c.subject):
            return "subject:" + kind
    if len(c.status) > MAX_FILES:
        return "files>15"
    gold = sorted(p for p in source_files(c, exts) if not is_test(p))
    if not gold:
        return "no source"
    if len(gold) > MAX_SOURCE:
        return "source>8"
    if any(c.status[p] != "M" for p in gold):
        return "added/deleted"
    if any(p not in at_c for p in gold):
        return "missing at C"
    if sum(c.lines.get(p, 0) for p in gold) > MAX_LINES:
        return "lines>400"
    if message_words(c) < MIN_WORDS:
        return "words<5"
    if norm_subject(c.subject) in subjects_at_c:
        return "dup subject"
    if whitespace_only is not None and whitespace_only(c, gold):
        return "formatting"
    return None


class Cut:
    """What the filters need to know about one cut commit C (all read with git, no checkout)."""

    def __init__(self, mirror, tip, sha, commits, months):
        self.sha = sha
        self.time = int(git(mirror, "log", "-1", "--format=%ct", sha).strip())
        self.end = self.time + months * MONTH
        after = git(mirror, "rev-list", "--no-merges", f"{sha}..{tip}").split()
        self.window = sorted((commits[x] for x in after if x in commits and commits[x].time <= self.end),
                             key=lambda c: c.time)
        self.files = set(git(mirror, "ls-tree", "-r", "--name-only", sha).splitlines())
        self.subjects = {norm_subject(s) for s in git(mirror, "log", "--format=%s", sha).splitlines()}

    def kept(self, exts, is_test, whitespace_only=None):
        return [c for c in self.window
                if reject_reason(c, exts, self.files, self.subjects, is_test, whitespace_only) is None]


def choose_cut(mirror, tip, commits, exts, target, months, max_age):
    """The most recent first-parent commit after which >= target commits qualify (by the path-only
    test rules; the index refines them later). A repository that never gets there takes the most
    recent cut with >= 80 % of the best count, so that a slightly bigger set does not buy code
    years older (old code also parses worse). Cuts older than max_age years before the tip are not
    considered. Probes every ~1/60 of the line, then bisects between the last two probes."""
    oldest = int(git(mirror, "log", "-1", "--format=%ct", tip)) - max_age * 12 * MONTH
    line = git(mirror, "rev-list", "--first-parent", f"--since={int(oldest)}", tip).split()
    step = max(1, len(line) // 60)
    counts = {}

    def count(i):
        if i not in counts:
            counts[i] = len(Cut(mirror, tip, line[i], commits, months).kept(exts, is_test_path))
            print(f"    probe {line[i][:12]} ({i} back): {counts[i]}", file=sys.stderr, flush=True)
        return counts[i]

    prev = 0
    for i in list(range(step, len(line), step)) + [len(line) - 1]:
        if count(i) >= target:
            lo, hi = prev, i  # count(lo) < target <= count(hi)
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if count(mid) >= target else (mid, hi)
            return line[hi], counts[hi]
        prev = i
    best = max(counts.values())
    i = min(i for i, n in counts.items() if n >= 0.8 * best)
    return line[i], counts[i]


# --------------------------------------------------------------------------------- gold functions

def carry(n, between):
    """Line n of X^ as a line of C: (line, exact). between = hunks of `git diff -U0 C X^`; a line
    written after C goes to the nearest line that survived (ties: the one before)."""
    delta = 0  # C line = X^ line + delta for unchanged lines past the hunks seen so far
    for a, b, c, d in between:
        if d == 0:  # lines of C deleted after X^ line c
            if n <= c:
                return n + delta, True
        else:
            if n < c:
                return n + delta, True
            if n <= c + d - 1:
                before, after = c - 1 + delta, c + b + delta
                pick = before if (n - (c - 1) <= c + d - n and before >= 1) else after
                return pick, False
        delta += b - d
    return n + delta, True


def change_sites(diff_hunks):
    """Old-side sites of X's change: a modified or deleted line n as (n, n); an insertion after
    line a as (a, a + 1), which only an entity holding both neighbours contains."""
    for a, b, c, d in diff_hunks:
        if b > 0:
            for n in range(a, a + b):
                yield n, n
        else:
            yield max(a, 1), a + 1


def innermost(entities, lo, hi):
    """The innermost non-module entity holding lines lo..hi: a function-like one if any holds them."""
    holding = [e for e in entities if e["kind"] != "module" and e["start_line"] <= lo and hi <= e["end_line"]]
    funcs = [e for e in holding if e["kind"] in FUNC_KINDS]
    pool = funcs or holding
    if not pool:
        return None
    return min(pool, key=lambda e: (e["end_line"] - e["start_line"], e["key"]))


def gold_functions(mirror, cut, x, gold, by_file):
    """Entities of C that X's change falls in, and (sites, exactly carried sites, sites in tests)."""
    found, n_sites, n_exact, n_test = {}, 0, 0, 0
    for f in gold:
        own = hunks(git(mirror, "diff", "-U0", "--no-ext-diff", "--no-textconv", "--no-renames",
                        x.parents[0], x.sha, "--", f))
        between = hunks(git(mirror, "diff", "-U0", "--no-ext-diff", "--no-textconv", "--no-renames",
                            cut, x.parents[0], "--", f))
        ents = by_file.get(f, [])
        for lo, hi in change_sites(own):
            (clo, e1), (chi, e2) = carry(lo, between), carry(hi, between)
            n_sites += 1
            n_exact += e1 and e2
            e = innermost(ents, min(clo, chi), max(clo, chi))
            if e is None:
                continue
            if e.get("is_test"):
                n_test += 1
                continue
            found[e["key"]] = e
    return list(found.values()), n_sites, n_exact, n_test


# ----------------------------------------------------------------------------------------- driver

def read_repos(path):
    rows = []
    for line in open(path):
        parts = line.split("#", 1)[0].split()
        if parts:
            rows.append({"repo": parts[0], "lang": parts[1], "cut": parts[2] if len(parts) > 2 else None})
    return rows


def record_cut(path, repo, cut):
    """Write the chosen cut into repos.txt (the line of repo), keeping everything else."""
    out = []
    for line in open(path):
        parts = line.split("#", 1)[0].split()
        if parts and parts[0] == repo:
            comment = line[line.index("#"):].rstrip("\n") if "#" in line else ""
            line = f"{parts[0]} {parts[1]} {cut}" + (f"  {comment}" if comment else "") + "\n"
        out.append(line)
    with open(path, "w") as fo:
        fo.writelines(out)


def absent_blobs(repo, commit):
    """Paths at commit whose blobs the (partial-clone) mirror does not hold."""
    tree = git(repo, "ls-tree", "-r", "-z", commit).split("\0")
    blobs = [(t.split()[2], t.split("\t", 1)[1]) for t in tree if t and t.split()[1] == "blob"]
    p = subprocess.run(["git", "-C", repo, "cat-file", "--batch-check=%(objectname)"],
                       input="\n".join(sha for sha, _ in blobs).encode(), capture_output=True,
                       env={**os.environ, "GIT_NO_LAZY_FETCH": "1"})
    missing = {l.split()[0] for l in p.stdout.decode().splitlines() if l.endswith(" missing")}
    return [path for sha, path in blobs if sha in missing]


def checkout(mirror, tree, cut):
    """A checkout of the mirror at cut with HEAD = cut (sharing the mirror's objects), made anew if
    it is at another commit. The few files whose blobs the mirror lacks are left out by a sparse
    checkout."""
    if os.path.isdir(os.path.join(tree, ".git")) and git(tree, "rev-parse", "HEAD", check=False).strip() == cut:
        return
    run(["rm", "-rf", tree])
    os.makedirs(os.path.dirname(tree), exist_ok=True)
    run(["git", "clone", "--quiet", "--shared", "--no-checkout", mirror, tree])
    absent = absent_blobs(mirror, cut)
    if absent:
        print(f"   left out (blob absent from the mirror): {', '.join(absent)}", file=sys.stderr)
        git(tree, "sparse-checkout", "set", "--no-cone", "/*", *("!/" + p for p in absent))
    git(tree, "checkout", "-q", "--detach", cut)
    assert git(tree, "rev-parse", "HEAD").strip() == cut


def index(exe, tree):
    t = time.time()
    out = run([exe, "index", "--json"], cwd=tree)
    try:
        summary = json.loads(out)
    except ValueError:
        summary = {"raw": out.strip()[-500:]}
    return summary, round(time.time() - t, 2)


def load_entities(exe, tree):
    by_file = collections.defaultdict(list)
    for line in run([exe, "export", "--jsonl"], cwd=tree).splitlines():
        if line.startswith('{"type": "entity"') or line.startswith('{"type":"entity"'):
            e = json.loads(line)
            by_file[e["file"]].append(e)
    return by_file


def mine(row, args):
    repo, lang = row["repo"], row["lang"]
    exts = LANG_EXTS[lang]
    mirror = os.path.join(args.mirrors, repo.replace("/", "+"), "repo")
    work = os.path.join(args.work, repo.replace("/", "+"))
    os.makedirs(work, exist_ok=True)
    tip = git(mirror, "rev-parse", "HEAD").strip()
    commits = read_history(mirror, tip, exts)
    print(f"== {repo} ({lang}): {len(commits)} non-merge commits to {tip[:12]}", file=sys.stderr, flush=True)
    cut = row["cut"]
    if not cut or args.recut:
        cut, n = choose_cut(mirror, tip, commits, exts, args.target, args.months, args.max_age)
        print(f"   cut {cut[:12]}: {n} qualify by path rules", file=sys.stderr, flush=True)
        record_cut(args.repos, repo, cut)
    cut = git(mirror, "rev-parse", cut + "^{commit}").strip()

    tree = os.path.join(work, "tree")
    checkout(mirror, tree, cut)
    index_summary, index_secs = index(args.graphctx, tree)
    by_file = load_entities(args.graphctx, tree)
    # the file's own module entity (no parent); an inline `mod tests` does not make its file a test
    module_test = {f: any(e["kind"] == "module" and e.get("parent") is None and e.get("is_test") for e in es)
                   for f, es in by_file.items()}

    def is_test(p):
        return is_test_path(p) or module_test.get(p, False)

    ws_cache = {}

    def whitespace_only(c, gold):
        if c.sha not in ws_cache:
            out = git(mirror, "diff", "-w", "--numstat", "--no-renames", c.parents[0], c.sha, "--", *gold)
            ws_cache[c.sha] = all(l.split("\t")[:2] in (["0", "0"], ["-", "-"]) for l in out.splitlines() if l)
        return ws_cache[c.sha]

    c_info = Cut(mirror, tip, cut, commits, args.months)
    rejects = collections.Counter()
    queries, gold_rows = [], []
    sites_all = exact_all = test_sites = 0
    for c in c_info.window:
        why = reject_reason(c, exts, c_info.files, c_info.subjects, is_test, whitespace_only)
        if why:
            rejects[why] += 1
            continue
        gold = sorted(p for p in source_files(c, exts) if not is_test(p))
        ents, n_sites, n_exact, n_test = gold_functions(mirror, cut, c, gold, by_file)
        sites_all += n_sites
        exact_all += n_exact
        test_sites += n_test
        text = c.subject + ("\n\n" + c.body if c.body else "")
        qid = f"{repo}@{c.sha[:12]}"
        ents.sort(key=lambda e: (e["file"], e["start_line"], e["key"]))
        functions = [{"file": e["file"], "key": e["key"], "name": e["name"], "kind": e["kind"],
                      "start_line": e["start_line"], "end_line": e["end_line"]} for e in ents]
        q = {"id": qid, "repo": repo, "lang": lang, "commit": c.sha, "cut": cut,
             "date": time.strftime("%Y-%m-%d", time.gmtime(c.time)), "text": text,
             "words": message_words(c), "fix_like": bool(FIX_LIKE.search(c.subject + "\n" + c.body)),
             "gold_files": gold, "gold_entities": [e["key"] for e in ents], "gold_functions": functions,
             "gold_lines": n_sites, "gold_lines_mapped": round(n_exact / n_sites, 4) if n_sites else 1.0,
             "gold_unindexed": [f for f in gold if f not in by_file]}
        queries.append(q)
        with_entity = {e["file"] for e in ents}
        modules = [{"file": f, "name": "<module>", "kind": "module", "start_line": 1,
                    "end_line": max([e["end_line"] for e in by_file.get(f, [])] or [1])}
                   for f in gold if f not in with_entity]
        gold_rows.append({"instance_id": qid, "repo": repo, "lines_available": True,
                          "module_level_only": not ents, "functions": functions + modules})

    with open(os.path.join(work, "queries.jsonl"), "w") as fo:
        for q in queries:
            fo.write(json.dumps(q) + "\n")
    with open(os.path.join(work, "functions-gold.jsonl"), "w") as fo:
        for g in gold_rows:
            fo.write(json.dumps(g) + "\n")

    words = sorted(q["words"] for q in queries)
    summary = {
        "repo": repo, "lang": lang, "tip": tip, "cut": cut,
        "cut_date": time.strftime("%Y-%m-%d", time.gmtime(c_info.time)),
        "window_end": time.strftime("%Y-%m-%d", time.gmtime(min(c_info.end, int(git(mirror, "log", "-1", "--format=%ct", tip))))),
        "considered": len(c_info.window), "rejected": dict(rejects.most_common()),
        "kept": len(queries), "fix_like": sum(q["fix_like"] for q in queries),
        "median_words": words[len(words) // 2] if words else 0,
        "p90_words": words[int(len(words) * 0.9)] if words else 0,
        "gold_files_mean": round(sum(len(q["gold_files"]) for q in queries) / max(1, len(queries)), 2),
        "gold_lines_mapped": round(exact_all / sites_all, 4) if sites_all else None,
        "gold_sites_in_tests": test_sites,
        "module_level_only": sum(1 for g in gold_rows if g["module_level_only"]),
        "gold_functions_mean": round(sum(len(q["gold_functions"]) for q in queries) / max(1, len(queries)), 2),
        "queries_with_unindexed_gold": sum(1 for q in queries if q["gold_unindexed"]),
        "indexed_files": len(by_file), "index_seconds": index_secs, "index": index_summary,
    }
    with open(os.path.join(work, "mine-summary.json"), "w") as fo:
        json.dump(summary, fo, indent=1)
    short = {k: summary[k] for k in ("repo", "cut", "cut_date", "window_end", "considered", "kept", "fix_like",
                                      "median_words", "gold_lines_mapped", "module_level_only",
                                      "queries_with_unindexed_gold", "index_seconds")}
    print(json.dumps(short))
    print("   rejected: " + ", ".join(f"{k} {v}" for k, v in rejects.most_common()), flush=True)
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repos", default=os.path.join(HERE, "repos.txt"))
    ap.add_argument("--only", nargs="*", help="owner/name of the repositories to mine (default: all)")
    ap.add_argument("--work", default="/tmp/search-fit")
    ap.add_argument("--mirrors", default=MIRRORS)
    ap.add_argument("--graphctx", default=DEFAULT_BIN, help="the graphctx binary (default: this checkout's target/release/graphctx)")
    ap.add_argument("--target", type=int, default=300, help="qualifying commits wanted after the cut")
    ap.add_argument("--months", type=float, default=24, help="commits at most this long after the cut")
    ap.add_argument("--max-age", type=float, default=6, help="cuts at most this many years before the tip")
    ap.add_argument("--recut", action="store_true", help="choose the cut again even if repos.txt has one")
    args = ap.parse_args()
    os.nice(19)
    rows = read_repos(args.repos)
    if args.only:
        rows = [r for r in rows if r["repo"] in args.only]
    for row in rows:
        mine(row, args)


if __name__ == "__main__":
    main()
