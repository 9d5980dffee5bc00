# tests/e2e/hier_margin_lp.sh - the margin-normalised NHSVM, the multi-label DAG programme's
# counters and size cap, the multi-label metrics against an independent computation, and the
# bad inputs of issue 14 that hierarchy.sh and hier_read_rank0.sh do not cover:
#   - task.margin = normalized (6.13) on the first 300 imclef07a rows: sgd at -np 1 and 2 gives
#     the same weights (1e-9) and test scores, other weights than the plain margin; sdca trains to
#     a certificate (gap ≥ 0); the model alone scores the test rows as the run did; refused (exit
#     2, every rank, no model) on multi-label data, with surrogate.type = beta (its convex-hull
#     search re-scores labels; refused before any data is read) and with task.model = ssvm;
#   - a layered random DAG (multi-label, nhsvm, sgd, -np 2): the record's lp_free, lp_candidates,
#     lp_ms and lp_capped columns; task.lp_max_nodes = 12 caps the pruned LPs (lp_capped > 0, the
#     log says so) and the labels stay valid; strux eval adds the test-time counters (lp_ilp:
#     binary programmes after a fractional LP) to its object, strux predict logs them;
#   - funcat_cellcycle (multi-label tree, stop leaves): strux eval's metrics equal
#     scripts/hier_metrics.py's, computed from strux predict's closures and the data file alone;
#   - bad input at -np 2, each: exit code, message naming file and line or key and value, no
#     model: a self-loop, an empty hierarchy, an example with no label, a data.test label that is
#     not a node (and strux predict on data beyond the model's hierarchy: no prediction file),
#     task.rho = 1, task.rho = 3 on a DAG; duplicate edges are kept once with one warning naming
#     their count and first line.
. tests/common/tap.sh
IM=$STRUX_DATA/imclef07a
FC=$STRUX_DATA/funcat_cellcycle
gzip -dc "$IM/ImCLEF07A_train.svm.gz" | head -n 300 >"$WORK/im.svm"
gzip -dc "$IM/ImCLEF07A_test.svm.gz" | head -n 100 >"$WORK/im_test.svm"
gzip -dc "$FC/cellcycle_FUN_train.svm.gz" | head -n 150 >"$WORK/fc.svm"
gzip -dc "$FC/cellcycle_FUN_test.svm.gz" | head -n 150 >"$WORK/fc_test.svm"
printf '[surrogate]\ntype = margin\n' >"$WORK/h.ini"
run() { # run NP NAME [--set ...]: strux train on the hierarchy task, model $WORK/NAME.h5
    local np=$1 name=$2
    shift 2
    local launch="$MPIRUN -np $np"
    [ "$np" = 1 ] && launch=
    $launch "$STRUX" train "$WORK/h.ini" --quiet --set task.type=hierarchy --set data.bias=1 \
        --set solver.seed=3 --set output.eval_every=0 --set output.model="$WORK/$name.h5" \
        --set output.metrics="$WORK/$name.jsonl" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
}
IMSET=(--set data.train="$WORK/im.svm" --set data.test="$WORK/im_test.svm"
    --set task.hierarchy="$IM/ImCLEF07A.hier" --set solver.lambda=1e-3)

# ---- task.margin = normalized ----
run 1 norm1 "${IMSET[@]}" --set task.margin=normalized --set solver.type=sgd --set solver.epochs=3 &&
    run 2 norm2 "${IMSET[@]}" --set task.margin=normalized --set solver.type=sgd --set solver.epochs=3 &&
    run 1 plain1 "${IMSET[@]}" --set solver.type=sgd --set solver.epochs=3
ok $? "task.margin = normalized trains with sgd at -np 1 and 2 (and the plain margin at -np 1)"
$PY - "$WORK" <<'PY'
import sys, h5py, numpy as np, json
w = sys.argv[1]
W = {k: h5py.File(f"{w}/{k}.h5", "r")["weights"][:] for k in ("norm1", "norm2", "plain1")}
last = lambda k: [json.loads(l) for l in open(f"{w}/{k}.jsonl") if l.strip()][-1]
rel = np.abs(W["norm1"] - W["norm2"]).max() / np.abs(W["norm1"]).max()
other = np.abs(W["norm1"] - W["plain1"]).max() / np.abs(W["norm1"]).max()
t1 = {k: v for k, v in last("norm1").items() if k.startswith("test_")}
t2 = {k: v for k, v in last("norm2").items() if k.startswith("test_")}
p1, p2 = last("norm1")["primal"], last("norm2")["primal"]
print(f"# np 1 vs 2: weights {rel:.3g} relative, primal {p1:.12g} / {p2:.12g}, test {t1}; "
      f"the plain margin's weights differ by {other:.3g}")
