# tests/e2e/search_cli.sh - the surrogates and searches through `strux train`: every surrogate
# trains on yeast with its default search and writes the pair into the model; option errors name
# the key and its origin; the Sarawagi-Gupta search refuses to run inside SGD (no slack ξ_i),
# naming the reason; a key read only by another search is reported as ignored.
. tests/common/tap.sh
C=configs/yeast_slack.ini
for pair in margin:margin slack:angular beta:convex_hull probloss:convex_hull microf1:convex_hull; do
    type=${pair%%:*}
    "$STRUX" train $C --quiet --set surrogate.type=$type --set surrogate.search=auto \
        --set solver.type=sgd --set solver.epochs=2 --set output.model="$WORK/$type.h5" --set output.metrics= \
        >"$WORK/$type.json" 2>"$WORK/$type.err"
    ok $? "surrogate $type trains with its default search"
    $PY - "$WORK/$type.h5" "$type" "${pair#*:}" "$WORK/$type.json" <<'PY'
import sys, json, h5py
f = h5py.File(sys.argv[1], "r")
a = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in f.attrs.items()}
m = json.load(open(sys.argv[4]))
sys.exit(0 if a["surrogate"] == sys.argv[2] and a["search"] == sys.argv[3]
         and 0 < m["micro_f1"] <= 1 else 1)
PY
    ok $? "the $type model records search ${pair#*:} and scores the test set"
done
expect_fail 2 "surrogate.search = angular needs a surrogate with flag slack_form; surrogate.type = beta lacks it: surrogates with it: slack; searches that answer beta: convex_hull" \
    "angular refuses a surrogate other than slack" -- \
    "$STRUX" train $C --set surrogate.type=beta --set surrogate.search=angular \
    --set output.model="$WORK/x.h5"
expect_fail 2 "set: surrogate.beta = 2 is outside \[0, 1\]" "beta outside [0, 1]" -- \
    "$STRUX" train $C --set surrogate.type=beta --set surrogate.beta=2 --set output.model="$WORK/x.h5"
expect_fail 2 "surrogate.queue = 'lifo' is not one of: priority\|fifo" "unknown angular queue" -- \
    "$STRUX" train $C --set surrogate.queue=lifo --set output.model="$WORK/x.h5"
expect_fail 2 "surrogate.search = sarawagi needs the slack ξ_i of each example \(flag keeps_slack\), which solver.type = sgd does not keep; solvers that do: cutting_plane" \
    "sarawagi refuses to run inside SGD" -- \
    "$STRUX" train $C --set surrogate.search=sarawagi --set solver.type=sgd --set output.model="$WORK/x.h5"
"$STRUX" train $C --set surrogate.type=margin --set surrogate.search=margin --set surrogate.queue=fifo \
    --set solver.epochs=1 --set output.model="$WORK/x.h5" --set output.metrics= >/dev/null 2>"$WORK/warn"
grep -qE "surrogate.queue is ignored: it is read only when surrogate.search=angular" "$WORK/warn"
ok $? "an angular-only key is reported as ignored for margin rescaling"
