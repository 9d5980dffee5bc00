# bench/rta.sh - the rta solver (issue 17): Newton against best direction, and np 2 against np 1.
# For every set of SETS, update of UPDATES, n of NS and K of KS: configs/SET_rta.ini (lambda from
# bench/rta_validate.sh) trained for at most the set's epoch cap (EPOCHS_<set>, defaults below)
# and at most TIME_LIMIT training seconds (solver.time_limit; 0: none), solver.tol = 0, a
# certificate every epoch, the default rounds (solver.sync_every = 0: the trajectory is the same
# at every np), at every np of NPS. The machine is shared, so the numbers are where the runs
# stopped, not optima. Prints, per run: seconds per epoch at each np (mean of epochs 2..E,
# certificates excluded; epoch 1 alone when E = 1) and their ratio, the shares of inference
# (K-best and argmax), update (QP, BLAS, weight updates) and communication in the epochs' time,
# the last certificate pass's cert_rate, the final dual, relative gap (gap / primal, a lower
# bound when cert_rate < 1), epochs and training seconds until the relative gap first reached
# 1e-2 ("—" if not within the cap), the last epoch's round size, and the held-out test Hamming
# loss, 0/1 error (1 − subset accuracy), micro-F1 and cert_rate of the final model. The metrics
# logs go to $BENCH_OUT (default out/bench/rta) for scripts/plot-metrics. Target (issue 17): np 2
# at least 1.6x faster per epoch than np 1 on enron with n = 20, K = 10:
#   SETS=enron UPDATES=newton NS=20 KS=10 EPOCHS_enron=4 REPS=5 bench/run rta.sh
# REPS (default 1) repeats the np runs, alternating the rank counts; seconds per epoch are then the
# median over the repetitions (this 2-core machine's epoch times vary by 30 % from run to run).
set -u
OUT=${BENCH_OUT:-out/bench/rta}
mkdir -p "$OUT"
MPI="mpirun --oversubscribe"
SETS=${SETS:-"emotions yeast scene medical enron"}
UPDATES=${UPDATES:-"newton best"}
NS=${NS:-"5 10 20"}
KS=${KS:-"1 10"}
NPS=${NPS:-"1 2"}
TIME_LIMIT=${TIME_LIMIT:-0}
REPS=${REPS:-1}
cap() { # epoch cap per set
    local v="EPOCHS_$1"
    case $1 in
    medical | enron) echo "${!v:-3}" ;;
    *) echo "${!v:-15}" ;;
    esac
}

echo "| set | update | n | K | epochs | s/epoch$(for np in $NPS; do printf ' np%s |' $np; done | sed 's/|$//') | speed-up | inference | update | comm | cert_rate | dual | rel. gap | epochs to 1e-2 | s to 1e-2 | round | test Hamming | test 0/1 | test micro-F1 | test cert_rate |"
echo "|---|---|---|---|---|$(for np in $NPS; do printf -- '---|'; done)---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for set in $SETS; do
    E=$(cap "$set")
    for u in $UPDATES; do
        for n in $NS; do
            for K in $KS; do
                for rep in $(seq "$REPS"); do for np in $NPS; do
                    tag="${set}_${u}_n${n}_K${K}_np${np}_r$rep"
                    $MPI -np "$np" "$STRUX" train "configs/${set}_rta.ini" --quiet \
                        --set solver.update=$u --set task.trees=$n --set task.kbest=$K \
                        --set solver.epochs="$E" --set solver.tol=0 --set solver.certify_every=1 \
                        --set solver.time_limit="$TIME_LIMIT" --set output.eval_every=0 \
                        --set output.model="$OUT/$tag.h5" --set output.metrics="$OUT/$tag.jsonl" \
                        >"$OUT/$tag.test.json" 2>"$OUT/$tag.err" ||
                        { echo "failed: $tag"; cat "$OUT/$tag.err"; exit 1; }
                done; done
                /usr/bin/python3 - "$set" "$u" "$n" "$K" "$OUT/${set}_${u}_n${n}_K${K}" "$REPS" \
                    $NPS <<'PY'
import json, statistics, sys
set_, u, n, K, stem, reps, *nps = sys.argv[1:]
def per_epoch(rows):  # training seconds of epochs 2..E: inference, update and communication
    t = [r["inference_s"] + r["update_s"] for r in rows]
    c = [r["comm_s"] for r in rows]
    if len(t) == 1:
        return t[0] + c[0]
    return (sum(t[1:]) + c[-1] - c[0]) / (len(t) - 1)
def log(np_, rep):
    return [json.loads(l) for l in open(f"{stem}_np{np_}_r{rep}.jsonl")]
spe = [statistics.median(per_epoch(log(p, r)) for r in range(1, int(reps) + 1)) for p in nps]
rows = log(nps[0], 1)
last = rows[-1]
T = last["time_s"]
inf = sum(r["inference_s"] for r in rows) / T
upd = sum(r["update_s"] for r in rows) / T
comm = last["comm_s"] / T
rel = [r["gap"] / r["primal"] for r in rows]
hit = next((k for k, g in enumerate(rel) if g <= 1e-2), None)
test = json.load(open(f"{stem}_np{nps[0]}_r1.test.json"))
speed = f"{spe[0] / spe[1]:.2f}x" if len(spe) > 1 else "—"
cells = [set_, u, n, K, str(len(rows))] + [f"{s:.3g}" for s in spe] + [
    speed, f"{inf:.0%}", f"{upd:.0%}", f"{comm:.0%}", f"{last['cert_rate']:.3f}",
    f"{last['dual']:.5g}", f"{rel[-1]:.3g}",
    str(rows[hit]["epoch"]) if hit is not None else "—",
    f"{rows[hit]['time_s']:.3g}" if hit is not None else "—", str(int(last["round_size"])),
    f"{test['hamming_loss']:.4f}", f"{1 - test['subset_accuracy']:.4f}",
    f"{test['micro_f1']:.4f}", f"{test['cert_rate']:.3f}"]
print("| " + " | ".join(cells) + " |")
PY
            done
        done
    done
done
