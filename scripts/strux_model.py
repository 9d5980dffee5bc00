#!/usr/bin/python3
"""strux_model.py - read a strux HDF5 model and predict with it, without strux.

Follows docs/model-format.md: /weights (n_rows x dim), /extra, the resolved config text in
/config (data.bias decides the constant feature in the model's last column), the task name in the
root attribute `task`. Reads LIBSVM/XMC multi-label text (plain or gzip) the way strux does
(features beyond the model's dimension dropped, values rounded to float32) and scores with the
same arithmetic (per example, a double sum over the non-zeros in file order, then the bias), so
the predicted label text is byte-identical to `strux predict --out`.

One predict function per task, found in PREDICTORS (multilabel, rta, hierarchy: trees and
single-label DAGs, from /hierarchy; a multi-label DAG needs an LP and is refused); a model of
another task is an error that names the supported ones. A kernel model of solver.type =
m3l_kernel (/m3l/kernel) scores with its expansion f_l(x) = sum_s coef[s, l] K(sv_s, x) (K on the
features without the bias column, b0^2 added); its sums run in another order than strux's, so
its scores agree to rounding (a score within ~1e-12 of 0 could tip the other way).

As a module (needs h5py and numpy; Debian's python3-h5py, python3-numpy):
    import strux_model
    model = strux_model.load("model.h5")
    data = strux_model.read_libsvm("test.svm.gz", model.data_dim)
    lines = model.predict(data)          # one label text per example, as `strux predict` writes
    lines = model.predict(data, "paths") # hierarchy models: as `strux predict --format paths`
As a command:
    scripts/strux_model.py predict --model MODEL --data DATA [--out FILE] [--format ids|paths]
    scripts/strux_model.py info MODEL
"""

import argparse
import configparser
import gzip
import sys

import h5py
import numpy as np

FORMAT_VERSION = 1
ROWS_PER_CHUNK = 4096  # examples scored at once (memory: chunk x max non-zeros x rows)


class StruxModelError(Exception):
    """A model or data file that this reader cannot use; the message says why."""


class Dataset:
    """Sparse rows as CSR (indptr, 0-based indices, float32 values) and label lists."""

    def __init__(self, path, indptr, indices, values, labels, n_dropped):
        self.path = path
        self.indptr = indptr
        self.indices = indices
        self.values = values
        self.labels = labels
        self.n_dropped = n_dropped

    def __len__(self):
        return len(self.indptr) - 1


