/*
 * replayrt — the public C ABI.
 *
 * replayrt runs accelerator work that is captured once and replayed many times. A context in
 * kernel mode plans its device capacity once and freezes it: every buffer a captured launch
 * can reference keeps its base address for the life of the context, and a request that would
 * move or free such a buffer is refused without side effects. A context in program mode grows
 * its buffers on demand.
 *
 * Conventions (every entry below follows them):
 * - Every function returns rrt_status_t: RRT_OK (0) or a negative code from the error table,
 *   unless stated otherwise. Out-parameters are written only on success.
 * - Arguments are validated before any state is touched. A failing call leaves state unchanged
 *   and records the calling thread's last-error detail (rrt_last_error). The exceptions are
 *   rrt_stream_destroy and rrt_context_finalize reporting an asynchronous failure: they
 *   complete all the same (see each); and rrt_kernel_launch, rrt_run_launch and
 *   rrt_graph_replay whose enqueue fails part-way outside a capture: what reached the stream
 *   stays queued (see rrt_kernel_launch).
 * - Structs passed in start with `uint32_t struct_size` (= sizeof the caller's struct) so
 *   fields can be appended; a size smaller than the first published version is
 *   RRT_ERR_INVALID_ARGUMENT.
 * - Handles are typed and opaque. No function keeps a pointer to caller memory after it
 *   returns, except device addresses captured into graphs, host buffers of an enqueued copy or
 *   run until that work completes, and registered kernel `user` pointers.
 * - Asynchronous failures (a kernel that reports failure on the device side) are sticky on
 *   their stream: work enqueued on that stream after the failure is skipped until it is
 *   reported. It is reported exactly once, with RRT_ERR_KERNEL_FAILED and a detail naming the
 *   callable and task, by the first of: rrt_stream_synchronize, rrt_stream_destroy or
 *   rrt_context_finalize on the stream; rrt_event_synchronize of an event whose record on the
 *   stream carried it; rrt_run_wait (or rrt_run, rrt_run_finalize) of the run that failed.
 *   Reporting clears it: the stream runs later work again, and the other calls report OK.
 *   A failure never crosses to another stream: a stream that waits on an event (or is
 *   ordered after a launch or replay on another stream) only waits for completion.
 * - A failed capture leaves nothing: rrt_stream_end_capture of a capture during which an
 *   enqueue failed discards the graph (see there).
 * - Handles are single-destroy: using or destroying a handle after its destroy is undefined
 *   behaviour (a use-after-free), as for free().
 * - Thread safety: different contexts are independent. On one context, launches, replays,
 *   stream and memory calls may come from several threads; init and destroy may not race
 *   with anything else on that context, and finalize orders itself with the calls it races
 *   (rrt_context_finalize). rrt_last_error is per thread.
 */
#ifndef REPLAYRT_REPLAYRT_H_
#define REPLAYRT_REPLAYRT_H_

#include <stddef.h>
#include <stdint.h>

#include "kernel_abi.h"
#include "values.h"

#if defined(__GNUC__) || defined(__clang__)
#define RRT_API __attribute__((visibility("default")))
#else
#define RRT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version. The major version changes only when the ABI breaks; it is 1 for every
   version this header describes. The minor version counts additions: appended struct fields
   (read only from a caller whose struct_size covers them), new calls and new values; fields are
   never reordered and pinned values never change. "ABI version 1.N" in this header marks what
   minor version N added. A caller tests what it compiled against with these macros and what
   it runs against with rrt_abi_version. RRT_ABI_VERSION is the major version. */
#define RRT_ABI_VERSION_MAJOR 1
#define RRT_ABI_VERSION_MINOR 5
#define RRT_ABI_VERSION RRT_ABI_VERSION_MAJOR

typedef struct rrt_context_s *rrt_context_t;
typedef struct rrt_stream_s *rrt_stream_t;
typedef struct rrt_event_s *rrt_event_t;
typedef struct rrt_graph_s *rrt_graph_t;
typedef struct rrt_run_s *rrt_run_t;

/* ---- status and errors ---------------------------------------------------------------- */

/* rrt_status_t, the status codes (RRT_OK, RRT_ERR_*) and the growth points
   (rrt_growth_point_t) are pinned values: values.h. */

/* The enumerator's name ("RRT_OK", "RRT_ERR_INTERNAL", ...). Never NULL: "RRT_ERR_UNKNOWN" for
   a value outside the table. The string is static. */
RRT_API const char *rrt_status_name(rrt_status_t status);
/* Appended (ABI version 1.5): the growth point enumerator's name ("RRT_GROWTH_NONE",
   "RRT_GROWTH_ARENA_GM_HEAP", ...). Never NULL: "RRT_GROWTH_UNKNOWN" for a value outside the
   table. The string is static. */
RRT_API const char *rrt_growth_point_name(rrt_growth_point_t point);
/* Appended (ABI version 1.3): writes the ABI version the loaded library implements (its
   RRT_ABI_VERSION_MAJOR and RRT_ABI_VERSION_MINOR). A caller compiled against minor version N
   may use what N added when *major equals its RRT_ABI_VERSION_MAJOR and *minor >= N.
   RRT_ERR_INVALID_ARGUMENT when either pointer is null, with nothing written. */
RRT_API rrt_status_t rrt_abi_version(uint32_t *major, uint32_t *minor);

typedef struct rrt_error_detail {
  rrt_status_t code;
  rrt_growth_point_t growth_point; /* RRT_GROWTH_NONE unless a capacity refusal */
  uint64_t requested_bytes;        /* capacity refusals: what the call needed */
  uint64_t capacity_bytes;         /* capacity refusals: what is frozen */
  char message[256];               /* NUL-terminated, human readable */
} rrt_error_detail_t;

/* Copies the calling thread's most recent failure into *out and returns its code; RRT_OK with
   an empty message if this thread has seen none. A NULL `out` returns RRT_ERR_INVALID_ARGUMENT
   (and does not overwrite the recorded detail). Successful calls do not clear the detail. */
