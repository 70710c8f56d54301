#include "platform/launch/kernel_registry.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/format.h"
#include "platform/launch/builtin_kernels.h"
#include "platform/launch/operand_resolution.h"

namespace replayrt {

// Every kernel that registers can be used by a task, and a declared `writes` mask has a bit for
// every tensor operand.
static_assert(static_cast<std::size_t>(KernelRegistry::kMaxDeclaredTensors) == kMaxTaskTensors);
static_assert(static_cast<std::size_t>(KernelRegistry::kMaxDeclaredScalars) == kMaxTaskScalars);
static_assert(KernelRegistry::kMaxDeclaredTensors <= 64);

namespace {

// A kernel that declares its operands declares both counts within the registry's limits and
// writes only tensors it has.
Status check_declared_operands(const KernelEntry &entry) {
  if (entry.num_tensors < 0 && entry.num_scalars < 0 &&
      entry.writes == KernelEntry::kWritesEveryTensor) {
    return Status::ok();
  }
  if (entry.num_tensors < 0 || entry.num_tensors > KernelRegistry::kMaxDeclaredTensors ||
      entry.num_scalars < 0 || entry.num_scalars > KernelRegistry::kMaxDeclaredScalars) {
    return Status::error(
        RRT_ERR_INVALID_ARGUMENT,
        format("kernel '%s' declares %d tensors and %d scalars (tensors: 0 to "
               "%d, scalars: 0 to %d)",
               entry.name.c_str(), entry.num_tensors, entry.num_scalars,
               KernelRegistry::kMaxDeclaredTensors, KernelRegistry::kMaxDeclaredScalars));
  }
  const std::uint64_t own = entry.num_tensors == KernelRegistry::kMaxDeclaredTensors
                                ? KernelEntry::kWritesEveryTensor
                                : (std::uint64_t{1} << entry.num_tensors) - 1;
  if ((entry.writes & ~own) != 0) {
    return Status::error(
        RRT_ERR_INVALID_ARGUMENT,
        format("kernel '%s' declares writes 0x%llx but only %d tensor operands", entry.name.c_str(),
               static_cast<unsigned long long>(entry.writes), entry.num_tensors));
  }
  return Status::ok();
}

[[noreturn]] void built_in_table_bug(const char *name, const char *why) {
  std::fprintf(stderr, "replayrt: built-in kernel '%s' cannot be registered: %s\n", name, why);
  std::abort();
}

}  // namespace

KernelRegistry::KernelRegistry(std::span<const BuiltinLauncher> launchers) {
  const std::span<const BuiltinKernelSpec> specs = builtin_kernel_specs();
  if (!launchers.empty() && launchers.size() != specs.size()) {
    built_in_table_bug(specs[0].name, "the backend lists another number of launchers");
  }
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const BuiltinKernelSpec &spec = specs[i];
    KernelEntry entry;
    entry.name = spec.name;
    if (!launchers.empty()) {
      entry.host_fn = launchers[i].host_fn;
      entry.native_launch = launchers[i].native_launch;
      entry.user = launchers[i].user;
      entry.host_parts = launchers[i].host_parts;
      if (!entry.has_launcher()) {
        built_in_table_bug(spec.name, "the backend gives it no launcher");
      }
    }
    entry.num_tensors = spec.num_tensors;
    entry.num_scalars = spec.num_scalars;
    // Every built-in writes its last tensor operand only (a built-in without tensors writes
    // none).
    entry.writes = spec.num_tensors > 0 ? std::uint64_t{1} << (spec.num_tensors - 1) : 0;
    entry.check_operands = spec.check;
    if (const Status declared = check_declared_operands(entry); !declared.is_ok()) {
      built_in_table_bug(spec.name, declared.message().c_str());
    }
    const int id = count_.load(std::memory_order_relaxed);
    ids_.emplace(entry.name, id);
    entries_[static_cast<std::size_t>(id)] = std::move(entry);
    count_.store(id + 1, std::memory_order_release);
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
  RRT_RETURN_IF_ERROR(check_declared_operands(entry));
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