class Model:
    """A strux model file in memory."""

    def __init__(self, path):
        self.path = path
        try:
            f = h5py.File(path, "r")
        except OSError as e:
            raise StruxModelError(f"{path}: not an HDF5 file (or unreadable): {e}") from e
        with f:
            attrs = f.attrs
            if _text(attrs.get("format", "")) != "strux-model":
                raise StruxModelError(f"{path}: not a strux model (attribute format)")
            version = int(attrs.get("format_version", -1))
            if version != FORMAT_VERSION:
                raise StruxModelError(
                    f"{path}: format_version {version}; this reader knows {FORMAT_VERSION}")
            self.task = _text(attrs["task"])
            self.n_labels = int(attrs["n_labels"])
            if "weights" in f:
                self.weights = np.asarray(f["weights"][:], dtype=np.float64)
            else:  # output.weights = csr: /weights_csr/{indptr, indices, data}, densified
                g = f["weights_csr"]
                ptr, idx = g["indptr"][:], g["indices"][:]
                val = np.asarray(g["data"][:], dtype=np.float64)
                n_rows, dim = int(attrs["n_rows"]), int(attrs["dim"])
                if len(ptr) != n_rows + 1 or ptr[0] != 0 or ptr[-1] != len(idx) or \
                        len(val) != len(idx) or np.any(np.diff(ptr) < 0):
                    raise StruxModelError(f"{path}: /weights_csr/indptr disagrees with its data")
                if len(idx) and (idx.min() < 0 or idx.max() >= dim):
                    raise StruxModelError(f"{path}: /weights_csr/indices outside [0, {dim})")
                self.weights = np.zeros((n_rows, dim))
                rows = np.repeat(np.arange(n_rows), np.diff(ptr))
                self.weights[rows, idx] = val
            self.extra = np.asarray(f["extra"][:], dtype=np.float64) if "extra" in f else \
                np.zeros(0)
            self.config_text = _text(f["config"][()])
            self.label_names = [_text(s) for s in f["label_names"][:]] \
                if "label_names" in f else None
            self.curve = {k: f["training"][k][:] for k in f["training"]} \
                if "training" in f else {}
            # task rta: the stored spanning-tree ensemble (never drawn again)
            self.rta = {"trees": f["rta/trees"][:], "edges": f["rta/edges"][:],
                        "multiplicity": f["rta/multiplicity"][:],
                        "kbest": int(f["rta"].attrs["kbest"])} if "rta" in f else None
            # task hierarchy: the node order, parents and alpha of /hierarchy, and what the
            # root attributes say (tree/dag, the model, the label space)
            self.hier = {"node_id": f["hierarchy/node_id"][:].astype(np.int64),
                         "parent_ptr": f["hierarchy/parent_ptr"][:].astype(np.int64),
                         "parent_idx": f["hierarchy/parent_idx"][:].astype(np.int64),
                         "alpha": f["hierarchy/alpha"][:],
                         "kind": _text(attrs.get("hierarchy", "")),
                         "model": _text(attrs.get("hierarchy_model", "")),
                         "label_space": _text(attrs.get("label_space", ""))} \
                if "hierarchy" in f else None
            # solver.type = m3l_kernel: the kernel expansion of /m3l
            self.kexp = None
            if "m3l/kernel" in f:
                k = f["m3l/kernel"].attrs
                sv = f["m3l/sv"]
                ptr, idx = sv["indptr"][:], sv["indices"][:]
                val = np.asarray(sv["values"][:], dtype=np.float64)
                V = np.zeros((len(ptr) - 1, int(sv.attrs["n_features"])))
                V[np.repeat(np.arange(len(ptr) - 1), np.diff(ptr)), idx] = val
                self.kexp = {"type": _text(k["type"]), "gamma": float(k["gamma"]),
                             "degree": int(k["degree"]), "coef0": float(k["coef0"]),
                             "b0": float(k["b0"]), "sv": V, "coef": f["m3l/coef"][:]}
        self.config = configparser.ConfigParser(delimiters=("=",), interpolation=None)
        self.config.read_string(self.config_text, source=f"{path}:/config")
        self.bias = float(self.config.get("data", "bias", fallback="0"))
        if self.config.get("model", "bias", fallback="regularised") == "none":
            self.bias = 0.0  # model.bias = none: no bias column, whatever data.bias says
        # data.normalize = l2: each row's features divided by their l2 norm, as strux reads them
        self.normalize = self.config.get("data", "normalize", fallback="none") == "l2"
        self.n_rows, self.dim = self.weights.shape
        # the data's own feature columns: the bias column is the model's last when bias > 0
        self.data_dim = self.dim - (1 if self.bias > 0 else 0)

    def row(self, data, r):
        """Row r's columns and values as strux reads them (data.normalize applied)."""
        a, b = data.indptr[r], data.indptr[r + 1]
        v = data.values[a:b].astype(np.float64)
        if self.normalize and b > a:
            # dataset.c strux_dataset_normalize_rows: a sequential double sum of squares,
            # v * (1 / sqrt(ss)) rounded back to float32
            ss = np.cumsum(v * v)[-1]
            if ss > 0:
                v = (v * (1 / np.sqrt(ss))).astype(np.float32).astype(np.float64)
        return data.indices[a:b], v

    def scores(self, data):
        """s[i, k] = w_k . x_i for every example and weight row, summed as strux sums (csr.c
        strux_spdot: in file order, float32 values widened to double, then the bias)."""
        n = len(data)
        W = self.weights
        out = np.zeros((n, self.n_rows))
        nnz = np.diff(data.indptr)
        bias32 = np.float64(np.float32(self.bias))
        for lo in range(0, n, ROWS_PER_CHUNK):
            hi = min(n, lo + ROWS_PER_CHUNK)
            width = int(nnz[lo:hi].max()) if hi > lo else 0
            cols = np.zeros((hi - lo, width), dtype=np.int64)
            vals = np.zeros((hi - lo, width), dtype=np.float64)
            for r in range(lo, hi):
                c, v = self.row(data, r)
                cols[r - lo, : len(c)] = c
                vals[r - lo, : len(c)] = v
            s = np.zeros((hi - lo, self.n_rows))
            # position by position: each example's sum runs over its non-zeros in order; padded
            # positions add 0 * w = +-0, which leaves every sum unchanged
            for t in range(width):
                s += vals[:, t, None] * W[:, cols[:, t]].T
            if self.bias > 0:
                s += bias32 * W[:, self.dim - 1][None, :]
            out[lo:hi] = s
        return out

    def kernel_scores(self, data):
        """f[i, l] = sum_s coef[s, l] K(sv_s, x_i) of a kernel model (docs/model-format.md)."""
        e = self.kexp
        V = e["sv"]
        X = np.zeros((len(data), V.shape[1]))
        for r in range(len(data)):
            c, v = self.row(data, r)
            keep = c < V.shape[1]
            X[r, c[keep]] = v[keep]
        G = X @ V.T
        if e["type"] == "rbf":
            d2 = (X * X).sum(1)[:, None] + (V * V).sum(1)[None, :] - 2 * G
            G = np.exp(-e["gamma"] * np.maximum(d2, 0))
        elif e["type"] == "poly":
            G = (e["gamma"] * G + e["coef0"]) ** e["degree"]
        return (G + e["b0"] ** 2) @ e["coef"]

    def predict(self, data, fmt="ids"):
        """One label text per example, as `strux predict --out [--format fmt]` writes it."""
        fn = PREDICTORS.get(self.task)
        if fn is None:
            raise StruxModelError(
                f"{self.path}: task '{self.task}' is not supported by strux_model.py "
                f"(supported: {', '.join(sorted(PREDICTORS))})")
        if fmt == "ids":
            return fn(self, data)
        if fmt != "paths":
            raise StruxModelError(f"--format {fmt}: expected ids or paths")
        if self.task != "hierarchy":
            raise StruxModelError(f"{self.path}: --format paths needs a hierarchy model "
                                  f"(task.type = hierarchy), not task {self.task}")
        return fn(self, data, paths=True)


