#!/usr/bin/python3
"""tests/common/m3l_ref.py - independent references for M3L (solver.type = m3l, specs/m3l.md).

M3L with a prior R = P^T P is one binary hinge SVM over the N*L pairs (i, l) with features
p_l (x) x_i (issue 16 "Acceptance"): with W the D x L matrix of that SVM and Z = W P,
<W, x_i p_l^T> = z_l . x_i and ||W||^2 = tr(Z R^+ Z^T) (the W-form of the regulariser), so
    J(Z) = (lam/2) tr(Z R^-1 Z^T) + (1/n) sum_i sum_l max(0, 1 - y_il z_l . x_i)
is lam times LIBLINEAR's -s 3 objective with C = 1/(lam n) and -B -1 (the constant feature strux
appends with data.bias = 1 is written into the pair features, so it is regularised and coupled
through R like any other).

usage:
  m3l_ref.py scale TRAIN N OUT              the first N rows, every feature divided by its largest
                                           |value| there (well-conditioned small problems)
  m3l_ref.py prior TRAIN N OUT_R [SHRINK]   the paper's empirical R = (1/n) sum y y^T over +-1
                                           labels of the first N rows, shrunk towards I
  m3l_ref.py liblinear TRAIN N LAMBDA R     J of LIBLINEAR on the pair problem (JSON)
  m3l_ref.py model TRAIN N LAMBDA R MODEL   J of a strux model, the regulariser with an explicit
                                           R^-1 (numpy.linalg.inv; R must be PD) (JSON)
LIBLINEAR_EPS sets liblinear's -e (default 1e-6).
"""
import json, os, subprocess, sys, tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import liblinear_ref  # noqa: E402  (its LIBSVM reader and the float32 rounding strux applies)


def load(path, n):
    rows = liblinear_ref.read(path)[:n]
    dim = max(j for _, f in rows for j, _ in f)
    L = max(max(l) for l, _ in rows if l) + 1
    X = liblinear_ref.dense(rows, dim)  # float32-rounded values, bias column of 1 last
    Y = np.array([[1.0 if k in l else -1.0 for k in range(L)] for l, _ in rows])
    return X, Y


def objective(X, Y, Z, reg, lam):
    hinge = np.maximum(0, 1 - Y * (X @ Z)).sum() / X.shape[0]
    return 0.5 * lam * reg + hinge, hinge


def cmd_scale(path, n, out):
    rows = liblinear_ref.read(path)[:n]
    top = {}
    for _, feats in rows:
        for j, v in feats:
            top[j] = max(top.get(j, 0.0), abs(v))
    with open(out, "w") as f:
        for labels, feats in rows:
            f.write(",".join(str(l) for l in sorted(labels)) + "".join(
                " %d:%.6g" % (j, v / top[j]) for j, v in feats if v != 0) + "\n")


def cmd_prior(path, n, out, shrink=0.0):
    _, Y = load(path, n)
    R = Y.T @ Y / Y.shape[0]
    R = (1 - shrink) * R + shrink * np.eye(R.shape[0])
    np.savetxt(out, R, fmt="%.17g", header="empirical moment prior of the first %d rows" % n)


def cmd_liblinear(path, n, lam, rfile):
    X, Y = load(path, n)
    R = np.loadtxt(rfile, ndmin=2)
    w, V = np.linalg.eigh(R)
    P = np.diag(np.sqrt(np.maximum(w, 0))) @ V.T  # R = P^T P
    N, D = X.shape
    L = R.shape[0]
    C = 1.0 / (lam * N)
    eps = os.environ.get("LIBLINEAR_EPS", "1e-6")
    with tempfile.TemporaryDirectory() as tmp:
        data, model = os.path.join(tmp, "pairs"), os.path.join(tmp, "model")
        with open(data, "w") as f:
            for i in range(N):
                for l in range(L):
                    feat = np.kron(X[i], P[:, l])  # index d*L + m: x_id * P_ml
                    nz = np.flatnonzero(feat)
                    f.write(("+1" if Y[i, l] > 0 else "-1") +
                            "".join(" %d:%r" % (j + 1, float(feat[j])) for j in nz) + "\n")
        subprocess.run(["liblinear-train", "-q", "-s", "3", "-c", repr(C), "-B", "-1", "-e", eps,
                        data, model], check=True)
        lines = open(model).read().split("\n")
    sign = 1.0 if next(x for x in lines if x.startswith("label")).split()[1] == "1" else -1.0
    w = np.array([float(x) for x in lines[lines.index("w") + 1:] if x.strip()])
    Wf = np.zeros(D * L)
    Wf[: len(w)] = sign * w
    W = Wf.reshape(D, L)
    J, hinge = objective(X, Y, W @ P, (W ** 2).sum(), lam)
    print(json.dumps({"objective": J, "loss": hinge}))


def cmd_model(path, n, lam, rfile, model):
    X, Y = load(path, n)
    R = np.loadtxt(rfile, ndmin=2)
    with h5py.File(model, "r") as f:
        Z = np.asarray(f["weights"][:], dtype=np.float64).T  # D x L
    J, hinge = objective(X, Y, Z, np.trace(Z @ np.linalg.inv(R) @ Z.T), lam)
    print(json.dumps({"objective": J, "loss": hinge}))


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "scale":
        cmd_scale(a[1], int(a[2]), a[3])
    elif a[0] == "prior":
        cmd_prior(a[1], int(a[2]), a[3], float(a[4]) if len(a) > 4 else 0.0)
    elif a[0] == "liblinear":
        cmd_liblinear(a[1], int(a[2]), float(a[3]), a[4])
    elif a[0] == "model":
        cmd_model(a[1], int(a[2]), float(a[3]), a[4], a[5])
    else:
        sys.exit("usage: see the docstring")
