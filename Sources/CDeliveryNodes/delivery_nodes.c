#include "CDeliveryNodes.h"

#include <pthread.h>
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

/* The pool: chains of free nodes given back by drains (each at most 64 nodes, linked through
 * `next`; the first node of each says how many it holds and links to the next chain), behind a
 * lock that each side takes once per chain, never per node. A thread takes one chain at a time,
 * so it never holds more than one chain's nodes. */
typedef struct chain_head {
    node link;
    size_t count;
    struct chain_head *next_chain;
} chain_head;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static chain_head *chains = NULL;
static size_t pooled = 0;

/* The calling thread's own free nodes: the rest of the chain it took last. */
static _Thread_local node *local = NULL;
static _Thread_local size_t local_count = 0;
static _Thread_local int local_registered = 0;
/* Set once the thread's exit destructor has run: a later destructor that sends an event gets a
 * fresh node rather than a chain nothing would give back. */
static _Thread_local int local_exited = 0;

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* Pools the chain if there is room for it, else frees it. */
static void give_back(node *first, node *last, size_t count) {
    int kept = 0;
    pthread_mutex_lock(&pool_lock);
    if (pooled + count <= MEDIAEVENTS_NODE_POOL_LIMIT) {
        chain_head *head = (chain_head *)first;
        last->next = NULL;
        head->count = count;
        head->next_chain = chains;
        chains = head;
        pooled += count;
        kept = 1;
    }
    pthread_mutex_unlock(&pool_lock);
    if (!kept) free_chain(first, last, count);
}

/* A thread that took nodes gives back what it has left when it exits (libvlc's input threads
 * end with their playback). */
static void thread_exits(void *unused) {
    (void)unused;
    local_exited = 1;
    node *first = local;
    size_t count = local_count;
    local = NULL;
    local_count = 0;
    if (first == NULL) return;
    node *last = first;
    while (last->next != NULL) last = last->next;
    give_back(first, last, count);
}

static void make_exit_key(void) { (void)pthread_key_create(&exit_key, thread_exits); }

void *mediaevents_node_allocate(void) {
    node *taken = local;
    if (taken == NULL) {
        if (local_exited) return allocate_fresh();
        pthread_mutex_lock(&pool_lock);
        chain_head *head = chains;
        if (head != NULL) {
            chains = head->next_chain;
            pooled -= head->count;
        }
        pthread_mutex_unlock(&pool_lock);
        if (head == NULL) return allocate_fresh();
        taken = &head->link;
        local_count = head->count;
        if (!local_registered) {
            local_registered = 1;
            (void)pthread_once(&exit_key_once, make_exit_key);
            /* Any non-NULL value: the destructor runs only for those. */
            (void)pthread_setspecific(exit_key, &local_registered);
        }
    }
    local = taken->next;
    local_count--;
    /* The next allocation's node was last written on the drain's core: start loading it. */
    if (local != NULL) __builtin_prefetch(local, 1);
    return taken;
}

void mediaevents_nodes_free(void *first, void *last, size_t count) {
    if (count > 0) give_back(first, last, count);
}

size_t mediaevents_nodes_pooled(void) {
    pthread_mutex_lock(&pool_lock);
    size_t count = pooled;
    pthread_mutex_unlock(&pool_lock);
    return count;
}

int mediaevents_nodes_are_pooled(void) { return 1; }

#endif
