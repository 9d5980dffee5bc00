/* tests/common/mpi_check.h - the TAP line of an MPI test program (tests/mpi/): every rank's
 * verdict is combined, so a check passes only if it passed on every rank, and rank 0 prints
 * "ok N - np R: what" for the whole job. */
#ifndef STRUX_TEST_MPI_CHECK_H
#define STRUX_TEST_MPI_CHECK_H

#include "strux/comm.h"

void mpi_check(strux_comm *c, int ok, const char *what);

#endif
