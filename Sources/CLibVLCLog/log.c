#include "CLibVLCLog.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

enum { STACK_BUFFER_SIZE = 1024 };

struct mel_logger {
    _Atomic unsigned mask;
    mel_log_deliver_fn deliver;
    void *context;
    _Atomic uint64_t received;
    _Atomic uint64_t formatted;
    _Atomic uint64_t heap_formatted;
    _Atomic unsigned sets;
    _Atomic unsigned unsets;
};

mel_logger_t *mel_logger_create(mel_log_deliver_fn deliver, void *context) {
    mel_logger_t *logger = calloc(1, sizeof *logger);
    if (logger == NULL) return NULL;
    atomic_init(&logger->mask, 0);
    logger->deliver = deliver;
    logger->context = context;
    return logger;
}

void mel_logger_destroy(mel_logger_t *logger) { free(logger); }

static void deliver_formatted(mel_logger_t *logger, int level, const libvlc_log_t *ctx,
                              const char *format, va_list args) {
    atomic_fetch_add_explicit(&logger->received, 1, memory_order_relaxed);
    if (level < 0 || level > 31) return;
    /* Relaxed: a subscriber that appears concurrently may miss this one message; it sees
     * every message logged after its subscription returned (the store happens before). */
    if ((atomic_load_explicit(&logger->mask, memory_order_relaxed) & (1u << level)) == 0) return;
    atomic_fetch_add_explicit(&logger->formatted, 1, memory_order_relaxed);

    char stack[STACK_BUFFER_SIZE];
    char *heap = NULL;
    const char *text = stack;
    va_list copy;
    va_copy(copy, args);
    int length = vsnprintf(stack, sizeof stack, format, copy);
    va_end(copy);
    if (length < 0) {
        stack[0] = '\0';
        length = 0;
    } else if ((size_t)length >= sizeof stack) {
        heap = malloc((size_t)length + 1);
        if (heap != NULL) {
            atomic_fetch_add_explicit(&logger->heap_formatted, 1, memory_order_relaxed);
            vsnprintf(heap, (size_t)length + 1, format, args);
            text = heap;
        } else {
            length = (int)sizeof stack - 1; /* out of memory: the truncated text */
        }
    }

    mel_log_message_t message = {
        .level = level, .text = text, .text_length = (size_t)length,
        .module = NULL, .file = NULL, .line = 0,
        .object_type = "generic", .object_header = NULL, .object_id = 0,
    };
    if (ctx != NULL) {
        libvlc_log_get_context(ctx, &message.module, &message.file, &message.line);
        libvlc_log_get_object(ctx, &message.object_type, &message.object_header, &message.object_id);
        if (message.object_type == NULL) message.object_type = "generic";
    }
    logger->deliver(logger->context, &message);
    free(heap);
}

static void log_callback(void *data, int level, const libvlc_log_t *ctx, const char *format, va_list args) {
    deliver_formatted(data, level, ctx, format, args);
}

void mel_logger_install(mel_logger_t *logger, libvlc_instance_t *instance) {
    atomic_fetch_add_explicit(&logger->sets, 1, memory_order_relaxed);
    libvlc_log_set(instance, log_callback, logger);
}

void mel_logger_uninstall(mel_logger_t *logger, libvlc_instance_t *instance) {
    atomic_fetch_add_explicit(&logger->unsets, 1, memory_order_relaxed);
    libvlc_log_unset(instance);
}

void mel_logger_set_mask(mel_logger_t *logger, unsigned mask) {
    atomic_store_explicit(&logger->mask, mask, memory_order_relaxed);
}

unsigned mel_logger_mask(const mel_logger_t *logger) {
    return atomic_load_explicit(&((mel_logger_t *)logger)->mask, memory_order_relaxed);
}

#define COUNTER(name, field, type) \
    type name(const mel_logger_t *logger) { \
        return atomic_load_explicit(&((mel_logger_t *)logger)->field, memory_order_relaxed); \
    }
COUNTER(mel_logger_received_count, received, uint64_t)
COUNTER(mel_logger_formatted_count, formatted, uint64_t)
COUNTER(mel_logger_heap_formatted_count, heap_formatted, uint64_t)
COUNTER(mel_logger_set_count, sets, unsigned)
COUNTER(mel_logger_unset_count, unsets, unsigned)

static void log_for_testing(mel_logger_t *logger, int level, const char *format, ...) {
    va_list args;
    va_start(args, format);
    deliver_formatted(logger, level, NULL, format, args);
    va_end(args);
}

void mel_logger_log_text_for_testing(mel_logger_t *logger, int level, const char *text) {
    log_for_testing(logger, level, "%s", text);
}

size_t mel_logger_stack_buffer_size(void) { return STACK_BUFFER_SIZE; }
