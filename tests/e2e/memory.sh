# tests/e2e/memory.sh - memory accounting of `strux train` (issue 13): every rank logs its estimate
# (data, model copies, dual state, caches) before reading the data and again with the data read;
# the model part before reading equals the closed form n_labels × (dim + bias) × 8 bytes (+ 20 a
# row) from an HDF5 container's attributes and from an XMC header; run.max_memory too small stops
# the run with exit 5 before the data is read, naming the estimate and the options that shrink it
# (model.precision = float, model.layout = sparse, more ranks); data without a header passes the
# first check and is refused with the data read; a model beyond the host's MemAvailable is
# refused the same way; a run within its budget trains. sdca's sparse dual lists (issue 12,
# solver.dual_blocks, auto for the 200 labels here) are estimated at their floor, 600 × 189 bytes,
# which the dual state logged after the epoch reaches and the dense 1.0 MB bounds; the dense run's
# refusal names solver.dual_blocks = sparse among the options that shrink it.
. tests/common/tap.sh
G=(--rows 600 --features 3000 --labels 200 --nnz 10 --labels-per-row 2 --seed 4)
"$STRUX" gen "$WORK/d.h5" "${G[@]}" 2>/dev/null && "$STRUX" gen "$WORK/d.svm" "${G[@]}" 2>/dev/null
ok $? "gen writes the synthetic set as HDF5 and as XMC text"
tail -n +2 "$WORK/d.svm" >"$WORK/nohead.svm" # the same rows without the XMC header
cat >"$WORK/m.ini" <<INI
[data]
train = $WORK/d.h5
bias = 1
[task]
type = multilabel
[surrogate]
type = margin
[solver]
type = sdca
lambda = 1e-3
epochs = 1
seed = 1
dual_blocks = dense
[output]
model = $WORK/m.h5
metrics =
INI
# 200 rows × 3001 columns × 8 bytes + 200 × 20 = 4,805,600 bytes
for data in d.h5 d.svm; do
    "$STRUX" train "$WORK/m.ini" --set data.train="$WORK/$data" 2>"$WORK/err"
    ok $? "$data: trains within the budget"
    grep -q "memory estimate before reading the data: .*model 4.8 MB x 1 copy, dual state 1.0 MB" \
        "$WORK/err"
    ok $? "$data: the estimate before reading names the model's 4.8 MB and 1.0 MB of duals"
    grep "memory estimate" "$WORK/err" | diag
done
for data in d.h5 d.svm; do
    expect_fail 5 "needs about 5.[89] MB per rank before reading the data.*run.max_memory \(3.0 MB\).*model.precision = float \(model 2.4 MB less\); model.layout = sparse.*more ranks" \
        "$data: run.max_memory = 3 stops before reading, with the estimate and what shrinks it" \
        -- "$STRUX" train "$WORK/m.ini" --set data.train="$WORK/$data" --set run.max_memory=3
    ! grep -q "train data" "$WORK/err"
    ok $? "$data: no data was read"
done
grep -q "solver.dual_blocks = sparse (lists of the non-zero duals)" "$WORK/err"
ok $? "the refusal names solver.dual_blocks = sparse"
"$STRUX" train "$WORK/m.ini" --verbose --set solver.dual_blocks=auto 2>"$WORK/err"
ok $? "solver.dual_blocks = auto (sparse lists for 200 labels) trains"
grep -q "memory estimate before reading the data: .*dual state 0.1 MB (sparse lists" "$WORK/err" &&
    grep -q "memory estimate with the data read: .*dual state 0.1 MB (sparse lists" "$WORK/err"
ok $? "the estimates name the sparse lists' floor (0.11 MB) before and with the data read"
$PY - "$WORK/err" <<'PY'
import re, sys
mb = [float(x) for x in re.findall(r"sdca: dual state ([0-9.]+) MB \(sparse blocks\)", open(sys.argv[1]).read())]
print(f"# dual state logged: {mb} MB; floor 0.1134, dense 1.0")
sys.exit(0 if mb and 0.1134 <= mb[-1] < 1.0 else 1)
PY
ok $? "the sparse lists logged after the epoch hold at least their floor and less than the dense blocks"
expect_fail 5 "needs about .* MB per rank with the data read.*run.max_memory \(3.0 MB\)" \
    "no header: the first check passes and the run stops with the data read" \
    -- "$STRUX" train "$WORK/m.ini" --set data.train="$WORK/nohead.svm" --set run.max_memory=3
grep -q "memory estimate before reading the data: .*model not known until the data is read" \
    "$WORK/err"
ok $? "no header: the model is not known before reading"
expect_fail 5 "more than this rank's share of the host's MemAvailable" \
    "a model beyond the host's MemAvailable is refused before reading" \
    -- "$STRUX" train "$WORK/m.ini" --set data.n_labels=1000000 --set data.dim=100000000
$MPIRUN -np 2 "$STRUX" train "$WORK/m.ini" 2>"$WORK/err"
ok $? "np 2 trains"
[ "$(grep -c 'memory estimate with the data read' "$WORK/err")" -eq 2 ] &&
    grep -q "\[strux r1\] memory estimate" "$WORK/err"
ok $? "np 2: each rank logs its estimate (one copy more: the CoCoA+ local view)"
grep "memory estimate with" "$WORK/err" | diag
echo "1..$TAP_N"
