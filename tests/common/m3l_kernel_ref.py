#!/usr/bin/python3
"""tests/common/m3l_kernel_ref.py - independent references for solver.type = m3l_kernel
(specs/m3l.md §1.4, §1.8, §1.9, §2; issue 16 "Acceptance").

With R = I, M3L is one bias-free binary hinge SVM per label (§1.4): for label l
    min_w (1/2)||w||^2 + C sum_i max(0, 1 - y_il w.phi(x_i)),   C = 1/(lam n),
with the kernel K'(x, x') = K(x, x') + b0^2 on the features without the bias column (A7), and
strux's J is lam times the sum over labels. Its dual, max sum b - (1/2) b^T Y K' Y b over
0 <= b <= C, is solved here per label by SMO with single-variable steps (a bias-free SVM has no
equality constraint): the variable of largest |projected gradient| takes its exact clipped
Newton step, to a projected gradient of 1e-6; then a primal active-set method from the free set
found solves the problem exactly (the free variables by a linear solve, a step to the first bound
when one leaves the box, the most violating bound variable freed, until none violates the KKT
conditions by 1e-13). Nothing is shared with strux but the file formats.

usage:
  m3l_kernel_ref.py smo TRAIN TEST LAMBDA KERNEL GAMMA DEGREE COEF0 B0 PRED
        the per-label SVMs (KERNEL linear|rbf|poly; GAMMA 0: 1/features); prints JSON
        {"objective": J, "loss": ...} and writes PRED (label ids of TEST, strux predict's format)
        and PRED.scores (the scores f_l(x), one line per test row)
  m3l_kernel_ref.py check MODEL TRAIN LAMBDA
        recompute from a strux kernel model's /m3l/alpha, /m3l/sv and /m3l/R, independently of its
        /m3l/coef, the gradients of every (row, label) of TRAIN: prints JSON {"primal", "dual",
        "gap", "max_pg"} (max_pg: the largest |projected gradient| in LIBLINEAR's units) and
        "coef_err" (the largest |coef - sum_k R_kl y_sk alpha_sk| relative to max |coef|)
  m3l_kernel_ref.py predict MODEL TEST PRED
        scores of a strux kernel model from its file alone (f_l(x) = sum_s coef[s,l] K(sv_s, x)):
        writes PRED and PRED.scores as smo does
"""
import json, os, sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import liblinear_ref  # noqa: E402  (its LIBSVM reader and the float32 rounding strux applies)


def load(path, dim=None, L=None):
    rows = liblinear_ref.read(path)
    d = max(j for _, f in rows for j, _ in f) if dim is None else dim
    n_labels = max(max(l) for l, _ in rows if l) + 1 if L is None else L
    X = liblinear_ref.dense(rows, d)[:, :d]  # float32-rounded values, no bias column
    Y = np.array([[1.0 if k in l else -1.0 for k in range(n_labels)] for l, _ in rows])
    return X, Y


def kernel(A, B, kind, gamma, degree, coef0, b0):
    G = A @ B.T
    if kind == "rbf":
        na, nb = (A * A).sum(1), (B * B).sum(1)
        G = np.exp(-gamma * np.maximum(na[:, None] + nb[None, :] - 2 * G, 0))
    elif kind == "poly":
        G = (gamma * G + coef0) ** degree
    return G + b0 * b0


def svm(K, y, C):
    """max sum b - (1/2) b^T Q b, Q = diag(y) K diag(y), 0 <= b <= C: SMO, then exact."""
    n = len(y)
    Q = K * np.outer(y, y)
    b = np.zeros(n)
    g = np.ones(n)  # gradient 1 - Q b of the maximisation
    diag = np.diag(Q).copy()
    for _ in range(20 * n):  # SMO, single-variable steps (no equality constraint)
        pg = np.where(b <= 0, np.maximum(g, 0), np.where(b >= C, np.minimum(g, 0), g))
        i = int(np.argmax(np.abs(pg)))
        if abs(pg[i]) < 1e-6:
            break
        new = min(max(b[i] + g[i] / diag[i], 0.0), C)
        g -= Q[:, i] * (new - b[i])
        b[i] = new
    # then a primal active-set method from the SMO's free set: the free variables solved
    # exactly, a step to the first bound when one leaves the box, the most violating bound
    # variable freed, until no bound variable violates the KKT conditions
    F = (b > 0) & (b < C)
    for _ in range(20 * n):
        x = b.copy()
        if F.any():
            x[F] = np.linalg.solve(Q[np.ix_(F, F)], 1 - Q[np.ix_(F, ~F)] @ b[~F])
        out = F & ((x < 0) | (x > C))
        if out.any():
            bound = np.where(x < 0, 0.0, C)
            t = np.where(out, (bound - b) / np.where(out, x - b, 1), np.inf)
            j = int(np.argmin(t))
            b = b + t[j] * (x - b)
            b[j] = bound[j]
            b = np.clip(b, 0, C)
            F[j] = False
            continue
        b = x
        g = 1 - Q @ b
        viol = ~F & (((b <= 0) & (g > 1e-13)) | ((b >= C) & (g < -1e-13)))
        if not viol.any():
            break
        F[int(np.argmax(np.where(viol, np.abs(g), -1)))] = True
    return b


