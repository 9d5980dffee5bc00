# tests/e2e/gen_shape.sh - `strux gen --shape` (the hierarchical generators, hierarchical.md §7.2,
# issues 14 and 19):
#   - balanced and unbalanced rows and labels equal an independent Python implementation of §7.2
#     (B: argmax of planted path scores; U: recursive hyperplane cuts) drawing from a replica of
#     strux's counter-based RNG; B rows are not normalised, U rows have unit norm;
#   - the stated shapes: nodes, leaves, edges and the hierarchy files (B 15/8, U 21/11 at the
#     defaults; random M nodes and M − 1 + P edges from smaller to larger ids; swiki at scale 0.01
#     503 nodes, 365 leaves, 4,569 documents, 3,463 features, about 48 non-zeros and 1.8 leaf
#     labels a document, a DAG with a few percent of nodes with several parents); labels are
#     closures without the root (swiki: leaves only, no header) and every label is a node;
#   - rows keyed by (seed, row): every shape's rows 0-199 equal rows 0-79 and 80-199 generated
#     apart (--row-offset), at -np 1 and under mpirun -np 2; the HDF5 container (streamed) holds
#     exactly the text output's rows; another seed gives other rows;
#   - the container trains the hierarchy task at -np 2 (each rank reads its rows) well above the
#     majority class;
#   - bad options end with exit 2, one message and no output; a full disk (the ENOSPC shim) ends
#     with exit 4, "disk full writing", and no output or temporary left.
. tests/common/tap.sh
export WORK

expect_ok "help gen shows --shape" -- "$STRUX" help gen
grep -q -- "--shape balanced|unbalanced|random|swiki" "$WORK/out"
ok $? "help gen names the four shapes"

# ---- B and U against an independent implementation of §7.2
expect_ok "gen balanced (text, 300 rows, 60 features)" -- \
    "$STRUX" gen "$WORK/b.svm" --shape balanced --rows 300 --features 60 --seed 4
expect_ok "gen unbalanced (text, 400 rows, 40 features, 6 cuts)" -- \
    "$STRUX" gen "$WORK/u.svm" --shape unbalanced --rows 400 --features 40 --cuts 6 --seed 9
$PY - "$WORK" <<'PY' 2>&1 | diag
import math, sys
import numpy as np
w = sys.argv[1]
M64, G = (1 << 64) - 1, 0x9E3779B97F4A7C15
def mix(z):  # SplitMix64's finaliser, as src/core/rng.c
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)
def normals(seed, stream, index, n):  # strux_rng_normal: Box-Muller, one of the pair
    k = mix((seed + G) & M64)
    k = mix(k ^ ((stream + 2 * G) & M64))
    k = mix(k ^ ((index + 3 * G) & M64))
    out, ctr = [], 0
    for _ in range(n):
        u = []
        for _ in range(2):
            ctr += 1
            u.append((mix((k + ctr * G) & M64) >> 11) * 2.0 ** -53)
        out.append(math.sqrt(-2 * math.log(1 - u[0])) * math.cos(2 * math.pi * u[1]))
    return np.array(out)
MODEL, ROW = 2, 3
def read(path):
    lines = open(path).read().splitlines()
    n, d, m = map(int, lines[0].split())
    rows = []
    for ln in lines[1:]:
        lab, *feat = ln.split(" ")
        x = np.array([float(t.split(":")[1]) for t in feat])
        assert [int(t.split(":")[0]) for t in feat] == list(range(1, d + 1))
        rows.append((sorted(map(int, lab.split(","))), x))
    assert len(rows) == n
    return rows, d, m
# B (§7.2): complete binary tree of 4 levels (heap ids), W_n ~ N(0, I) for all 15 nodes,
# x ~ N(0, I) not normalised, label = argmax over leaves of the path score
rows, d, m = read(f"{w}/b.svm")
assert m == 15 and d == 60
W = np.array([normals(4, MODEL, n, d) for n in range(15)])
for i, (lab, x) in enumerate(rows):
    xf = normals(4, ROW, i, d).astype(np.float32)
    assert np.array_equal(x.astype(np.float32), xf), f"B row {i}: features differ"
    s = W @ xf.astype(float)
    def path(l):
        out = []
        while l > 0:
            out.append(l)
            l = (l - 1) // 2
        return out
    best = max(range(7, 15), key=lambda l: s[path(l)].sum() + s[0])
    assert lab == sorted(path(best)), f"B row {i}: {lab} vs {sorted(path(best))}"
