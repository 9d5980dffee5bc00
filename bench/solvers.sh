# bench/solvers.sh - the solvers compared (issue: distributed dual solvers):
#  1. epochs and training seconds (time_s: epochs only, certificates excluded) until the relative
#     duality gap is <= 1e-3, per solver, on yeast and bibtex (multilabel, margin rescaling,
#     λ = 1e-3) at -np 1 and -np 2; SGD has no dual, so its gap is measured against the best dual
#     bound any dual solver reached on that set (a valid certificate: J(w) − D ≥ J(w) − J*);
#     "—" with the gap reached when a solver stops at its epoch cap first; -np 2 runs once with one
#     CoCoA+ round per epoch (solver.sync_every = 0) and once with a round every 128 examples;
#  2. the np=2/np=1 speed per epoch on a synthetic multilabel set of 1M rows × 50K sparse features
#     (100 non-zeros per row) × 100 labels written by `strux gen` (target: >= 1.8x), for sdca and
#     bcfw, from the mean time of epochs 2..E (epoch 1 is left out: page faults of first touch).
# Plots of gap against time for every run of part 1 go to $BENCH_OUT (default out/bench).
set -u
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
OUT=${BENCH_OUT:-out/bench}
mkdir -p "$OUT"
D=${STRUX_DATA:-../shared/data}
MPI="mpirun --oversubscribe"

echo "### Epochs and seconds to relative duality gap 1e-3 (λ = 1e-3, margin rescaling)"
echo
echo "| set | solver | np | sync_every | epochs | train s | gap at stop | final primal |"
echo "|---|---|---|---|---|---|---|---|"
for set in yeast:yeast:2000 bibtex:bibtex_margin:300; do
    IFS=: read -r d config cap <<<"$set"
    for run in 1:0 2:0 2:128; do
        IFS=: read -r np sync <<<"$run"
        tag=np${np}_sync$sync
        for s in bcfw sdca cutting_plane sgd; do
            e=$cap
            [ "$s" = sgd ] && e=$((cap / 10))
            tol=1e-3
            [ "$s" = sgd ] && tol=0
            $MPI -np $np "$STRUX" train configs/$config.ini --quiet --set solver.type=$s \
                --set solver.lambda=1e-3 --set solver.epochs=$e --set solver.tol=$tol \
                --set solver.sync_every=$sync --set output.eval_every=0 --set data.test= \
                --set output.model="$WORK/m.h5" --set output.metrics="$OUT/${d}_${s}_$tag.jsonl" \
                >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; exit 1; }
        done
        /usr/bin/python3 - "$OUT" "$d" "$np" "$sync" <<'PY'
import json, sys
out, d, np, sync = sys.argv[1:5]
runs = {s: [json.loads(l) for l in open(f"{out}/{d}_{s}_np{np}_sync{sync}.jsonl")]
        for s in ("bcfw", "sdca", "cutting_plane", "sgd")}
best_dual = max(r["dual"] for s, rows in runs.items() if s != "sgd" for r in rows
                if r["dual"] is not None)
for s, rows in runs.items():
    def gap(r):
        return r["gap"] if s != "sgd" else r["primal"] - best_dual
    hit = next((r for r in rows if r["primal"] is not None and gap(r) <= 1e-3 * r["primal"]), None)
    last = rows[-1]
    note = "" if s != "sgd" else " (vs best dual)"
    sy = sync if s != "sgd" else "—"
    if hit:
        print(f"| {d} | {s} | {np} | {sy} | {hit['epoch']} | {hit['time_s']:.2f} | "
              f"{gap(hit) / hit['primal']:.1e}{note} | {last['primal']:.6f} |")
    else:
        print(f"| {d} | {s} | {np} | {sy} | — ({last['epoch']}) | — ({last['time_s']:.2f}) | "
              f"{gap(last) / last['primal']:.1e}{note} | {last['primal']:.6f} |")
PY
    done
    /usr/bin/python3 scripts/plot-metrics -o "$OUT/${d}_gap.png" --title "$d: λ = 1e-3" \
        "$OUT/${d}"_*_np1_sync0.jsonl "$OUT/${d}"_*_np2_sync128.jsonl || exit 1
done
echo
echo "Plots: $OUT/yeast_gap.png, $OUT/bibtex_gap.png (objective and duality gap against time and epoch)"
echo

BIG=${BENCH_BIG:-build/bench/synthetic_1m.h5}
if [ ! -f "$BIG" ]; then
    mkdir -p "$(dirname "$BIG")"
    /usr/bin/time -f "# strux gen: %e s, %M KB peak" "$STRUX" gen "$BIG" --rows 1000000 \
        --features 50000 --labels 100 --seed 1 --quiet || exit 1
fi
E=4
echo "### Per-epoch speed at -np 2 against -np 1: 1M rows × 50K features × 100 labels, $E epochs"
echo
echo "| solver | np 1 s/epoch | np 2 s/epoch | speed-up np2/np1 | target |"
echo "|---|---|---|---|---|"
for s in sdca bcfw; do
    for np in 1 2; do
        $MPI -np $np "$STRUX" train configs/yeast.ini --quiet --set data.train="$BIG" \
            --set data.test= --set data.label_names= --set data.bias=1 --set solver.type=$s \
            --set solver.lambda=1e-5 --set solver.epochs=$E --set solver.certify_every=0 \
            --set solver.tol=0 --set output.model="$WORK/big.h5" \
            --set output.metrics="$OUT/big_${s}_np$np.jsonl" >/dev/null 2>"$WORK/err" ||
            { cat "$WORK/err"; exit 1; }
    done
    /usr/bin/python3 - "$OUT" "$s" <<'PY'
import json, sys
out, s = sys.argv[1], sys.argv[2]
per = []
for np in (1, 2):
    rows = [json.loads(l) for l in open(f"{out}/big_{s}_np{np}.jsonl")]
    per.append((rows[-1]["time_s"] - rows[0]["time_s"]) / (len(rows) - 1))
ratio = per[0] / per[1]
print(f"| {s} | {per[0]:.2f} | {per[1]:.2f} | {ratio:.2f}x | {'met' if ratio >= 1.8 else 'MISSED'} (>= 1.8x) |")
PY
done
