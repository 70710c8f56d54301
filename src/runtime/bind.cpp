#include "runtime/bind.h"

#include <new>

#include "common/align.h"
#include "platform/launch/invocation_header.h"
#include "runtime/device_build_bind.h"
#include "runtime/host_build_bind.h"

namespace replayrt {

const BindStrategy &bind_strategy(rrt_bind_strategy_t bind) noexcept {
  static const DeviceBuildBind device_build;
  static const HostBuildBind host_build;
  if (bind == RRT_BIND_HOST_BUILD) {
    return host_build;
  }
  return device_build;
}

std::uint64_t staging_slice_bytes(std::uint64_t bytes) noexcept {
  return align_up(bytes, kDeviceAddressAlignment);
}

std::uint64_t run_staging_bytes(const RunArgsView &args) noexcept {
  std::uint64_t required = 0;
  for (const TensorArg &arg : args.tensors) {
    if (arg.space == RRT_SPACE_HOST) {
      required += staging_slice_bytes(arg.bytes);
    }
  }
  return required;
}

void stage_host_tensors(const BindRequest &request, void *staging, BoundRun *out) {
  const auto params = request.callable->params();
  out->tensor_addresses.assign(params.size(), nullptr);
  auto *cursor = static_cast<std::byte *>(staging);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const TensorArg &arg = request.args.tensors[i];
    if (arg.space == RRT_SPACE_DEVICE) {
      out->tensor_addresses[i] = arg.addr;
      continue;
    }
    void *piece = cursor;
    cursor += staging_slice_bytes(arg.bytes);
    out->tensor_addresses[i] = piece;
    if (params[i].direction != RRT_DIR_OUT) {
      out->copies_in.push_back(StagedCopy{piece, arg.addr, arg.bytes});
    }
    if (params[i].direction != RRT_DIR_IN) {
      out->copies_out.push_back(StagedCopy{arg.addr, piece, arg.bytes});
    }
  }
}

void encode_invocation(const BindRequest &request, ExecutionMode mode, const void *image,
                       std::span<void *const> tensor_addresses, BoundRun *out) {
  const std::size_t tensors = tensor_addresses.size();
  const std::size_t scalars = request.args.scalars.size();
  const std::size_t bytes = invocation_bytes(tensors, scalars);
  out->invocation.resize(bytes / sizeof(std::uint64_t));
  out->invocation_bytes = bytes;
  // Built in place: a header assembled on the stack and copied over reloaded its own fresh
  // stores, which the processor could not forward (a stall on every launch).
  ::new (static_cast<void *>(out->invocation.data()))
      InvocationHeader{.mode = static_cast<std::uint32_t>(mode),
                       .callable_id = request.callable_id,
                       .generation = request.generation,
                       .payload_bytes = bytes - sizeof(InvocationHeader),
                       .tensor_count = static_cast<std::int32_t>(tensors),
                       .scalar_count = static_cast<std::int32_t>(scalars)};
  std::uint64_t *words = out->invocation.data() + sizeof(InvocationHeader) / sizeof(std::uint64_t);
  words[0] = reinterpret_cast<std::uint64_t>(image);
  words[1] = 0;
  words[2] = 0;
  for (std::size_t i = 0; i < tensors; ++i) {
    words[kPayloadFixedWords + i] = reinterpret_cast<std::uint64_t>(tensor_addresses[i]);
    words[kPayloadFixedWords + tensors + i] = request.args.tensors[i].bytes;
  }
  for (std::size_t i = 0; i < scalars; ++i) {
    words[kPayloadFixedWords + 2 * tensors + i] = request.args.scalars[i];
  }
}

void finish_bind(ExecutionMode mode, const BindRequest &request, const void *image,
                 const void *scheduler, const void *gm_heap, const SlotGrant &grant,
                 BoundRun *out) {
  encode_invocation(request, mode, image, out->tensor_addresses, out);
  out->gm_heap = gm_heap;
  std::uint64_t *words = out->invocation.data() + sizeof(InvocationHeader) / sizeof(std::uint64_t);
  words[1] = reinterpret_cast<std::uint64_t>(grant.timings);
  words[2] = reinterpret_cast<std::uint64_t>(grant.wall);
  out->referenced.push_back(image);
  out->referenced.push_back(scheduler);
  if (request.callable->requirements().gm_heap != 0) {
    out->referenced.push_back(gm_heap);
  }
  if (grant.timings != nullptr) {
    out->referenced.push_back(grant.timings);
    out->referenced.push_back(grant.wall);
  }
  out->referenced.insert(out->referenced.end(), out->tensor_addresses.begin(),
                         out->tensor_addresses.end());
}

std::uint64_t image_cache_key(const Callable &callable, std::uint64_t generation) noexcept {
  return callable.content_key() ^ (generation * 0x9e3779b97f4a7c15ULL);
}

}  // namespace replayrt