RRT_API rrt_status_t rrt_last_error(rrt_error_detail_t *out);
/* Appended (ABI version 1.4): the calling thread's most recent failure message uncut (the
   detail's `message` holds its first 255 characters). Writes at most `capacity` bytes to
   `out`, always NUL-terminated (nothing when capacity is 0, when `out` may be NULL), and the
   message's length without the NUL to *length, so a first call with capacity 0 sizes a second
   one. An empty message if this thread has seen no failure; the cut message if the host ran
   out of memory while the failure was recorded. RRT_ERR_INVALID_ARGUMENT for a NULL length,
   or a NULL out with capacity > 0; neither overwrites the recorded failure. RRT_OK otherwise. */
RRT_API rrt_status_t rrt_last_error_message(char *out, size_t capacity, size_t *length);

/* ---- contexts ------------------------------------------------------------------------- */

/* rrt_mode_t, rrt_platform_t and rrt_wait_policy_t (how host waits wait): values.h. */

typedef struct rrt_context_options {
  uint32_t struct_size;
  rrt_platform_t platform;
  int32_t device_id;       /* sim: any value >= 0 */
  uint32_t device_workers; /* sim: device-side worker threads per launch, 0 = default (1) */
  /* Appended (ABI version 1.1): nonzero records per-task device timings in profiling
     collectors (rrt_run_profile, rrt_context_profile). The collectors are a growth point. A
     struct_size that ends before wait_policy (an ABI 1.1 caller's) also keeps the ABI 1.1
     kernel-mode profiling rule (see profiling_task_capacity). */
  uint32_t profiling;
  /* Appended (ABI version 1.2): how host waits for device work (rrt_stream_synchronize,
     rrt_event_synchronize, rrt_run_wait, rrt_run) wait; see rrt_wait_policy_t. */
  rrt_wait_policy_t wait_policy;
  uint32_t wait_spin_us; /* RRT_WAIT_SPIN_THEN_BLOCK: the spin budget in microseconds; 0: 250 */
} rrt_context_options_t;

typedef struct rrt_capacity_plan { /* bytes; the kernel-mode freeze */
  uint64_t gm_heap_bytes;
  uint64_t gm_sm_bytes;
  uint64_t runtime_pool_bytes;
  uint64_t retained_staging_bytes;
  uint64_t graph_definition_bytes;
  uint64_t host_staging_bytes;
} rrt_capacity_plan_t;

typedef struct rrt_kernel_config {
  uint32_t struct_size;
  /* Process-unique: kernel init refuses (RRT_ERR_INVALID_ARGUMENT) a value another kernel init
     in this process already claimed. 0: the runtime picks one no context has claimed (the
     largest free value; a later explicit request for it is refused as a duplicate). */
  uint64_t context_generation;
  rrt_capacity_plan_t capacity;
  /* Appended (ABI version 1.1): with profiling on, the collector shape (task records),
     committed at init and frozen; a callable with more tasks is refused (the detail names
     profiling_task_capacity). 0: the first prepared callable's task count becomes the shape.
     Changed in ABI 1.2: the launches one capture holds share it, writing their records one
     after another, so a graph needs the sum of its launches' tasks (see rrt_context_profile).
     A context created from an options struct that ends before wait_policy (an ABI 1.1
     caller's) keeps the 1.1 rule: each launch writes its records from the first one on, so
     the largest callable's task count suffices. rrt_kernel_config_fit sizes it for single
     launches of a set of callables. */
  uint32_t profiling_task_capacity;
} rrt_kernel_config_t;

/* Lifecycle: create → (program_init | kernel_init) → work → finalize → destroy.
   A context is created mode-less. The first init latches its mode for good: PROGRAM or
   KERNEL; an init of the other mode returns RRT_ERR_INVALID_STATE. A failed init (invalid
   arguments, or a plan the device cannot hold) latches nothing and leaves nothing allocated:
   the context stays mode-less and reusable. */
RRT_API rrt_status_t rrt_context_create(const rrt_context_options_t *options, rrt_context_t *out);
/* 1 if `ctx` can run kernel-mode launches on its platform, 0 otherwise (also for NULL). */
RRT_API int rrt_kernel_mode_supported(rrt_context_t ctx);
/* Latches PROGRAM. Idempotent on a program context that is not finalized. */
RRT_API rrt_status_t rrt_program_init(rrt_context_t ctx);
/* Commits `config->capacity` once (arena bank 0, pipeline slot 0's retained staging, the
   graph-definition store, the host staging region and, with profiling on, the collectors),
   then latches KERNEL. Nothing grows afterwards. An allocation failure during the commit
   returns RRT_ERR_OUT_OF_MEMORY with nothing allocated and nothing latched; the context may
   be initialized again, with the same context_generation. A second kernel init returns
   RRT_ERR_INVALID_STATE and changes nothing. */
RRT_API rrt_status_t rrt_kernel_init(rrt_context_t ctx, const rrt_kernel_config_t *config);
/* *mode is meaningful only when *latched is 1. */
RRT_API rrt_status_t rrt_context_mode(rrt_context_t ctx, rrt_mode_t *mode, int *latched);
/* Waits for the context's work, then releases every context-owned device buffer, prepared
   callable and pending run. Requires that no graph captured from this context is replayed
   afterwards. The mode stays latched; a program context may be initialized again. A sticky
   failure still pending on one of the context's streams (not capturing) is reported here
   and cleared: the context is finalized all the same, and the call returns the first such
   failure (RRT_ERR_KERNEL_FAILED for a kernel, with its detail) instead of RRT_OK.
   Finalize may race with the context's other calls on other threads (not with init, destroy
   or the destruction of the context's streams): a prepare, run prepare, run launch, launch,
   replay, begin capture or profile read already in progress when finalize begins completes
   first (finalize waits for it, including a run prepare waiting for its slot's last replay),
   and one that starts after returns RRT_ERR_INVALID_STATE and does nothing. So no launch,
   run or replay lands on memory finalize releases. */
RRT_API rrt_status_t rrt_context_finalize(rrt_context_t ctx);
/* RRT_ERR_INVALID_STATE while graphs, streams, events or runs created from it are alive.
   Finalizes first if needed. */
RRT_API rrt_status_t rrt_context_destroy(rrt_context_t ctx);

/* ---- device memory owned by the caller (outside the frozen capacity) ------------------ */

/* 1024-byte aligned. Not counted in the runtime's allocation statistics. Allowed in either
   mode at any time, after rrt_kernel_init too: caller memory lies outside the frozen capacity,
   and kernel mode's refusals (growth, allocation inside a launch) apply to the runtime's own
   buffers only. */