def write_pred(path, scores):
    with open(path, "w") as f:
        for row in scores > 0:
            f.write(",".join(str(k) for k in np.flatnonzero(row)) + "\n")
    np.savetxt(path + ".scores", scores, fmt="%.17g")


def cmd_smo(train, test, lam, kind, gamma, degree, coef0, b0, pred):
    X, Y = load(train)
    dim, L = X.shape[1], Y.shape[1]
    T, _ = load(test, dim, L)
    gamma = gamma if gamma > 0 else 1.0 / dim
    n = X.shape[0]
    C = 1.0 / (lam * n)
    K = kernel(X, X, kind, gamma, degree, coef0, b0)
    Kt = kernel(T, X, kind, gamma, degree, coef0, b0)
    J = hinge = 0.0
    S = np.zeros((T.shape[0], L))
    for l in range(L):
        b = svm(K, Y[:, l], C)
        c = b * Y[:, l]
        f = K @ c
        h = np.maximum(0, 1 - Y[:, l] * f).sum()
        J += 0.5 * c @ f + C * h
        hinge += h / n
        S[:, l] = Kt @ c
    write_pred(pred, S)
    print(json.dumps({"objective": lam * J, "loss": hinge}))


def read_model(path):
    with h5py.File(path, "r") as f:
        g = f["m3l"]
        k = {a: (v.decode() if isinstance(v, bytes) else v) for a, v in g["kernel"].attrs.items()}
        sv = g["sv"]
        ptr, idx, val = sv["indptr"][:], sv["indices"][:], sv["values"][:]
        D = int(sv.attrs["n_features"])
        V = np.zeros((len(ptr) - 1, D))
        for r in range(len(ptr) - 1):
            V[r, idx[ptr[r]:ptr[r + 1]]] = val[ptr[r]:ptr[r + 1]]
        return k, V, sv["row"][:], g["alpha"][:], g["coef"][:], g["R"][:]


def kfun(k):
    return lambda A, B: kernel(A, B, k["type"], k["gamma"], k["degree"], k["coef0"], k["b0"])


def cmd_check(model, train, lam):
    k, V, rows, alpha, coef, R = read_model(model)
    X, Y = load(train, V.shape[1], R.shape[0])
    n, L = Y.shape
    C = 1.0 / (lam * n)
    A = np.zeros((n, L))  # alpha of every (row, label), LIBLINEAR units
    A[rows] = alpha
    U = Y * A  # y_il alpha_il
    coef_ref = U[rows] @ R
    F = kfun(k)(X, X) @ (U @ R)  # f_l(x_i) = sum_k R_kl sum_j y_jk alpha_jk K(x_j, x_i)
    G = 1 - Y * F  # LIBLINEAR's gradient units
    PG = np.where(A <= 0, np.maximum(G, 0), np.where(A >= C, np.minimum(G, 0), G))
    reg = 0.5 * (A * (1 - G)).sum()  # (1/2) alpha^T Q alpha with Q in these units
    primal = lam * (reg + C * np.maximum(G, 0).sum())
    dual = lam * (A.sum() - reg)
    print(json.dumps({"primal": primal, "dual": dual, "gap": primal - dual,
                      "max_pg": float(np.abs(PG).max()),
                      "coef_err": float(np.abs(coef - coef_ref).max() / max(np.abs(coef).max(), 1e-300))}))


def cmd_predict(model, test, pred):
    k, V, _, _, coef, R = read_model(model)
    T, _ = load(test, V.shape[1], R.shape[0])
    write_pred(pred, kfun(k)(T, V) @ coef)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "smo":
        cmd_smo(a[1], a[2], float(a[3]), a[4], float(a[5]), int(a[6]), float(a[7]), float(a[8]),
                a[9])
    elif a[0] == "check":
        cmd_check(a[1], a[2], float(a[3]))
    elif a[0] == "predict":
        cmd_predict(a[1], a[2], a[3])
    else:
        sys.exit("usage: see the docstring")
