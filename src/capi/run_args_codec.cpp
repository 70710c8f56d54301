#include "capi/run_args_codec.h"

#include <new>
#include <span>

#include "capi/validate.h"
#include "common/format.h"
#include "common/raw_enum.h"
#include "runtime/callable.h"

namespace replayrt::capi {

Status DecodedRunArgs::decode(const rrt_run_args_t *args) {
  if (args == nullptr) {
    return Status::invalid_argument("args is null");
  }
  RRT_RETURN_IF_ERROR(check_struct_size("rrt_run_args_t", args->struct_size, kRunArgsV1Size));
  if (args->num_tensors != 0 && args->tensors == nullptr) {
    return Status::invalid_argument(
        format("args->tensors is null with num_tensors %u", args->num_tensors));
  }
  if (args->num_scalars != 0 && args->scalars == nullptr) {
    return Status::invalid_argument(
        format("args->scalars is null with num_scalars %u", args->num_scalars));
  }
  if (args->num_tensors > Callable::kMaxParams) {
    return Status::invalid_argument(
        format("args->num_tensors is %u; no callable takes more than %u tensors", args->num_tensors,
               Callable::kMaxParams));
  }
  const std::span<const rrt_tensor_arg_t> given(args->tensors, args->num_tensors);
  std::byte *storage = inline_;
  if (given.size() > kInlineTensors) {
    spilled_.resize(given.size());
    storage = reinterpret_cast<std::byte *>(spilled_.data());
  }
  TensorArg *first = nullptr;
  for (std::size_t i = 0; i < given.size(); ++i) {
    const std::int32_t space = raw_enum(given[i].space);
    if (space != RRT_SPACE_HOST && space != RRT_SPACE_DEVICE) {
      return Status::invalid_argument(format("tensor %zu: unknown address space %d", i, space));
    }
    auto *decoded = ::new (storage + i * sizeof(TensorArg))
        TensorArg{given[i].addr, given[i].bytes, static_cast<rrt_address_space_t>(space)};
    if (i == 0) {
      first = decoded;
    }
  }
  view_ = RunArgsView{std::span<const TensorArg>(first, given.size()),
                      std::span(args->scalars, args->num_scalars)};
  return Status::ok();
}

}  // namespace replayrt::capi
