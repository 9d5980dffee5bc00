# tests/mpi/driver.sh - the training driver's hooks, stop/resume and warm-started solves at -np 1,
# 2 and 4 (oversubscribed), on yeast.
. tests/common/tap.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for np in 1 2 4; do
    timeout 300 $MPIRUN -np $np "$BUILD/tests/mpi_driver" "$dir" || echo "not ok - mpi_driver at np $np exited $?"
done