def predict_multilabel(model, data):
    """multilabel (docs/model-format.md): label k is on iff w_k . x > 0 (a kernel model: its
    expansion's f_k(x) > 0); ids joined by ','."""
    s = model.kernel_scores(data) if model.kexp else model.scores(data)
    return [",".join(str(k) for k in np.flatnonzero(row > 0)) for row in s]


RTA_CERT_TOL = 1e-8  # src/tasks/rta_impl.h STRUX_RTA_CERT_TOL


def _rta_top(vals, keys, k):
    """The first k of each row in the K-best list order: score descending, then the labelling
    ascending as a binary number (rta_kbest.c); vals, keys are (N, m)."""
    idx = np.lexsort((keys, -vals), axis=-1)[:, :k]
    return np.take_along_axis(vals, idx, -1), np.take_along_axis(keys, idx, -1)


def _rta_kbest(S, K, L, order, parent, up, children):
    """One tree's K-best lists for every example at once (src/tasks/rta_kbest.c: the same sums in
    the same order, and the same list order, so the same lists). S: (N, 4|E_u|) edge scores."""
    N = S.shape[0]
    B = {}
    for v in reversed(order):  # children before parents
        for s in (0, 1):
            cv = np.zeros((N, 1))
            ck = np.zeros((N, 1), dtype=np.uint64)
            for c in children[v]:
                e = up[c]
                th = [S[:, 4 * e + (2 * s + sc if v < c else 2 * sc + s)] for sc in (0, 1)]
                mv = np.concatenate([B[c, 0][0] + th[0][:, None], B[c, 1][0] + th[1][:, None]], 1)
                mk = np.concatenate([B[c, 0][1], B[c, 1][1]], 1)
                mv, mk = _rta_top(mv, mk, K)
                sv = (cv[:, :, None] + mv[:, None, :]).reshape(N, -1)
                sk = (ck[:, :, None] | mk[:, None, :]).reshape(N, -1)
                cv, ck = _rta_top(sv, sk, K)
            B[v, s] = (cv + 0.0, ck | np.uint64(s << v))
    root = order[0]
    return _rta_top(np.concatenate([B[root, 0][0] + 0.0, B[root, 1][0] + 0.0], 1),
                    np.concatenate([B[root, 0][1], B[root, 1][1]], 1), K)


def _rta_score(S, ends, mult, keys):
    """F(y) = sum over union edges in order of c_e * s_e(y_e), summed as strux_rta_score;
    keys (N, ...) labellings of example n in row n."""
    F = np.zeros(keys.shape)
    rows = np.arange(S.shape[0]).reshape((-1,) + (1,) * (keys.ndim - 1))
    one = np.uint64(1)
    for e, (i, j) in enumerate(ends):
        u = 2 * ((keys >> np.uint64(i)) & one) + ((keys >> np.uint64(j)) & one)
        F += float(mult[e]) * S[rows, 4 * e + u.astype(np.int64)]
    return F


