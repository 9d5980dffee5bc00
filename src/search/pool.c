/* search/pool.c - fixed slots of labels in one block, for the searches' per-example state (label
 * caches, hull vertices): allocated once when a search is created, never per example. */
#include "search_impl.h"

strux_status strux_label_pool_create(strux_label_pool *p, int64_t n, const strux_task *t,
                                     const strux_dataset *ds)
{
    *p = (strux_label_pool){0};
    strux_label proto;
    STRUX_TRY(strux_task_label_alloc(t, ds, &proto));
    int32_t cap = proto.cap;
    int64_t mu_cap = proto.mu_cap;
    strux_label_free(&proto);
    size_t slots = (size_t)(n > 0 ? n : 1);
    STRUX_TRY(strux_alloc_array(&p->slot, slots, sizeof *p->slot));
    STRUX_TRY(strux_alloc_array(&p->y_block, slots * (size_t)(cap > 0 ? cap : 1),
                                sizeof *p->y_block));
    if (mu_cap > 0)
        STRUX_TRY(strux_alloc_array(&p->mu_block, slots * (size_t)mu_cap, sizeof *p->mu_block));
    for (int64_t k = 0; k < n; k++) {
        strux_label *y = &p->slot[k];
        y->cap = cap;
        y->y = p->y_block + k * (int64_t)cap;
        y->mu_cap = mu_cap;
        y->mu = mu_cap > 0 ? p->mu_block + k * mu_cap : NULL;
    }
    p->n = n;
    return STRUX_OK;
}

void strux_label_pool_free(strux_label_pool *p)
{
    strux_free(&p->slot);
    strux_free(&p->y_block);
    strux_free(&p->mu_block);
    p->n = 0;
}
