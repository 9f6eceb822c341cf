/* See include/CRawBaseline.h. */
#define _GNU_SOURCE   /* mallinfo2, malloc_trim */
#include "CRawBaseline.h"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vlc/vlc.h>

/* libdispatch ships with the Swift toolchain but its C headers are not on the C target's
 * include path; these are its stable C entry points (the Swift executable links the library). */
typedef struct dispatch_queue_s *dispatch_queue_t;
typedef struct dispatch_semaphore_s *dispatch_semaphore_t;
typedef uint64_t dispatch_time_t;
extern dispatch_queue_t dispatch_queue_create(const char *label, void *attr);
extern void dispatch_async_f(dispatch_queue_t queue, void *context, void (*work)(void *));
extern void dispatch_sync_f(dispatch_queue_t queue, void *context, void (*work)(void *));
extern dispatch_semaphore_t dispatch_semaphore_create(long value);
extern long dispatch_semaphore_wait(dispatch_semaphore_t sema, dispatch_time_t timeout);
extern long dispatch_semaphore_signal(dispatch_semaphore_t sema);
extern void dispatch_release(void *object);
#define CRB_DISPATCH_TIME_FOREVER (~0ull)

enum crb_mode { CRB_RAW, CRB_DISPATCH };

struct crb_bench {
    libvlc_instance_t *instance;
    libvlc_media_t *media;
    dispatch_queue_t queue;
    dispatch_semaphore_t done;
    _Atomic int mode;
    _Atomic uint64_t count;        /* events handled in the current run */
    uint64_t target;               /* the handler signals `done` when count reaches it */
    uint64_t *send_times;          /* latency run: written before event i is sent */
    uint64_t *latencies;           /* latency run: written by the queue for event i */
};

/* The heap copy variant (e) hands to the queue. */
typedef struct crb_job {
    libvlc_event_t event;
    crb_bench_t *bench;
} crb_job_t;

static const int media_types[] = {
    libvlc_MediaMetaChanged, libvlc_MediaSubItemAdded, libvlc_MediaDurationChanged,
    libvlc_MediaParsedChanged, libvlc_MediaFreed, libvlc_MediaStateChanged,
    libvlc_MediaSubItemTreeAdded,
};
#define MEDIA_TYPE_COUNT (sizeof media_types / sizeof media_types[0])

uint64_t crb_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

size_t crb_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

size_t crb_rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long size = 0, resident = 0;
    int got = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    return got == 2 ? resident * (size_t)sysconf(_SC_PAGESIZE) : 0;
}

void crb_malloc_trim(void) { malloc_trim(0); }

static void consume(void *context) {
    crb_job_t *job = context;
    crb_bench_t *bench = job->bench;
    uint64_t index = atomic_fetch_add_explicit(&bench->count, 1, memory_order_relaxed);
    if (bench->latencies) bench->latencies[index] = crb_now_ns() - bench->send_times[index];
    free(job);
    if (index + 1 == bench->target) dispatch_semaphore_signal(bench->done);
}

static void on_event(const libvlc_event_t *event, void *user_data) {
    crb_bench_t *bench = user_data;
    if (atomic_load_explicit(&bench->mode, memory_order_relaxed) == CRB_RAW) {
        atomic_fetch_add_explicit(&bench->count, 1, memory_order_relaxed);
        return;
    }
    crb_job_t *job = malloc(sizeof *job);
    if (!job) abort();
    job->event = *event;
    job->bench = bench;
    dispatch_async_f(bench->queue, job, consume);
}

crb_bench_t *crb_bench_new(const char *path) {
    static const char *const args[] = {
        "--quiet", "--intf=dummy", "--aout=adummy", "--vout=dummy", "--no-video-title-show",
        "--no-stats", "--no-snapshot-preview",
    };
    crb_bench_t *bench = calloc(1, sizeof *bench);
    if (!bench) return NULL;
    bench->instance = libvlc_new((int)(sizeof args / sizeof args[0]), args);
    if (!bench->instance) { free(bench); return NULL; }
    char location[4096];
    snprintf(location, sizeof location, "file://%s", path);
    bench->media = libvlc_media_new_location(bench->instance, location);
    bench->queue = dispatch_queue_create("CRawBaseline.dispatch", NULL);
    bench->done = dispatch_semaphore_create(0);
    return bench;
}

static void attach(crb_bench_t *bench) {
    libvlc_event_manager_t *em = libvlc_media_event_manager(bench->media);
    for (size_t i = 0; i < MEDIA_TYPE_COUNT; i++)
        libvlc_event_attach(em, media_types[i], on_event, bench);
}

static void detach(crb_bench_t *bench) {
    libvlc_event_manager_t *em = libvlc_media_event_manager(bench->media);
    for (size_t i = 0; i < MEDIA_TYPE_COUNT; i++)
        libvlc_event_detach(em, media_types[i], on_event, bench);
}

void crb_bench_free(crb_bench_t *bench) {
    if (!bench) return;
    libvlc_media_release(bench->media);
    dispatch_release(bench->done);
    dispatch_release(bench->queue);
    libvlc_release(bench->instance);
    free(bench);
}

crb_result_t crb_run_no_listener(crb_bench_t *bench, long n, const char *title) {
    uint64_t start = crb_now_ns();
    for (long i = 0; i < n; i++) libvlc_media_set_meta(bench->media, libvlc_meta_Title, title);
    uint64_t end = crb_now_ns();
    return (crb_result_t){ end - start, end - start, 0 };
}