norms = [np.linalg.norm(x) for _, x in rows]
assert 6 < np.mean(norms) < 9.5, np.mean(norms)  # sqrt(60) = 7.7: not normalised
# U (§7.2): x ~ N(0, I) scaled to unit norm; cut k (normal ~ N(0, I), through the origin) sends
# its negative side to leaf 2k - 1 and its positive side on; the last positive side is leaf 2C
rows, d, m = read(f"{w}/u.svm")
C = 6
assert m == 2 * C + 1 and d == 40
H = np.array([normals(9, MODEL, k, d) for k in range(C)])
counts = {}
for i, (lab, x) in enumerate(rows):
    z = normals(9, ROW, i, d).astype(np.float32).astype(float)
    xf = (z / math.sqrt(float(np.dot(z, z)))).astype(np.float32)
    assert np.array_equal(x.astype(np.float32), xf), f"U row {i}: features differ"
    assert abs(np.linalg.norm(xf.astype(float)) - 1) < 1e-6
    k = 1
    while k <= C and float(np.dot(H[k - 1], xf.astype(float))) >= 0:
        k += 1
    leaf = 2 * k - 1 if k <= C else 2 * C
    want = [2 * j for j in range(1, k)] + [leaf] if k <= C else [2 * j for j in range(1, C + 1)]
    if k > C:
        want = [2 * j for j in range(1, C)] + [2 * C]
    assert lab == sorted(want), f"U row {i}: {lab} vs {sorted(want)}"
    counts[leaf] = counts.get(leaf, 0) + 1
assert 150 < counts.get(1, 0) < 250, counts  # the first cut halves the rows
print("B and U equal the reference;", "U leaf populations", dict(sorted(counts.items())))
PY
ok ${PIPESTATUS[0]} "balanced and unbalanced rows and labels equal an independent implementation of §7.2"
printf '0 1\n0 2\n1 3\n1 4\n2 5\n2 6\n3 7\n3 8\n4 9\n4 10\n5 11\n5 12\n6 13\n6 14\n' |
    cmp -s - "$WORK/b.hier"
ok $? "balanced: the hierarchy file (default OUTPUT.hier) is the 15-node heap-numbered tree"
expect_ok "gen unbalanced with its defaults (1000 features, 10 cuts)" -- \
    "$STRUX" gen "$WORK/ud.h5" --shape unbalanced --rows 30 --hier "$WORK/ud_tree.hier"
grep -qE "ud_tree.hier: generated: tree, 21 nodes \(11 leaves\), 20 edges, depth 11" "$WORK/err" &&
    grep -qE "ud.h5: 30 rows from row 0, 1000 features, 21 nodes, 11 leaves, 30000 non-zeros" \
        "$WORK/err" && [ ! -e "$WORK/ud.hier" ]
ok $? "unbalanced defaults: 21 nodes, 11 leaves, d = 1000, the hierarchy at --hier"

# ---- random and swiki shapes
expect_ok "gen random DAG (600 nodes, 40 extra parents, 2 labels per row)" -- \
    "$STRUX" gen "$WORK/r.svm" --shape random --rows 1500 --features 2000 --nodes 600 \
    --extra-parents 40 --labels-per-row 2 --nnz 30 --seed 5
expect_ok "gen swiki at scale 0.01 (LSHTC text)" -- "$STRUX" gen "$WORK/s.txt" --shape swiki --scale 0.01
grep -qE "s.hier: generated: DAG, 503 nodes \(365 leaves\)" "$WORK/err"
ok $? "swiki 0.01: a DAG of 503 nodes and 365 leaves"
$PY - "$WORK" <<'PY' 2>&1 | diag
import sys, collections
import numpy as np
w = sys.argv[1]
def hier(path):
    e = [tuple(map(int, l.split())) for l in open(path)]
    par = collections.defaultdict(set)
    for p, c in e:
        assert p < c, (p, c)
        par[c].add(p)
    assert len(set(e)) == len(e)
    return e, par