sys.exit(0 if rel <= 1e-9 and abs(p1 - p2) <= 1e-9 * abs(p1) and t1 == t2 and len(t1) > 0
         and other > 1e-3 else 1)
PY
ok $? "normalized margin: -np 1 and 2 give the same weights, objective (1e-9) and test scores; not the plain margin's"
run 1 normsdca "${IMSET[@]}" --set task.margin=normalized --set solver.type=sdca --set solver.epochs=4 \
    --set solver.certify_every=1
ok $? "task.margin = normalized trains with sdca"
"$STRUX" eval --model "$WORK/norm1.h5" --data "$WORK/im_test.svm" >"$WORK/norm1.eval" 2>>"$WORK/norm1.err"
$PY - "$WORK" <<'PY'
import sys, json, math
w = sys.argv[1]
rows = [json.loads(l) for l in open(f"{w}/normsdca.jsonl") if l.strip()]
gaps = [r["gap"] for r in rows]
ev = json.loads(open(f"{w}/norm1.eval").read())
last = [json.loads(l) for l in open(f"{w}/norm1.jsonl") if l.strip()][-1]
same = all(abs(ev[k[5:]] - v) <= 1e-6 for k, v in last.items() if k.startswith("test_"))
print(f"# sdca gaps {['%.3g' % g for g in gaps]}; eval of the model alone {'equals' if same else 'differs from'} the run's test scores")
sys.exit(0 if all(math.isfinite(g) and g >= -1e-9 for g in gaps) and same else 1)
PY
ok $? "sdca certifies a gap >= 0 every epoch; the model alone scores the test rows as the run did"
expect_fail 2 "task.margin = normalized \(6.13\) needs single-label data.*multi-label" \
    "normalized margin on multi-label data: exit 2" -- \
    $MPIRUN -np 2 "$STRUX" train "$WORK/h.ini" --set task.type=hierarchy --set data.train="$WORK/fc.svm" \
    --set task.hierarchy="$FC/cellcycle_FUN.hier" --set task.margin=normalized --set output.model="$WORK/bad_nm.h5"
[ "$(grep -c "needs single-label data" "$WORK/err")" -ge 1 ] && [ ! -e "$WORK/bad_nm.h5" ]
ok $? "no model"
expect_fail 2 "needs a surrogate with flag one_call \(task.margin = normalized.*surrogate.type = beta with surrogate.search = convex_hull" \
    "normalized margin with beta scaling (its search re-scores labels): exit 2 before the data is read" -- \
    $MPIRUN -np 2 "$STRUX" train "$WORK/h.ini" --set task.type=hierarchy --set data.train="$WORK/none.svm" \
    --set task.hierarchy="$IM/ImCLEF07A.hier" --set task.margin=normalized --set surrogate.type=beta \
    --set solver.type=sgd --set output.model="$WORK/bad_ns.h5"
[ ! -e "$WORK/bad_ns.h5" ]
ok $? "no model"
expect_fail 2 "task.margin = normalized is the margin-normalised NHSVM \(6.13\); task.model = ssvm" \
    "normalized margin with ssvm: exit 2" -- \
    $MPIRUN -np 2 "$STRUX" train "$WORK/h.ini" --set task.type=hierarchy --set data.train="$WORK/im.svm" \
    --set task.hierarchy="$IM/ImCLEF07A.hier" --set task.margin=normalized --set task.model=ssvm \
    --set output.model="$WORK/bad_nss.h5"
[ ! -e "$WORK/bad_nss.h5" ]
ok $? "no model"

