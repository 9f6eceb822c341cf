#include "CDeliveryNodes.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEDIAEVENTS_NODES_UNPOOLED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MEDIAEVENTS_NODES_UNPOOLED 1
#endif

typedef struct node {
    struct node *next;
} node;

static void *allocate_fresh(void) {
    void *memory = NULL;
    if (posix_memalign(&memory, 64, MEDIAEVENTS_NODE_SIZE) != 0) abort();
    return memory;
}

static void free_chain(node *first, node *last, size_t count) {
    node *current = first;
    for (size_t index = 0; index < count; index++) {
        node *next = current == last ? NULL : current->next;
        free(current);
        current = next;
    }
}

#ifdef MEDIAEVENTS_NODES_UNPOOLED

void *mediaevents_node_allocate(void) { return allocate_fresh(); }

void mediaevents_nodes_free(void *first, void *last, size_t count) { free_chain(first, last, count); }

size_t mediaevents_nodes_pooled(void) { return 0; }

int mediaevents_nodes_are_pooled(void) { return 0; }

#else

/* Chains given back by drains, newest first. Taken whole by an exchange, never popped one node
 * at a time, so the list has no ABA problem. */
static _Atomic(node *) returned = NULL;
/* About how many nodes `returned` holds: raised before a chain is pushed, zeroed after the list
 * is taken, so a race can only leave it a chain short; it only decides when to free. */
static atomic_size_t returned_count = 0;

/* The calling thread's own free nodes, taken from `returned`. */
static _Thread_local node *local = NULL;
static _Thread_local int local_registered = 0;
/* Set once the thread's exit destructor has run: a later destructor that sends an event gets a
 * fresh node rather than taking the pool into a list nothing would give back. */
static _Thread_local int local_exited = 0;

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void push_chain(node *first, node *last, size_t count) {
    /* Counted before it is pushed: a producer that takes the list meanwhile zeroes the count,
     * which then counts this chain short, never a chain the list no longer holds (a count left
     * at the limit over an empty list would free every node given back from then on). */
    atomic_fetch_add_explicit(&returned_count, count, memory_order_relaxed);
    node *head = atomic_load_explicit(&returned, memory_order_relaxed);
    do {
        last->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&returned, &head, first, memory_order_release,
                                                    memory_order_relaxed));
}

/* A thread that took nodes gives back what it has left when it exits (libvlc's input threads
 * end with their playback): as many as the pool has room for; the rest are freed. */
static void thread_exits(void *unused) {
    (void)unused;
    local_exited = 1;
    node *rest = local;
    local = NULL;
    size_t pooled = atomic_load_explicit(&returned_count, memory_order_relaxed);
    size_t room = pooled < MEDIAEVENTS_NODE_POOL_LIMIT ? MEDIAEVENTS_NODE_POOL_LIMIT - pooled : 0;
    node *first = rest;
    node *last = NULL;
    size_t kept = 0;
    while (rest != NULL && kept < room) {
        last = rest;
        rest = rest->next;
        kept++;
    }
    if (kept > 0) push_chain(first, last, kept);
    while (rest != NULL) {
        node *next = rest->next;
        free(rest);
        rest = next;
    }
}

static void make_exit_key(void) { (void)pthread_key_create(&exit_key, thread_exits); }

void *mediaevents_node_allocate(void) {
    node *taken = local;
    if (taken == NULL) {
        if (local_exited) return allocate_fresh();
        taken = atomic_exchange_explicit(&returned, NULL, memory_order_acquire);
        if (taken == NULL) return allocate_fresh();
        atomic_store_explicit(&returned_count, 0, memory_order_relaxed);
        if (!local_registered) {
            local_registered = 1;
            (void)pthread_once(&exit_key_once, make_exit_key);
            /* Any non-NULL value: the destructor runs only for those. */
            (void)pthread_setspecific(exit_key, &local_registered);
        }
    }
    local = taken->next;
    /* The next allocation's node was last written on the drain's core: start loading it. */
    if (local != NULL) __builtin_prefetch(local, 1);
    return taken;
}

void mediaevents_nodes_free(void *first, void *last, size_t count) {
    if (count == 0) return;
    if (atomic_load_explicit(&returned_count, memory_order_relaxed) >= MEDIAEVENTS_NODE_POOL_LIMIT) {
        free_chain(first, last, count);
    } else {
        push_chain(first, last, count);
    }
}

size_t mediaevents_nodes_pooled(void) { return atomic_load_explicit(&returned_count, memory_order_relaxed); }

int mediaevents_nodes_are_pooled(void) { return 1; }

#endif
