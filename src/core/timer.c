/* core/timer.c - monotonic wall-clock seconds for timers and metrics. */
#include "strux/core.h"

#include <time.h>

double strux_time_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
