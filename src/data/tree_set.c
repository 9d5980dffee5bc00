/* data/tree_set.c - the plain-array label-tree ensemble (strux_tree_set, data.h) that model
 * files carry for task.type = rta: only its release lives here; the task fills it and io writes
 * and reads it. */
#include "strux/data.h"

void strux_tree_set_free(strux_tree_set *ts)
{
    strux_free(&ts->trees);
    strux_free(&ts->edges);
    strux_free(&ts->mult);
    *ts = (strux_tree_set){0};
}