def predict_rta(model, data):
    """rta (docs/model-format.md "rta"): the ensemble argmax of src/tasks/rta.c over the union of
    the stored trees' K-best lists, with the same early stop and certificate, and the same exact
    enumeration when uncertified and 2^L <= n*K. Labellings are held in one uint64: L <= 64."""
    t = model.rta
    L, n, K = model.n_labels, t["trees"].shape[0], t["kbest"]
    if L > 64:
        raise StruxModelError(f"{model.path}: rta with {L} labels: this reader handles at most 64")
    Kc = K if (L >= 30 or K <= (1 << L)) else (1 << L)
    ends = [tuple(int(a) for a in e) for e in t["edges"]]
    index = {e: k for k, e in enumerate(ends)}
    S = model.scores(data)
    N = S.shape[0]
    vals, keys = [], []
    for tree in t["trees"]:
        order = [int(tree[0][0])] + [int(c) for _, c in tree]
        parent = {int(c): int(p) for p, c in tree}
        up = {c: index[(min(p, c), max(p, c))] for c, p in parent.items()}
        children = {v: [] for v in order}
        for c in order[1:]:
            children[parent[c]].append(c)
        v, k = _rta_kbest(S, Kc, L, order, parent, up, children)
        vals.append(v)
        keys.append(k)
    vals, keys = np.stack(vals), np.stack(keys)  # (n, N, depth)
    F = _rta_score(S, ends, t["multiplicity"], keys.transpose(1, 0, 2))  # (N, n, depth)
    depth = vals.shape[2]
    enumerate_ok = L < 31 and (1 << L) <= n * K
    all_codes = np.arange(1 << L, dtype=np.uint64) if enumerate_ok else None
    out = []
    for x in range(N):
        best_F, best_y, certified = -np.inf, None, False
        for h in range(depth):
            if best_y is not None:
                theta = 0.0
                for tt in range(n):
                    theta += vals[tt, x, h]
                if best_F >= theta - RTA_CERT_TOL * max(1.0, abs(theta)):
                    certified = True
                    break
            for tt in range(n):
                if F[x, tt, h] > best_F:
                    best_F, best_y = F[x, tt, h], int(keys[tt, x, h])
        if not certified:
            theta = 0.0
            for tt in range(n):
                theta += vals[tt, x, depth - 1]
            complete = L < 31 and depth == (1 << L)
            certified = complete or best_F >= theta - RTA_CERT_TOL * max(1.0, abs(theta))
        if not certified and enumerate_ok:
            Fa = _rta_score(S[x:x + 1], ends, t["multiplicity"], all_codes[None, :])[0]
            best_y = int(np.argmax(Fa))  # the first maximum: the smallest code, as strict >
        out.append(",".join(str(k) for k in range(L) if (best_y >> k) & 1))
    return out


def _hier_structure(model):
    """Parents, children (ascending, as the C child CSR), leaves (ascending) and the counted
    nodes of /hierarchy; checks that it is the topological order strux stores."""
    h = model.hier
    if h is None:
        raise StruxModelError(f"{model.path}: task hierarchy without a /hierarchy group")
    ids, ptr, idx = h["node_id"], h["parent_ptr"], h["parent_idx"]
    M = len(ids)
    if M != model.n_rows or len(ptr) != M + 1 or ptr[0] != 0 or ptr[-1] != len(idx) or \
            np.any(np.diff(ptr) < 0):
        raise StruxModelError(f"{model.path}: /hierarchy disagrees with itself or with the "
                              f"{model.n_rows} weight rows")
    parents = [idx[ptr[k]:ptr[k + 1]].tolist() for k in range(M)]
    if any(p < 0 or p >= k for k in range(M) for p in parents[k]) or \
            any(not parents[k] for k in range(1, M)):
        raise StruxModelError(f"{model.path}: /hierarchy is not in topological order (every node "
                              "but the root needs a parent with a smaller index)")
    children = [[] for _ in range(M)]
    for k in range(1, M):  # k ascends, so each child list ascends
        for p in parents[k]:
            children[p].append(k)
    leaves = [k for k in range(M) if not children[k]]
    counted = np.array([k > 0 and ids[k] >= 0 for k in range(M)])
    return parents, children, leaves, counted


