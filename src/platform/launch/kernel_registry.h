// KernelRegistry: the kernels a context can run, by id and by name. The entry type is the
// kernel table every backend's executor reads. A kernel has one of the ABI's two launcher
// kinds: a host function (rrt_kernel_fn), which a backend that runs host kernels (the
// simulator) calls on its device workers, or a native launcher (rrt_native_launch_fn), which a
// backend of native work (CUDA) calls on the host to enqueue device work.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>

#include <replayrt/kernel_abi.h>

#include "common/status.h"

namespace replayrt {

// A host kernel whose work on one task divides into parts that several device workers may run
// at once. Each part writes outputs no other part writes and computes them exactly as the whole
// kernel does, so the parts may run in any order, on any workers, with results bit-identical
// to one call of the kernel. Both functions are null for a kernel that does not divide.
struct HostKernelParts {
  // The parts a task with these resolved operands divides into: 1 when the task is too small
  // to be worth dividing or its operands are invalid (the kernel then runs whole and reports
  // them). Never dereferences the operands' tensors.
  std::uint64_t (*count)(const rrt_kernel_args_t *args) = nullptr;
  // Runs parts [first, end) of the `count` that count(args) returned (count > 1).
  void (*run)(const rrt_kernel_args_t *args, std::uint64_t first, std::uint64_t end,
              std::uint64_t count) = nullptr;

  bool divides() const noexcept { return count != nullptr && run != nullptr; }
};

struct KernelEntry {
  static constexpr std::uint64_t kWritesEveryTensor = ~std::uint64_t{0};

  std::string name;
  // A host function the device's workers call once per task with the task's resolved operands
  // (DeviceProperties::runs_host_kernels). Null for a kernel that has none.
  rrt_kernel_fn host_fn = nullptr;
  // Passed unchanged to the kernel's launcher.
  void *user = nullptr;
  // Operand counts a task must supply; -1 when the kernel does not declare them (user
  // kernels registered through the C ABI).
  int num_tensors = -1;
  int num_scalars = -1;
  // The tensor operands the kernel writes: bit i for tensor operand i; the others it only
  // reads. Built-ins write their last tensor operand; a kernel registered with a descriptor
  // declares its mask. kWritesEveryTensor for a kernel that declares nothing: every tensor
  // operand counts as read and written when dependencies are derived.
  std::uint64_t writes = kWritesEveryTensor;
  // Validates a task's resolved operands on the host without dereferencing them: 0, or the
  // result code the kernel would return (built-ins: platform/launch/builtin_kernels.h). Null
  // when the kernel declares no host-side check (user kernels).
  int (*check_operands)(const rrt_kernel_args_t *args) = nullptr;
  // The native launcher: called on the host with a task's resolved operands and the stream's
  // native handle; it enqueues the kernel's device work there. Null for a kernel that has none.
  rrt_native_launch_fn native_launch = nullptr;
  // How the device's workers may share one task of host_fn (built-ins with large work).
  HostKernelParts host_parts = {};

  // True when the kernel declares its operand counts and its writes (built-ins and kernels
  // registered with a descriptor); data flow is then checked against `writes` at prepare.
  bool declares_operands() const noexcept { return num_tensors >= 0; }
  // True when the kernel writes tensor operand `index` (every index, for a kernel that
  // declares nothing).
  bool writes_tensor(std::uint32_t index) const noexcept {
    return index >= 64 ? writes == kWritesEveryTensor : ((writes >> index) & 1U) != 0;
  }

  // True when some backend can launch the kernel.
  bool has_launcher() const noexcept { return host_fn != nullptr || native_launch != nullptr; }
};

// A backend's launcher of one built-in (Device::builtin_launchers lists them in
// builtin_kernel_specs() order): the function the backend runs it with, its `user`, and for a
// host function the parts its tasks may divide into.
struct BuiltinLauncher {
  rrt_kernel_fn host_fn = nullptr;
  rrt_native_launch_fn native_launch = nullptr;
  void *user = nullptr;
  HostKernelParts host_parts = {};
};

// Ids are dense, start at 0 with the built-ins in builtin_kernel_specs() order
// (platform/launch/builtin_kernels.h), and are never reused. A name is registered once.
//
// Thread safety: add() and find() may race with each other and with entry(); entry() is
// lock-free (an executor calls it per task) and valid for any id below size().
class KernelRegistry {
 public:
  static constexpr int kMaxKernels = 256;
  // The most operands a task takes (platform/launch/operand_resolution.h): a kernel that
  // declares more could never be used.
  static constexpr int kMaxDeclaredTensors = RRT_KERNEL_MAX_TENSORS;
  static constexpr int kMaxDeclaredScalars = RRT_KERNEL_MAX_SCALARS;

  // A registry holding the built-in kernels with `launchers`, a backend's launchers in
  // builtin_kernel_specs() order (Device::builtin_launchers). Empty `launchers` declares the
  // built-ins without launchers: a registry that sizes and validates callables but runs
  // nothing (capacity plans made without a context). Aborts the process, naming the kernel,
  // when `launchers` has another length or lacks a launcher (a bug in a backend's table).
  explicit KernelRegistry(std::span<const BuiltinLauncher> launchers);

  // RRT_ERR_INVALID_ARGUMENT for an empty or over-long name, an entry without a launcher, a
  // name already present, or declared operands out of shape (one count declared without the
  // other, more than kMaxDeclaredTensors tensors or kMaxDeclaredScalars scalars, a `writes`
  // bit at or above num_tensors) (the
  // message says which); RRT_ERR_INVALID_STATE once kMaxKernels are registered.
  Status add(KernelEntry entry, std::int32_t *out_id);
  // INVALID_ARGUMENT naming the kernel when it is unknown.
  Status find(const std::string &name, std::int32_t *out_id) const;

  int size() const noexcept { return count_.load(std::memory_order_acquire); }
  bool contains(std::int32_t id) const noexcept { return id >= 0 && id < size(); }
  // Requires contains(id).
  const KernelEntry &entry(std::int32_t id) const noexcept {
    return entries_[static_cast<std::size_t>(id)];
  }

  static constexpr std::size_t kMaxNameLength = 63;

 private:
  mutable std::mutex mutex_;
  std::array<KernelEntry, kMaxKernels> entries_;
  std::map<std::string, std::int32_t, std::less<>> ids_;
  std::atomic<int> count_{0};
};

}  // namespace replayrt
