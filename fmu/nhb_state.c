/* nhbridge FMU runtime, core: FMU states: get, set, serialize (see nhb_core.h, fmu/README.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nhb_internal.h"

/* ============================================================================================== */
/* FMU state: get, set, serialize                                                                 */
/* ============================================================================================== */

/* Layout of a state (all integers little or big endian as the platform, read with memcpy):
 *   [0, 8)    magic "NHBSTATE"
 *   [8, 12)   uint32 format version (NHB_STATE_VERSION)
 *   [12, 16)  uint32 length L of the GUID
 *   [16, 24)  uint64 total size in bytes
 *   [24, 32)  uint64 checksum: 64-bit FNV-1a of all other bytes
 *   [32, ...) the GUID (L bytes, zero-padded to a multiple of 8), the array sizes (9 int64: NX, NQ,
 *             NP, NIN, NV, NY, NLAM, NRES, NSW), then the fields of visit_state (int64 and double).
 * Version 2 added NSW, the modes of the switched elements, the switch count and the times of the latest
 * switches (Zeno detection); version 3 the current split of the velocities of a model that re-partitions
 * (NHB_REPARTITION: NQ int64 flags, 1 for a dependent coordinate, and the sign of det(A_dep)). */
#define NHB_STATE_MAGIC   "NHBSTATE"
#define NHB_STATE_VERSION 3u
#define NHB_STATE_HEADER  32u

typedef unsigned long long nhb_u64;

enum {
    SER_SIZE,
    SER_WRITE,
    SER_CHECK,
    SER_READ
};

typedef struct {
    int op;                  /* SER_SIZE: count bytes; SER_WRITE: instance -> buffer; SER_CHECK: validate
                                 the buffer without changing the instance; SER_READ: buffer -> instance */
    unsigned char *out;      /* SER_WRITE */
    const unsigned char *in; /* SER_CHECK, SER_READ */
    size_t pos;
    unsigned allowed_modes; /* SER_CHECK: the modes the state may carry */
    int interface;          /* SER_CHECK: the interface the state must have (-1: any) */
    const char *bad;        /* SER_CHECK: name of the first invalid field */
} ser_ctx;

static size_t guid_padded(void)
{
    return (strlen(NHB_GUID) + 7u) / 8u * 8u;
}