def closure(par, leaves):
    out, todo = set(), list(leaves)
    while todo:
        n = todo.pop()
        if n not in out:
            out.add(n)
            todo += par.get(n, ())
    return out - {0}
# random: 600 nodes, 599 tree edges + 40 extra, labels are closures of leaves
e, par = hier(f"{w}/r.hier")
nodes = {0} | set(par)
assert len(e) == 599 + 40 and nodes == set(range(600)), (len(e), len(nodes))
assert sum(len(p) > 1 for p in par.values()) > 20
kids = {p for p, _ in e}
leaves = nodes - kids
lines = open(f"{w}/r.svm").read().splitlines()
assert lines[0] == "1500 2000 600", lines[0]
nl = []
for ln in lines[1:]:
    lab, *feat = ln.split(" ")
    lab = set(map(int, lab.split(",")))
    spec = {l for l in lab if l in leaves}
    assert spec and lab == closure(par, spec), ln[:80]
    nl.append(len(spec))
    x = np.array([float(t.split(":")[1]) for t in feat])
    assert len(x) == 30 and abs(np.linalg.norm(x) - 1) < 1e-5 and (x > 0).all()
assert 1.6 < np.mean(nl) < 2.6, np.mean(nl)  # heavy-tailed: most rows 1, a few many
# swiki 0.01: LSHTC lines (leaves, no header), 4,569 documents, 3,463 features
e, par = hier(f"{w}/s.hier")
nodes = {0} | set(par)
kids = {p for p, _ in e}
leaves = nodes - kids
assert len(nodes) == 503 and len(leaves) == 365, (len(nodes), len(leaves))
multi = sum(len(p) > 1 for p in par.values()) / 502
assert 0.02 < multi < 0.10, multi
lines = open(f"{w}/s.txt").read().splitlines()
assert len(lines) == 4569
nl, nnz, cols = [], [], collections.Counter()
for ln in lines:
    lab, *feat = ln.split(" ")
    lab = list(map(int, lab.split(",")))
    assert lab == sorted(set(lab)) and set(lab) <= leaves, ln[:60]
    nl.append(len(lab))
    j = [int(t.split(":")[0]) for t in feat]
    assert j == sorted(set(j)) and 1 <= j[0] and j[-1] <= 3463
    nnz.append(len(j))
    cols.update(j)
print(f"random: {np.mean(nl):.2f} leaves a row; swiki: {np.mean(nl):.3f} labels, "
      f"{np.mean(nnz):.1f} non-zeros a document, {100 * multi:.1f}% nodes with several parents")
assert 1.7 < np.mean(nl) < 1.9 and 44 < np.mean(nnz) < 52
# document frequencies: a power law over the popularity ranks (Zipf): slope about -1 up top
df = np.sort(np.array(list(cols.values())))[::-1]
r = np.arange(1, len(df) + 1)
slope = np.polyfit(np.log(r[5:300]), np.log(df[5:300]), 1)[0]
assert -1.6 < slope < -0.6, slope
PY
ok ${PIPESTATUS[0]} "random and swiki: the stated shapes and counts, closures, leaf labels, Zipf document frequencies"

