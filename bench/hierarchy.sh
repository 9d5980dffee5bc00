# bench/hierarchy.sh - the hierarchy task at size (issues 14 and 19), two tables.
#
# 1. The SSVM α update against an epoch: task.model = ssvm trained with sgd for EPOCHS epochs
#    (default 10; certificates off, solver.certify_every = 0, so an epoch is one pass) with the α
#    update after every epoch (task.alpha_every = 1, task.alpha_tol = 0 so it never stops
#    early), at every np of NPS (default 1 2). Per run: mean epoch seconds (differences of the
#    cumulative time_s, epochs 2..E; time_s does not include the update, which runs after the
#    epoch), mean α-update seconds (alpha_s: norms, Algorithm 5 on rank 0, broadcast, rescale),
#    their ratio (target: at most 5% on every row), the last alpha_change. Rows: imclef07a and
#    funcat_cellcycle (training files, data.normalize = l2), and two `strux gen --shape` sets,
#    written with the issue's commands:
#      strux gen OUT/unbalanced.svm --shape unbalanced --rows 10000 --features 1000 --cuts 10 --seed 1
#      strux gen OUT/random.svm --shape random --nodes 5000 --rows 100000 --features 20000 --nnz 50 --seed 1
#    (hierarchies OUT/unbalanced.hier, OUT/random.hier). Where `strux gen --shape` does not exist
#    yet (it comes with branch i14a) their rows say so and are not run. The random set's model is
#    5000 × 20001 doubles, 0.8 GB per rank.
# 2. LP statistics of the multi-label DAG programme (hierarchical.md §5.4) on a seeded layered
#    random DAG (tests/common/hier_fixture.py layered: DAG_NODES nodes, default 1000, depth 5,
#    10% second parents, 100 features, up to 3 leaves per row; 3000 training and 1000 test rows):
#    nhsvm with sgd, EPOCHS_LP epochs (default 6), λ = 1e-3, with task.prune on (the incumbent
#    start, task.lp_start = warm, and the standard basis, fresh) and off; each configuration
#    REPS times (default 2), alternating. Per configuration, the training record's mean over the
#    epochs of lp_free (share of oracle calls answered without an LP), lp_candidates and lp_ms,
#    the training seconds, and on the test rows (strux eval's counters, prediction: the LP, then
#    the binary programme where the LP is fractional): the share without an LP, mean candidates,
#    binary programmes (ILP fallbacks), ms per LP, and test jaccard.
# Metrics logs and models go to $BENCH_OUT (default out/bench/hierarchy); SETS, NPS, EPOCHS,
# EPOCHS_LP, REPS and PARTS (default "alpha lp") select what runs.
set -u
OUT=${BENCH_OUT:-out/bench/hierarchy}
mkdir -p "$OUT"
MPI="mpirun --oversubscribe"
SETS=${SETS:-"imclef07a funcat_cellcycle unbalanced random"}
NPS=${NPS:-"1 2"}
EPOCHS=${EPOCHS:-10}
EPOCHS_LP=${EPOCHS_LP:-6}
REPS=${REPS:-2}
DAG_NODES=${DAG_NODES:-1000}
PARTS=${PARTS:-"alpha lp"}
D=$STRUX_DATA
PY=/usr/bin/python3
printf '[surrogate]\ntype = margin\n' >"$OUT/h.ini"
echo "load: $(uptime)"

# Is `strux gen --shape` there? (exit 2 "unknown option '--shape'" before branch i14a)
have_shapes() {
    "$STRUX" gen "$OUT/probe.svm" --shape unbalanced --rows 20 --features 5 --seed 1 \
        >/dev/null 2>&1
}

alpha_table() {
    printf '\n%-18s %3s %12s %12s %8s %12s\n' set np epoch_s alpha_s ratio alpha_change
    for set in $SETS; do
        case $set in
        imclef07a) tr=$D/imclef07a/ImCLEF07A_train.svm.gz hier=$D/imclef07a/ImCLEF07A.hier ;;
        funcat_cellcycle) tr=$D/funcat_cellcycle/cellcycle_FUN_train.svm.gz
            hier=$D/funcat_cellcycle/cellcycle_FUN.hier ;;
        unbalanced | random)
            tr=$OUT/$set.svm hier=$OUT/$set.hier
            if ! have_shapes; then
                printf '%-18s not run: `strux gen --shape` is missing (branch i14a)\n' "$set"
                continue
            fi
            if [ ! -s "$tr" ]; then
                if [ $set = unbalanced ]; then
                    "$STRUX" gen "$tr" --shape unbalanced --rows 10000 --features 1000 --cuts 10 \
                        --seed 1 >/dev/null 2>"$OUT/gen_$set.err"
                else
                    "$STRUX" gen "$tr" --shape random --nodes 5000 --rows 100000 --features 20000 \
                        --nnz 50 --seed 1 >/dev/null 2>"$OUT/gen_$set.err"
                fi || { echo "$set: strux gen failed: $(tail -n 1 "$OUT/gen_$set.err")"; continue; }
            fi ;;
        *) echo "unknown set $set" >&2; continue ;;
        esac
        for np in $NPS; do
            log=$OUT/${set}_np$np.jsonl
            rm -f "$log"
            nice -n 10 $MPI -np "$np" "$STRUX" train "$OUT/h.ini" --quiet --set data.train="$tr" \
                --set data.test= --set task.type=hierarchy --set task.hierarchy="$hier" \
                --set task.model=ssvm --set solver.type=sgd --set solver.lambda=1e-4 \
                --set solver.epochs="$EPOCHS" --set solver.certify_every=0 \
                --set task.alpha_every=1 --set task.alpha_tol=0 --set data.normalize=l2 \
                --set output.model="$OUT/${set}_np$np.h5" --set output.metrics="$log" \
                >/dev/null 2>"$OUT/${set}_np$np.err" ||
                { echo "$set np $np failed: $(tail -n 1 "$OUT/${set}_np$np.err")"; continue; }
            $PY - "$log" "$set" "$np" <<'PY'
