#!/usr/bin/env python3
"""scripts/hier_metrics.py - the hierarchy task's multi-label metrics, computed apart from strux
(issue 14 "Metrics"), and the best constant prediction of the README's funcat table.

  hier_metrics.py HIER DATA PREDICTIONS
      Metrics of `strux predict --format ids` output (one closure per line, ascending ids, the
      root left out) against DATA's label lists (closures, LIBSVM multi-label text, .gz read):
      jaccard (per-example Jaccard of the most specific nodes: the closure's nodes with no child
      in it), example_f1, subset_accuracy (closures equal), micro_f1 and macro_f1 (most specific
      nodes; macro over the nodes met in a truth or a prediction), hier_f1 (micro-F1 over
      closures), tree_loss (mean |closure xor closure|), n. HIER is the `parent child` file.
  hier_metrics.py --constant HIER TRAIN VALID TEST
      The best constant prediction: the k most frequent nodes of TRAIN's closures (ties: smaller
      id; closed upward), k chosen on VALID by jaccard, scored on TEST.

Prints one JSON object. Uses the standard library only."""
import gzip
import json
import sys


def read_labels(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [set(int(v) for v in line.split(" ", 1)[0].split(",") if v.strip())
                for line in f if line.strip()]


def read_hierarchy(path):
    kids, parents = {}, {}
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            p, c = map(int, line.split()[:2])
            kids.setdefault(p, set()).add(c)
            parents.setdefault(c, set()).add(p)
    return kids, parents


def metrics(kids, truths, preds):
    def specific(s):
        return {n for n in s if not (kids.get(n, set()) & s)}
    n = len(truths)
    jac = ef1 = subset = dist = 0.0
    tp = fp = fn = 0
    per = {}
    for t, p in zip(truths, preds):
        mt, mp = specific(t), specific(p)
        inter, union = len(mt & mp), len(mt | mp)
        jac += inter / union if union else 1.0
        ef1 += 2 * inter / (len(mt) + len(mp)) if mt or mp else 1.0
        subset += t == p
        dist += len(t ^ p)
        tp, fp, fn = tp + len(t & p), fp + len(p - t), fn + len(t - p)
        for v in mt | mp:
            a = per.setdefault(v, [0, 0, 0])
            a[0] += v in mt and v in mp
            a[1] += v in mp and v not in mt
            a[2] += v in mt and v not in mp
    f1 = lambda a, b, c: 2 * a / (2 * a + b + c) if a + b + c else 1.0
    stp, sfp, sfn = (sum(a[k] for a in per.values()) for k in range(3))
    return {"jaccard": jac / n, "example_f1": ef1 / n, "subset_accuracy": subset / n,
            "micro_f1": f1(stp, sfp, sfn),
            "macro_f1": sum(f1(*a) for a in per.values()) / len(per) if per else 0.0,
            "hier_f1": f1(tp, fp, fn), "tree_loss": dist / n, "n": n}


def closed(nodes, parents):
    out, stack = set(), list(nodes)
    while stack:
        v = stack.pop()
        if v not in out:
            out.add(v)
            stack.extend(p for p in parents.get(v, ()) if p in parents)  # the root stays out
    return out


def constant(hier, train, valid, test):
    kids, parents = read_hierarchy(hier)
    count = {}
    for s in read_labels(train):
        for v in s:
            count[v] = count.get(v, 0) + 1
    ranked = sorted(count, key=lambda v: (-count[v], v))
    val, tst = read_labels(valid), read_labels(test)
    best = None
    for k in range(1, len(ranked) + 1):
        pred = closed(ranked[:k], parents)
        j = metrics(kids, val, [pred] * len(val))["jaccard"]
        if best is None or j > best[0]:
            best = (j, k, pred)
    out = metrics(kids, tst, [best[2]] * len(tst))
    out.update({"k": best[1], "valid_jaccard": best[0]})
    return out


def main(argv):
    if len(argv) == 6 and argv[1] == "--constant":
        out = constant(*argv[2:])
    elif len(argv) == 4:
        kids, _ = read_hierarchy(argv[1])
        truths = read_labels(argv[2])
        with open(argv[3]) as f:
            preds = [set(int(v) for v in line.strip().split(",") if v) for line in f]
        if len(preds) != len(truths):
            sys.exit(f"hier_metrics.py: {argv[3]} has {len(preds)} predictions, {argv[2]} "
                     f"{len(truths)} rows")
        out = metrics(kids, truths, preds)
    else:
        sys.exit(__doc__)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)
