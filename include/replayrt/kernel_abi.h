/*
 * replayrt — the kernel ABI: what a kernel (rrt_kernel_fn) or a native launcher
 * (rrt_native_launch_fn) receives, and the operand limits every task obeys. replayrt/replayrt.h
 * includes this header; a kernel library needs only it. Registration is in replayrt.h
 * (rrt_kernel_register, rrt_kernel_register_native, rrt_kernel_register_desc).
 */
#ifndef REPLAYRT_KERNEL_ABI_H_
#define REPLAYRT_KERNEL_ABI_H_

#include <stdint.h>
#include <string.h>

#include "values.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most tensor and scalar operands one task passes to its kernel. */
#define RRT_KERNEL_MAX_TENSORS 64
#define RRT_KERNEL_MAX_SCALARS 64

/* Appended (ABI version 1.3): an operand whose value lives in device memory, as a native
   launcher receives it. A DEVICE_VALUE operand, or a view whose offset is device-resident
   (rrt_view_desc_t.offset_value), is read when the task runs, and a native launcher runs on the
   host when the launch is enqueued, before that: it receives the value's device address, and
   the work it enqueues reads the value there. Host kernels (the simulator) never see one: their
   values are read before the kernel is called. */
typedef enum rrt_device_operand_kind {
  /* scalars[index] holds 0; the scalar is the value. */
  RRT_DEVICE_OPERAND_SCALAR = 0,
  /* tensors[index] is the view at offset value 0 and tensor_bytes[index] its size; the view
     is tensors[index] + value * stride_bytes, for a value in [0, value_max], and the whole
     range [tensors[index], tensors[index] + value_max * stride_bytes + tensor_bytes[index])
     lies inside the view's base. A value outside [0, value_max] must not be used. */
  RRT_DEVICE_OPERAND_VIEW_OFFSET = 1
} rrt_device_operand_kind_t;
typedef struct rrt_device_operand {
  rrt_device_operand_kind_t kind;
  uint32_t index;    /* the scalar (SCALAR) or tensor (VIEW_OFFSET) operand it concerns */
  const void *value; /* device address of the element */
  uint32_t dtype;    /* an rrt_dtype_t: I32 (sign-extended), I64, or F32 (its bits) */
  uint64_t stride_bytes;
  uint64_t value_max;
} rrt_device_operand_t;

typedef struct rrt_kernel_args {
  uint32_t num_tensors;
  void *const *tensors; /* addresses the kernel may dereference */
  const uint64_t *tensor_bytes;
  uint32_t num_scalars;
  const uint64_t *scalars; /* raw 64-bit values; floats bit-cast */
  /* Appended (ABI version 1.3): the operands whose values the launched work reads from device
     memory, at most one per operand; 0 and null for a host kernel and for a task without
     any. */
  uint32_t num_device_operands;
  const rrt_device_operand_t *device_operands;
} rrt_kernel_args_t;
/* Runs on a device-side worker thread. Returns 0 on success; any other value fails the run
   with RRT_ERR_KERNEL_FAILED, and the detail names the callable, the task, the kernel and that
   value exactly ("failed with code N"): no value is reserved. A kernel
   must not throw (or otherwise unwind) out of this call. A C++ kernel that throws anyway
   fails its task as a nonzero return does: the run fails with RRT_ERR_KERNEL_FAILED (the
   stream's sticky failure), the detail says the kernel threw, and the process carries on. */
typedef int (*rrt_kernel_fn)(const rrt_kernel_args_t *args, void *user);
/* Float scalars travel as the IEEE-754 binary32 bit pattern in the low 32 bits. */
static inline uint64_t rrt_scalar_from_f32(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return (uint64_t)bits;
}
static inline float rrt_scalar_to_f32(uint64_t scalar) {
  const uint32_t bits = (uint32_t)scalar;
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}
/* A native launcher: the user kernel of a context whose device runs native work (CUDA). It is
   called on the host, on the thread that calls rrt_run_launch / rrt_kernel_launch / rrt_run,
   once per task of the launch, in program order, with the task's resolved operands and the
   launch stream's native handle (CUDA: a cudaStream_t); never at graph replay. Under stream
   capture the work it enqueues becomes part of the graph. Contract:
     - enqueue device work only on `native_stream`; work forked onto other streams must join
       back before the launcher returns;
     - no allocation, free or synchronization (cudaMalloc, cudaFree, cudaDeviceSynchronize,
       cudaStreamSynchronize, ...): under capture CUDA invalidates the capture and
       rrt_stream_end_capture fails; in kernel mode they are growth the plan does not allow;
     - the enqueued work dereferences only the args->tensors ranges, or memory that outlives
       every graph that captured the launch; pointers it reads from device memory (pointer
       arrays) are invisible to the stale-address check;
     - library workspaces (cublasSetWorkspace) are set before any capture;
     - every kernel it launches is loaded before the first capture that launches it: with
       CUDA's lazy module loading (the default since CUDA 12.2) a kernel's first launch loads
       its module, which invalidates a capture in progress (rrt_stream_end_capture then fails
       naming the CUDA error). Launch it once outside a capture, or call cudaFuncGetAttributes
       on it, after rrt_kernel_register_native. The built-ins are loaded when the context is
       created;
     - the operands that live in device memory (a DEVICE_VALUE, a view's device-resident
       offset) come as args->device_operands (ABI 1.3, rrt_device_operand_t): the enqueued
       work reads them on the device;
     - return 0, or a nonzero code: the launch then fails with RRT_ERR_KERNEL_FAILED naming
       the callable, task, kernel and code, and enqueues nothing more.
   `args` and its arrays are valid only during the call. */
typedef int (*rrt_native_launch_fn)(const rrt_kernel_args_t *args, void *native_stream, void *user);

#ifdef __cplusplus
}
#endif

#endif /* REPLAYRT_KERNEL_ABI_H_ */
