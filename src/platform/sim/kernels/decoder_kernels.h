// The simulator's CPU implementations of the decoder built-ins (linear, embedding, rope,
// kv_store, attention); the contract is in include/replayrt/replayrt.h ("built-in kernels")
// and platform/launch/builtin_kernels.h. Listed in the built-in table by builtin_kernels.cpp.
#pragma once

#include <cstdint>

#include <replayrt/kernel_abi.h>

namespace replayrt::sim_kernels {

int linear_kernel(const rrt_kernel_args_t *args, void *user);
// linear's parts (HostKernelParts): ranges of output columns.
std::uint64_t linear_parts(const rrt_kernel_args_t *args);
void run_linear_parts(const rrt_kernel_args_t *args, std::uint64_t first, std::uint64_t end,
                      std::uint64_t count);
int embedding_kernel(const rrt_kernel_args_t *args, void *user);
int rope_kernel(const rrt_kernel_args_t *args, void *user);
int kv_store_kernel(const rrt_kernel_args_t *args, void *user);
int attention_kernel(const rrt_kernel_args_t *args, void *user);
// attention's parts (HostKernelParts): ranges of (row, head) pairs.
std::uint64_t attention_parts(const rrt_kernel_args_t *args);
void run_attention_parts(const rrt_kernel_args_t *args, std::uint64_t first, std::uint64_t end,
                         std::uint64_t count);

}  // namespace replayrt::sim_kernels
