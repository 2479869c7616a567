/* LD_PRELOAD shim for bench/malloc_trace.py: records glibc's own sequence of allocations and frees, with the
 * heap's top (sbrk(0)) after each, between trace_on() and trace_off(path). It calls glibc's __libc_*
 * entry points, so the allocator under it is the process's own (the harness's tuned thresholds apply). */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* kind: 0 free, 1 malloc/calloc/realloc, 2 memalign (64-byte aligned tensors), 9 a mark (size: its id) */
typedef struct { uint64_t kind, addr, size, top; } event_t;
#define CAPACITY (8u << 20)
static event_t *events; /* mmap'd: outside the brk heap it watches */
static uint64_t count;
static int on;
static __thread int inside;

static void record(uint64_t kind, void *addr, size_t size) {
    if (!on || inside || !events) return;
    uint64_t i = __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
    if (i >= CAPACITY) return;
    inside = 1;
    events[i] = (event_t){kind, (uint64_t)addr, size, (uint64_t)sbrk(0)};
    inside = 0;
}

void trace_on(void) {
    if (!events)
        events = mmap(0, sizeof(event_t) * (size_t)CAPACITY, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    count = 0;
    on = 1;
}
void trace_mark(uint64_t id) { record(9, 0, id); }
uint64_t trace_off(const char *path) {
    on = 0;
    uint64_t n = count < CAPACITY ? count : CAPACITY;
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(events, sizeof(event_t), n, f);
    fclose(f);
    return n;
}

void *malloc(size_t s) { void *p = __libc_malloc(s); record(1, p, s); return p; }
void free(void *p) { if (p) record(0, p, 0); __libc_free(p); }
void *calloc(size_t a, size_t b) { void *p = __libc_calloc(a, b); record(1, p, a * b); return p; }
void *realloc(void *q, size_t s) { if (q) record(0, q, 0); void *p = __libc_realloc(q, s); record(1, p, s); return p; }
void *memalign(size_t a, size_t s) { void *p = __libc_memalign(a, s); record(2, p, s); return p; }
void *aligned_alloc(size_t a, size_t s) { void *p = __libc_memalign(a, s); record(2, p, s); return p; }
void *valloc(size_t s) { void *p = __libc_memalign(4096, s); record(2, p, s); return p; }
int posix_memalign(void **r, size_t a, size_t s) {
    void *p = __libc_memalign(a, s);
    if (!p) return ENOMEM;
    *r = p;
    record(2, p, s);
    return 0;
}