# ---- rows keyed by (seed, row)
for spec in "balanced --features 30" "unbalanced --features 30" \
    "random --features 500 --nodes 80 --extra-parents 5 --nnz 12" "swiki --scale 0.01"; do
    shape=${spec%% *}
    args=($spec)
    "$STRUX" gen "$WORK/k_all.svm" --shape "${args[@]}" --rows 200 --seed 3 --quiet &&
        "$STRUX" gen "$WORK/k_a.svm" --shape "${args[@]}" --rows 80 --seed 3 --quiet &&
        $MPIRUN -np 2 "$STRUX" gen "$WORK/k_b.svm" --shape "${args[@]}" --rows 120 --row-offset 80 \
            --seed 3 --quiet &&
        cat <(grep -v '^[0-9]* [0-9]* [0-9]*$' "$WORK/k_a.svm") \
            <(grep -v '^[0-9]* [0-9]* [0-9]*$' "$WORK/k_b.svm") |
        cmp -s - <(grep -v '^[0-9]* [0-9]* [0-9]*$' "$WORK/k_all.svm") &&
        cmp -s "$WORK/k_all.hier" "$WORK/k_b.hier"
    ok $? "$shape: rows 0-79 and 80-199 (the second under mpirun -np 2) equal rows 0-199, same hierarchy"
done
"$STRUX" gen "$WORK/k_s4.svm" --shape swiki --scale 0.01 --rows 200 --seed 4 --quiet &&
    ! cmp -s <(tail -n +2 "$WORK/k_s4.svm") <(tail -n +2 "$WORK/k_all.svm")
ok $? "another seed gives other rows"

# ---- the HDF5 container holds the text output's rows; it trains at -np 2
expect_ok "gen random as the HDF5 container" -- "$STRUX" gen "$WORK/r.h5" --shape random \
    --rows 1500 --features 2000 --nodes 600 --extra-parents 40 --labels-per-row 2 --nnz 30 --seed 5
h5dump -H "$WORK/r.h5" >/dev/null 2>&1
ok $? "h5dump reads the streamed container"
$PY - "$WORK" <<'PY' 2>&1 | diag
import sys, h5py, numpy as np
w = sys.argv[1]
f = h5py.File(f"{w}/r.h5", "r")
assert f.attrs["format"] == b"strux-csr"
assert (f.attrs["n_rows"], f.attrs["dim"], f.attrs["n_labels"]) == (1500, 2000, 600)
ptr, idx, val = f["X/indptr"][:], f["X/indices"][:], f["X/data"][:]
yp, yi = f["Y/indptr"][:], f["Y/indices"][:]
lines = open(f"{w}/r.svm").read().splitlines()[1:]
for i, ln in enumerate(lines):
    lab, *feat = ln.split(" ")
    assert list(yi[yp[i]:yp[i + 1]]) == list(map(int, lab.split(","))), i
    assert list(idx[ptr[i]:ptr[i + 1]] + 1) == [int(t.split(":")[0]) for t in feat], i
    assert np.array_equal(val[ptr[i]:ptr[i + 1]],
                          np.array([float(t.split(":")[1]) for t in feat], dtype=np.float32)), i
PY
ok ${PIPESTATUS[0]} "the streamed HDF5 container holds exactly the text output's rows"
"$STRUX" gen "$WORK/tr.h5" --shape random --rows 1500 --features 300 --nodes 40 --nnz 20 \
    --seed 2 --quiet && "$STRUX" gen "$WORK/te.h5" --shape random --rows 500 --row-offset 1500 \
    --features 300 --nodes 40 --nnz 20 --seed 2 --hier "$WORK/tr.hier" --quiet
ok $? "gen a random tree's training and test rows"
printf '[surrogate]\ntype = margin\n' >"$WORK/h.ini"
$MPIRUN -np 2 "$STRUX" train "$WORK/h.ini" --quiet --set data.train="$WORK/tr.h5" \
    --set data.test="$WORK/te.h5" --set task.type=hierarchy --set task.hierarchy="$WORK/tr.hier" \
    --set solver.type=sgd --set solver.epochs=8 --set solver.lambda=1e-4 \
    --set output.model="$WORK/m.h5" --set output.eval_every=0 >"$WORK/t.json" 2>"$WORK/t.err"
ok $? "nhsvm trains on the generated container at -np 2"
$PY - "$WORK" <<'PY' 2>&1 | diag
import sys, json, h5py, numpy as np, collections
w = sys.argv[1]
acc = json.load(open(f"{w}/t.json"))["accuracy"]
f = h5py.File(f"{w}/te.h5", "r")
yp, yi = f["Y/indptr"][:], f["Y/indices"][:]
deepest = collections.Counter(tuple(yi[yp[i]:yp[i + 1]]) for i in range(len(yp) - 1))
major = max(deepest.values()) / (len(yp) - 1)
print(f"test accuracy {acc:.3f}, majority label {major:.3f}")
assert acc > major + 0.15
PY
ok ${PIPESTATUS[0]} "test accuracy at least 15 points above the majority label"