def _hier_ids(ids, counted, z):
    """The printed closure (tasks/hier_metrics.c format_label): ascending file ids of the counted
    members of each row of the boolean z, joined by ','."""
    out = []
    for row in z:
        members = sorted(int(ids[k]) for k in np.flatnonzero(row & counted))
        out.append(",".join(str(v) for v in members))
    return out


def _hier_paths(model, parents, children, counted, z):
    """--format paths (tasks/hier_metrics.c format_paths): each most specific counted member (no
    counted child in the set; a stop leaf prints as its node) as the names from below the root
    down to it along first parents joined by '/', in ascending node order joined by ','. A node's
    name is /label_names[its file id] when the model has one there, else the id."""
    ids = model.hier["node_id"]
    names = model.label_names or []
    out = []
    for row in z:
        on = row & counted
        texts = []
        for v in np.flatnonzero(on):
            if any(on[c] for c in children[v]):
                continue
            path, u = [], int(v)
            while u > 0 and counted[u]:
                path.append(u)
                u = parents[u][0]
            texts.append("/".join(names[ids[u]] if ids[u] < len(names) else str(ids[u])
                                  for u in reversed(path)))
        out.append(",".join(texts))
    return out


def _hier_single(r, parents, leaves, is_tree):
    """Single-label: the leaf with the largest path sum (hier_infer.c path_sums and best_leaf),
    its closure as a boolean (N, M)."""
    n, M = r.shape
    if is_tree:
        g = np.empty_like(r)
        g[:, 0] = r[:, 0]
        for k in range(1, M):
            g[:, k] = g[:, parents[k][0]] + r[:, k]
        S = g[:, leaves]
    else:
        S = np.zeros((n, len(leaves)))
        for i, leaf in enumerate(leaves):
            anc, stack = {leaf}, [leaf]
            while stack:
                for p in parents[stack.pop()]:
                    if p not in anc:
                        anc.add(p)
                        stack.append(p)
            for k in sorted(anc):
                S[:, i] += r[:, k]
    z = np.zeros((n, M), dtype=bool)
    z[np.arange(n), np.asarray(leaves)[np.argmax(S, axis=1)]] = True  # first maximum
    for k in range(M - 1, 0, -1):  # close upward: children have larger indices
        for p in parents[k]:
            z[:, p] |= z[:, k]
    return z


def _hier_tree_dp(r, children):
    """Multi-label tree (hier_infer.c strux_hier_infer_tree): g bottom-up, then the backtrack
    from the root, as a boolean (N, M)."""
    n, M = r.shape
    g = np.empty_like(r)
    for k in range(M - 1, -1, -1):
        ch = children[k]
        if not ch:
            g[:, k] = r[:, k]
            continue
        pos = np.zeros(n)
        best = np.full(n, -np.inf)
        for c in ch:  # in child order, as the C loop sums
            gc = g[:, c]
            pos = np.where(gc > 0, pos + gc, pos)
            best = np.where(gc > best, gc, best)
        g[:, k] = r[:, k] + np.where(best > 0, pos, best)
    z = np.zeros((n, M), dtype=bool)
    z[:, 0] = True
    for k in range(M):  # parents before children: z[:, k] is final when k is reached
        ch = children[k]
        if not ch:
            continue
        gch = g[:, ch]
        arg = np.argmax(gch, axis=1)  # the first maximum: the smallest child index
        top = gch[np.arange(n), arg] > 0
        on = z[:, k]
        z[:, ch] |= (on & top)[:, None] & (gch > 0)
        z[np.arange(n), np.asarray(ch)[arg]] |= on & ~top
    return z