uint64_t crb_set_meta_loop(void *media, long n, const char *title) {
    uint64_t start = crb_now_ns();
    for (long i = 0; i < n; i++) libvlc_media_set_meta(media, libvlc_meta_Title, title);
    return crb_now_ns() - start;
}

crb_result_t crb_run_raw(crb_bench_t *bench, long n, const char *title) {
    atomic_store(&bench->mode, CRB_RAW);
    atomic_store(&bench->count, 0);
    attach(bench);
    uint64_t start = crb_now_ns();
    for (long i = 0; i < n; i++) libvlc_media_set_meta(bench->media, libvlc_meta_Title, title);
    uint64_t end = crb_now_ns();
    detach(bench);
    return (crb_result_t){ end - start, end - start, atomic_load(&bench->count) };
}

crb_result_t crb_run_dispatch(crb_bench_t *bench, long n, const char *title) {
    atomic_store(&bench->mode, CRB_DISPATCH);
    atomic_store(&bench->count, 0);
    bench->target = (uint64_t)n;
    attach(bench);
    uint64_t start = crb_now_ns();
    for (long i = 0; i < n; i++) libvlc_media_set_meta(bench->media, libvlc_meta_Title, title);
    uint64_t produced = crb_now_ns();
    if (n > 0) dispatch_semaphore_wait(bench->done, CRB_DISPATCH_TIME_FOREVER);
    uint64_t end = crb_now_ns();
    detach(bench);
    return (crb_result_t){ produced - start, end - start, atomic_load(&bench->count) };
}

crb_result_t crb_run_callback(crb_bench_t *bench, long n, const char *title,
                              crb_callback_t callback, void *user_data) {
    libvlc_event_manager_t *em = libvlc_media_event_manager(bench->media);
    libvlc_callback_t listener = (libvlc_callback_t)callback;
    for (size_t i = 0; i < MEDIA_TYPE_COUNT; i++) libvlc_event_attach(em, media_types[i], listener, user_data);
    uint64_t start = crb_now_ns();
    for (long i = 0; i < n; i++) libvlc_media_set_meta(bench->media, libvlc_meta_Title, title);
    uint64_t end = crb_now_ns();
    for (size_t i = 0; i < MEDIA_TYPE_COUNT; i++) libvlc_event_detach(em, media_types[i], listener, user_data);
    return (crb_result_t){ end - start, end - start, 0 };
}

long crb_latency_dispatch(crb_bench_t *bench, long n, unsigned pause_us, const char *title,
                          uint64_t *latencies_ns) {
    atomic_store(&bench->mode, CRB_DISPATCH);
    atomic_store(&bench->count, 0);
    bench->target = (uint64_t)n;
    bench->send_times = calloc((size_t)n, sizeof *bench->send_times);
    bench->latencies = latencies_ns;
    attach(bench);
    for (long i = 0; i < n; i++) {
        bench->send_times[i] = crb_now_ns();
        libvlc_media_set_meta(bench->media, libvlc_meta_Title, title);
        if (pause_us) usleep(pause_us);
    }
    if (n > 0) dispatch_semaphore_wait(bench->done, CRB_DISPATCH_TIME_FOREVER);
    detach(bench);
    free(bench->send_times);
    bench->send_times = NULL;
    bench->latencies = NULL;
    return (long)atomic_load(&bench->count);
}

void *crb_player_new(crb_bench_t *bench) { return libvlc_media_player_new(bench->instance); }

void crb_player_release(void *player) { libvlc_media_player_release(player); }

/* crb_line_round_trip_ns: the counter both threads hand on, alone on its cache line. */
static _Atomic long crb_ball __attribute__((aligned(64)));

typedef struct {
    long rounds;
    int pinned;
} crb_bounce_t;

static int crb_pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

static void *crb_bounce_back(void *context) {
    crb_bounce_t *bounce = context;
    bounce->pinned = crb_pin(1);
    for (long value = 1; value < 2 * bounce->rounds; value += 2) {
        while (atomic_load_explicit(&crb_ball, memory_order_acquire) != value) {}
        atomic_store_explicit(&crb_ball, value + 1, memory_order_release);
    }
    return NULL;
}

double crb_line_round_trip_ns(long rounds) {
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || rounds <= 0) return -1;
    crb_bounce_t bounce = { rounds, 0 };
    atomic_store(&crb_ball, 0);
    double result = -1;
    void *thread_result = NULL;
    pthread_t thread;
    cpu_set_t saved;
    int restore = pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0;
    if (!crb_pin(0)) return -1;
    if (pthread_create(&thread, NULL, crb_bounce_back, &bounce) == 0) {
        uint64_t start = crb_now_ns();
        for (long value = 0; value < 2 * rounds; value += 2) {
            while (atomic_load_explicit(&crb_ball, memory_order_acquire) != value) {}
            atomic_store_explicit(&crb_ball, value + 1, memory_order_release);
        }
        while (atomic_load_explicit(&crb_ball, memory_order_acquire) != 2 * rounds) {}
        uint64_t end = crb_now_ns();
        pthread_join(thread, &thread_result);
        if (bounce.pinned) result = (double)(end - start) / (double)rounds;
    }
    if (restore) pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
    return result;
}