# ---- bad options: exit 2, one message, nothing written
U="usage: strux gen OUTPUT --shape"
bad() { # bad PATTERN DESCRIPTION ARGS...
    local pattern=$1 desc=$2
    shift 2
    expect_fail 2 "$pattern" "$desc" -- "$STRUX" gen "$WORK/bad.h5" "$@"
}
bad "gen: --shape circle is not a shape: balanced, unbalanced, random or swiki" "an unknown shape" \
    --shape circle --rows 5
bad "gen: --cuts does not apply to --shape balanced" "an option of another shape" \
    --shape balanced --rows 5 --cuts 3
bad "gen: --shape unbalanced needs --rows" "unbalanced without --rows" --shape unbalanced
bad "gen: --shape random needs --rows, --features and --nodes" "random without --nodes" \
    --shape random --rows 5 --features 10
bad "gen: --nodes needs an integer in \[3, " "a random tree of 2 nodes" --shape random --rows 5 \
    --features 10 --nodes 2
bad "gen: --scale needs a number in \[0.01, 1\], got '2'" "swiki at scale 2" --shape swiki --scale 2
bad "gen: nnz = 6; it must be in \[1, features / 2 = 5\]" "more non-zeros than half the features" \
    --shape random --rows 5 --features 10 --nodes 5 --nnz 6
bad "gen: --labels-per-row needs a number in \[1, 32\], got '0.5'" "fewer than one label a row" \
    --shape swiki --labels-per-row 0.5
bad "gen: labels per row = 4; the random tree has [0-9]+ leaves, so at most" \
    "more labels a row than half the leaves" --shape random --rows 5 --features 100 --nodes 6 \
    --labels-per-row 4
bad "gen: extra parents = 100; with 6 nodes it must be in \[0, 10\]" "too many extra parents" \
    --shape random --rows 5 --features 100 --nodes 6 --extra-parents 100
bad "gen: --depth needs an integer in \[2, 20\]" "a balanced tree of 25 levels" \
    --shape balanced --rows 5 --depth 25
bad "gen: --hier .*bad.h5 is OUTPUT itself" "the hierarchy on OUTPUT" --shape balanced --rows 5 \
    --hier "$WORK/bad.h5"
bad "gen: --rows is given twice" "an option twice" --shape balanced --rows 5 --rows 6
bad "$U" "usage errors print the usage line" --shape balanced
expect_fail 2 "gen: --shape balanced needs --rows" "a bad option under mpirun -np 2 ends every rank" \
    -- $MPIRUN -np 2 "$STRUX" gen "$WORK/bad.h5" --shape balanced
[ "$(grep -c "needs --rows" "$WORK/err")" -eq 1 ]
ok $? "... with one message"
[ ! -e "$WORK/bad.h5" ] && [ ! -e "$WORK/bad.hier" ]
ok $? "failed runs write neither OUTPUT nor the hierarchy"

# ---- a full disk: the ENOSPC shim under the streaming writers
SHIM=$WORK/enospc.so
cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -o "$SHIM" tests/common/preload/enospc.c -ldl \
    2>&1 | diag
mkdir -p "$WORK/full"
for out in full.h5 full.svm; do
    expect_fail 4 "disk full writing $WORK/full/$out \(needs about [0-9.]+ MB\)" \
        "$out on a full disk: exit 4, disk full" -- env LD_PRELOAD="$SHIM" STRUX_ENOSPC_AFTER=100000 \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
        "$STRUX" gen "$WORK/full/$out" --shape random --rows 3000 --features 2000 --nodes 50 --nnz 40
    [ -z "$(ls -A "$WORK/full")" ]
    ok $? "$out on a full disk: no output, hierarchy or temporary left"
done
exit $TAP_FAILED
