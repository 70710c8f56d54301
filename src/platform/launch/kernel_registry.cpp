#include "platform/launch/kernel_registry.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/format.h"
#include "platform/launch/builtin_kernels.h"

namespace replayrt {

KernelRegistry::KernelRegistry() {
  for (const BuiltinKernel &builtin : builtin_kernels()) {
    std::int32_t id = -1;
    KernelEntry entry;
    entry.name = builtin.name;
    entry.sim_host_fn = builtin.sim_host_fn;
    entry.native_launch = builtin_native_launcher(builtin.name);
    entry.num_tensors = builtin.num_tensors;
    entry.num_scalars = builtin.num_scalars;
    entry.writes_last_tensor_only = true;
    entry.check_operands = builtin_operand_check(builtin.name);
    const Status status = add(std::move(entry), &id);
    if (!status.is_ok()) {
      // The built-in table is fixed at build time; a rejected entry is a bug in it.
      std::fprintf(stderr, "replayrt: built-in kernel '%s' cannot be registered: %s\n",
                   builtin.name, status.message().c_str());
      std::abort();
    }
  }
}

Status KernelRegistry::add(KernelEntry entry, std::int32_t *out_id) {
  if (entry.name.empty() || entry.name.size() > kMaxNameLength) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("kernel name must have 1 to %zu characters", kMaxNameLength));
  }
  if (!entry.has_launcher()) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         "kernel '" + entry.name + "' has a null function pointer");
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (ids_.count(entry.name) != 0) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         "a kernel named '" + entry.name + "' is already registered");
  }
  const int id = count_.load(std::memory_order_relaxed);
  if (id >= kMaxKernels) {
    return Status::error(
        RRT_ERR_INVALID_STATE,
        format("the context already holds the maximum of %d kernels", kMaxKernels));
  }
  ids_.emplace(entry.name, id);
  entries_[static_cast<std::size_t>(id)] = std::move(entry);
  count_.store(id + 1, std::memory_order_release);
  *out_id = id;
  return Status::ok();
}

Status KernelRegistry::find(const std::string &name, std::int32_t *out_id) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = ids_.find(name);
  if (it == ids_.end()) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, "no kernel named '" + name + "'");
  }
  *out_id = it->second;
  return Status::ok();
}

}  // namespace replayrt
