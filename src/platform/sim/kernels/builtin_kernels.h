// The simulator's CPU implementations of the built-in kernels (contract in
// platform/launch/builtin_kernels.h and include/replayrt/replayrt.h, "built-in kernels").
#pragma once

#include <span>
#include <string_view>

#include <replayrt/kernel_abi.h>

#include "platform/launch/kernel_registry.h"

namespace replayrt::sim {

// The simulator's launchers of every built-in, in builtin_kernel_specs() order: host functions
// its device workers call (SimDevice::builtin_launchers).
std::span<const BuiltinLauncher> builtin_launchers() noexcept;

// The CPU implementation of the built-in `name`, or null for an unknown name.
rrt_kernel_fn builtin_host_kernel(std::string_view name) noexcept;

}  // namespace replayrt::sim