RRT_API rrt_status_t rrt_device_alloc(rrt_context_t ctx, size_t bytes, void **out);
/* RRT_ERR_INVALID_ARGUMENT for a pointer that rrt_device_alloc did not return or that was
   already freed. Work queued on the context's streams may still use the buffer, so the free
   first waits for every stream's queued work (reporting no failure), then frees. The free is
   ordered with rrt_kernel_launch, rrt_run_launch and rrt_graph_replay on other threads: while
   it waits none of them is admitted, so one admitted before it has completed when the memory
   goes, and one admitted after it finds the buffer gone (a launch naming it is
   RRT_ERR_INVALID_ARGUMENT, a replay of a graph that captured it RRT_ERR_STALE_ADDRESS). The
   wait holds the lock of the context's handle tables, so rrt_device_alloc, another
   rrt_device_free, rrt_stream_create, rrt_stream_wrap_native and rrt_stream_destroy on the
   same context wait for it too: do not free from work the context's streams run. */
RRT_API rrt_status_t rrt_device_free(rrt_context_t ctx, void *device_ptr);
/* stream NULL: synchronous, and not ordered with work queued on any stream (synchronize that
   stream first). With a stream: queued on it; on a capturing stream the copy is recorded, not
   executed, and the host buffer must stay valid for every replay. The device range must lie
   inside one live allocation. */
RRT_API rrt_status_t rrt_memcpy_h2d(rrt_context_t ctx, void *dst, const void *src, size_t bytes,
                                    rrt_stream_t stream);
RRT_API rrt_status_t rrt_memcpy_d2h(rrt_context_t ctx, void *dst, const void *src, size_t bytes,
                                    rrt_stream_t stream);

/* ---- streams, events, capture, replay ------------------------------------------------- */

RRT_API rrt_status_t rrt_stream_create(rrt_context_t ctx, rrt_stream_t *out);
/* Waits for the stream's work first. RRT_ERR_INVALID_STATE while it is capturing (the stream
   stays). Otherwise the stream is destroyed whatever the result: a sticky failure still
   pending on it is returned (the code and detail rrt_stream_synchronize would have reported,
   RRT_ERR_KERNEL_FAILED for a kernel) instead of RRT_OK, and the handle is invalid. */
RRT_API rrt_status_t rrt_stream_destroy(rrt_stream_t stream);
/* RRT_ERR_INVALID_STATE on a capturing stream. */
RRT_API rrt_status_t rrt_stream_synchronize(rrt_stream_t stream);
/* Sets *out_done to 1 when all work queued on `stream` so far has executed, 0 otherwise. Never
   waits, and never reports or clears a failure: work that failed counts as executed, and its
   failure stays sticky for rrt_stream_synchronize. On a capturing stream it answers for the
   work queued before the capture began (captured work is recorded, not queued). Thread-safe;
   RRT_ERR_INVALID_ARGUMENT for a null stream or out_done. */
RRT_API rrt_status_t rrt_stream_query(rrt_stream_t stream, int *out_done);
RRT_API rrt_status_t rrt_event_create(rrt_context_t ctx, rrt_event_t *out);
/* Marks the work queued on `stream` so far. Inside a capture the record is captured, and the
   capture, then the graph it becomes, holds the event: rrt_event_destroy refuses until both are
   gone. The same holds for rrt_stream_wait_event. A record or wait that fails holds nothing and
   leaves nothing of itself in the capture, or spoils the capture (rrt_stream_end_capture). */
RRT_API rrt_status_t rrt_event_record(rrt_event_t event, rrt_stream_t stream);
/* The stream's later work waits for the event's most recent record at the time of this call
   (at replay time, for a wait recorded into a graph). */
RRT_API rrt_status_t rrt_stream_wait_event(rrt_stream_t stream, rrt_event_t event);
/* Waits for the event's most recent record. Reports the failure that record carried unless
   its stream reported it already, and clears it on that stream. */
RRT_API rrt_status_t rrt_event_synchronize(rrt_event_t event);
/* Sets *out_done to 1 when the event's most recent record has executed (or it was never
   recorded, or the device faulted so that it never will: rrt_event_synchronize reports the
   fault), 0 otherwise. Never waits, and never reports or clears the failure that record
   carried (rrt_event_synchronize does). A record captured into a graph counts only once a
   replay queues it: until then the most recent record is the one made before. Thread-safe;
   RRT_ERR_INVALID_ARGUMENT for a null event or out_done. */
RRT_API rrt_status_t rrt_event_query(rrt_event_t event, int *out_done);
/* Waits for the event's most recent record first. A failure that record carried is not
   reported here: it stays sticky on the stream that recorded it. RRT_ERR_INVALID_STATE while
   a graph or a capture in progress records or waits on the event. */
RRT_API rrt_status_t rrt_event_destroy(rrt_event_t event);
/* Between begin and end the stream records copies, launches and event operations instead of
   executing them. Synchronizing a capturing stream is RRT_ERR_INVALID_STATE.
   What a captured launch freezes and what each replay reads (see rrt_operand_kind_t): the
   capture freezes the launch's arguments as they were at rrt_kernel_launch: the tensor
   addresses, the SCALAR values of the run args, the callable's IMMEDIATE values, its task
   shapes and its views' fixed offsets. A replay reads device memory as it is when each task
   runs: tensor contents (and HOST tensors' host buffers, copied in again), DEVICE_VALUE
   operands, and hence views' device-resident offsets. To change a value between replays, keep
   it in a device tensor and name it with a DEVICE_VALUE operand or a view's offset_value. */
RRT_API rrt_status_t rrt_stream_begin_capture(rrt_stream_t stream);
/* RRT_ERR_INVALID_STATE, with no graph made and the capture ended, when work that reached the
   stream during the capture failed there (a copy or event operation the stream refused, or a
   launch refused after part of it was enqueued): the graph would miss that work. A call
   refused before it reaches the stream (invalid arguments, a kernel-mode capacity refusal)
   changes nothing, the capture included: the capture goes on, and the graph holds exactly
   the calls that succeeded. A host out-of-memory (RRT_ERR_INTERNAL) in this call leaves the
   capture going on the simulator, so the call can be made again; on CUDA, whose capture ends
   for good inside the call, a failure after that point ends it with no graph made (memory
   running out inside cudaStreamEndCapture is RRT_ERR_OUT_OF_MEMORY). */
