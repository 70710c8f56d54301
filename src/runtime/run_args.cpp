#include "runtime/run_args.h"

#include <array>
#include <span>

#include "common/format.h"

namespace replayrt {

namespace {

// Names what is wrong with the DEVICE tensor `index`, which the batch check rejected.
Status device_tensor_error(std::size_t index, const TensorArg &arg, const Device &device) {
  const auto owner = device.find_allocation(arg.addr);
  if (!owner) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("tensor %zu: DEVICE address %p is not inside a live device "
                                "allocation",
                                index, arg.addr));
  }
  return Status::error(RRT_ERR_INVALID_ARGUMENT,
                       format("tensor %zu: %llu bytes at %p run past the end of the allocation "
                              "at %p",
                              index, static_cast<unsigned long long>(arg.bytes), arg.addr,
                              reinterpret_cast<const void *>(owner->base)));
}

// The checks of tensor `index` against its parameter that need no device lookup.
Status check_tensor(std::size_t index, const TensorArg &arg, const TensorLayout &param) {
  const rrt_param_space_t declared = param.space;
  if ((declared == RRT_PARAM_SPACE_HOST && arg.space != RRT_SPACE_HOST) ||
      (declared == RRT_PARAM_SPACE_DEVICE && arg.space != RRT_SPACE_DEVICE)) {
    const bool host = declared == RRT_PARAM_SPACE_HOST;
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("tensor %zu: param %zu is declared %s, the run passes a %s "
                                "tensor",
                                index, index, host ? "HOST" : "DEVICE", host ? "DEVICE" : "HOST"));
  }
  if (arg.addr == nullptr) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT, format("tensor %zu: null address", index));
  }
  if (arg.bytes != param.bytes) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         format("tensor %zu: %llu bytes, the parameter has %llu", index,
                                static_cast<unsigned long long>(arg.bytes),
                                static_cast<unsigned long long>(param.bytes)));
  }
  return Status::ok();
}

// check_tensor for every tensor, and the DEVICE tensors against the device's allocations, in
// batches, each batch once its tensors passed check_tensor.
Status check_tensors_and_look_up(std::span<const TensorLayout> params, const RunArgsView &args,
                                 const Device &device) {
  constexpr std::size_t kBatch = 16;
  std::array<AddressRange, kBatch> ranges;
  std::array<std::size_t, kBatch> indices;
  std::size_t pending = 0;
  const auto check_pending = [&]() -> Status {
    const std::size_t outside =
        device.first_range_outside_allocations(std::span(ranges.data(), pending));
    if (outside != pending) {
      return device_tensor_error(indices[outside], args.tensors[indices[outside]], device);
    }
    pending = 0;
    return Status::ok();
  };
  for (std::size_t i = 0; i < params.size(); ++i) {
    const TensorArg &arg = args.tensors[i];
    RRT_RETURN_IF_ERROR(check_tensor(i, arg, params[i]));
    if (arg.space == RRT_SPACE_DEVICE) {
      ranges[pending] = AddressRange{arg.addr, arg.bytes};
      indices[pending] = i;
      if (++pending == kBatch) {
        RRT_RETURN_IF_ERROR(check_pending());
      }
    }
  }
  if (pending != 0) {
    RRT_RETURN_IF_ERROR(check_pending());
  }
  return Status::ok();
}

}  // namespace

Status validate_run_args(const Callable &callable, const RunArgsView &args, const Device &device,
                         ValidatedDeviceRanges *validated) {
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
  // Read before the lookups, so a free during them makes the next call look up again.
  const std::uint64_t epoch = device.free_epoch();
  if (validated != nullptr && validated->covers(args.tensors, epoch)) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      RRT_RETURN_IF_ERROR(check_tensor(i, args.tensors[i], params[i]));
    }
    return Status::ok();
  }
  RRT_RETURN_IF_ERROR(check_tensors_and_look_up(params, args, device));
  if (validated != nullptr) {
    validated->remember(args.tensors, epoch);
  }
  return Status::ok();
}

Status device_tensor_allocations(const RunArgsView &args, const Device &device,
                                 std::vector<CapturedAddress> *out) {
  std::vector<CapturedAddress> recorded;
  for (std::size_t i = 0; i < args.tensors.size(); ++i) {
    const TensorArg &arg = args.tensors[i];
    if (arg.space != RRT_SPACE_DEVICE) {
      continue;
    }
    const auto address = reinterpret_cast<std::uintptr_t>(arg.addr);
    const auto owner = device.find_allocation(arg.addr);
    if (!owner || address - owner->base > owner->size ||
        arg.bytes > owner->size - (address - owner->base)) {
      return device_tensor_error(i, arg, device);
    }
    recorded.push_back(CapturedAddress{address, owner->base, owner->generation});
  }
  *out = std::move(recorded);
  return Status::ok();
}

Status check_device_tensor_allocations(std::span<const CapturedAddress> recorded,
                                       const Device &device) {
  for (const CapturedAddress &tensor : recorded) {
    const auto *address = reinterpret_cast<const void *>(tensor.address);
    const auto owner = device.find_allocation(address);
    if (!owner || owner->base != tensor.base || owner->generation != tensor.generation) {
      return Status::error(RRT_ERR_INVALID_ARGUMENT,
                           format("DEVICE tensor at %p: its allocation at %p was freed after the "
                                  "run was prepared",
                                  address, reinterpret_cast<const void *>(tensor.base)));
    }
  }
  return Status::ok();
}

}  // namespace replayrt
