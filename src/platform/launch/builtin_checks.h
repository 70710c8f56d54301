// The host-side operand check of each built-in kernel (contract in
// platform/launch/builtin_kernels.h and include/replayrt/replayrt.h, "built-in kernels").
//
// A check runs checks 1 to 7 of the contract, in that order, on the operands alone: it compares
// counts, sizes, scalars and addresses, never dereferences a tensor, and returns the
// kernel_result code of the first failing check (kOk when all pass). It writes nothing, keeps
// no state and may run concurrently. The simulator's kernels run it before computing; a
// backend whose kernels cannot fail on the device (CUDA) runs it before launch. The ranges of
// device-resident values (embedding's ids; rope's, kv_store's and attention's pos) are not
// checked here: the simulator's kernels check them after these pass (code 8).
// builtin_operand_check (platform/launch/builtin_kernels.h) maps a built-in's name to its
// check.
#pragma once

#include <replayrt/kernel_abi.h>

namespace replayrt::builtin_checks {

int check_fill(const rrt_kernel_args_t *args);
// copy, silu and gelu: (in, out) of one size, no scalars.
int check_unary(const rrt_kernel_args_t *args);
// add and mul: (a, b, out) of one size, no scalars.
int check_binary(const rrt_kernel_args_t *args);
int check_scale(const rrt_kernel_args_t *args);
int check_matmul(const rrt_kernel_args_t *args);
int check_softmax(const rrt_kernel_args_t *args);
int check_rmsnorm(const rrt_kernel_args_t *args);

// The decoder built-ins; defined in platform/launch/decoder_checks.cpp.
int check_linear(const rrt_kernel_args_t *args);
int check_embedding(const rrt_kernel_args_t *args);
int check_rope(const rrt_kernel_args_t *args);
int check_kv_store(const rrt_kernel_args_t *args);
int check_attention(const rrt_kernel_args_t *args);

}  // namespace replayrt::builtin_checks
