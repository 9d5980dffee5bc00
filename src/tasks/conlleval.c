/* tasks/conlleval.c - chunk-level counts as the CoNLL shared-task script conlleval computes them
 * (Tjong Kim Sang & Buchholz 2000; slack_bicriteria.md §6 A20/A32: report corpus-level chunk F1).
 * A tag name "B-NP" splits at its first '-' into a prefix ("B") and a chunk type ("NP"); "O" has
 * no type. A chunk starts and ends between two tokens by conlleval's startOfChunk/endOfChunk rules
 * (IOB1, IOB2, IOE and bracket representations); a chunk is correct when it starts and ends at the
 * same tokens with the same type in both sequences. Every sequence is framed by sentence
 * boundaries, which count as "O". */
#include "task_impl.h"

#include <string.h>

/* Prefix of a tag with no one-character prefix ("NP" without '-'): matches no rule but
 * "not O and not '.'". */
#define PREFIX_OTHER '?'

strux_status strux_chunk_tags_parse(char *const *names, int32_t K, const char *path,
                                    strux_chunk_tag *tags)
{
    for (int32_t k = 0; k < K; k++) {
        const char *s = names[k];
        STRUX_CHECK(s && s[0], STRUX_ERR_INPUT, "%s: tag %d has no name", path, k);
        const char *dash = strchr(s, '-');
        size_t plen = dash ? (size_t)(dash - s) : strlen(s);
        tags[k].prefix = plen == 1 ? s[0] : PREFIX_OTHER;
        tags[k].type = -1;
        if (!dash) continue;
        /* the type id is the first tag whose type text is the same */
        for (int32_t j = 0; j <= k && tags[k].type < 0; j++) {
            const char *d = strchr(names[j], '-');
            if (d && strcmp(d + 1, dash + 1) == 0) tags[k].type = j;
        }
    }
    return STRUX_OK;
}

/* conlleval's endOfChunk(prevTag, tag, prevType, type) */
static int chunk_ends(char pt, char t, int32_t ptype, int32_t type)
{
    if ((pt == 'B' || pt == 'I') && (t == 'B' || t == 'O')) return 1;
    if (pt == 'E' && (t == 'E' || t == 'I' || t == 'O')) return 1;
    if (pt != 'O' && pt != '.' && ptype != type) return 1;
    return pt == ']' || pt == '[';
}

/* conlleval's startOfChunk(prevTag, tag, prevType, type) */
static int chunk_starts(char pt, char t, int32_t ptype, int32_t type)
{
    if ((pt == 'B' || pt == 'I' || pt == 'O') && t == 'B') return 1;
    if (pt == 'O' && (t == 'I' || t == 'E')) return 1;
    if (pt == 'E' && (t == 'E' || t == 'I')) return 1;
    if (t != 'O' && t != '.' && ptype != type) return 1;
    return t == '[' || t == ']';
}

void strux_chunk_count(const strux_chunk_tag *tags, const int32_t *truth, const int32_t *pred,
                       int32_t T, double found[3])
{
    char lc = 'O', lg = 'O'; /* previous prefixes: the boundary before the sequence */
    int32_t lct = -1, lgt = -1;
    int in_correct = 0;
    for (int32_t t = 0; t <= T; t++) {
        /* position T is the boundary after the sequence */
        char c = t < T ? tags[truth[t]].prefix : 'O', g = t < T ? tags[pred[t]].prefix : 'O';
        int32_t ct = t < T ? tags[truth[t]].type : -1, gt = t < T ? tags[pred[t]].type : -1;
        int end_c = chunk_ends(lc, c, lct, ct), end_g = chunk_ends(lg, g, lgt, gt);
        int start_c = chunk_starts(lc, c, lct, ct), start_g = chunk_starts(lg, g, lgt, gt);
        if (in_correct) {
            if (end_c && end_g && lgt == lct) {
                in_correct = 0;
                found[2] += 1;
            } else if (end_c != end_g || gt != ct) {
                in_correct = 0;
            }
        }
        if (start_c && start_g && gt == ct) in_correct = 1;
        found[0] += start_c;
        found[1] += start_g;
        lc = c, lg = g, lct = ct, lgt = gt;
    }
    /* the closing boundary ends every open chunk, so in_correct is 0 here (conlleval's final
       check never fires for framed sequences) */
}
