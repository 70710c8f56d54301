// The simulator's CPU implementations of the decoder built-ins (linear, embedding, rope,
// kv_store, attention); the contract is in include/replayrt/replayrt.h ("built-in kernels")
// and platform/launch/builtin_kernels.h. Listed in the built-in table by builtin_kernels.cpp.
#pragma once

#include <replayrt/kernel_abi.h>

namespace replayrt::sim_kernels {

int linear_kernel(const rrt_kernel_args_t *args, void *user);
int embedding_kernel(const rrt_kernel_args_t *args, void *user);
int rope_kernel(const rrt_kernel_args_t *args, void *user);
int kv_store_kernel(const rrt_kernel_args_t *args, void *user);
int attention_kernel(const rrt_kernel_args_t *args, void *user);

}  // namespace replayrt::sim_kernels