def predict_hierarchy(model, data, paths=False):
    """hierarchy (docs/model-format.md "/hierarchy"): the rows are U_n = sqrt(alpha_n) W_n, so node
    n scores s_n = U_n . x and prediction is the exact maximiser of sum_{n in y} s_n over the
    label space, with the arithmetic of src/tasks/hier_infer.c:
      single-label: the leaf with the largest path sum S(l), ties to the smallest node index;
        trees sum top-down (S(n) = S(parent) + s_n), DAGs over the ascending ancestor set;
      multi-label tree: the section 5.3 DP (g(n) = s_n + sum of the positive g(c), else
        s_n + max g(c)), backtracked from the root: every child with g(c) > 0, else the first
        child with the largest g (A19);
      multi-label DAG: refused (its answer is an LP, and an ILP where the LP is fractional).
    Output: the predicted closure as ascending file ids (strux predict --format ids), or with
    paths its most specific nodes as root paths of names (--format paths)."""
    h = model.hier
    parents, children, leaves, counted = _hier_structure(model)
    if h["label_space"] not in ("single", "multi"):
        raise StruxModelError(f"{model.path}: label_space '{h['label_space']}' is not single or "
                              "multi")
    multi = h["label_space"] == "multi"
    is_tree = all(len(p) == 1 for p in parents[1:])
    if multi and not is_tree:
        raise StruxModelError(
            f"{model.path}: a multi-label hierarchy model on a DAG: its prediction is the LP of "
            "(6.22) with an integer fallback, which strux_model.py does not solve; use "
            "`strux predict`")
    r = model.scores(data) + 0.0  # hier_predict adds a zero augmentation: -0 becomes +0
    z = _hier_tree_dp(r, children) if multi else _hier_single(r, parents, leaves, is_tree)
    if paths:
        return _hier_paths(model, parents, children, counted, z)
    return _hier_ids(h["node_id"], counted, z)


PREDICTORS = {
    "multilabel": predict_multilabel,
    "rta": predict_rta,
    "hierarchy": predict_hierarchy,
}


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def _open_text(path):
    with open(path, "rb") as f:
        magic = f.read(8)
    if magic == b"\x89HDF\r\n\x1a\n":
        raise StruxModelError(f"{path}: an HDF5 file; this reader takes LIBSVM/XMC text "
                              "(plain or gzip)")
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="ascii")
    return open(path, "r", encoding="ascii")


def _is_header(line):
    fields = line.split()
    return 1 <= len(fields) <= 3 and all(f.isdigit() for f in fields)


def read_libsvm(path, dim):
    """Rows of a LIBSVM/XMC multi-label file (`l1,l2 idx:val ...`, optional `N D L` first line),
    keeping features 1..dim (0: all) as 0-based columns; the rest are dropped and counted."""
    indptr, indices, values, labels = [0], [], [], []
    n_dropped = 0
    with _open_text(path) as f:
        for line_no, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if line_no == 1 and _is_header(line):
                continue
            tokens = line.split()
            if line[:1] in (" ", "\t") or not line:
                labs = []
            else:
                labs = [int(t) for t in tokens[0].split(",")]
                tokens = tokens[1:]
            for tok in tokens:
                idx, sep, val = tok.partition(":")
                if not sep:
                    raise StruxModelError(f"{path}:{line_no}: malformed feature '{tok}'")
                j = int(idx)
                if dim and j > dim:
                    n_dropped += 1
                    continue
                indices.append(j - 1)
                values.append(float(val))
            indptr.append(len(indices))
            labels.append(labs)
    return Dataset(path, np.array(indptr, dtype=np.int64), np.array(indices, dtype=np.int64),
                   np.array(values, dtype=np.float64).astype(np.float32), labels, n_dropped)


def load(path):
    """Read a model file (see Model)."""
    return Model(path)


def _cmd_predict(args):
    model = load(args.model)
    data = read_libsvm(args.data, model.data_dim)
    lines = model.predict(data, args.format)
    text = "".join(line + "\n" for line in lines)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w", encoding="ascii") as f:
            f.write(text)
    if data.n_dropped:
        print(f"strux_model.py: {args.data}: {data.n_dropped} feature entries above the model's "
              f"{model.data_dim} features were ignored", file=sys.stderr)


def _cmd_info(args):
    m = load(args.model)
    print(f"model    {m.path}\ntask     {m.task}\nweights  {m.n_rows} x {m.dim} "
          f"(+{m.extra.size} extra)\nlabels   {m.n_labels}\nbias     {m.bias}")
    if "epoch" in m.curve:
        print(f"epochs   {len(m.curve['epoch'])}, final objective {m.curve['primal'][-1]:.6g}")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="strux_model.py", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("predict", help="one predicted label per line, as `strux predict`")
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--out", default="-", help="output file (default: stdout)")
    p.add_argument("--format", default="ids", choices=("ids", "paths"),
                   help="hierarchy models: the closure's ids (default) or root paths of names")
    p.set_defaults(run=_cmd_predict)
    p = sub.add_parser("info", help="task, shape, bias and training summary")
    p.add_argument("model")
    p.set_defaults(run=_cmd_info)
    args = ap.parse_args(argv)
    try:
        args.run(args)
    except (StruxModelError, OSError, KeyError, ValueError) as e:
        print(f"strux_model.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
