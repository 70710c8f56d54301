/*
 * replayrt — the pinned values of the C ABI: status codes, growth points and the enumerations
 * every descriptor uses. replayrt/replayrt.h includes this header; the runtime's core includes
 * only this one and kernel_abi.h, never the descriptors and calls of replayrt.h. Values never
 * change within a major ABI version.
 */
#ifndef REPLAYRT_VALUES_H_
#define REPLAYRT_VALUES_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t rrt_status_t;

/* ---- status codes --------------------------------------------------------------------- */

/* Values are pinned: they are the upstream host band and never change. */
enum {
  RRT_OK = 0,
  RRT_ERR_INTERNAL = -1000,              /* host failure; also every kernel-mode capacity refusal */
  RRT_ERR_UNSUPPORTED = -1001,           /* capability this platform does not provide */
  RRT_ERR_PREPARED_INCOMPATIBLE = -1002, /* an overlapping prepare cannot share the active layout */
  RRT_ERR_INVALID_STATE = -1003,    /* valid call out of lifecycle order or in the wrong mode */
  RRT_ERR_INVALID_ARGUMENT = -1004, /* structural argument error */
  RRT_ERR_CALLABLE_COUNT_EXCEEDED = -1005, /* no free callable id */
  RRT_ERR_CALLABLE_BYTES_EXCEEDED = -1006, /* callable image larger than its store */
  RRT_ERR_CALLABLE_NOT_RESIDENT = -1007,   /* launch of an id that is not prepared */
  RRT_ERR_OUT_OF_MEMORY = -1008,           /* the device allocator failed; state unchanged */
  RRT_ERR_STALE_ADDRESS = -1009,           /* a captured address is no longer the same allocation */
  RRT_ERR_KERNEL_FAILED = -1010            /* a kernel reported failure; detail names the task */
};

/* The places where runtime-time growth could re-base a device address. In a kernel-mode
   context each one refuses growth of a published buffer; the refusal names it. */
typedef enum rrt_growth_point {
  RRT_GROWTH_NONE = -1,
  RRT_GROWTH_ARENA_GM_HEAP = 0,      /* G1: intermediates of a run */
  RRT_GROWTH_ARENA_GM_SM = 1,        /* G1: device scheduler state */
  RRT_GROWTH_ARENA_RUNTIME_POOL = 2, /* G1, G7: runtime images */
  RRT_GROWTH_RETAINED_STAGING = 3,   /* G2: HOST tensors of a device-build run */
  RRT_GROWTH_GRAPH_DEFINITION = 4,   /* G3: task-graph definitions of a host-build run */
  RRT_GROWTH_HOST_STAGING = 5,       /* G4: HOST tensors of a host-build run */
  RRT_GROWTH_DFX_COLLECTORS = 6,     /* G5: profiling collector pools */
  RRT_GROWTH_LAUNCH_ALLOCATION = 7   /* G8: any device allocation while a launch is encoded */
} rrt_growth_point_t;

/* The growth points there are: the length of the per-growth-point arrays in rrt_stats_t.
   Pinned: a new growth point would be a new major version. */
#define RRT_GROWTH_POINT_COUNT 8

/* ---- contexts ------------------------------------------------------------------------- */

typedef enum rrt_mode { RRT_MODE_PROGRAM = 0, RRT_MODE_KERNEL = 1 } rrt_mode_t;
typedef enum rrt_platform { RRT_PLATFORM_SIM = 0, RRT_PLATFORM_CUDA = 1 } rrt_platform_t;

/* How a host wait waits for device work to finish. SPIN_THEN_BLOCK (the default) spins for
   wait_spin_us and then parks the thread until the work completes; SPIN never parks (lowest
   wake-up latency, one core busy while waiting); YIELD spins with a scheduler yield between
   checks; BLOCK parks at once (no busy core, a wake-up cost per wait). The policy covers every
   host wait of the context's streams and events: rrt_stream_synchronize,
   rrt_event_synchronize, rrt_run_wait and rrt_run, and the waits inside rrt_stream_destroy,
   rrt_device_free and rrt_context_finalize. rrt_context_create refuses a value outside this
   enum with RRT_ERR_INVALID_ARGUMENT. It applies to the simulator; CUDA contexts wait as the
   CUDA runtime's default device scheduling does, whatever the policy. */
typedef enum rrt_wait_policy {
  RRT_WAIT_SPIN_THEN_BLOCK = 0,
  RRT_WAIT_SPIN = 1,
  RRT_WAIT_YIELD = 2,
  RRT_WAIT_BLOCK = 3
} rrt_wait_policy_t;

/* ---- callables (see "callables" in replayrt.h) ---------------------------------------- */

typedef enum rrt_dtype {
  RRT_DTYPE_F32 = 0,
  RRT_DTYPE_F16 = 1,
  RRT_DTYPE_BF16 = 2,
  RRT_DTYPE_I32 = 3,
  RRT_DTYPE_I64 = 4,
  RRT_DTYPE_U8 = 5
} rrt_dtype_t;
typedef enum rrt_direction { RRT_DIR_IN = 0, RRT_DIR_OUT = 1, RRT_DIR_INOUT = 2 } rrt_direction_t;
typedef enum rrt_address_space { RRT_SPACE_HOST = 0, RRT_SPACE_DEVICE = 1 } rrt_address_space_t;
typedef enum rrt_bind_strategy {
  RRT_BIND_DEVICE_BUILD = 0,
  RRT_BIND_HOST_BUILD = 1
} rrt_bind_strategy_t;
typedef enum rrt_operand_kind {
  RRT_OPERAND_PARAM = 0,        /* index: a tensor parameter */
  RRT_OPERAND_INTERMEDIATE = 1, /* index: an intermediate tensor (in gm_heap) */
  RRT_OPERAND_SCALAR = 2,       /* index: a scalar whose value comes with each run */
  RRT_OPERAND_IMMEDIATE = 3,    /* a scalar fixed in the callable: its value is `index` itself
                                   (zero-extended; a float parameter holds its binary32 bits) */
  /* Appended (ABI version 1.2; only in a 1.2 callable desc): */
  RRT_OPERAND_VIEW = 4,        /* index: a view (rrt_callable_desc_t.views); a tensor operand */
  RRT_OPERAND_DEVICE_VALUE = 5 /* index: a device value (rrt_callable_desc_t.device_values); a
                                  scalar operand read from device memory when the task runs */
} rrt_operand_kind_t;

/* Where runs pass a parameter. ANY: either space, and capacity plans reserve staging for it as
   if it were HOST (the ABI 1.1 behaviour). HOST or DEVICE: a run passing the other space is
   RRT_ERR_INVALID_ARGUMENT, and plans reserve staging for HOST parameters only. */
typedef enum rrt_param_space {
  RRT_PARAM_SPACE_ANY = 0,
  RRT_PARAM_SPACE_HOST = 1,
  RRT_PARAM_SPACE_DEVICE = 2
} rrt_param_space_t;

#define RRT_MAX_DIMS 8

#ifdef __cplusplus
}
#endif

#endif /* REPLAYRT_VALUES_H_ */
