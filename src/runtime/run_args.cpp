#include "runtime/run_args.h"

#include "common/format.h"

namespace replayrt {

Status validate_run_args(const Callable &callable, const RunArgsView &args, const Device &device) {
  const auto params = callable.params();
  if (args.tensors.size() != params.size()) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("the callable takes %zu tensors, the run passes %zu", params.size(),
                                args.tensors.size()));
  }
  if (args.scalars.size() != callable.num_scalars()) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("the callable takes %u scalars, the run passes %zu",
                                callable.num_scalars(), args.scalars.size()));
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    const rrt_tensor_arg_t &arg = args.tensors[i];
    if (arg.space != RRT_SPACE_HOST && arg.space != RRT_SPACE_DEVICE) {
      return Status::error(RRT_ERR_INVALID_ARGUMENT, format("tensor %zu: unknown address space %d",
                                                            i, static_cast<int>(arg.space)));
    }
    if (arg.addr == nullptr) {
      return Status::error(RRT_ERR_INVALID_ARGUMENT, format("tensor %zu: null address", i));
    }
    if (arg.bytes != params[i].bytes) {
      return Status::error(RRT_ERR_INVALID_ARGUMENT,
                           format("tensor %zu: %llu bytes, the parameter has %llu", i,
                                  static_cast<unsigned long long>(arg.bytes),
                                  static_cast<unsigned long long>(params[i].bytes)));
    }
    if (arg.space == RRT_SPACE_DEVICE) {
      const auto owner = device.find_allocation(arg.addr);
      const auto start = reinterpret_cast<std::uintptr_t>(arg.addr);
      if (!owner) {
        return Status::error(RRT_ERR_INVALID_ARGUMENT,
                             format("tensor %zu: DEVICE address %p is not inside a live device "
                                    "allocation",
                                    i, arg.addr));
      }
      if (arg.bytes > owner->size - (start - owner->base)) {
        return Status::error(RRT_ERR_INVALID_ARGUMENT,
                             format("tensor %zu: %llu bytes at %p run past the end of the "
                                    "allocation at %p",
                                    i, static_cast<unsigned long long>(arg.bytes), arg.addr,
                                    reinterpret_cast<const void *>(owner->base)));
      }
    }
  }
  return Status::ok();
}

}  // namespace replayrt
