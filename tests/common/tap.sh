# tests/common/tap.sh - TAP helpers for the MPI and end-to-end test scripts (sourced).
# Each check prints "ok N - description" or "not ok N - description" plus diagnostics;
# tests/run counts the lines. Scripts run from the repository root with $STRUX set.
set -u
TAP_N=0
TAP_FAILED=0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
MPIRUN="mpirun --oversubscribe"

ok() { # ok CONDITION-STATUS DESCRIPTION   (pass the status of a test command: ok $? "...")
    TAP_N=$((TAP_N + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $TAP_N - $2"
    else
        echo "not ok $TAP_N - $2"
        TAP_FAILED=$((TAP_FAILED + 1))
    fi
}

diag() { sed -e 's/^/# /'; }

# expect_fail CODE PATTERN DESCRIPTION -- command...
# The command must exit with CODE and print a line matching PATTERN (extended regex) on stderr.
expect_fail() {
    local code=$1 pattern=$2 desc=$3
    shift 4
    "$@" >"$WORK/out" 2>"$WORK/err"
    local rc=$?
    if [ "$rc" -eq "$code" ] && grep -qE -- "$pattern" "$WORK/err"; then
        ok 0 "$desc"
    else
        ok 1 "$desc"
        echo "expected exit $code and /$pattern/, got exit $rc; stderr:" | diag
        head -n 20 "$WORK/err" | diag
    fi
}

# expect_ok DESCRIPTION -- command...   (exit status 0)
expect_ok() {
    local desc=$1
    shift 2
    "$@" >"$WORK/out" 2>"$WORK/err"
    local rc=$?
    ok $rc "$desc"
    [ $rc -eq 0 ] || head -n 20 "$WORK/err" | diag
}

# Python with the Debian h5py/numpy (the pyenv python on PATH has neither); scripts/ on its path
# for strux_model.Model (weights read from /weights or /weights_csr alike).
PY=/usr/bin/python3
export PYTHONPATH="$PWD/scripts${PYTHONPATH:+:$PYTHONPATH}"
