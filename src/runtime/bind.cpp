#include "runtime/bind.h"

#include <cstring>

#include "common/format.h"
#include "memory/host_staging.h"
#include "memory/retained_buffer.h"
#include "platform/launch/invocation_header.h"

namespace replayrt {

namespace {

constexpr std::uint64_t kSliceAlignment = 1024;
static_assert(RetainedBuffer::kSliceAlignment == kSliceAlignment);
static_assert(HostStaging::kSliceAlignment == kSliceAlignment);

std::uint64_t slice_bytes(std::uint64_t bytes) {
  return (bytes + kSliceAlignment - 1) / kSliceAlignment * kSliceAlignment;
}

}  // namespace

const StagingSource kRetainedStagingSource = {
    "retained staging",
    [](const HostApi &api, std::uint64_t required) { return api.retained_begin(required); },
    [](const HostApi &api, std::uint64_t bytes, void **out) {
      *out = api.retained_acquire(bytes);
      return *out != nullptr ? Status::ok()
                             : Status::error(RRT_ERR_INTERNAL,
                                             "retained staging has no room for a slice it was "
                                             "sized for");
    },
};

const StagingSource kHostStagingSource = {
    "host staging",
    [](const HostApi &api, std::uint64_t required) { return api.host_staging_begin(required); },
    [](const HostApi &api, std::uint64_t bytes, void **out) {
      return api.host_staging_stage(bytes, out);
    },
};

Status stage_host_tensors(const HostApi &api, const BindRequest &request,
                          const StagingSource &source, std::vector<void *> *addresses,
                          BoundRun *out) {
  const auto params = request.callable->params();
  std::uint64_t required = 0;
  for (const rrt_tensor_arg_t &arg : request.args.tensors) {
    if (arg.space == RRT_SPACE_HOST) {
      required += slice_bytes(arg.bytes);
    }
  }
  // A run with no HOST tensor needs nothing from the source, so nothing can grow.
  if (required != 0) {
    RRT_RETURN_IF_ERROR(source.begin(api, required));
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    const rrt_tensor_arg_t &arg = request.args.tensors[i];
    if (arg.space == RRT_SPACE_DEVICE) {
      (*addresses)[i] = arg.addr;
      continue;
    }
    void *piece = nullptr;
    Status sliced = source.slice(api, arg.bytes, &piece);
    if (!sliced.is_ok()) {
      return std::move(sliced).with_context(format("%s of param %zu", source.name, i));
    }
    (*addresses)[i] = piece;
    if (params[i].direction != RRT_DIR_OUT) {
      out->copies_in.push_back(StagedCopy{piece, arg.addr, arg.bytes});
    }
    if (params[i].direction != RRT_DIR_IN) {
      out->copies_out.push_back(StagedCopy{arg.addr, piece, arg.bytes});
    }
  }
  return Status::ok();
}

void encode_invocation(const BindRequest &request, ExecutionMode mode, const void *image,
                       std::span<void *const> tensor_addresses, BoundRun *out) {
  const std::size_t tensors = tensor_addresses.size();
  const std::size_t scalars = request.args.scalars.size();
  const std::size_t bytes = invocation_bytes(tensors, scalars);
  out->invocation.resize(bytes / sizeof(std::uint64_t));
  out->invocation_bytes = bytes;
  InvocationHeader header{};
  header.mode = static_cast<std::uint32_t>(mode);
  header.callable_id = request.callable_id;
  header.generation = request.generation;
  header.payload_bytes = bytes - sizeof(InvocationHeader);
  header.tensor_count = static_cast<std::int32_t>(tensors);
  header.scalar_count = static_cast<std::int32_t>(scalars);
  std::memcpy(out->invocation.data(), &header, sizeof header);
  std::uint64_t *words = out->invocation.data() + sizeof(InvocationHeader) / sizeof(std::uint64_t);
  words[0] = reinterpret_cast<std::uint64_t>(image);
  words[1] = reinterpret_cast<std::uint64_t>(request.profile_timings);
  words[2] = reinterpret_cast<std::uint64_t>(request.profile_wall);
  for (std::size_t i = 0; i < tensors; ++i) {
    words[kPayloadFixedWords + i] = reinterpret_cast<std::uint64_t>(tensor_addresses[i]);
    words[kPayloadFixedWords + tensors + i] = request.args.tensors[i].bytes;
  }
  for (std::size_t i = 0; i < scalars; ++i) {
    words[kPayloadFixedWords + 2 * tensors + i] = request.args.scalars[i];
  }
}

void finish_bind(const HostApi &api, const BindRequest &request, const void *image,
                 const void *scheduler, const void *gm_heap,
                 std::span<void *const> tensor_addresses, BoundRun *out) {
  const ExecutionMode mode =
      api.is_kernel_mode() ? ExecutionMode::kKernel : ExecutionMode::kProgram;
  encode_invocation(request, mode, image, tensor_addresses, out);
  out->referenced.push_back(image);
  out->referenced.push_back(scheduler);
  if (request.callable->requirements().gm_heap != 0) {
    out->referenced.push_back(gm_heap);
  }
  if (request.profile_timings != nullptr) {
    out->referenced.push_back(request.profile_timings);
    out->referenced.push_back(request.profile_wall);
  }
  out->referenced.insert(out->referenced.end(), tensor_addresses.begin(), tensor_addresses.end());
}

std::uint64_t image_cache_key(const Callable &callable, std::uint64_t generation) noexcept {
  return callable.content_key() ^ (generation * 0x9e3779b97f4a7c15ULL);
}

}  // namespace replayrt
