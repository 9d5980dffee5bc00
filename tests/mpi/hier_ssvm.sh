# tests/mpi/hier_ssvm.sh - the SSVM alpha update of the hierarchy task (solvers/alpha.c) at -np 1,
# 2 and 4 (oversubscribed) on a seeded synthetic tree; np 1 writes the data and the reference.
. tests/common/tap.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for np in 1 2 4; do
    timeout 300 $MPIRUN -np $np "$BUILD/tests/mpi_hier_ssvm" "$dir" || echo "not ok - mpi_hier_ssvm at np $np exited $?"
done