RRT_API rrt_status_t rrt_stream_end_capture(rrt_stream_t stream, rrt_graph_t *out);
/* Checks every captured address first: RRT_ERR_STALE_ADDRESS and nothing enqueued on any
   stream if any is no longer the same live allocation. Replays are asynchronous on `stream`
   and ordered after the context's previous launch, run or replay on another stream. Graphs
   do not nest: a replay onto a stream that is capturing is RRT_ERR_INVALID_STATE. */
RRT_API rrt_status_t rrt_graph_replay(rrt_graph_t graph, rrt_stream_t stream);
RRT_API rrt_status_t rrt_graph_destroy(rrt_graph_t graph);

/* ---- native interop (CUDA contexts) ----------------------------------------------------- */

/* Wraps a stream the caller owns (CUDA: a cudaStream_t, passed as void *, of the context's
   device) as an rrt_stream_t. Launches, copies, events, capture and replay work on it as on
   an rrt_stream_create stream. rrt_stream_destroy waits for the work replayrt queued and
   releases the wrapper, never the native stream; the native stream must outlive the wrapper.
   When the native stream's owner captures it (cudaStreamBeginCapture, as torch.cuda.graph
   does), the wrapper reports capturing: an rrt_kernel_launch on it is recorded into the
   owner's graph (kernel-mode addresses never move, but replayrt does not check that graph when
   the owner replays it: keep the context and every tensor it names alive while it may run, and
   order its replays after the context's other launches, runs and replays and before the next,
   as replayrt orders those among themselves: they share the context's staging and heap); an
   rrt_run_launch is refused (RRT_ERR_INVALID_STATE: program-mode buffers may move); stream
   synchronize, destroy, begin_capture and graph replay are RRT_ERR_INVALID_STATE, and so are
   rrt_context_finalize, rrt_device_free and rrt_device_unregister on its context, which must
   wait for the work queued on it first (they change nothing); an event recorded or waited on
   is not held for the owner's graph, whose end replayrt never sees (keep the event alive while
   that graph may run); with profiling on, each launch the owner's capture holds writes its
   task records from the first one on; and work replayrt could not enqueue invalidates the
   owner's capture, so its end of capture fails instead of leaving a graph without it. When the
   context's last launch, run or replay before the owner's capture was on this stream, the next one
   on another stream, which must follow it, is RRT_ERR_INVALID_STATE (nothing enqueued, and a run
   stays prepared) until the owner's capture ends: replayrt can neither record nor wait on a stream
   its owner captures. RRT_ERR_INVALID_ARGUMENT for a null handle, the legacy or per-thread default
   stream (they cannot be captured) or a null `out`; RRT_ERR_UNSUPPORTED on a context whose platform
   has no native streams (the simulator). */
RRT_API rrt_status_t rrt_stream_wrap_native(rrt_context_t ctx, void *native_stream,
                                            rrt_stream_t *out);
/* The native stream behind `stream` (CUDA: its cudaStream_t; a wrapped stream: the handle it
   wraps). Work the caller enqueues on it is ordered with replayrt's work on `stream`; a capture
   the caller begins on it is seen as rrt_stream_wrap_native describes.
   RRT_ERR_UNSUPPORTED on the simulator, whose streams have no native handle. */
RRT_API rrt_status_t rrt_stream_native_handle(rrt_stream_t stream, void **out);
/* Admits [device_ptr, device_ptr + bytes), device memory replayrt did not allocate (for
   example a PyTorch tensor's storage), as DEVICE tensor memory until rrt_device_unregister:
   runs accept tensors inside it, captures record it and replays check it like memory from
   rrt_device_alloc. The caller keeps ownership and must not free it while registered;
   rrt_device_free refuses it. Unregistering makes every graph that captured it stale
   (RRT_ERR_STALE_ADDRESS at replay). RRT_ERR_INVALID_ARGUMENT when the range is null or empty,
   overlaps memory replayrt already tracks, or is not device memory of the context's device;
   RRT_ERR_UNSUPPORTED on the simulator. */
RRT_API rrt_status_t rrt_device_register(rrt_context_t ctx, void *device_ptr, size_t bytes);
/* Ends a registration. Work queued on the context's streams may still use the memory, so the
   unregister first waits for every stream's queued work (reporting no failure), ordered with
   launches, runs and replays on other threads as rrt_device_free is: the memory can go back to
   its owner once the call returns. RRT_ERR_INVALID_ARGUMENT unless `device_ptr` is the start of
   a live registration. */
RRT_API rrt_status_t rrt_device_unregister(rrt_context_t ctx, void *device_ptr);

/* ---- kernels -------------------------------------------------------------------------- */

/* What a kernel receives and what it must do: kernel_abi.h (rrt_kernel_args_t, rrt_kernel_fn,
   the native launcher rrt_native_launch_fn and its contract, rrt_device_operand_t, the
   operand limits and the float scalar helpers). */

/* Built-in kernels are pre-registered under their names ("fill", "copy", "add", "mul",
   "scale", "matmul", "softmax", "rmsnorm", "silu", "gelu", "linear", "embedding", "rope",
   "kv_store", "attention"; see "built-in kernels" below). A name may be registered once per
   context; `user` must outlive the context. RRT_ERR_INVALID_STATE once the context holds 256
   kernels (built-ins included). RRT_ERR_UNSUPPORTED on a context whose platform cannot run
   host-function kernels (CUDA: use rrt_kernel_register_native). */
RRT_API rrt_status_t rrt_kernel_register(rrt_context_t ctx, const char *name, rrt_kernel_fn fn,
                                         void *user, int32_t *out_kernel_id);
/* Registers a native launcher under `name` (rules as rrt_kernel_register). On a context whose
   platform runs native work only (CUDA), rrt_kernel_register returns RRT_ERR_UNSUPPORTED and
   this is the way to add kernels; on the simulator this returns RRT_ERR_UNSUPPORTED. */
RRT_API rrt_status_t rrt_kernel_register_native(rrt_context_t ctx, const char *name,
                                                rrt_native_launch_fn fn, void *user,
                                                int32_t *out_kernel_id);