# ---- the multi-label DAG programme: counters and cap ----
$PY tests/common/hier_fixture.py layered "$WORK" 5 60 4 0.2 20 0.3 dag.svm:200:1/1/2/3 dag_test.svm:80:1/2
ok $? "layered random DAG data written"
CAP=12
DAGSET=(--set data.train="$WORK/dag.svm" --set data.test="$WORK/dag_test.svm"
    --set task.hierarchy="$WORK/dag.hier" --set solver.type=sgd --set solver.lambda=1e-3 --set solver.epochs=3)
run 2 dag "${DAGSET[@]}" && run 2 dagcap "${DAGSET[@]}" --set task.lp_max_nodes=$CAP --set solver.epochs=2
ok $? "nhsvm on the DAG trains at -np 2, uncapped and with task.lp_max_nodes = $CAP"
$PY - "$WORK" <<'PY'
import sys, json
w = sys.argv[1]
rows = [json.loads(l) for l in open(f"{w}/dag.jsonl") if l.strip()]
cap = [json.loads(l) for l in open(f"{w}/dagcap.jsonl") if l.strip()]
ok = all(0 <= r["lp_free"] <= 1 and r["lp_candidates"] >= 1 and r["lp_capped"] == 0 and
         (r["lp_ms"] is None or r["lp_ms"] > 0) for r in rows)
ok = ok and all(r["lp_capped"] > 0 for r in cap)
for r in rows + cap:
    print(f"# epoch {r['epoch']}: lp_free {r['lp_free']:.3f}, lp_candidates {r['lp_candidates']:.2f}, "
          f"lp_ms {r['lp_ms']}, lp_capped {r['lp_capped']}")
sys.exit(0 if ok else 1)
PY
ok $? "the record's lp_* columns: shares in [0, 1], candidates >= 1, capped only under the cap"
grep -q "multi-label DAG answers came from a pruned LP over task.lp_max_nodes" "$WORK/dagcap.err" &&
    ! grep -q "over task.lp_max_nodes" "$WORK/dag.err"
ok $? "the capped epochs are logged"
"$STRUX" eval --model "$WORK/dagcap.h5" --data "$WORK/dag_test.svm" >"$WORK/dagcap.eval" 2>"$WORK/dagcap_eval.err" &&
    $MPIRUN -np 2 "$STRUX" predict --model "$WORK/dag.h5" --data "$WORK/dag_test.svm" \
        --out "$WORK/dag.pred" 2>"$WORK/dag_pred.err"
ok $? "eval and predict of the DAG models"
$PY - "$WORK" <<'PY'
import sys, json
w = sys.argv[1]
ev = json.loads(open(f"{w}/dagcap.eval").read())
keys = ("lp_calls", "lp_free", "lp_candidates", "lp_solved", "lp_columns", "lp_ilp", "lp_capped", "lp_ms")
print("# eval: " + ", ".join(f"{k} {ev.get(k)}" for k in keys))
ok = all(k in ev for k in keys) and ev["lp_calls"] == 80 and ev["lp_ilp"] <= ev["lp_solved"] and \
    ev["lp_solved"] > 0 and ev["lp_columns"] <= 12 and ev["lp_capped"] > 0
sys.exit(0 if ok else 1)
PY
ok $? "strux eval reports the test-time counters (80 calls, ILPs <= LPs, capped LPs within 12 columns)"
grep -qE "multi-label DAG prediction: 80 examples, .* binary programmes after a fractional LP" "$WORK/dag_pred.err"
ok $? "strux predict logs them, summed over ranks"
grep -h "multi-label DAG prediction" "$WORK/dag_pred.err" | diag

# ---- metrics against an independent computation ----
run 1 fcm --set data.train="$WORK/fc.svm" --set task.hierarchy="$FC/cellcycle_FUN.hier" \
    --set solver.type=sgd --set solver.lambda=1e-4 --set solver.epochs=2 &&
    "$STRUX" predict --model "$WORK/fcm.h5" --data "$WORK/fc_test.svm" --out "$WORK/fcm.pred" 2>>"$WORK/fcm.err" &&
    "$STRUX" eval --model "$WORK/fcm.h5" --data "$WORK/fc_test.svm" >"$WORK/fcm.eval" 2>>"$WORK/fcm.err" &&
    $PY scripts/hier_metrics.py "$FC/cellcycle_FUN.hier" "$WORK/fc_test.svm" "$WORK/fcm.pred" >"$WORK/fcm.ref"
