# tests/e2e/hier_ssvm.sh - task.model = ssvm end to end (the α update of solvers/alpha.c) on the
# first 400 rows of imclef07a and of funcat_cellcycle (stop leaves):
#   - sgd with alpha every 2 epochs: the record has alpha_change on update epochs only (NaN
#     between) and alpha_s, and the run ends when alpha stops moving (task.alpha_tol = 0);
#     SIGTERM in epoch 25 writes a checkpoint, and `strux train --resume` ends bit-identical
#     (weights, /hierarchy/alpha, metrics log);
#   - the model file alone rebuilds the task: with the hierarchy file removed, eval of the funcat
#     model (stop leaves, multi-label) gives the run's final test scores, and /hierarchy/alpha has
#     every leaf path summing to 1 (the learned alpha of Algorithm 5).
. tests/common/tap.sh
IM=$STRUX_DATA/imclef07a
FC=$STRUX_DATA/funcat_cellcycle
gzip -dc "$IM/ImCLEF07A_train.svm.gz" | head -n 400 >"$WORK/im.svm"
gzip -dc "$FC/cellcycle_FUN_train.svm.gz" | head -n 400 >"$WORK/fc.svm"
gzip -dc "$FC/cellcycle_FUN_test.svm.gz" | head -n 200 >"$WORK/fc_test.svm"
cp "$FC/cellcycle_FUN.hier" "$WORK/fc.hier"
printf '[surrogate]\ntype = margin\n' >"$WORK/h.ini"
COMMON=(--quiet --set task.type=hierarchy --set task.model=ssvm --set solver.type=sgd
    --set solver.lambda=1e-3 --set solver.seed=3 --set data.bias=1 --set task.alpha_every=2
    --set task.alpha_tol=0 --set output.eval_every=0)

IMSET=(--set data.train="$WORK/im.svm" --set data.n_labels=97 --set task.hierarchy="$IM/ImCLEF07A.hier"
    --set solver.epochs=400)
"$STRUX" train "$WORK/h.ini" "${COMMON[@]}" "${IMSET[@]}" --set output.model="$WORK/full.h5" \
    --set output.metrics="$WORK/full.jsonl" 2>"$WORK/full.err"
ok $? "ssvm sgd on the imclef cut trains"
$PY - "$WORK/full.jsonl" <<'PY'
import sys, json, math
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
upd = [r["epoch"] for r in rows if r["alpha_change"] is not None]
last = rows[-1]["epoch"]
ok = upd == list(range(2, last + 1, 2)) and rows[-1]["alpha_change"] == 0 and \
    all(r["alpha_s"] is not None for r in rows if r["epoch"] % 2 == 0) and \
    all(r["alpha_s"] is None for r in rows if r["epoch"] % 2 == 1)
print(f"# {last} epochs, alpha_change on {len(upd)} epochs, first {rows[1]['alpha_change']:.3g}, last {rows[-1]['alpha_change']:.3g}")
sys.exit(0 if ok else 1)
PY
ok $? "alpha_change and alpha_s on every second epoch, NaN between; the run stops when alpha stands still (task.alpha_tol = 0)"

# SIGTERM on entering epoch 25 (the fault-injection hook of dist/comm.c: a timed kill lands
# anywhere from epoch 25 to past the run's end on a loaded machine)
STRUX_FAULT_SIGTERM_AT="epoch 25" "$STRUX" train "$WORK/h.ini" "${COMMON[@]}" "${IMSET[@]}" \
    --set output.model="$WORK/int.h5" --set output.metrics="$WORK/int.jsonl" >"$WORK/int.out" \
    2>"$WORK/int.err"
ok $? "SIGTERM stops the ssvm run with exit status 0"
grep -q "SIGTERM: stopped after epoch 25 of 400" "$WORK/int.err" && [ -f "$WORK/int.ckpt.h5" ] &&
    [ ! -f "$WORK/int.h5" ]
ok $? "a checkpoint after epoch 25 and no model"
grep -o "stopped .*" "$WORK/int.err" | diag
"$STRUX" train --resume "$WORK/int.ckpt.h5" --quiet 2>"$WORK/res.err"
ok $? "resumes from the checkpoint alone"
$PY - "$WORK/full" "$WORK/int" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1] + ".h5", "r"), h5py.File(sys.argv[2] + ".h5", "r")
same = (np.array_equal(a["weights"][:], b["weights"][:]) and
        np.array_equal(a["hierarchy/alpha"][:], b["hierarchy/alpha"][:]))
cut = lambda p: [l.split('"time_s"')[0] for l in open(p + ".jsonl")]
same = same and cut(sys.argv[1]) == cut(sys.argv[2])
print(f"# weights, alpha and metrics log {'identical' if same else 'differ'}")
sys.exit(0 if same else 1)
PY
ok $? "the resumed run ends bit-identical to the uninterrupted one"

"$STRUX" train "$WORK/h.ini" "${COMMON[@]}" --set data.train="$WORK/fc.svm" \
    --set data.test="$WORK/fc_test.svm" --set data.n_labels=100000 --set task.hierarchy="$WORK/fc.hier" \
    --set solver.epochs=6 --set output.model="$WORK/fc.h5" --set output.metrics="$WORK/fc.jsonl" \
    2>"$WORK/fc.err"
ok $? "ssvm on the funcat cut (multi-label, stop leaves) trains"
rm "$WORK/fc.hier"
"$STRUX" eval --model "$WORK/fc.h5" --data "$WORK/fc_test.svm" >"$WORK/fc.eval" 2>>"$WORK/fc.err"
ok $? "eval with the hierarchy file gone"
$PY - "$WORK" <<'PY'
import sys, json, h5py, numpy as np
sys.path.insert(0, "tests/common")
from hier_fixture import alpha_path_sums
w = sys.argv[1]
ev = json.loads(open(w + "/fc.eval").read())
last = [json.loads(l) for l in open(w + "/fc.jsonl") if l.strip()][-1]
same = all(abs(ev[k[5:]] - v) <= 1e-6 for k, v in last.items() if k.startswith("test_"))
f = h5py.File(w + "/fc.h5", "r")
g = f["hierarchy"]
ids = g["node_id"][:]
sums = alpha_path_sums(w + "/fc.h5")
attrs = tuple(v.decode() if isinstance(v, bytes) else v for v in (f.attrs["hierarchy"], f.attrs["hierarchy_model"], f.attrs["label_space"]))
stop = int((ids < -1).sum())
print(f"# eval {'equals' if same else 'differs from'} the run's test scores; {attrs}, {stop} stop "
      f"leaves; leaf path sums of alpha in [{min(sums):.12f}, {max(sums):.12f}]")
ok = same and stop > 0 and [str(a) for a in attrs] == ["tree", "ssvm", "multi"] and \
    max(abs(s - 1) for s in sums) <= 1e-9
sys.exit(0 if ok else 1)
PY
ok $? "the model alone: eval equals the run's test scores; stop leaves and attributes stored; alpha paths sum to 1"
"$STRUX" inspect "$WORK/fc.h5" | grep -E "^hierarchy +tree, [0-9]+ nodes .*model ssvm, multi-label" >/dev/null &&
    "$STRUX" inspect "$WORK/fc.h5" | grep -q "^alpha "
ok $? "inspect shows the hierarchy and alpha"
