#!/usr/bin/python3
"""tests/common/liblinear_ref.py - LIBLINEAR reference for 1-vs-all multilabel training.

Margin rescaling with Hamming loss on independent labels is exactly one binary hinge SVM per label
(slack_bicriteria.md §2.4(a)): J(w) = (lam/2)||w||^2 + (1/n) sum_i sum_k max(0, 1 - s_ik w_k.x_i),
s_ik = +1 if label k is in y_i else -1. LIBLINEAR -s 3 (L2-regularised L1-loss dual CD) minimises
0.5||w_k||^2 + C sum_i hinge per label, the same problem with C = 1/(lam n); -B 1 appends the
constant feature strux appends with data.bias = 1 (both regularise it).

usage: liblinear_ref.py TRAIN LAMBDA [TEST [PREDICTIONS]]
LIBLINEAR_EPS sets its -e (default 1e-8: as close to the optimum as it gets; 0.1 is its default).
prints JSON {"objective": J, "loss": ..., "train_s": ..., "train_cpu_s": ..., "hamming_loss": ...,
"margin": ...} (train_s: the wall time of the liblinear-train runs, summed over labels;
train_cpu_s: their user + system CPU seconds); PREDICTIONS gets one
line per test example with the predicted label ids joined by "," (the format of `strux predict`)
and PREDICTIONS.scores the test scores w_k.x (one line per example, one column per label);
"margin" is the smallest |w_k.x| over the test scores (how close the nearest prediction is to a tie).
"""
import gzip, json, os, resource, subprocess, sys, tempfile, time
import numpy as np


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    rows = []
    with opener(path, "rt") as f:
        for line in f:
            line = line.rstrip("\n")
            toks = line.split()
            labels = set()
            if line and not line[0].isspace() and ":" not in toks[0]:
                labels = {int(t) for t in toks[0].split(",")}
                toks = toks[1:]
            feats = [(int(t.split(":")[0]), float(t.split(":")[1])) for t in toks]
            rows.append((labels, feats))
    return rows


def dense(rows, dim):
    X = np.zeros((len(rows), dim + 1))
    for i, (_, feats) in enumerate(rows):
        for j, v in feats:
            if j <= dim:
                X[i, j - 1] = np.float32(v)
        X[i, dim] = 1.0
    return X


def main():
    train, lam = sys.argv[1], float(sys.argv[2])
    test = sys.argv[3] if len(sys.argv) > 3 else None
    predictions = sys.argv[4] if len(sys.argv) > 4 else None
    rows = read(train)
    n = len(rows)
    dim = max(j for _, f in rows for j, _ in f)
    L = max(max(l) for l, _ in rows if l) + 1
    C = 1.0 / (lam * n)
    W = np.zeros((L, dim + 1))
    eps = os.environ.get("LIBLINEAR_EPS", "1e-8")
    train_s = train_cpu_s = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(L):
            data = os.path.join(tmp, "d")
            with open(data, "w") as f:
                for labels, feats in rows:
                    f.write(("+1" if k in labels else "-1") + "".join(f" {j}:{v!r}" for j, v in feats) + "\n")
            model = os.path.join(tmp, "m")
            t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(["liblinear-train", "-q", "-s", "3", "-c", repr(C), "-B", "1", "-e", eps,
                            data, model], check=True)
            train_s += time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            train_cpu_s += r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
            with open(model) as f:
                lines = f.read().split("\n")
            first = lines[0]
            labels_line = next(l for l in lines if l.startswith("label"))
            sign = 1.0 if labels_line.split()[1] == "1" else -1.0
            w = np.array([float(x) for x in lines[lines.index("w") + 1:] if x.strip()])
            W[k, : len(w)] = sign * w
    X = dense(rows, dim)
    S = np.array([[1.0 if k in l else -1.0 for k in range(L)] for l, _ in rows])
    hinge = np.maximum(0, 1 - S * (X @ W.T)).sum() / n
    out = {"objective": 0.5 * lam * (W ** 2).sum() + hinge, "loss": hinge, "train_s": train_s,
           "train_cpu_s": train_cpu_s}
    if test:
        trows = read(test)
        T = dense(trows, dim)
        scores = T @ W.T
        P = scores > 0
        Y = np.array([[k in l for k in range(L)] for l, _ in trows])
        out["hamming_loss"] = float((P != Y).mean())
        out["margin"] = float(np.abs(scores).min())
        if predictions:
            with open(predictions, "w") as f:
                for row in P:
                    f.write(",".join(str(k) for k in np.flatnonzero(row)) + "\n")
            np.savetxt(predictions + ".scores", scores)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
