# tests/mpi/rounds.sh - stops between the CoCoA+ rounds of an epoch and the resume at another
# rank count (tests/mpi/rounds.c): a chain of jobs on one directory, -np 2 (stage first: stop
# mid-epoch and resume), -np 1 (stage middle: the same, and the -np 2 checkpoint resumed and
# stopped again), -np 4 (stage last, oversubscribed: that checkpoint resumed to the end).
. tests/common/tap.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for job in 2:first 1:middle 4:last; do
    np=${job%%:*} stage=${job#*:}
    timeout 300 $MPIRUN -np "$np" "$BUILD/tests/mpi_rounds" "$dir" "$stage" ||
        echo "not ok - mpi_rounds $stage at np $np exited $?"
done
