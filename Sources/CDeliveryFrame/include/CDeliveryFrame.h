/* CDeliveryFrame: the innermost delivery frame of the current thread, in a C thread-local.
 *
 * Every delivery pushes a frame (DeliveryContext.with) and pops it when the handler returns; waits
 * and control calls walk the frames to tell whether they run inside a delivery. A pthread key
 * costs a lazy-initialisation check and three calls per delivery (get, set, set); a `_Thread_local`
 * read or written through these inline functions is one move relative to the thread pointer.
 */
#ifndef CDELIVERYFRAME_H
#define CDELIVERYFRAME_H

#ifdef __cplusplus
extern "C" {
#endif

extern _Thread_local void *mediaevents_delivery_frame;

static inline void *mediaevents_delivery_frame_get(void) { return mediaevents_delivery_frame; }

static inline void mediaevents_delivery_frame_set(void *frame) { mediaevents_delivery_frame = frame; }

/* The run of ended deliveries whose borrows the current thread's drain has not yet returned
 * (DeliveryEnding.Run), set once per batch; a wait for teardowns made by a handler of that batch
 * returns them first. */
extern _Thread_local void *mediaevents_drain_run;

static inline void *mediaevents_drain_run_get(void) { return mediaevents_drain_run; }

static inline void mediaevents_drain_run_set(void *run) { mediaevents_drain_run = run; }

#ifdef __cplusplus
}
#endif

#endif
