# tests/common/rates_p3_ref.py - an independent solve of Problem 3 (dataset_constraints.md §1.3,
# §2.1) at the anchor w' = 0 for the p%-rule problem of tests/e2e/rates*.sh: every example on both
# hinges, γ̌ = γ, C_0 = 0, so
#     min (λ/2)||w||² + (1/n) Σ [neg·h+(z) + pos·h−(z)]
#     s.t. (1/n_A) Σ_A h+(z) + (1.25/n_B) Σ_B h−(z) <= 1.25,
# h± = max(0, ½ ± z), z = w·x with the bias column (value 1) a weight (reg) or an unregularised
# bias (free), solved by SLSQP over (w, t+, t−) with hinge slacks (λ: margin ½, 2·solver.lambda).
# Usage: rates_p3_ref.py DATA reg|free SOLVER_LAMBDA            prints the optimum
#        rates_p3_ref.py DATA reg|free SOLVER_LAMBDA MODEL OPT  checks a strux model (stored
#        weights w̃ = 2w) against the optimum OPT: objective within 2e-6, constraint to 1e-6.
import sys
import h5py
import numpy as np
from scipy.optimize import minimize


def load(path, dim):
    X, y = [], []
    for line in open(path):
        t = line.split()
        x = np.zeros(dim)
        for tok in t[1:]:
            k, v = tok.split(":")
            x[int(k) - 1] = float(v)
        X.append(x)
        y.append(t[0] == "+1")
    return np.array(X), np.array(y)


X, pos = load(sys.argv[1], 8)
free = sys.argv[2] == "free"
lam = 2 * float(sys.argv[3])
n = len(pos)
A = X[:, 0] > 0
B = ~A
Xb = np.hstack([X, np.ones((n, 1))])  # data.bias = 1: the last column
d = Xb.shape[1]
reg = np.ones(d)
reg[-1] = 0.0 if free else 1.0  # a free bias is the last weight, unregularised
c0p, c0n = np.where(~pos, 1.0 / n, 0.0), np.where(pos, 1.0 / n, 0.0)
c1p, c1n = np.where(A, 1.0 / A.sum(), 0.0), np.where(B, 1.25 / B.sum(), 0.0)


def value(w):
    z = Xb @ w
    hp, hn = np.maximum(0, 0.5 + z), np.maximum(0, 0.5 - z)
    return 0.5 * lam * np.sum(reg * w * w) + c0p @ hp + c0n @ hn, c1p @ hp + c1n @ hn - 1.25


if len(sys.argv) == 4:
    f = lambda u: 0.5 * lam * np.sum(reg * u[:d] ** 2) + c0p @ u[d:d + n] + c0n @ u[d + n:]

    def grad(u):
        g = np.zeros_like(u)
        g[:d], g[d:d + n], g[d + n:] = lam * reg * u[:d], c0p, c0n
        return g

    Z, I = np.zeros((n, n)), np.eye(n)
    Ain = np.vstack([np.hstack([-Xb, I, Z]), np.hstack([Xb, Z, I]),
                     np.hstack([np.zeros((1, d)), -c1p[None], -c1n[None]])])
    b = np.concatenate([-0.5 * np.ones(2 * n), [1.25]])
    r = minimize(f, np.concatenate([np.zeros(d), 0.5 * np.ones(2 * n)]), jac=grad,
                 constraints=[{"type": "ineq", "fun": lambda u: Ain @ u + b, "jac": lambda u: Ain}],
                 bounds=[(None, None)] * d + [(0, None)] * (2 * n), method="SLSQP",
                 options={"ftol": 1e-14, "maxiter": 2000})
    obj, con = value(r.x[:d])
    if not r.success or con > 1e-9:
        sys.exit(f"SLSQP: {r.message}, constraint {con:.3g}")
    print(f"{obj:.15g}")
else:
    w = h5py.File(sys.argv[4], "r")["weights"][:].astype(float).ravel() / 2
    opt = float(sys.argv[5])
    obj, con = value(w)
    print(f"objective {obj:.12f} (SLSQP {opt:.12f}, {obj - opt:+.2e}), constraint {con:+.2e}")
    sys.exit(0 if abs(obj - opt) <= 2e-6 and con <= 1e-6 else 1)
