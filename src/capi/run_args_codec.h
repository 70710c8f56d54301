// Decoding a caller's rrt_run_args_t into the core's RunArgsView.
#pragma once

#include <cstddef>
#include <vector>

#include <replayrt/replayrt.h>

#include "common/status.h"
#include "runtime/bound_run.h"

namespace replayrt::capi {

// The arguments of one rrt_run_prepare, rrt_run or rrt_kernel_launch call, decoded once. Up to
// kInlineTensors tensors are held inside the object (a launch of such a callable allocates
// nothing here); more are held on the heap. The scalars are not copied: the view reads the
// caller's array, which the call borrows until it returns.
// Thread safety: one object per call, not shared.
class DecodedRunArgs {
 public:
  static constexpr std::size_t kInlineTensors = 32;

  DecodedRunArgs() = default;
  DecodedRunArgs(const DecodedRunArgs &) = delete;
  DecodedRunArgs &operator=(const DecodedRunArgs &) = delete;

  // Checks and decodes *args; each violation is RRT_ERR_INVALID_ARGUMENT naming the field:
  // args is not null, its struct_size at least sizeof(rrt_run_args_t), no null array with a
  // nonzero count, at most Callable::kMaxParams tensors, and every tensor's space
  // RRT_SPACE_HOST or RRT_SPACE_DEVICE (read as the integer the caller stored). Whether the
  // arguments fit the callable is the core's check (validate_run_args in runtime/run_args.h).
  Status decode(const rrt_run_args_t *args);

  // The decoded arguments; valid while this object lives and the caller's scalars do.
  const RunArgsView &view() const noexcept { return view_; }

 private:
  // Storage for up to kInlineTensors decoded tensors, left uninitialized: a launch decodes
  // into it on every call, and zeroing its 768 bytes showed in every launch's profile.
  // decode() creates each element that view_ covers.
  alignas(TensorArg) std::byte inline_[kInlineTensors * sizeof(TensorArg)];
  std::vector<TensorArg> spilled_;
  // view() hands out a reference to it, so a call passes the arguments on without a copy.
  RunArgsView view_;
};

}  // namespace replayrt::capi