/* A kernel that declares its operands (ABI version 1.2): every task that uses it passes
   exactly num_tensors tensor operands (PARAM, INTERMEDIATE, VIEW) and then num_scalars scalar
   operands (SCALAR, IMMEDIATE, DEVICE_VALUE), and it writes exactly the tensor operands whose
   bit is set in `writes` (bit i: tensor operand i); the others it only reads. Exactly one of
   `fn` (simulator contexts) and `native_fn` (CUDA contexts) is set.
   The limits RRT_KERNEL_MAX_TENSORS and RRT_KERNEL_MAX_SCALARS (kernel_abi.h) hold for every
   task, whatever registered its kernel: a task with more tensor or scalar operands is
   RRT_ERR_INVALID_ARGUMENT at rrt_callable_prepare and rrt_capacity_plan_fit, naming the task
   and the count. */
typedef struct rrt_kernel_desc {
  uint32_t struct_size;
  const char *name;
  rrt_kernel_fn fn;
  rrt_native_launch_fn native_fn;
  void *user;
  uint32_t num_tensors; /* 0..RRT_KERNEL_MAX_TENSORS */
  uint32_t num_scalars; /* 0..RRT_KERNEL_MAX_SCALARS */
  uint64_t writes;
} rrt_kernel_desc_t;
/* Registers the kernel `desc` declares, under desc->name (name rules as rrt_kernel_register;
   `user` must outlive the context); *out_kernel_id is its id. RRT_ERR_INVALID_ARGUMENT for a
   null ctx, desc, name or out_kernel_id, a struct_size below sizeof(rrt_kernel_desc_t) of ABI
   1.2, both or neither of fn and native_fn set, num_tensors above RRT_KERNEL_MAX_TENSORS,
   num_scalars above RRT_KERNEL_MAX_SCALARS, or a `writes` bit at or above num_tensors (the
   detail names the kernel and the field). RRT_ERR_UNSUPPORTED when the set function does not
   suit the platform (fn on CUDA, native_fn on the simulator). RRT_ERR_INVALID_STATE once the
   context holds 256 kernels. The limits are a task's, so every kernel that registers can be
   used by a task.
   What the declaration buys, at rrt_callable_prepare and rrt_context_kernel_config_fit (the
   context-free fits do not know the kernel, so they check none of it; fit a plan with
   rrt_context_kernel_config_fit):
     - a task whose tensor or scalar operand count differs is RRT_ERR_INVALID_ARGUMENT naming
       the task, the kernel and both counts;
     - dependencies follow the declared writes: two tasks that only read a tensor are not
       ordered by it (a kernel from rrt_kernel_register or rrt_kernel_register_native counts
       as reading and writing every tensor operand, so it is ordered with every task that
       touches one of its tensors);
     - data flow is checked as for the built-ins: a task writing an RRT_DIR_IN parameter, or
       reading an intermediate or an RRT_DIR_OUT parameter that no earlier task wrote, is
       RRT_ERR_INVALID_ARGUMENT naming the task, the operand (for a write) and the tensor. */
RRT_API rrt_status_t rrt_kernel_register_desc(rrt_context_t ctx, const rrt_kernel_desc_t *desc,
                                              int32_t *out_kernel_id);
/* RRT_ERR_INVALID_ARGUMENT when no kernel has that name. */
RRT_API rrt_status_t rrt_kernel_lookup(rrt_context_t ctx, const char *name, int32_t *out_kernel_id);

/* ---- built-in kernels ------------------------------------------------------------------
   Every context holds these under their names (rrt_kernel_lookup), on the simulator and on
   CUDA. Operands: the tensors in the order listed, then the scalars; each built-in writes only
   its LAST tensor and reads the others. Tensors are row-major; activations are float32; a
   weight of dtype `wdtype` (a scalar holding RRT_DTYPE_F32, _F16 or _BF16) is widened to
   float32 exactly; ids and pos are int32. Integer scalars are u64 values; a float scalar is
   rrt_scalar_from_f32's bits (high 32 ignored). Sizes are exact: a tensor holds exactly the
   elements its shape below names ([R, C] = R*C elements; "n" = any count of at least one).
   Results are deterministic (fixed reduction order) on each platform; CUDA matches the
   simulator bit for bit for fill, copy, add, mul, scale, matmul, embedding and kv_store, and
   within a small relative error for the others.
   fill(out[n]; value): out[i] = value.
   copy(in[n], out[n]): out = in.   add / mul(a[n], b[n], out[n]): elementwise a + b, a * b.
   scale(in[n], out[n]; s): out = in * s.
   matmul(a[M,K], b[K,N], out[M,N]; M, K, N): out = a @ b, float32 sums over k increasing.
   softmax(in[R*cols], out[same]; cols): per row, e = exp(x - row max) in float32 and out = e
     times the float32 reciprocal of the sum of e, the sum in double.
   rmsnorm(in[R*cols], weight[cols], out[same as in]; cols, eps): per row,
     out = in / sqrt(mean(in^2) + eps) * weight, the mean and product in double; eps finite
     and >= 0.
   silu(in[n], out[n]): in * sigmoid(in).   gelu(in[n], out[n]): the tanh form,
     0.5 in (1 + tanh(sqrt(2/pi) (in + 0.044715 in^3))), evaluated as in * sigmoid(2u) so
     that no input overflows.
   linear(x[M,K], w[N,K] (wdtype), y[M,N]; M, K, N, wdtype): y = x * w^T on checkpoint
     [out, in] weights (widened to float32 first), float32 accumulation. On the simulator
     y[m][n] is, bit for bit: eight partial sums, sum j taking the products k = j, j + 8, ...
     of the whole blocks of eight, combined as ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 +
     s7)), then the products of the last K % 8 positions added in increasing k, every product
     rounded to float32 before it is added (no fused multiply-add). On CUDA 32 partial sums
     (k = j, j + 32, ...) with fused multiply-adds are combined by a warp shuffle tree, so
     results agree with the simulator's within float32 rounding, not bit for bit.
   embedding(table[V,D] (wdtype), ids[T], out[T,D]; V, D, T, wdtype): out[t] = table[ids[t]].
     An id outside [0, V) fails the task.
   rope(pos[1], x[T, H*hd]; T, H, hd, theta): in place, row t at position p = pos[0] + t;
     each head rotates its pairs (x[2i], x[2i+1]) by p * theta^(-2i/hd), i < hd/2 (llama2.c
     convention), angles and rotation in double. hd even, theta finite and > 0; pos[0] < 0
     fails the task.
   kv_store(src[T,W], pos[1], cache[S,W]; T, W, S): cache rows pos[0] .. pos[0]+T-1 = src,
     other rows untouched. T <= S; pos[0] < 0 or pos[0] + T > S fails the task.
   attention(q[T, H*hd], k_cache[S, KVH*hd], v_cache[S, KVH*hd], pos[1], out[T, H*hd];
     T, H, KVH, hd, S): query row t (position p = pos[0] + t) of head h attends causally to
     cache rows 0..p of kv head h / (H/KVH), scores scaled by 1/sqrt(hd), softmax in float32
     after subtracting the maximum, float32 accumulation. H % KVH == 0, T <= S; pos[0] < 0 or
     pos[0] + T > S fails the task.
   Aliasing: copy, add, mul, scale, softmax, rmsnorm, silu and gelu may write in place (their
   output covering exactly an input's bytes) and otherwise must not overlap an input; rope's
   x must not overlap pos; the output of matmul, linear, embedding, kv_store and attention
   overlaps no input.
   Failures: a task whose operands break these rules fails with RRT_ERR_KERNEL_FAILED (on the
   simulator when its work runs, reported like any kernel failure) naming the callable, task,
   kernel and a code: 1 operand counts, 2 a byte size zero or not a
   multiple of the element size, 5 a null or misaligned tensor, 4 a zero dimension, 3 sizes
   that disagree with the dimensions, 6 an overlap, 7 a scalar outside its domain (eps,
   theta, wdtype, odd hd, H % KVH), 8 an id or position outside its range; the first failing
   check in that order wins and nothing is written. On CUDA, codes 1 to 7 are checked on the
   host before the launch enqueues anything; ids and pos live in device memory and are read
   only by the device, which cannot fail a task: there an id or position out of range writes
   NaN to the output elements it concerns (kv_store writes nothing), and no kernel reads or
   writes outside its tensors. */

