# tests/mpi/comm.sh - the dist layer at -np 1, 2 and 4 (oversubscribed).
. tests/common/tap.sh
for np in 1 2 4; do
    timeout 120 $MPIRUN -np $np "$BUILD/tests/mpi_comm" || echo "not ok - mpi_comm at np $np exited $?"
done