ok $? "funcat cut: trained, predicted, evaluated, recomputed by scripts/hier_metrics.py"
$PY - "$WORK" <<'PY'
import sys, json
w = sys.argv[1]
ev, ref = json.loads(open(f"{w}/fcm.eval").read()), json.loads(open(f"{w}/fcm.ref").read())
diff = {k: (ev[k], ref[k]) for k in ref if abs(ev[k] - ref[k]) > 5e-7}
print(f"# strux eval {ev}")
print(f"# differences: {diff or 'none'}")
sys.exit(0 if not diff and ref["n"] == 150 else 1)
PY
ok $? "every multi-label metric of strux eval equals the independent computation (6 decimals)"

# ---- bad input, -np 2: exit code, message, no model ----
bad() { # bad CODE PATTERN DESCRIPTION [--set ...]
    local code=$1 pattern=$2 desc=$3 name=bad$((++n_bad))
    shift 3
    expect_fail "$code" "$pattern" "$desc: exit $code" -- $MPIRUN -np 2 "$STRUX" train "$WORK/h.ini" \
        --set task.type=hierarchy --set data.train="$WORK/im.svm" --set output.model="$WORK/$name.h5" "$@"
    [ ! -e "$WORK/$name.h5" ]
    ok $? "$desc: no model"
}
n_bad=0
printf '0 1\n1 1\n' >"$WORK/self.hier"
: >"$WORK/empty.hier"
printf '1 1:1\n 1:2\n2 1:1\n' >"$WORK/nolab.svm"
printf '1,11 1:1\n1,11,37 1:1\n1,11,37,5 1:2\n' >"$WORK/notnode_test.svm"
bad 3 "self.hier:2: self-loop: node 1 is its own parent" "a self-loop" --set task.hierarchy="$WORK/self.hier"
bad 3 "empty.hier: empty hierarchy" "an empty hierarchy" --set task.hierarchy="$WORK/empty.hier"
bad 3 "nolab.svm: example 2 has no label" "an example with no label" \
    --set task.hierarchy="$IM/ImCLEF07A.hier" --set data.train="$WORK/nolab.svm"
bad 2 "task.rho = 1: program \(6.6\) needs rho > 1" "task.rho = 1" \
    --set task.hierarchy="$IM/ImCLEF07A.hier" --set task.rho=1
bad 2 "task.rho = 3: on a DAG .* only rho = 2 is solved" "task.rho = 3 on a DAG" \
    --set task.hierarchy="$WORK/dag.hier" --set data.train="$WORK/dag.svm" --set task.rho=3
# a data.test label in the label range (data.n_labels) that is not a node of the hierarchy
printf '1,11,37 1:1\n1,150 1:2\n' >"$WORK/gap_test.svm"
bad 3 "gap_test.svm:2: label 150 is not a node of the hierarchy" "a data.test label that is not a node" \
    --set task.hierarchy="$IM/ImCLEF07A.hier" --set data.test="$WORK/gap_test.svm" --set data.n_labels=200
expect_fail 3 "gap_test.svm:2: label 150 " "predict on data with a label outside the model's hierarchy: exit 3" -- \
    $MPIRUN -np 2 "$STRUX" predict --model "$WORK/norm1.h5" --data "$WORK/gap_test.svm" --out "$WORK/gap.pred"
[ ! -e "$WORK/gap.pred" ]
ok $? "predict: no prediction file"
printf '0 1\n0 2\n0 1\n1 3\n1 4\n0 2\n' >"$WORK/dup.hier"
printf '3 1:1\n4 1:2\n2 1:1\n' >"$WORK/dup.svm"
$MPIRUN -np 2 "$STRUX" train "$WORK/h.ini" --set task.type=hierarchy --set data.train="$WORK/dup.svm" \
    --set task.hierarchy="$WORK/dup.hier" --set output.model="$WORK/dup.h5" >"$WORK/dup.out" 2>"$WORK/dup.err" &&
    [ "$(grep -c "dup.hier: 2 duplicate edges kept once (the first repeat on line 3)" "$WORK/dup.err")" = 1 ] && [ -f "$WORK/dup.h5" ]
ok $? "duplicate edges: kept once, one warning with their count and first line, the run trains"
grep -h "duplicate" "$WORK/dup.err" | diag