/* ---- callables ------------------------------------------------------------------------ */

/* rrt_dtype_t, rrt_direction_t, rrt_address_space_t, rrt_bind_strategy_t,
   rrt_operand_kind_t, rrt_param_space_t (where runs pass a parameter) and RRT_MAX_DIMS:
   values.h. */

/* When operand values are taken. SCALAR values come with each launch or run; IMMEDIATE values,
   task shapes and views' fixed offsets come with the callable. A captured launch freezes all of
   these: every replay uses the values of the captured rrt_kernel_launch. DEVICE_VALUE operands
   and views' device-resident offsets are read from device memory when the task runs, at every
   replay, as tensor contents are: a value written between replays (rrt_memcpy_h2d, or an
   earlier task) is what the next replay uses. A device value a view's offset reads outside
   [0, offset_value_max] fails that task at run time (RRT_ERR_KERNEL_FAILED naming the task and
   view; the task does not run).
   On CUDA the values are read on the device too: a native launcher receives each one's device
   address (rrt_device_operand_t), and the built-ins read them in their kernels. There, a value
   outside its range (a view offset outside [0, offset_value_max], an offset that makes a
   built-in's output overlap an input, a scalar outside its domain) cannot fail the task: the
   built-in writes NaN over its output, or nothing when the output's own offset is out of range
   (kv_store writes nothing either way). A built-in's shape scalars (sizes and counts) are
   needed on the host when the launch is enqueued; on CUDA only its value scalars may be device
   values (fill's value, scale's s, rmsnorm's eps, rope's theta), and a launch that names
   another one fails with RRT_ERR_UNSUPPORTED naming the task, the kernel and the scalar. */

typedef struct rrt_tensor_desc {
  rrt_dtype_t dtype;
  uint32_t ndim;
  uint64_t shape[RRT_MAX_DIMS];
  rrt_direction_t direction; /* params only */
  /* Appended (ABI version 1.2): params only, read only from a 1.2 callable desc (else ANY). */
  rrt_param_space_t space;
} rrt_tensor_desc_t;

typedef struct rrt_operand {
  rrt_operand_kind_t kind;
  uint32_t index;
} rrt_operand_t;
/* A scalar read from device memory when the task runs: element `element` of a PARAM or
   INTERMEDIATE tensor whose dtype is I32 (sign-extended to 64 bits), I64, or F32 (its
   binary32 bits, as a float scalar). Prepare refuses another source kind or dtype, a source out
   of range or an element outside the source (RRT_ERR_INVALID_ARGUMENT naming the device
   value), and a task that reads a device value from an intermediate (or OUT parameter) before
   any task writes it. */
typedef struct rrt_device_value_desc {
  rrt_operand_kind_t source_kind; /* RRT_OPERAND_PARAM or RRT_OPERAND_INTERMEDIATE */
  uint32_t source_index;
  uint64_t element;
} rrt_device_value_desc_t;

/* A tensor operand over part of a PARAM or INTERMEDIATE tensor (its base): the view's own
   shape (1..RRT_MAX_DIMS dimensions, each >= 1), the base's dtype, starting `offset` elements
   into the base, plus, when offset_value is not -1, offset_stride times the device value
   offset_value (an I32 or I64 device value) read when the task runs. Prepare checks offset +
   offset_value_max * offset_stride + elements(shape) <= elements(base) (without overflow;
   offset_stride and offset_value_max are ignored for a fixed offset), and each violation is
   RRT_ERR_INVALID_ARGUMENT naming the view; at run time a device value below 0 or above
   offset_value_max fails the task (RRT_ERR_KERNEL_FAILED). For dependencies a view accesses
   its whole base, and a device value is a read of its source tensor. A parameter used only
   through views is staged like any parameter; views add no staging. Alignment: a view's
   address is its base's plus (offset + offset_stride * value) * the element size, so it is
   aligned to its element size whenever its base is, and no offset is refused for alignment.
   The built-ins need exactly that (a tensor not aligned to its element size fails the task
   with code 5); rrt_device_alloc bases are 1024-byte aligned, intermediates 256-byte aligned.
   A user kernel that needs more (vector loads) picks offsets that give it. */
