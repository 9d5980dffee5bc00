# bench/configs.sh - every shipped config (configs/*.ini) trained as a new user would, with its own
# settings: one row per run with the solver, the epochs it ran, the final primal J(w), the final
# relative duality gap (gap / primal; SGD certifies none) and whether it reached the config's
# solver.tol, the training seconds (metrics time_s: epochs, certificates excluded) and wall seconds
# (the whole command), and the headline test metric. Everything is read from the run's metrics log
# (output.metrics, last line). Runs at -np 1; configs/yeast.ini also at -np 2, as `make demo` runs
# it. CONFIGS="yeast scene" restricts the rows. Runs `make data` first (CoNLL-2000, OCR).
set -u
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
make -s data >/dev/null || exit 1
NP2=" yeast "
names=${CONFIGS:-$(for f in configs/*.ini; do basename "$f" .ini; done)}
echo "| config | np | task | surrogate | solver | epochs | final primal | relative gap | converged (tol) | train s | wall s | test metric |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for cfg in $names; do
    nps=1
    case "$NP2" in *" $cfg "*) nps="1 2" ;; esac
    for np in $nps; do
        t0=$(date +%s.%N)
        mpirun --oversubscribe -np $np "$STRUX" train "configs/$cfg.ini" --quiet \
            --set output.model="$WORK/m.h5" --set output.metrics="$WORK/m.jsonl" \
            >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; exit 1; }
        wall=$(echo "$(date +%s.%N) - $t0" | bc)
        /usr/bin/python3 - "$cfg" "$np" "$WORK/m.jsonl" "$wall" <<'PY'
import configparser, json, sys
cfg, np, log, wall = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
ini = configparser.ConfigParser(inline_comment_prefixes=";")
ini.read(f"configs/{cfg}.ini")
solver = ini.get("solver", "type", fallback="sgd")
tol = float(ini.get("solver", "tol", fallback="1e-4"))  # docs/config.md default
task = ini["task"]["type"]
last = [json.loads(l) for l in open(log)][-1]
p, gap = last["primal"], last.get("gap")
if gap is None:
    rel, conv = "none (sgd)", "no (no dual)"
else:
    rel = f"{gap / p:.1e}"
    conv = f"{'yes' if gap <= tol * p else 'NO'} ({tol:g})"
metric = {"multilabel": ["hamming_loss", "micro_f1"], "pairwise": ["hamming_loss", "micro_f1"],
          "multiclass": ["accuracy"], "chain": ["chunk_f1", "token_accuracy"]}[task]
m = ", ".join(f"{k} {last['test_' + k]:.4f}" for k in metric if last.get("test_" + k) is not None)
print(f"| {cfg} | {np} | {task} | {ini['surrogate']['type']} | {solver} | {last['epoch']} | "
      f"{p:.6g} | {rel} | {conv} | {last['time_s']:.2f} | {wall:.1f} | {m} |")
PY
    done
done
