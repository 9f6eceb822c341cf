/* CRawBaseline: the raw-libvlc side of MediaEventsBenchmarks.
 *
 * It runs the exact libvlc calls the Swift variants make (libvlc_media_set_meta on a media
 * whose event manager has a listener for every media event type), with the listener written
 * directly in C:
 *   (a) raw:      the callback counts the event on libvlc's thread — the limit;
 *   (e) dispatch: the callback copies the event to the heap and dispatch_async_f's it to a
 *                 serial queue, where it is counted and freed — what a careful hand-written
 *                 wrapper does.
 * It also gives the benchmark a clock, heap statistics and raw players to compare memory with.
 */
#ifndef CRAWBASELINE_H
#define CRAWBASELINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct crb_bench crb_bench_t;

/* The time one run took: on the producing thread (the set_meta loop) and until the last
 * event was handled (equal for the raw variant); delivered counts handled events. */
typedef struct crb_result {
    uint64_t produce_ns;
    uint64_t total_ns;
    uint64_t delivered;
} crb_result_t;

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t crb_now_ns(void);
/* Nanoseconds for one cache line to go from CPU 0 to CPU 1 and back (two threads pinned there
 * hand a counter to each other `rounds` times); -1 with fewer than two CPUs. What passing a
 * delivery between libvlc's thread and a queue's costs the cores, which a virtual machine may
 * change from one minute to the next. */
double crb_line_round_trip_ns(long rounds);
/* Bytes of heap in use (mallinfo2: arena + mmap'd chunks in use). */
size_t crb_heap_in_use(void);
/* Resident set size in bytes (/proc/self/statm). */
size_t crb_rss_bytes(void);
/* Returns freed heap memory to the system (malloc_trim(0)). */
void crb_malloc_trim(void);

/* A headless libvlc instance of its own, a media ("file://" + path, never opened) with a
 * listener for every media event type, and a serial dispatch queue for variant (e).
 * NULL when libvlc cannot start. */
crb_bench_t *crb_bench_new(const char *path);
void crb_bench_free(crb_bench_t *bench);

/* libvlc_media_set_meta(title) n times with no listener attached: libvlc's own cost. */
crb_result_t crb_run_no_listener(crb_bench_t *bench, long n, const char *title);
/* The same loop of libvlc_media_set_meta on another media (a VLCMedia's own): the variants
 * that deliver through MediaEvents are driven by this C loop, exactly as (a) is, so that the
 * driving code is no part of the difference. Returns the loop's time in ns. */
uint64_t crb_set_meta_loop(void *media, long n, const char *title);
/* (a) n set_meta calls, each event counted inline by the C callback. */
crb_result_t crb_run_raw(crb_bench_t *bench, long n, const char *title);
/* (e) n set_meta calls, each event copied and dispatch_async_f'd; total_ns ends when the
 * queue has handled the last one. */
crb_result_t crb_run_dispatch(crb_bench_t *bench, long n, const char *title);
/* A listener written outside C: what a user's own wrapper attaches. The signature is
 * libvlc_callback_t's with the event left opaque (its first field is the int type). */
typedef void (*crb_callback_t)(const void *event, void *user_data);
/* n set_meta calls with `callback` and `user_data` attached for every media event type in
 * place of the C counter; delivered is 0 (the callback counts). */
crb_result_t crb_run_callback(crb_bench_t *bench, long n, const char *title,
                              crb_callback_t callback, void *user_data);
/* (e) paced: n events, pause_us between them; latencies_ns[i] = handler entry - send of i.
 * Returns the number of events delivered. */
long crb_latency_dispatch(crb_bench_t *bench, long n, unsigned pause_us, const char *title,
                          uint64_t *latencies_ns);

/* A raw libvlc player of the bench's instance, and its release (for memory baselines). */
void *crb_player_new(crb_bench_t *bench);
void crb_player_release(void *player);

#ifdef __cplusplus
}
#endif

#endif
