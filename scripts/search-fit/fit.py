#!/usr/bin/env python3
"""Fit the weights that combine a file's search signals into its score.

Why: weights set by hand against a few dozen issues of two repositories did
not transfer to repositories they never saw. A repository's history is a
supply of (commit message -> files the commit changed) pairs; fitted on many
repositories and validated by leaving one repository out at a time, the
weights report what transfers.

Input: for each repository directory DIR under --root (default
/tmp/search-fit), `DIR/queries.jsonl` (mine.py: id, text, words,
gold_files) and `DIR/features.jsonl` (dump.py: `graphctx search --batch
--features --scoring hand`: per query every listed file's features, role and
hand score); and the same for doc sentences, `DIR/doc-queries.jsonl`
(docs.py: the first sentence of a documented entity -> that entity) and
`DIR/doc-features.jsonl`, which enter the entity order (not the file
weights) at DOC_SHARE of the repository's commit messages.

Model (crates/search/src/weights.rs): score = role_factor(role) * sum(w_i *
x_i), w >= 0. Fitted by pairwise logistic loss (RankNet, linear) on pairs
(gold file, other listed file) of each query: every gold file against the
15 best others by the hand score and 5 more at random; each query weighted
by min(1, words / 30) (short messages say less than a report), each
repository equally; then the role factors by a grid on recall@5, and the
two steps repeated. The entity order within a file: the same loss on
(gold function, other entity of its file) pairs, then the decay of each
further entity of a file by a grid on function Acc@10 (with the doc
sentences' own entity in the first 10, by their share). Pure Python, no
third-party package.

usage: fit.py [--root DIR] [--write crates/search/src/weights.rs] [--ablate]
Prints, per held-out repository, recall@5 / acc@5 / top-1 of the hand
rules and of the fitted weights on the same dumps, the function-level
Acc@5 / Acc@10 / Recall@10 and how often a doc sentence's own entity is
among the first 10, then the weights fitted on every repository
(written into weights.rs with --write). --ablate instead refits without
each feature in turn, two halves of the repositories held out, and prints
what each feature adds to held-out recall@5.
"""
import argparse, heapq, json, math, os, random, sys

FEATURES = [
    "entity_words", "entity_graph", "entity_rest", "path_words", "file_text", "cochange",
    "location", "coverage", "text_rank", "entity_rank", "named", "history_text",
]
ROLES = ("test", "docs_or_example")
ENTITY_FEATURES = ["words", "graph", "named", "located", "function", "type", "module", "fan_in", "is_test", "body",
                   "body_in_file", "body_coverage", "lines", "own_coverage"]
