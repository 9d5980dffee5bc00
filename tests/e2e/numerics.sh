# tests/e2e/numerics.sh - a run whose objective grows far beyond what w = 0 attains is warned
# about (λ = 1e-12 with SGD: the first step is huge), once and on rank 0 only; a healthy run is
# not. Non-finite objectives stop the run (covered by the solvers' NUMERIC checks).
. tests/common/tap.sh
"$STRUX" train configs/yeast.ini --set solver.type=sgd --set solver.lambda=1e-12 \
    --set solver.epochs=3 --set data.test= --set output.metrics= \
    --set output.model="$WORK/d.h5" 2>"$WORK/err"
ok $? "a run at λ = 1e-12 still ends (exit 0)"
[ "$(grep -c 'the iterates are diverging' "$WORK/err")" -eq 1 ] &&
    grep -qE "warning: the objective [0-9.e+]+ after epoch 1 is above 10 x 14, the objective of w = 0 at most" "$WORK/err"
ok $? "it is warned about once, with the objective and the bound J(0) <= 14 of yeast"
$MPIRUN -np 2 "$STRUX" train configs/yeast.ini --set solver.type=sgd --set solver.lambda=1e-12 \
    --set solver.epochs=2 --set data.test= --set output.metrics= \
    --set output.model="$WORK/d2.h5" 2>"$WORK/err2"
[ "$(grep -c 'the iterates are diverging' "$WORK/err2")" -eq 1 ]
ok $? "at -np 2 the warning is printed once"
"$STRUX" train configs/yeast.ini --set solver.epochs=5 --set data.test= --set output.metrics= \
    --set output.model="$WORK/h.h5" 2>"$WORK/err3"
! grep -q "diverging" "$WORK/err3"
ok $? "a healthy run is not warned about"