static nhb_u64 fnv1a(nhb_u64 h, const unsigned char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* Checksum of a state of `size` bytes: everything but the checksum field. */
static nhb_u64 state_checksum(const unsigned char *p, size_t size)
{
    nhb_u64 h = 14695981039346656037ull;
    h = fnv1a(h, p, 24);
    return fnv1a(h, p + NHB_STATE_HEADER, size - NHB_STATE_HEADER);
}

static void ser_int(ser_ctx *c, const char *name, long long *v, long long lo, long long hi)
{
    long long tmp;
    switch (c->op) {
    case SER_WRITE: memcpy(c->out + c->pos, v, sizeof tmp); break;
    case SER_CHECK: /* into the shadow instance of state_check, for the checks across fields */
        memcpy(&tmp, c->in + c->pos, sizeof tmp);
        if ((tmp < lo || tmp > hi) && c->bad == NULL)
            c->bad = name;
        *v = tmp;
        break;
    case SER_READ: memcpy(v, c->in + c->pos, sizeof tmp); break;
    default: break;
    }
    c->pos += sizeof tmp;
}

/* n doubles; with `finite`, SER_CHECK rejects non-finite values and copies them into a when it is
 * not NULL (the scalars of the shadow instance; its arrays are NULL) */
static void ser_doubles(ser_ctx *c, const char *name, double *a, int n, int finite)
{
    size_t bytes = n > 0 ? (size_t)n * sizeof(double) : 0u;
    int i;
    switch (c->op) {
    case SER_WRITE:
        if (bytes)
            memcpy(c->out + c->pos, a, bytes);
        break;
    case SER_CHECK:
        for (i = 0; finite && i < n; i++) {
            double d;
            memcpy(&d, c->in + c->pos + (size_t)i * sizeof d, sizeof d);
            if (!isfinite(d) && c->bad == NULL)
                c->bad = name;
        }
        if (a != NULL && bytes)
            memcpy(a, c->in + c->pos, bytes);
        break;
    case SER_READ:
        if (bytes)
            memcpy(a, c->in + c->pos, bytes);
        break;
    default: break;
    }
    c->pos += bytes;
}

/* An integer field of any integer type, through a long long. */
#define SER_INT(c, field, lo, hi)                                                                                      \
    do {                                                                                                               \
        long long v_ = (long long)(field);                                                                             \
        ser_int((c), #field, &v_, (lo), (hi));                                                                         \
        if ((c)->op == SER_READ || (c)->op == SER_CHECK)                                                               \
            (field) = v_;                                                                                              \
    } while (0)

/* Everything after the header and the GUID: the array sizes, then the fields. SER_CHECK runs on a
 * zeroed shadow instance (array pointers NULL): it reads the flags, counters and scalars into it, so
 * that the cached results are checked for finiteness exactly where the flags read before them mark
 * them valid (an invalid cache may hold anything, e.g. the NaN of a failed evaluation). */
static void visit_state(nhb_instance *inst, ser_ctx *c)
{
    const int nx = NHB_NX, nlam = NHB_NLAM;
    const long long counts[9] = {NHB_NX, NHB_NQ, NHB_NP, NHB_NIN, NHB_NV, NHB_NY, NHB_NLAM, NHB_NRES, NHB_NSW};
    int i;

    for (i = 0; i < 9; i++) {
        long long v = counts[i];
        ser_int(c, "array sizes (NX, NQ, NP, NIN, NV, NY, NLAM, NRES, NSW)", &v, counts[i], counts[i]);
    }
    SER_INT(c, inst->interface, NHB_ME, NHB_CS);
    if (c->op == SER_CHECK && c->bad == NULL && c->interface >= 0) {
        long long interface;
        memcpy(&interface, c->in + c->pos - sizeof interface, sizeof interface);
        if (interface != c->interface)
            c->bad = c->interface == NHB_ME ? "interface (a Co-Simulation state for a Model Exchange instance)"
                                            : "interface (a Model Exchange state for a Co-Simulation instance)";
    }
    SER_INT(c, inst->mode, 1, NHB_MODE_ANY);
    if (c->op == SER_CHECK && c->bad == NULL) {
        long long mode;
        memcpy(&mode, c->in + c->pos - sizeof mode, sizeof mode);
        if ((mode & (mode - 1)) != 0 || !((unsigned)mode & c->allowed_modes))
            c->bad = "mode (not one allowed for this instance here)";
    }
    SER_INT(c, inst->stop_time_defined, 0, 1);
    SER_INT(c, inst->rhs_valid, 0, 1);
    SER_INT(c, inst->out_valid, 0, 1);
    SER_INT(c, inst->int_valid, 0, 1);
    SER_INT(c, inst->dense_method, 0, 1);
    SER_INT(c, inst->rk_last, -1, 1);
    for (i = 0; i < 2; i++) {
        SER_INT(c, inst->rk_settled[i], 0, 1);
        SER_INT(c, inst->rk_steps[i], 0, 4 * NHB_RK_MEASURE - 1); /* halved when it reaches 4 * MEASURE */
        SER_INT(c, inst->rk_age[i], 0, 0x7fffffffffffffffLL);
    }
    ser_doubles(c, "time", &inst->time, 1, 1);
    ser_doubles(c, "start_time", &inst->start_time, 1, 1);
    ser_doubles(c, "stop_time", &inst->stop_time, 1, 1);
    ser_doubles(c, "rtol", &inst->rtol, 1, 1);
    ser_doubles(c, "atol", &inst->atol, 1, 1);
    ser_doubles(c, "t_int", &inst->t_int, 1, 1);
    ser_doubles(c, "dense_t0", &inst->dense_t0, 1, 1);
    ser_doubles(c, "dense_h", &inst->dense_h, 1, 1);
    ser_doubles(c, "h_next", inst->h_next, 2, 1);
    ser_doubles(c, "rk_evals", inst->rk_evals, 2, 1);
    ser_doubles(c, "rk_span", inst->rk_span, 2, 1);
    ser_doubles(c, "states", inst->x, nx, 1);
    ser_doubles(c, "parameters", inst->p, NHB_NP, 1);
    ser_doubles(c, "inputs", inst->in, NHB_NIN, 1);
    ser_doubles(c, "dx (marked valid)", inst->dx, nx, inst->rhs_valid);
    ser_doubles(c, "lambda (marked valid)", inst->lam, nlam, inst->rhs_valid);
    ser_doubles(c, "v (marked valid)", inst->v, NHB_NV, inst->out_valid);
    ser_doubles(c, "y (marked valid)", inst->y, NHB_NY, inst->out_valid);
    ser_doubles(c, "r (marked valid)", inst->r, NHB_NRES, inst->out_valid);
    ser_doubles(c, "xi", inst->xi, nx, 1);
    ser_doubles(c, "fi (marked valid)", inst->fi, nx, inst->int_valid);
    ser_doubles(c, "lam_i (marked valid)", inst->lam_i, nlam, inst->int_valid);
    ser_doubles(c, "dense (in use)", inst->dense, NHB_DENSE_VECTORS * nx, inst->int_valid && inst->t_int > inst->time);
    for (i = 0; i < NHB_NSW; i++) {                    /* a friction element's modes are -1, 0, 1; a diode's 0, 1 */
        if (c->op == SER_CHECK || c->op == SER_SIZE) { /* the shadow and the dummy instance have no arrays */
            long long v = 0;
            ser_int(c, "modes of the switched elements", &v, NHB_SWITCH_KIND[i] == NHB_SW_FRICTION ? -1 : 0, 1);
        } else {
            SER_INT(c, inst->modes[i], -1, 1);
        }
    }
    SER_INT(c, inst->events, 0, 0x7fffffffffffffffLL);
    ser_doubles(c, "times of the latest switches", inst->zeno, NHB_NSW > 0 ? NHB_ZENO_EVENTS : 0, 1);
    if (NHB_REPARTITION) { /* the current split (nhb_split.c): NQ flags with NRES set, the sign of det(A_dep) */
        long long set = 0;
        for (i = 0; i < NHB_NQ; i++) {
            long long v = c->op == SER_CHECK || c->op == SER_SIZE ? 0 : inst->split_dep[i];
            ser_int(c, "the split of the velocities", &v, 0, 1);
            if (c->op == SER_READ)
                inst->split_dep[i] = (int)v;
            set += v;
        }
        if (c->op == SER_CHECK && c->bad == NULL && set != NHB_NRES)
            c->bad = "the split of the velocities (not NRES dependent coordinates)";
        SER_INT(c, inst->split_sign, -1, 1);
    }
}

/* Size in bytes of a state of this model. */
static size_t state_bytes(void)
{
    ser_ctx c;
    nhb_instance dummy;
    memset(&c, 0, sizeof c);
    memset(&dummy, 0, sizeof dummy);
    c.op = SER_SIZE;
    visit_state(&dummy, &c);
    return NHB_STATE_HEADER + guid_padded() + c.pos;
}

/* The first inconsistency across the fields of a state read into the shadow s (after every field
 * passed its own range check), written into buf; NULL if there is none. These are the invariants
 * the runtime keeps: a tolerance in the range nhb_setup_experiment accepts, no time before the start
 * time, an integration point not behind the communication point and, when it lies ahead, the dense
 * output of a step from at most the communication point to it, and a consistent cost measurement. */
static const char *state_inconsistency(const nhb_instance *s, char *buf, size_t len)
{
    const double slack = 8.0 * DBL_EPSILON * fmax(fabs(s->time), fabs(s->t_int)); /* round-off of times */
    int i;

    if (!(s->rtol >= NHB_MIN_RTOL && s->rtol < NHB_MAX_RTOL))
        snprintf(buf, len, "rtol = %g (a relative tolerance must lie in [%g, %g))", s->rtol, NHB_MIN_RTOL,
                 NHB_MAX_RTOL);
    else if (!(s->atol > 0.0 && s->atol <= s->rtol))
        snprintf(buf, len, "atol = %g (must be positive and at most rtol = %g)", s->atol, s->rtol);
    else if (s->time < s->start_time)
        snprintf(buf, len, "time = %.17g (before start_time = %.17g)", s->time, s->start_time);
    else if (s->stop_time_defined && s->stop_time < s->start_time)
        snprintf(buf, len, "stop_time = %.17g (before start_time = %.17g)", s->stop_time, s->start_time);
    else if (s->int_valid && s->t_int < s->time - slack)
        snprintf(buf, len, "t_int = %.17g (an integration point before time = %.17g)", s->t_int, s->time);
    else if (s->int_valid && s->t_int > s->time &&
             !(s->dense_h > 0.0 && s->dense_t0 <= s->time + slack &&
               fabs(s->dense_t0 + s->dense_h - s->t_int) <= 1e-9 * s->dense_h + slack))
        snprintf(buf, len,
                 "dense_t0 = %.17g, dense_h = %g (not a step from time = %.17g or before to t_int = "
                 "%.17g)",
                 s->dense_t0, s->dense_h, s->time, s->t_int);
    else
        buf[0] = '\0';
    for (i = 0; i < 2 && buf[0] == '\0'; i++) {
        if (!(s->h_next[i] >= 0.0))
            snprintf(buf, len, "h_next[%d] = %g (negative)", i, s->h_next[i]);
        else if (!(s->rk_evals[i] >= 0.0 && s->rk_span[i] >= 0.0) || (s->rk_steps[i] > 0 && !(s->rk_span[i] > 0.0)))
            snprintf(buf, len, "rk_evals[%d] = %g, rk_span[%d] = %g (negative, or no span for %ld counted steps)", i,
                     s->rk_evals[i], i, s->rk_span[i], s->rk_steps[i]);
    }
    return buf[0] != '\0' ? buf : NULL;
}

/* Check a state of `size` bytes; log the first problem and return 0, or return 1. */
static int state_check(nhb_instance *inst, const char *func, const unsigned char *p, size_t size, int interface,
                       unsigned allowed_modes)
{
    const size_t expected = state_bytes();
    unsigned version, guid_len;
    nhb_u64 recorded_size, recorded_sum;
    ser_ctx c;
    nhb_instance shadow; /* the fields of the state, for the checks across fields */
    char why[NHB_MSG_LEN];

    if (size < NHB_STATE_HEADER || memcmp(p, NHB_STATE_MAGIC, 8) != 0) {
        nhb_log(inst, NHB_ERROR, "%s: not an FMU state of an nhbridge FMU (%s)", func,
                size < NHB_STATE_HEADER ? "too short" : "wrong magic number");
        return 0;
    }
    memcpy(&version, p + 8, sizeof version);
    memcpy(&guid_len, p + 12, sizeof guid_len);
    memcpy(&recorded_size, p + 16, sizeof recorded_size);
    memcpy(&recorded_sum, p + 24, sizeof recorded_sum);
    if (version != NHB_STATE_VERSION) {
        nhb_log(inst, NHB_ERROR, "%s: FMU state format version %u; this runtime reads version %u", func, version,
                NHB_STATE_VERSION);
        return 0;
    }
    if (recorded_size != (nhb_u64)size) {
        nhb_log(inst, NHB_ERROR, "%s: the FMU state has %lu bytes but records %llu (truncated or extended)", func,
                (unsigned long)size, recorded_size);
        return 0;
    }
    if (state_checksum(p, size) != recorded_sum) {
        nhb_log(inst, NHB_ERROR, "%s: the FMU state is corrupted (checksum mismatch)", func);
        return 0;
    }
    if (guid_len != strlen(NHB_GUID) || size < NHB_STATE_HEADER + (size_t)guid_len ||
        memcmp(p + NHB_STATE_HEADER, NHB_GUID, guid_len) != 0) {
        nhb_log(inst, NHB_ERROR, "%s: the FMU state belongs to a different model (its GUID is not %s)", func, NHB_GUID);
        return 0;
    }
    if (size != expected) {
        nhb_log(inst, NHB_ERROR, "%s: the FMU state has %lu bytes, a state of this model %lu", func,
                (unsigned long)size, (unsigned long)expected);
        return 0;
    }
    memset(&c, 0, sizeof c);
    c.op = SER_CHECK;
    c.in = p + NHB_STATE_HEADER + guid_padded();
    c.allowed_modes = allowed_modes;
    c.interface = interface;
    memset(&shadow, 0, sizeof shadow);
    visit_state(&shadow, &c);
    if (c.bad == NULL)
        c.bad = state_inconsistency(&shadow, why, sizeof why);
    if (c.bad != NULL) {
        nhb_log(inst, NHB_ERROR, "%s: the FMU state has an invalid value: %s", func, c.bad);
        return 0;
    }
    return 1;
}

/* Write the instance into p (state_bytes() bytes). */
static void state_write(nhb_instance *inst, unsigned char *p, size_t size)
{
    const unsigned version = NHB_STATE_VERSION, guid_len = (unsigned)strlen(NHB_GUID);
    const nhb_u64 total = (nhb_u64)size;
    nhb_u64 sum;
    ser_ctx c;

    memset(p, 0, size);
    memcpy(p, NHB_STATE_MAGIC, 8);
    memcpy(p + 8, &version, sizeof version);
    memcpy(p + 12, &guid_len, sizeof guid_len);
    memcpy(p + 16, &total, sizeof total);
    memcpy(p + NHB_STATE_HEADER, NHB_GUID, guid_len);
    memset(&c, 0, sizeof c);
    c.op = SER_WRITE;
    c.out = p + NHB_STATE_HEADER + guid_padded();
    visit_state(inst, &c);
    sum = state_checksum(p, size);
    memcpy(p + 24, &sum, sizeof sum);
}

/* Every state handed out lies behind a node of its instance's list (inst->states), in the same
 * allocation: [node, padded to NHB_STATE_NODE bytes][state]. The importer sees the state; FreeFMUState
 * unlinks and frees the allocation, FreeInstance (nhb_release) frees what is left in the list. */
typedef struct state_node {
    nhb_instance *owner; /* the instance whose list holds it */
    struct state_node *prev, *next;
    nhb_u64 cookie; /* NHB_STATE_COOKIE while the state is handed out */
} state_node;

#define NHB_STATE_NODE   ((sizeof(state_node) + 15u) / 16u * 16u)
#define NHB_STATE_COOKIE 0x6e68627374617465ull /* "nhbstate" */

static state_node *node_of(const void *state)
{
    return (state_node *)(void *)((unsigned char *)state - NHB_STATE_NODE);
}

/* A new state buffer of state_bytes(), entered in the instance's list; NULL if out of memory. */
static unsigned char *state_new(nhb_instance *inst)
{
    unsigned char *mem = (unsigned char *)inst->alloc_mem(NHB_STATE_NODE + state_bytes(), 1);
    state_node *node = (state_node *)(void *)mem;
    if (mem == NULL)
        return NULL;
    node->owner = inst;
    node->prev = NULL;
    node->next = (state_node *)inst->states;
    node->cookie = NHB_STATE_COOKIE;
    if (node->next != NULL)
        node->next->prev = node;
    inst->states = node;
    return mem + NHB_STATE_NODE;
}

/* Unlink a node from its owner's list and free it with the owner's allocator. */
static void state_node_free(state_node *node)
{
    nhb_instance *owner = node->owner;
    if (node->prev != NULL)
        node->prev->next = node->next;
    else
        owner->states = node->next;
    if (node->next != NULL)
        node->next->prev = node->prev;
    node->cookie = 0;
    owner->free_mem(node);
}

/* Free every state still in the instance's list (FreeInstance). */
void nhb_state_free_all(nhb_instance *inst)
{
    while (inst->states != NULL)
        state_node_free((state_node *)inst->states);
}

/* The state behind a handle, checked to be ours (list node, magic, size recorded), else NULL after
 * logging. */
static const unsigned char *state_handle(nhb_instance *inst, const char *func, const void *state)
{
    const unsigned char *p = (const unsigned char *)state;
    nhb_u64 recorded_size;
    if (p == NULL) {
        nhb_null_argument(inst, func, "FMUState");
        return NULL;
    }
    memcpy(&recorded_size, p + 16, sizeof recorded_size);
    if (node_of(p)->cookie != NHB_STATE_COOKIE || memcmp(p, NHB_STATE_MAGIC, 8) != 0 ||
        recorded_size != (nhb_u64)state_bytes()) {
        nhb_log(inst, NHB_ERROR, "%s: not an FMU state of this FMU", func);
        return NULL;
    }
    return p;
}

/* Storage for a state: `existing` (a state obtained earlier, checked to be ours) to be overwritten, or
 * when it is NULL a new state (state_new). NULL after logging on failure. */
static unsigned char *state_storage(nhb_instance *inst, const char *func, void *existing)
{
    unsigned char *p;
    if (existing != NULL)
        return state_handle(inst, func, existing) == NULL ? NULL : (unsigned char *)existing;
    p = state_new(inst);
    if (p == NULL)
        nhb_log(inst, NHB_ERROR, "%s: out of memory", func);
    return p;
}

nhb_status nhb_state_get(nhb_instance *inst, const char *func, void **state)
{
    const size_t size = state_bytes();
    unsigned char *p;

    if (state == NULL)
        return nhb_null_argument(inst, func, "FMUState");
    if ((p = state_storage(inst, func, *state)) == NULL)
        return NHB_ERROR;
    state_write(inst, p, size);
    *state = p;
    return NHB_OK;
}

nhb_status nhb_state_set(nhb_instance *inst, const char *func, const void *state, unsigned allowed_modes)
{
    const unsigned char *p = state_handle(inst, func, state);
    ser_ctx c;

    if (p == NULL || !state_check(inst, func, p, state_bytes(), inst->interface, allowed_modes))
        return NHB_ERROR;
    memset(&c, 0, sizeof c);
    c.op = SER_READ;
    c.in = p + NHB_STATE_HEADER + guid_padded();
    visit_state(inst, &c);
    return NHB_OK;
}

nhb_status nhb_state_free(nhb_instance *inst, const char *func, void **state)
{
    if (state == NULL)
        return nhb_null_argument(inst, func, "FMUState");
    if (*state == NULL)
        return NHB_OK;
    if (state_handle(inst, func, *state) == NULL)
        return NHB_ERROR;
    state_node_free(node_of(*state));
    *state = NULL;
    return NHB_OK;
}

nhb_status nhb_state_size(nhb_instance *inst, const char *func, const void *state, size_t *size)
{
    if (size == NULL)
        return nhb_null_argument(inst, func, "size");
    if (state_handle(inst, func, state) == NULL)
        return NHB_ERROR;
    *size = state_bytes();
    return NHB_OK;
}

nhb_status nhb_state_serialize(nhb_instance *inst, const char *func, const void *state, unsigned char *buffer,
                               size_t size)
{
    const size_t needed = state_bytes();
    if (state_handle(inst, func, state) == NULL)
        return NHB_ERROR;
    if (buffer == NULL)
        return nhb_null_argument(inst, func, "serializedState");
    if (size < needed) {
        nhb_log(inst, NHB_ERROR, "%s: the buffer has %lu bytes, the state needs %lu", func, (unsigned long)size,
                (unsigned long)needed);
        return NHB_ERROR;
    }
    memcpy(buffer, state, needed);
    return NHB_OK;
}

nhb_status nhb_state_deserialize(nhb_instance *inst, const char *func, const unsigned char *buffer, size_t size,
                                 void **state)
{
    unsigned char *p;

    if (state == NULL)
        return nhb_null_argument(inst, func, "FMUState");
    if (buffer == NULL)
        return nhb_null_argument(inst, func, "serializedState");
    if (!state_check(inst, func, buffer, size, -1, NHB_MODE_ANY)) /* also: size == state_bytes() */
        return NHB_ERROR;
    if ((p = state_storage(inst, func, *state)) == NULL)
        return NHB_ERROR;
    memcpy(p, buffer, size);
    *state = p;
    return NHB_OK;
}
