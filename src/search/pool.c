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
    STRUX_TRY(
        strux_alloc_array(&p->y_block, slots * (size_t)(cap > 0 ? cap : 1), sizeof *p->y_block));
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

strux_status strux_label_pool_save(const strux_label_pool *p, int64_t first, int64_t n,
                                   strux_blob *b)
{
    STRUX_TRY(strux_blob_put(b, &n, sizeof n));
    for (int64_t k = first; k < first + n; k++) {
        const strux_label *y = &p->slot[k];
        STRUX_TRY(strux_blob_put(b, &y->n, sizeof y->n));
        STRUX_TRY(strux_blob_put(b, &y->n_mu, sizeof y->n_mu));
        STRUX_TRY(strux_blob_put(b, y->y, (size_t)y->n * sizeof *y->y));
        STRUX_TRY(strux_blob_put(b, y->mu, (size_t)y->n_mu * sizeof *y->mu));
    }
    return STRUX_OK;
}

strux_status strux_label_pool_load(strux_label_pool *p, int64_t first, int64_t n, strux_blob *b)
{
    int64_t n_saved;
    STRUX_TRY(strux_blob_get(b, &n_saved, sizeof n_saved, "label pool size"));
    STRUX_CHECK(n_saved == n && first + n <= p->n, STRUX_ERR_INPUT,
                "checkpoint holds %lld remembered labels where this run keeps %lld (a different "
                "data file or search setting)",
                (long long)n_saved, (long long)n);
    for (int64_t k = first; k < first + n; k++) {
        strux_label *y = &p->slot[k];
        STRUX_TRY(strux_blob_get(b, &y->n, sizeof y->n, "label"));
        STRUX_TRY(strux_blob_get(b, &y->n_mu, sizeof y->n_mu, "label"));
        STRUX_CHECK(y->n >= 0 && y->n <= y->cap && y->n_mu >= 0 && y->n_mu <= y->mu_cap,
                    STRUX_ERR_INPUT,
                    "checkpoint label of %d parts and %lld marginals does not "
                    "fit this run's labels",
                    y->n, (long long)y->n_mu);
        STRUX_TRY(strux_blob_get(b, y->y, (size_t)y->n * sizeof *y->y, "label"));
        STRUX_TRY(strux_blob_get(b, y->mu, (size_t)y->n_mu * sizeof *y->mu, "label"));
    }
    return STRUX_OK;
}