typedef struct rrt_view_desc {
  rrt_operand_kind_t base_kind; /* RRT_OPERAND_PARAM or RRT_OPERAND_INTERMEDIATE */
  uint32_t base_index;
  uint32_t ndim;
  uint64_t shape[RRT_MAX_DIMS];
  uint64_t offset;        /* elements */
  int32_t offset_value;   /* -1: fixed offset; else an index into device_values */
  uint64_t offset_stride; /* elements per unit of the device value */
  uint64_t offset_value_max;
} rrt_view_desc_t;

typedef struct rrt_task_desc {
  int32_t kernel_id;
  uint32_t num_operands;
  const rrt_operand_t *operands; /* tensors first in the kernel's order, then scalars */
} rrt_task_desc_t;

typedef struct rrt_callable_desc {
  uint32_t struct_size;
  rrt_bind_strategy_t bind;
  uint32_t num_params;
  const rrt_tensor_desc_t *params;
  uint32_t num_intermediates;
  const rrt_tensor_desc_t *intermediates; /* live in gm_heap */
  uint32_t num_scalars;                   /* values come per run */
  uint32_t num_tasks;
  const rrt_task_desc_t *tasks; /* order = program order */
  /* Appended (ABI version 1.2). A desc whose struct_size covers these fields is a 1.2 desc:
     they and the params' `space` fields are read; a smaller one is read as ABI 1.1. */
  uint32_t num_views;
  const rrt_view_desc_t *views;
  uint32_t num_device_values;
  const rrt_device_value_desc_t *device_values;
} rrt_callable_desc_t;

/* Grows *plan (element-wise max) so that it can run `desc`. No context needed. The plan fits
   one callable; a kernel context that prepares several needs their runtime images and graph
   definitions side by side: see rrt_capacity_plan_fit_all. Retained and host staging are
   sized for the params a run may pass as HOST tensors (space HOST or ANY; every param of a
   1.1 desc is ANY); a DEVICE param needs no staging. */
RRT_API rrt_status_t rrt_capacity_plan_fit(const rrt_callable_desc_t *desc,
                                           rrt_capacity_plan_t *plan);
/* Grows *plan so that a kernel-mode context can prepare all `count` callables side by side and
   run any of them: runtime images add up (each rounded up to 1024 bytes), working regions take
   the maximum. Pass every callable the context will prepare in one call. */
RRT_API rrt_status_t rrt_capacity_plan_fit_all(const rrt_callable_desc_t *const *descs,
                                               uint32_t count, rrt_capacity_plan_t *plan);
/* Grows *config so that a kernel-mode context initialized with it can prepare all `count`
   callables side by side and run and profile any of them: config->capacity as
   rrt_capacity_plan_fit_all grows it, and config->profiling_task_capacity (when struct_size
   covers it) raised to the largest task count among them (from ABI 1.2 a graph that captures
   several launches needs the sum of theirs: raise it further; an ABI 1.1 context, see
   profiling_task_capacity, needs only the largest). Other fields are not touched (set
   context_generation before or after). No context needed. RRT_ERR_INVALID_ARGUMENT for a NULL
   or too small config, a NULL descs with count > 0, or an invalid desc (detail names
   descs[i]); *config is then unchanged. */
RRT_API rrt_status_t rrt_kernel_config_fit(const rrt_callable_desc_t *const *descs, uint32_t count,
                                           rrt_kernel_config_t *config);
/* Appended (ABI version 1.3): rrt_kernel_config_fit with ctx's kernel table, so that the
   config holds exactly what rrt_callable_prepare on ctx will need. The context-free fits
   count a kernel id they do not know as a user kernel that declares nothing; a kernel
   registered with rrt_kernel_register_desc orders fewer tasks (two that only read a tensor are
   not ordered by it), which can leave more dependency edges in the image than that estimate,
   so a plan for callables that use such kernels is fitted here. Register every kernel the
   callables use first; an id ctx does not know is RRT_ERR_INVALID_ARGUMENT (the detail names
   the task, and descs[i] when count > 1). Any state (created, initialized) will do; ctx is not
   changed. Errors otherwise as rrt_kernel_config_fit, with *config unchanged. */
RRT_API rrt_status_t rrt_context_kernel_config_fit(rrt_context_t ctx,
                                                   const rrt_callable_desc_t *const *descs,
                                                   uint32_t count, rrt_kernel_config_t *config);
/* Validates and stages the callable; the runtime mints the id (never reused before
   finalize). In kernel mode the callable's runtime image (or graph definition) is uploaded
   once, here, into the frozen capacity; a callable that does not fit is refused
   (RRT_ERR_INTERNAL, detail names the growth point) and changes nothing. */
RRT_API rrt_status_t rrt_callable_prepare(rrt_context_t ctx, const rrt_callable_desc_t *desc,
                                          int32_t *out_callable_id);

/* ---- runs ----------------------------------------------------------------------------- */

typedef struct rrt_tensor_arg {
  void *addr; /* host or device address, per `space` */
  uint64_t bytes;
  rrt_address_space_t space; /* HOST by default: staged by the runtime */
} rrt_tensor_arg_t;
typedef struct rrt_run_args {
  uint32_t struct_size;
  uint32_t num_tensors;
  const rrt_tensor_arg_t *tensors; /* one per param, in order */
  uint32_t num_scalars;
  const uint64_t *scalars;
} rrt_run_args_t;

/* Program mode. prepare picks a free pipeline slot and arena bank (depth 2) and binds the run
   there (buffers grow as needed); launch enqueues on `stream` (NULL: the context's own stream
   of that slot, so a failed run never skips a run of the other slot); wait blocks until done;
   finalize releases the slot. HOST outputs are copied back on the stream after the run's
   tasks, so they are in place when wait returns. rrt_run does all four on the slot's own
   stream; when a step after prepare fails, it still finalizes the run (the slot is free again)
   and the slot's buffers stay as prepare sized them, as after a successful run. With both
   slots in use, prepare returns RRT_ERR_INVALID_STATE. A launch whose DEVICE tensor's
   allocation was freed after prepare (even if another allocation now covers the address) is
   refused with RRT_ERR_INVALID_ARGUMENT, captured or not, and the run stays prepared
   (finalize it). A run from before an rrt_context_finalize takes no part in later sessions:
   its launch and wait are RRT_ERR_INVALID_STATE (that finalize waited for a launched run and
   reported its failure), and its finalize only frees the handle (RRT_OK). */
