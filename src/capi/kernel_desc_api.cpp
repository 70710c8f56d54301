// Kernel registration by descriptor (ABI 1.2).
#include <cstddef>
#include <utility>

#include "capi/api_guard.h"
#include "capi/handles.h"
#include "common/format.h"

using replayrt::Status;
using replayrt::capi::guarded;
using replayrt::capi::require_non_null;

namespace {

constexpr uint32_t kKernelDescV1Size = sizeof(rrt_kernel_desc_t);

// The descriptor's own rules; the name rules and the writes mask against num_tensors are the
// registry's (KernelRegistry::add).
Status check_kernel_desc(const rrt_kernel_desc_t &desc, const replayrt::DeviceProperties &device) {
  if (desc.struct_size < kKernelDescV1Size) {
    return Status::invalid_argument(replayrt::format(
        "rrt_kernel_desc_t.struct_size is %u; this version needs at least %u (set it to "
        "sizeof(rrt_kernel_desc_t))",
        desc.struct_size, kKernelDescV1Size));
  }
  RRT_RETURN_IF_ERROR(require_non_null(desc.name, "desc->name"));
  const bool has_fn = desc.fn != nullptr;
  const bool has_native = desc.native_fn != nullptr;
  if (has_fn == has_native) {
    return Status::invalid_argument(
        replayrt::format("kernel '%s': exactly one of fn and native_fn must be set (%s)", desc.name,
                         has_fn ? "both are" : "neither is"));
  }
  if (has_fn && !device.runs_host_kernels) {
    return Status::error(RRT_ERR_UNSUPPORTED,
                         replayrt::format("%s contexts cannot run host-function kernels; set "
                                          "native_fn instead of fn",
                                          device.name));
  }
  if (has_native && device.runs_host_kernels) {
    return Status::error(RRT_ERR_UNSUPPORTED,
                         replayrt::format("%s contexts run host-function kernels only; set fn "
                                          "instead of native_fn",
                                          device.name));
  }
  // Checked here, on the unsigned fields, before the registry stores them as int (where -1
  // means "undeclared"): a count of UINT32_MAX must not turn into an undeclared kernel. The
  // limits are the most operands a task takes, so a kernel that registers can be used.
  if (desc.num_tensors > static_cast<uint32_t>(replayrt::KernelRegistry::kMaxDeclaredTensors)) {
    return Status::invalid_argument(
        replayrt::format("kernel '%s': num_tensors is %u (at most %d)", desc.name, desc.num_tensors,
                         replayrt::KernelRegistry::kMaxDeclaredTensors));
  }
  if (desc.num_scalars > static_cast<uint32_t>(replayrt::KernelRegistry::kMaxDeclaredScalars)) {
    return Status::invalid_argument(
        replayrt::format("kernel '%s': num_scalars is %u (at most %d)", desc.name, desc.num_scalars,
                         replayrt::KernelRegistry::kMaxDeclaredScalars));
  }
  return Status::ok();
}

}  // namespace

extern "C" {

RRT_API rrt_status_t rrt_kernel_register_desc(rrt_context_t ctx, const rrt_kernel_desc_t *desc,
                                              int32_t *out_kernel_id) {
  return guarded("rrt_kernel_register_desc", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    RRT_RETURN_IF_ERROR(require_non_null(desc, "desc"));
    RRT_RETURN_IF_ERROR(require_non_null(out_kernel_id, "out_kernel_id"));
    RRT_RETURN_IF_ERROR(check_kernel_desc(*desc, ctx->engine->device_properties()));
    replayrt::KernelEntry entry;
    entry.name = desc->name;
    entry.host_fn = desc->fn;
    entry.native_launch = desc->native_fn;
    entry.user = desc->user;
    entry.num_tensors = static_cast<int>(desc->num_tensors);
    entry.num_scalars = static_cast<int>(desc->num_scalars);
    entry.writes = desc->writes;
    return ctx->engine->kernels().add(std::move(entry), out_kernel_id);
  });
}

}  // extern "C"
