#!/usr/bin/env bash
# bench/m3l.sh - solver.type = m3l timings (issue 16 "bench/m3l.sh" (1)): on each data set,
#   - LIBLINEAR: liblinear-train -s 3 -c 1/(λn) -B 1 -e EPS once per label (wall time summed,
#     file I/O included), its objective J_ll (tests/common/liblinear_ref.py);
#   - m3l with R = I: the first epoch whose primal is within 1e-6 relative of J_ll (certified
#     every epoch), its training seconds with those certificates (time_s) and without them (a
#     second run of that many epochs certified only after the last: its time_s one epoch before);
#   - m3l with the empirical moment prior: training seconds per epoch against R = I's (50 epochs,
#     no certificate).
# Usage: BUILD=build bench/m3l.sh [SET...] (default: medical enron); EPS (default 1e-3).
set -eu
cd "$(dirname "$0")/.."
STRUX=${STRUX:-$PWD/${BUILD:-build}/bin/strux}
DATA=${STRUX_DATA:-$PWD/../shared/data}
EPS=${EPS:-1e-3}
PY=/usr/bin/python3
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
SETS=${*:-medical enron}
echo "| set | LIBLINEAR per label, summed (s) | J_ll | m3l R = I to J_ll, certified every epoch (s) | epochs | without the certificates (s) | s/epoch R = I | s/epoch empirical R |"
echo "|---|---|---|---|---|---|---|---|"
for d in $SETS; do
    lam=1e-3
    cfg=configs/$d.ini
    [ -e "$cfg" ] || cfg=configs/yeast.ini
    LIBLINEAR_EPS=$EPS $PY tests/common/liblinear_ref.py "$DATA/$d/${d}_train.svm.gz" $lam >"$W/ll.json"
    common=("$cfg" --quiet --set data.train="$DATA/$d/${d}_train.svm.gz" --set data.test=
        --set data.label_names= --set data.scale=none --set data.bias=1 --set solver.type=m3l
        --set solver.lambda=$lam --set solver.sync_every=0 --set output.eval_every=0
        --set output.model="$W/m.h5")
    "$STRUX" train "${common[@]}" --set solver.tol=1e-7 --set solver.epochs=3000 \
        --set output.metrics="$W/i.jsonl" >/dev/null 2>&1 || true
    hit=$($PY -c 'import json,sys
ll=json.load(open(sys.argv[1])); rows=[json.loads(l) for l in open(sys.argv[2])]
print(next((r["epoch"] for r in rows if r["primal"] is not None and r["primal"] <= ll["objective"]*(1+1e-6)), 0))' "$W/ll.json" "$W/i.jsonl")
    echo '{"time_s": null}' >"$W/h.jsonl"
    [ "$hit" -gt 1 ] && "$STRUX" train "${common[@]}" --set solver.tol=0 --set solver.epochs=$hit \
        --set solver.certify_every=0 --set output.metrics="$W/h.jsonl" >/dev/null 2>&1
    for p in identity empirical; do
        "$STRUX" train "${common[@]}" --set m3l.prior=$p --set solver.tol=0 --set solver.epochs=50 \
            --set solver.certify_every=0 --set output.metrics="$W/t_$p.jsonl" >/dev/null 2>&1 || true
    done
    $PY - "$d" "$W/ll.json" "$W/i.jsonl" "$W/h.jsonl" "$W/t_identity.jsonl" "$W/t_empirical.jsonl" <<'PY'
import json, sys
name, ll = sys.argv[1], json.load(open(sys.argv[2]))
rows = [json.loads(l) for l in open(sys.argv[3])]
quiet = [json.loads(l) for l in open(sys.argv[4])]
t_quiet = quiet[-2]["time_s"] if len(quiet) > 1 else float("nan")
hit = next((r for r in rows if r["primal"] is not None and r["primal"] <= ll["objective"] * (1 + 1e-6)), None)
per = []
for p in sys.argv[5:]:
    r = [json.loads(l) for l in open(p)]
    # the last epoch carries the closing certificate: per-epoch time from the one before it
    per.append(r[-2]["time_s"] / r[-2]["epoch"])
t = f"{hit['time_s']:.3f} | {hit['epoch']} | {t_quiet:.3f}" if hit else "not reached | - | -"
print(f"| {name} | {ll['train_s']:.3f} | {ll['objective']:.8g} | {t} | {per[0]:.4f} | {per[1]:.4f} |")
PY
done