import sys, json
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows = [r for r in rows if r.get("epoch", 0) >= 1]
num = lambda v: v if isinstance(v, (int, float)) else None
# time_s is cumulative training time (epochs, certificates): an epoch's seconds are its difference
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
}

lp_table() {
    local W=$OUT/dag
    mkdir -p "$W"
    [ -s "$W/train.svm" ] || $PY tests/common/hier_fixture.py layered "$W" 7 "$DAG_NODES" 5 0.1 \
        100 0.3 train.svm:3000:1/1/2/3 test.svm:1000:1/1/2/3 ||
        { echo "the layered DAG fixture failed"; return; }
    $PY - "$W/dag.hier" <<'PY'
import sys
from collections import Counter
edges = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
nodes = {n for e in edges for n in e}
parents = Counter(c for _, c in edges)
print(f"\nLP statistics: layered DAG, {len(nodes)} nodes, {len(nodes - {p for p, _ in edges})} "
      f"leaves, {len(edges)} edges, {sum(v > 1 for v in parents.values())} nodes with two parents")
PY
    local configs="prune_warm prune_fresh noprune_warm"
    for rep in $(seq "$REPS"); do
        for c in $configs; do
            case $c in
            prune_warm) set_=(--set task.prune=true --set task.lp_start=warm) ;;
            prune_fresh) set_=(--set task.prune=true --set task.lp_start=fresh) ;;
            noprune_warm) set_=(--set task.prune=false --set task.lp_start=warm) ;;
            esac
            nice -n 10 "$STRUX" train "$OUT/h.ini" --quiet --set data.train="$W/train.svm" \
                --set data.test= --set task.type=hierarchy --set task.hierarchy="$W/dag.hier" \
                --set task.model=nhsvm --set solver.type=sgd --set solver.lambda=1e-3 \
                --set solver.epochs="$EPOCHS_LP" --set solver.certify_every=0 --set data.bias=1 \
                "${set_[@]}" --set output.model="$W/${c}_$rep.h5" \
                --set output.metrics="$W/${c}_$rep.jsonl" >/dev/null 2>"$W/${c}_$rep.err" ||
                { echo "$c failed: $(tail -n 1 "$W/${c}_$rep.err")"; continue; }
            nice -n 10 "$STRUX" eval --model "$W/${c}_$rep.h5" --data "$W/test.svm" \
                >"$W/${c}_$rep.eval" 2>>"$W/${c}_$rep.err" ||
                echo "$c eval failed: $(tail -n 1 "$W/${c}_$rep.err")"
        done
    done
    $PY - "$W" "$REPS" $configs <<'PY'
import sys, json
w, reps, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
mean = lambda v: sum(v) / len(v) if v else float("nan")
print(f"{'configuration':<14} {'train: free':>11} {'cands':>7} {'ms/LP':>7} {'train_s':>8} | "
      f"{'test: free':>10} {'cands':>7} {'ILPs':>5} {'ms/LP':>7} {'jaccard':>8}")
for c in configs:
    tr, te = [], []
    for r in range(1, reps + 1):
        try:
            rows = [json.loads(l) for l in open(f"{w}/{c}_{r}.jsonl") if l.strip()]
            te.append(json.loads(open(f"{w}/{c}_{r}.eval").read()))
        except (OSError, ValueError):
            continue
        tr.append((mean([x["lp_free"] for x in rows]), mean([x["lp_candidates"] for x in rows]),
                   mean([x["lp_ms"] for x in rows if x["lp_ms"] is not None]), rows[-1]["time_s"]))
    if not tr:
        print(f"{c:<14} no run"); continue
    f = [mean([t[k] for t in tr]) for k in range(4)]
    g = [mean([e[k] for e in te]) for k in ("lp_free", "lp_candidates", "lp_ilp", "lp_ms", "jaccard")]
    print(f"{c:<14} {100 * f[0]:10.1f}% {f[1]:7.1f} {f[2]:7.3f} {f[3]:8.1f} | "
          f"{100 * g[0]:9.1f}% {g[1]:7.1f} {g[2]:5.0f} {g[3]:7.3f} {g[4]:8.4f}")
PY
}

for part in $PARTS; do
    case $part in
    alpha) alpha_table ;;
    lp) lp_table ;;
    *) echo "unknown part $part" >&2 ;;
    esac
done
