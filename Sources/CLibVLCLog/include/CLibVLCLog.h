/* CLibVLCLog: the C side of VLCLogSource.
 *
 * A libvlc log callback takes a C `va_list`, which Swift cannot receive, so this shim is the
 * callback. For each message it first checks a per-level "someone listens" mask (one relaxed
 * atomic load): when nobody listens at that level it returns without formatting or allocating.
 * Otherwise it formats the text with vsnprintf into a stack buffer (the heap only for a longer
 * text), reads libvlc_log_get_context and libvlc_log_get_object inside the callback (their
 * strings are lent only until it returns) and hands one plain struct to the Swift function
 * given at creation. Everything in the struct is lent for the duration of that call only.
 */
#ifndef CLIBVLCLOG_H
#define CLIBVLCLOG_H

#include <stddef.h>
#include <stdint.h>
#include <vlc/vlc.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One formatted message; every pointer is valid only during the deliver call. */
typedef struct mel_log_message {
    int level;                  /* libvlc_log_level: 0 debug, 2 notice, 3 warning, 4 error */
    const char *text;           /* formatted, NUL-terminated */
    size_t text_length;
    const char *module;         /* NULL when unknown */
    const char *file;           /* NULL when unknown */
    unsigned line;              /* 0 when unknown */
    const char *object_type;    /* "generic" when unknown, never NULL */
    const char *object_header;  /* NULL when unset */
    uintptr_t object_id;        /* 0 when not tied to an object */
} mel_log_message_t;

typedef void (*mel_log_deliver_fn)(void *context, const mel_log_message_t *message);

typedef struct mel_logger mel_logger_t;

/** A logger that calls `deliver(context, message)`; listens to no level yet. */
mel_logger_t *mel_logger_create(mel_log_deliver_fn deliver, void *context);
/** Frees the logger; call only after mel_logger_uninstall has returned (or if never installed). */
void mel_logger_destroy(mel_logger_t *logger);

/** libvlc_log_set(instance, callback, logger); counted. Never from inside a log callback. */
void mel_logger_install(mel_logger_t *logger, libvlc_instance_t *instance);
/** libvlc_log_unset(instance): waits for running callbacks; counted. Never from a log callback. */
void mel_logger_uninstall(mel_logger_t *logger, libvlc_instance_t *instance);

/** The levels delivered: bit (1 << libvlc level) set means someone listens at that level. */
void mel_logger_set_mask(mel_logger_t *logger, unsigned mask);
unsigned mel_logger_mask(const mel_logger_t *logger);

/** Test hooks: messages libvlc passed to the callback, messages formatted (and delivered),
 *  texts too long for the stack buffer, libvlc_log_set and libvlc_log_unset calls made. */
uint64_t mel_logger_received_count(const mel_logger_t *logger);
uint64_t mel_logger_formatted_count(const mel_logger_t *logger);
uint64_t mel_logger_heap_formatted_count(const mel_logger_t *logger);
unsigned mel_logger_set_count(const mel_logger_t *logger);
unsigned mel_logger_unset_count(const mel_logger_t *logger);

/** The callback itself, for tests and benchmarks that drive it without libvlc: formats
 *  "%s" with `text` through a va_list as libvlc would (the context is NULL: no module, file
 *  or object). Non-variadic so that Swift can call it. */
void mel_logger_log_text_for_testing(mel_logger_t *logger, int level, const char *text);

/** The size of the stack buffer; longer texts are formatted on the heap. */
size_t mel_logger_stack_buffer_size(void);

#ifdef __cplusplus
}
#endif

#endif
