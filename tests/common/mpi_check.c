/* tests/common/mpi_check.c - the TAP line of an MPI test program (mpi_check.h). */
#include "mpi_check.h"

#include <stdio.h>

void mpi_check(strux_comm *c, int ok, const char *what)
{
    static int n_test;
    double bad = !ok;
    strux_comm_allreduce_max(c, &bad, 1);
    n_test++;
    if (strux_comm_rank(c) == 0)
        printf("%sok %d - np %d: %s\n", bad ? "not " : "", n_test, strux_comm_size(c), what);
}