RRT_API rrt_status_t rrt_run_prepare(rrt_context_t ctx, int32_t callable_id,
                                     const rrt_run_args_t *args, rrt_run_t *out);
RRT_API rrt_status_t rrt_run_launch(rrt_run_t run, rrt_stream_t stream);
RRT_API rrt_status_t rrt_run_wait(rrt_run_t run);
RRT_API rrt_status_t rrt_run_finalize(rrt_run_t run);
RRT_API rrt_status_t rrt_run(rrt_context_t ctx, int32_t callable_id, const rrt_run_args_t *args);

/* Kernel mode. Enqueues one bounded operation on the caller's stream: no device allocation,
   no free, no synchronization, and (CUDA) no read of device memory. HOST tensors are staged
   with copies on that stream (captured with it). A run that needs more than the frozen plan is
   refused (RRT_ERR_INTERNAL, detail names the growth point) and changes nothing.
   Enqueueing is the launch's last step and the one that can fail after the launch has
   reached the stream (a stream that refuses an operation, a CUDA launch error): outside a
   capture, what was enqueued before the failure stays queued and runs or fails on the stream
   like any work (no runtime buffer was resized, so nothing published changed); inside a
   capture the capture is spoiled (see rrt_stream_end_capture). rrt_run_launch and
   rrt_graph_replay behave the same way. Later work is ordered after what was queued: the next
   launch, run or replay on another stream waits for it, and (program mode) so does the next
   prepare on the run's slot; a run whose launch failed so is finalized, not launched again.
   On CUDA the callable's tasks are native work on the caller's stream: outside a capture in
   program order; while the stream is captured (by rrt_stream_begin_capture or by the stream's
   owner) each task depends on exactly the tasks it depends on in the callable, so independent
   tasks become parallel branches of the graph, which join before the work that follows. */
RRT_API rrt_status_t rrt_kernel_launch(rrt_context_t ctx, int32_t callable_id,
                                       const rrt_run_args_t *args, rrt_stream_t caller_stream);

/* ---- profiling ------------------------------------------------------------------------ */

/* On CUDA a profiled launch brackets each task's work and the launch with a one-thread kernel
   that writes the device's %globaltimer (nanoseconds) into the collectors: nothing
   synchronizes; each record costs a kernel node, so profile for measurement, not in
   production. Tasks' times on CUDA include their launcher's whole work; `worker` is 0. */
typedef struct rrt_task_timing {
  uint64_t start_ns; /* device clock (steady, nanoseconds) */
  uint64_t end_ns;
  uint32_t task;   /* index into the callable's tasks */
  uint32_t worker; /* device worker that ran it */
} rrt_task_timing_t;

/* The task timings of a program-mode run that completed (after rrt_run_wait, before
   rrt_run_finalize). Writes up to `capacity` records to `out` (which may be NULL when
   capacity is 0) and the number of tasks the run had to *count. RRT_ERR_INVALID_STATE when
   profiling is off or the run has not completed. */
RRT_API rrt_status_t rrt_run_profile(rrt_run_t run, rrt_task_timing_t *out, uint32_t capacity,
                                     uint32_t *count);
/* The same for the most recent completed kernel-mode launch or replay of `ctx`. A replay
   reports every kernel-mode launch its graph holds: the records come in launch (capture)
   order, each launch's in its callable's task order, `task` indexing that launch's callable
   (so a launch's records start where `task` is 0). They share one frozen collector of
   profiling_task_capacity records: a launch captured after launches whose tasks fill it is
   refused at rrt_kernel_launch (RRT_ERR_INTERNAL at RRT_GROWTH_DFX_COLLECTORS, the detail
   names profiling_task_capacity) and changes nothing; the capture holds the launches before
   it. *count is 0 after a replay of a graph that holds no kernel-mode launch.
   Changed in ABI 1.2; before it, every launch wrote from the first record. A context whose
   options struct ends before wait_policy (an ABI 1.1 caller's) keeps that rule: each launch a
   capture holds writes its records from the first one on, overwriting the earlier launches',
   a replay reports its graph's last kernel-mode launch, and no capture is refused for the sum
   of its launches' tasks. */
RRT_API rrt_status_t rrt_context_profile(rrt_context_t ctx, rrt_task_timing_t *out,
                                         uint32_t capacity, uint32_t *count);

/* ---- statistics ----------------------------------------------------------------------- */

/* Per growth point, summed over both pipeline slots and arena banks. */
typedef struct rrt_region_stats {
  uint64_t capacity_bytes; /* bytes the buffers hold now: what the runtime asked the device for */
  uint64_t used_bytes;     /* bytes the most recent request needed (kernel-mode runtime_pool:
                              bytes taken by resident images and seeds) */
  uint64_t base_changes;   /* published buffers moved or released, teardown excluded; 0 for
                              the life of a kernel-mode context */
} rrt_region_stats_t;
typedef struct rrt_stats {
  uint32_t struct_size;
  uint64_t device_alloc_calls, device_free_calls; /* by the runtime; caller allocations excluded */
  uint64_t live_bytes, peak_bytes;
  uint64_t launches, replays, stale_address_refusals;
  uint64_t refusals[RRT_GROWTH_POINT_COUNT];          /* indexed by rrt_growth_point_t */
  rrt_region_stats_t regions[RRT_GROWTH_POINT_COUNT]; /* indexed by rrt_growth_point_t */
} rrt_stats_t;
/* Counters never decrease, except live_bytes. The bytes add up: live_bytes is the sum of
   regions[].capacity_bytes whenever no call of the context is in progress (a call that moves a
   buffer holds the new one beside the old one until it returns; peak_bytes counts that), and
   after rrt_kernel_init each region's capacity_bytes is its field of the committed plan
   (gm_heap_bytes, gm_sm_bytes, runtime_pool_bytes, retained_staging_bytes,
   graph_definition_bytes, host_staging_bytes) until a first allocation fills an empty one.
   Both count the bytes the runtime asked for: a device may round each allocation up (the
   simulator to 1024 bytes), which neither counts, and caller memory (rrt_device_alloc) is in
   neither. */
RRT_API rrt_status_t rrt_context_stats(rrt_context_t ctx, rrt_stats_t *out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* REPLAYRT_REPLAYRT_H_ */
