#!/usr/bin/python3
"""tests/common/liblinear_binary_ref.py - LIBLINEAR reference for the binary task's linear SVM.

strux's binary task with margin rescaling minimises J(w) = (lam/2)||w||^2 + (1/n) sum_i
max(0, 1 - y_i w.x_i); LIBLINEAR -s 3 (L2-regularised L1-loss dual CD) minimises
0.5||w||^2 + C sum_i hinge, the same problem with C = 1/(lam n); -B 1 appends the constant
feature strux appends with data.bias = 1 (both regularise it). LIBLINEAR reads the binary file
(+1/-1 labels) as it is.

usage: liblinear_binary_ref.py TRAIN LAMBDA TEST PREDICTIONS
prints JSON {"objective": J, "error_rate": test error, "margin": smallest |w.x| on test};
PREDICTIONS gets one line per test example, +1 or -1 (score >= 0: +1, the binary task's rule),
PREDICTIONS.scores the test scores w.x.
"""
import gzip, json, os, subprocess, sys, tempfile
import numpy as np


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    ys, rows = [], []
    with opener(path, "rt") as f:
        for line in f:
            toks = line.split()
            ys.append(1.0 if toks[0] in ("+1", "1") else -1.0)
            rows.append([(int(t.split(":")[0]), float(t.split(":")[1])) for t in toks[1:]])
    return np.array(ys), rows


def dense(rows, dim):
    X = np.zeros((len(rows), dim + 1))
    for i, feats in enumerate(rows):
        for j, v in feats:
            if j <= dim:
                X[i, j - 1] = np.float32(v)
        X[i, dim] = 1.0
    return X


def main():
    train, lam, test, predictions = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
    y, rows = read(train)
    n = len(rows)
    dim = max(j for f in rows for j, _ in f)
    C = 1.0 / (lam * n)
    with tempfile.TemporaryDirectory() as tmp:
        data, model = os.path.join(tmp, "d"), os.path.join(tmp, "m")
        with open(data, "w") as f:
            for yi, feats in zip(y, rows):
                f.write(("+1" if yi > 0 else "-1") + "".join(f" {j}:{v!r}" for j, v in feats) + "\n")
        subprocess.run(["liblinear-train", "-q", "-s", "3", "-c", repr(C), "-B", "1", "-e", "1e-9",
                        data, model], check=True)
        lines = open(model).read().split("\n")
        sign = 1.0 if next(l for l in lines if l.startswith("label")).split()[1] == "1" else -1.0
        w = sign * np.array([float(x) for x in lines[lines.index("w") + 1:] if x.strip()])
    W = np.zeros(dim + 1)
    W[: len(w) - 1] = w[:-1]
    W[dim] = w[-1]
    X = dense(rows, dim)
    obj = 0.5 * lam * (W ** 2).sum() + np.maximum(0, 1 - y * (X @ W)).sum() / n
    ty, trows = read(test)
    s = dense(trows, dim) @ W
    P = np.where(s >= 0, 1.0, -1.0)
    with open(predictions, "w") as f:
        for p in P:
            f.write("+1\n" if p > 0 else "-1\n")
    np.savetxt(predictions + ".scores", s)
    print(json.dumps({"objective": obj, "error_rate": float((P != ty).mean()),
                      "margin": float(np.abs(s).min())}))


if __name__ == "__main__":
    main()