DECAYS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
# A role's factor stays below code's 1: what exercises, shows or documents
# code ranks below it unless the query is about it (the search's prior
# lifts a role the query speaks of). Commit messages hardly tell the
# factor of documentation and examples (recall@5 moves by 0.001 across
# 0.6-1.0), so the bound, not the data, keeps them below.
GRID = [0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
PER_REPO_CAP = 300
K = 5
# The doc-sentence queries (docs.py) of a repository weigh this share of
# its commit messages in the entity order's loss and decay grid: enough
# that the entity whose documentation says what the query says comes
# first in its file, not so much that the commit messages' order of long,
# changed functions is lost. The file weights are fitted on the commit
# messages alone: where a change lands is what they are for.
DOC_SHARE = 0.6


class Query:
    __slots__ = ("id", "repo", "weight", "words", "files", "x", "roles", "hand", "gold",
                 "ents", "ent_file", "ent_x", "gold_ents", "doc")

    def __init__(self, qid, repo, weight, rows, gold, entities, gold_entities, words=0, doc=False):
        self.id, self.repo, self.weight, self.words, self.doc = qid, repo, weight, words, doc
        self.files = [r["file"] for r in rows]
        self.x = [[r["features"].get(f, 0.0) for f in FEATURES] for r in rows]
        self.roles = [r["role"] for r in rows]
        self.hand = [r["score"] for r in rows]
        self.gold = set(gold)
        # The entities of the best files (dump.py keeps ten files' worth).
        self.ents = [e["key"] for e in entities]
        self.ent_file = [e["file"] for e in entities]
        self.ent_x = [[e["features"].get(f, 0.0) for f in ENTITY_FEATURES] for e in entities]
        self.gold_ents = set(gold_entities)


def load(root):
    """Every repository's queries that have a gold file, commit messages
    first, then doc sentences: {repo: [Query]}."""
    repos = {}
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        commits = load_queries(d, name, "queries.jsonl", "features.jsonl")
        if commits is None:
            continue
        rng = random.Random(name)
        rng.shuffle(commits)
        commits = commits[:PER_REPO_CAP]
        docs = load_queries(d, name, "doc-queries.jsonl", "doc-features.jsonl") or []
        for q in docs:
            q.doc = True
            q.weight = DOC_SHARE * sum(c.weight for c in commits) / len(docs)
        if commits:
            repos[name] = commits + docs
    return repos


def load_queries(d, name, qname, fname):
    """The queries of one file of a repository directory with their dumped
    features (None when either file is missing)."""
    qpath, fpath = os.path.join(d, qname), os.path.join(d, fname)
    if not (os.path.isfile(qpath) and os.path.isfile(fpath)):
        return None
    gold = {}
    for line in open(qpath):
        q = json.loads(line)
        gold[q["id"]] = q
    qs = []
    for line in open(fpath):
        a = json.loads(line)
        q = gold.get(a["id"])
        if q is None or not q["gold_files"] or not a.get("files"):
            continue
        w = min(1.0, q.get("words", 30) / 30.0)
        gold_functions = [g["key"] for g in q.get("gold_functions", []) if g.get("kind") != "module"]
        qs.append(Query(a["id"], name, w, a["files"], q["gold_files"], a.get("entities", []),
                        gold_functions, q.get("words", 0)))
    return qs


def commits_of(qs):
    return [q for q in qs if not q.doc]


def docs_of(qs):
    return [q for q in qs if q.doc]


def role_factor(model, role):
    return 1.0 if role == "code" else model["roles"].get(role, 1.0)


def linear(w, q):
    return [sum(a * b for a, b in zip(w, x)) for x in q.x]


def scores(model, q, lin=None):
    lin = linear(model["w"], q) if lin is None else lin
    return [role_factor(model, r) * s for s, r in zip(lin, q.roles)]


def metrics(q, s):
    """recall@K, acc@K, top-1 of one query's files ranked by s (ties: hand order)."""
    order = heapq.nsmallest(K, range(len(s)), key=lambda i: (-s[i], -q.hand[i], q.files[i]))
    top = [q.files[i] for i in order]
    # Gold files never listed still count as missed: the pool is the ceiling.
    hit = sum(1 for g in q.gold if g in top)
    return hit / len(q.gold), 1.0 if hit == len(q.gold) else 0.0, 1.0 if top and top[0] in q.gold else 0.0


def evaluate(model, queries):
    """Mean recall@K, acc@K, top-1 (model None: the hand score)."""
    tot = [0.0, 0.0, 0.0]
    queries = commits_of(queries)
    for q in queries:
        m = metrics(q, q.hand if model is None else scores(model, q))
        for i in range(3):
            tot[i] += m[i]
    n = max(1, len(queries))
    return [t / n for t in tot]


def pairs_of(q, rng):
    """(gold index, other index) pairs: each gold file against the 15 best
    others by the hand score and 5 more at random."""
    golds = [i for i, f in enumerate(q.files) if f in q.gold]
    others = [i for i, f in enumerate(q.files) if f not in q.gold]
    if not golds or not others:
        return []
    others.sort(key=lambda i: -q.hand[i])
    chosen = others[:15]
    rest = others[15:]
    chosen += rng.sample(rest, min(5, len(rest)))
    return [(g, o) for g in golds for o in chosen]


def fit_weights(repos, model, active, epochs=12, lr=0.05, l2=1e-3, seed=7):
    """Adam on the pairwise logistic loss, role factors held; weights of
    features not in `active` stay 0."""
    rng = random.Random(seed)
    data = []
    for qs in repos.values():
        share = 1.0 / len(commits_of(qs))  # each repository counts alike
        for q in commits_of(qs):
            ps = pairs_of(q, rng)
            if not ps:
                continue
            rho = [role_factor(model, r) for r in q.roles]
            pw = share * q.weight / len(ps)
            for g, o in ps:
                d = [rho[g] * a - rho[o] * b for a, b in zip(q.x[g], q.x[o])]
                data.append((d, pw))
    return adam(data, list(model["w"]), len(repos), rng, epochs, lr, l2, active, nonneg=True)


def adam(data, w, n_repos, rng, epochs, lr, l2, active, nonneg):
    """Adam on the pairwise logistic loss of `data` ((feature difference,
    pair weight) rows) from weights `w`, in batches of 256; weights not in
    `active` stay put, and with `nonneg` none goes below 0."""
    n = len(w)
    m, v = [0.0] * n, [0.0] * n
    b1, b2, eps, t = 0.9, 0.999, 1e-8, 0
    for _ in range(epochs):
        rng.shuffle(data)
        for start in range(0, len(data), 256):
            grad = [0.0] * n
            for d, pw in data[start:start + 256]:
                z = sum(a * b for a, b in zip(w, d))
                # d/dz log(1 + e^-z) = -1 / (1 + e^z)
                g = -pw / (1.0 + math.exp(min(50.0, z)))
                for i in range(n):
                    grad[i] += g * d[i]
            t += 1
            for i in range(n):
                if i not in active:
                    continue
                gi = grad[i] * n_repos + l2 * w[i]
                m[i] = b1 * m[i] + (1 - b1) * gi
                v[i] = b2 * v[i] + (1 - b2) * gi * gi
                mh, vh = m[i] / (1 - b1 ** t), v[i] / (1 - b2 ** t)
                w[i] = w[i] - lr * mh / (math.sqrt(vh) + eps)
                if nonneg:
                    w[i] = max(0.0, w[i])
    return w


def fit(repos, active=None):
    """Weights and role factors fitted on `repos`."""
    active = set(range(len(FEATURES))) if active is None else active
    model = {"w": [0.5 if i in active else 0.0 for i in range(len(FEATURES))],
             "roles": {r: 0.5 for r in ROLES}}
    for _ in range(2):
        model["w"] = fit_weights(repos, model, active)
        lins = {name: [linear(model["w"], q) for q in qs] for name, qs in repos.items()}
        for role in ROLES:
            best = None
            for rho in GRID:
                trial = dict(model, roles=dict(model["roles"], **{role: rho}))
                r = per_repo_mean(trial, repos, lins)
                if best is None or r > best[0] + 1e-9:
                    best = (r, rho)
            model["roles"][role] = best[1]
    # Scale so the best feature weight is 1: the order is unchanged.
    top = max(model["w"]) or 1.0
    model["w"] = [x / top for x in model["w"]]
    return model


def per_repo_mean(model, repos, lins):
    """recall@K of the commit messages averaged over repositories (each
    counts alike), the linear parts of the scores given."""
    total = 0.0
    for name, qs in repos.items():
        commits = [(q, lin) for q, lin in zip(qs, lins[name]) if not q.doc]
        total += sum(metrics(q, scores(model, q, lin))[0] for q, lin in commits) / len(commits)
    return total / len(repos)


def loro(repos, active=None, quiet=False, folds=0, models=None):
    """Held-out metrics per repository, hand and fitted: each repository's
    by weights fitted without it (leave one repository out), or, with
    `folds`, without its group of repositories (for the faster ablation)."""
    names = sorted(repos)
    groups = [[n] for n in names] if not folds else [names[i::folds] for i in range(folds)]
    rows = []
    for group in groups:
        train = {k: v for k, v in repos.items() if k not in group}
        model = fit(train, active)
        for name in group:
            if models is not None:
                models[name] = model
            hand, fitted = evaluate(None, repos[name]), evaluate(model, repos[name])
            rows.append((name, len(repos[name]), hand, fitted))
            if not quiet:
                print(f"{name:28} n={len(repos[name]):4}  hand {fmt(hand)}   fitted {fmt(fitted)}", flush=True)
    mean_h = [sum(r[2][i] for r in rows) / len(rows) for i in range(3)]
    mean_f = [sum(r[3][i] for r in rows) / len(rows) for i in range(3)]
    return mean_h, mean_f


def fmt(m):
    return " / ".join(f"{x:.3f}" for x in m)


def write_block(path, model, emodel, repos, held_out, functions, docs):
    src = open(path).read()
    begin, end = src.index("// BEGIN fitted"), src.index("// END fitted")
    w = ", ".join(f"{x:.4f}" for x in model["w"])
    names = ", ".join(sorted(repos))
    block = (
        "// BEGIN fitted\n"
        "impl Weights {\n"
        "    /// Fitted by `scripts/search-fit/fit.py` on commit messages of\n"
        f"    /// {len(repos)} repositories ({sum(len(commits_of(q)) for q in repos.values())} queries) and\n"
        f"    /// {sum(len(docs_of(q)) for q in repos.values())} doc sentences (in the entity order, a {DOC_SHARE} share);\n"
        "    /// held out one repository at a time, recall@5 / acc@5 / top-1:\n"
        f"    /// hand rules {fmt(held_out[0])}, fitted {fmt(held_out[1])};\n"
        "    /// functions changed (Acc@5 / Acc@10 / Recall@10 of the entities):\n"
        f"    /// word and graph order {fmt(functions[0])}, fitted {fmt(functions[1])};\n"
        "    /// a doc sentence's own entity in the first 10: word and graph order\n"
        f"    /// {docs[0]:.3f}, fitted {docs[1]:.3f}.\n"
        f"    /// Repositories: {names}.\n"
        "    pub const FITTED: Weights = Weights {\n"
        f"        file: [{w}],\n"
        f"        test: {model['roles']['test']:.2f},\n"
        f"        docs_or_example: {model['roles']['docs_or_example']:.2f},\n"
        f"        entity: [{', '.join(f'{x:.4f}' for x in emodel['w'])}],\n"
        f"        same_file_decay: {emodel['decay']:.2f},\n"
        "    };\n"
        "}\n"
    )
    open(path, "w").write(src[:begin] + block + src[end:])


# --- Entities: which of a file's entities come first -----------------------


def entity_list(model, emodel, q, limit=10):
    """The first `limit` entity keys of the list: files by their score, a
    file's entities by the entity score, each further one of a file decayed."""
    fs = scores(model, q)
    fscore = dict(zip(q.files, fs))
    top = max(fs) if fs else 1.0
    top = top if top > 0 else 1.0
    own = [sum(a * b for a, b in zip(emodel["w"], x)) for x in q.ent_x]
    order = sorted(range(len(q.ents)), key=lambda i: (-own[i], q.ents[i]))
    seen, listed = {}, []
    for i in order:
        n = seen.get(q.ent_file[i], 0)
        seen[q.ent_file[i]] = n + 1
        listed.append((fscore.get(q.ent_file[i], 0.0) / top * emodel["decay"] ** n, q.ents[i]))
    listed.sort(key=lambda t: (-t[0], t[1]))
    return [k for _, k in listed[:limit]]


def function_metrics(model, emodel, queries):
    """Acc@5, Acc@10 (every gold function listed) and Recall@10 over the
    queries that have gold functions."""
    tot, n = [0.0, 0.0, 0.0], 0
    for q in commits_of(queries):
        if not q.gold_ents:
            continue
        n += 1
        top = entity_list(model, emodel, q)
        hit5 = sum(1 for g in q.gold_ents if g in top[:5])
        hit10 = sum(1 for g in q.gold_ents if g in top)
        tot[0] += hit5 == len(q.gold_ents)
        tot[1] += hit10 == len(q.gold_ents)
        tot[2] += hit10 / len(q.gold_ents)
    return [t / max(1, n) for t in tot]


def doc_found(model, emodel, queries):
    """The share of doc-sentence queries whose own entity is among the
    first 10 entities listed (the measure of benches/search.rs)."""
    docs = docs_of(queries)
    return sum(1 for q in docs if q.gold_ents & set(entity_list(model, emodel, q))) / max(1, len(docs))


def decay_objective(model, emodel, qs):
    """Function Acc@10 on the commit messages, and the doc sentences' own
    entity in the first 10 by their share."""
    acc10 = function_metrics(model, emodel, qs)[1]
    if not docs_of(qs):
        return acc10
    return (acc10 + DOC_SHARE * doc_found(model, emodel, qs)) / (1 + DOC_SHARE)


def fit_entities(repos, model, epochs=12, lr=0.05, l2=1e-3, seed=11):
    """Entity weights by pairwise logistic loss on (gold function, other
    entity of the same file) pairs; then the decay by a grid on Acc@10."""
    rng = random.Random(seed)
    data = []
    for qs in repos.values():
        share = 1.0 / len(commits_of(qs))
        for q in qs:
            ps = []
            for g, key in enumerate(q.ents):
                if key not in q.gold_ents:
                    continue
                others = [o for o, f in enumerate(q.ent_file) if f == q.ent_file[g] and q.ents[o] not in q.gold_ents]
                # The strongest others (the candidates come first, by
                # score) and as many more at random from the rest of
                # the file.
                others = others[:15] + rng.sample(others[15:], min(15, max(0, len(others) - 15)))
                ps += [(g, o) for o in others]
            for g, o in ps:
                d = [a - b for a, b in zip(q.ent_x[g], q.ent_x[o])]
                data.append((d, share * q.weight / len(ps)))
    n = len(ENTITY_FEATURES)
    w = adam(data, [0.0] * n, len(repos), rng, epochs, lr, l2, set(range(n)), nonneg=False)
    emodel = {"w": w, "decay": 0.7}
    best = None
    for decay in DECAYS:
        trial = dict(emodel, decay=decay)
        r = sum(decay_objective(model, trial, qs) for qs in repos.values()) / len(repos)
        if best is None or r > best[0] + 1e-9:
            best = (r, decay)
    emodel["decay"] = best[1]
    return emodel


HAND_ENTITIES = {"w": [1.0, 1.0] + [0] * (len(ENTITY_FEATURES) - 2), "decay": 0.7}


def loro_entities(repos, model_of):
    """Held-out function metrics per repository: the hand order (word and
    graph score) and the fitted one, each under the fitted file model."""
    rows = []
    for name in sorted(repos):
        train = {k: v for k, v in repos.items() if k != name}
        model = model_of(name)
        emodel = fit_entities(train, model)
        qs = repos[name]
        hand, fitted = function_metrics(model, HAND_ENTITIES, qs), function_metrics(model, emodel, qs)
        docs = (doc_found(model, HAND_ENTITIES, qs), doc_found(model, emodel, qs)) if docs_of(qs) else None
        rows.append((hand, fitted, docs))
        shown = f"   doc sentences {docs[0]:.3f} -> {docs[1]:.3f}" if docs else ""
        print(f"{name:28} functions hand {fmt(hand)}   fitted {fmt(fitted)}{shown}", flush=True)
    mean_h = [sum(r[0][i] for r in rows) / len(rows) for i in range(3)]
    mean_f = [sum(r[1][i] for r in rows) / len(rows) for i in range(3)]
    with_docs = [r[2] for r in rows if r[2]]
    docs = [sum(d[i] for d in with_docs) / max(1, len(with_docs)) for i in range(2)]
    if with_docs:
        print(f"{'mean over repositories':28} doc sentences, own entity in the first 10: hand "
              f"{docs[0]:.3f}, fitted {docs[1]:.3f}")
    return mean_h, mean_f, docs


def main():
    global DOC_SHARE
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/tmp/search-fit")
    ap.add_argument("--write", help="weights.rs to write the fitted block into")
    ap.add_argument("--ablate", action="store_true", help="held-out change of leaving each feature out")
    ap.add_argument("--doc-share", type=float, default=DOC_SHARE,
                    help="the doc sentences' weight as a share of the commit messages'")
    a = ap.parse_args()
    DOC_SHARE = a.doc_share
    repos = load(a.root)
    if len(repos) < 3:
        sys.exit(f"need dumps of at least 3 repositories under {a.root}, found {len(repos)}")
    print(f"{len(repos)} repositories, {sum(len(commits_of(q)) for q in repos.values())} commit messages, "
          f"{sum(len(docs_of(q)) for q in repos.values())} doc sentences")
    if a.ablate:
        # Two halves of the repositories, each held out in turn: what each
        # feature adds where it was not fitted.
        _, every = loro(repos, quiet=True, folds=2)
        print(f"halves held out, every feature: recall@5 {every[0]:.3f}")
        for i, name in enumerate(FEATURES):
            active = set(range(len(FEATURES))) - {i}
            _, without = loro(repos, active, quiet=True, folds=2)
            print(f"without {name:14} recall@5 {without[0]:.3f} (its part {every[0] - without[0]:+.3f})", flush=True)
        return
    models = {}
    mean_h, mean_f = loro(repos, models=models)
    print(f"{'mean over repositories':28}         hand {fmt(mean_h)}   fitted {fmt(mean_f)}")
    print("functions (Acc@5 / Acc@10 / Recall@10), files by the held-out fitted weights:")
    fmean_h, fmean_f, docs = loro_entities(repos, models.get)
    print(f"{'mean over repositories':28} functions hand {fmt(fmean_h)}   fitted {fmt(fmean_f)}")
    model = fit(repos)
    emodel = fit_entities(repos, model)
    print("weights:", {f: round(x, 4) for f, x in zip(FEATURES, model["w"])}, model["roles"])
    print("entity weights:", {f: round(x, 4) for f, x in zip(ENTITY_FEATURES, emodel["w"])}, "decay", emodel["decay"])
    if a.write:
        write_block(a.write, model, emodel, repos, (mean_h, mean_f), (fmean_h, fmean_f), docs)
        print("written to", a.write)


if __name__ == "__main__":
    main()
