/* CDeliveryNodes: the memory of the nodes an asynchronous delivery queues, recycled.
 *
 * A node is allocated on the thread that sends an event (libvlc's) and freed by the drain on
 * the delivery queue's thread. Through malloc, the sending thread never gets its own freed
 * chunks back: each allocation takes glibc's slow path, which gathers the chunks the other
 * core freed (a third of libvlc's thread's time in a burst). Here the drain gives its freed
 * nodes back in chains of up to 64, and the sending thread takes a chain at a time into a list
 * of its own, from which an allocation is a pop; each side takes the pool's lock once per chain.
 *
 * Nodes are MEDIAEVENTS_NODE_SIZE bytes, three cache lines, aligned on a line: two nodes never
 * share one, or the sending thread writing a node would take the line from the drain's core while
 * it runs the node beside it. A node's first word is the pool's link while it is free; the
 * caller may use all of it while it is allocated. The pool keeps at most
 * MEDIAEVENTS_NODE_POOL_LIMIT free nodes (384 KiB); nodes given back beyond that are freed. A
 * thread holds at most one chain's nodes, until it uses them or exits; then they go back to
 * the pool if it has room. Built with AddressSanitizer, every node is malloc'ed and freed, so
 * that a use after free is still caught.
 */
#ifndef CDELIVERYNODES_H
#define CDELIVERYNODES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { MEDIAEVENTS_NODE_SIZE = 192, MEDIAEVENTS_NODE_POOL_LIMIT = 2048 };

/* A node of MEDIAEVENTS_NODE_SIZE bytes; never NULL (aborts when memory is exhausted). */
void *mediaevents_node_allocate(void);

/* Gives back `count` nodes: `first` links (through its first word) to the next, and so on, up
 * to `last`, whose first word is ignored. */
void mediaevents_nodes_free(void *first, void *last, size_t count);

/* About how many free nodes the shared pool holds (for tests). */
size_t mediaevents_nodes_pooled(void);

/* Whether nodes are recycled: 0 when built with AddressSanitizer (for tests). */
int mediaevents_nodes_are_pooled(void);

#ifdef __cplusplus
}
#endif

#endif
