# bench/hierarchy.sh - the SSVM α update against an epoch (issue 14): for every set of SETS, ssvm
# trained with sgd for EPOCHS epochs (default 10) and the α update after every epoch
# (task.alpha_every = 1, task.alpha_tol = 0 so it never stops early), at every np of NPS. Prints
# per run: mean epoch seconds (differences of the cumulative time_s, epochs 2..E, the update
# included), mean α-update seconds (alpha_s: the norms, Algorithm 5 on rank 0, its broadcast,
# the row rescale), their ratio (target: at most 5%), and the last alpha_change. Sets: imclef07a and funcat_cellcycle (its
# training file, data.normalize = l2). The unbalanced synthetic and the 5000-node random tree of
# the issue need `strux gen --shape`, which does not exist yet: they are not run. Metrics logs go
# to $BENCH_OUT (default out/bench/hierarchy).
set -u
OUT=${BENCH_OUT:-out/bench/hierarchy}
mkdir -p "$OUT"
MPI="mpirun --oversubscribe"
SETS=${SETS:-"imclef07a funcat_cellcycle"}
NPS=${NPS:-"1 2"}
EPOCHS=${EPOCHS:-10}
D=$STRUX_DATA
printf '[surrogate]\ntype = margin\n' >"$OUT/h.ini"
printf '%-18s %3s %12s %12s %8s %12s\n' set np epoch_s alpha_s ratio alpha_change
for set in $SETS; do
    case $set in
    imclef07a) tr=$D/imclef07a/ImCLEF07A_train.svm.gz hier=$D/imclef07a/ImCLEF07A.hier ;;
    funcat_cellcycle) tr=$D/funcat_cellcycle/cellcycle_FUN_train.svm.gz
        hier=$D/funcat_cellcycle/cellcycle_FUN.hier ;;
    *) echo "unknown set $set" >&2; continue ;;
    esac
    for np in $NPS; do
        log=$OUT/${set}_np$np.jsonl
        $MPI -np "$np" "$STRUX" train "$OUT/h.ini" --quiet --set data.train="$tr" \
            --set data.test= --set task.type=hierarchy --set task.hierarchy="$hier" \
            --set task.model=ssvm --set solver.type=sgd --set solver.lambda=1e-4 \
            --set solver.epochs="$EPOCHS" --set task.alpha_every=1 --set task.alpha_tol=0 \
            --set data.normalize=l2 --set output.model="$OUT/${set}_np$np.h5" \
            --set output.metrics="$log" >/dev/null 2>"$OUT/${set}_np$np.err" ||
            { echo "$set np $np failed: $(tail -n 1 "$OUT/${set}_np$np.err")"; continue; }
        /usr/bin/python3 - "$log" "$set" "$np" <<'PY'
import sys, json
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows = [r for r in rows if r.get("epoch", 0) >= 1]
num = lambda v: v if isinstance(v, (int, float)) else None
# time_s is cumulative: an epoch's seconds are its difference (the α update included)
e = [rows[k]["time_s"] - rows[k - 1]["time_s"] for k in range(2, len(rows))] or [rows[0]["time_s"]]
a = [num(r.get("alpha_s")) for r in rows[1:]]
a = [v for v in a if v is not None]
ea, aa = sum(e) / len(e), (sum(a) / len(a) if a else float("nan"))
ch = num(rows[-1].get("alpha_change"))
print(f"{sys.argv[2]:<18} {sys.argv[3]:>3} {ea:12.4f} {aa:12.6f} {100 * aa / ea:7.2f}% "
      f"{ch if ch is not None else float('nan'):12.3g}")
PY
    done
done
