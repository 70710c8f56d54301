#include "runtime/device_build_bind.h"

#include <cstring>
#include <vector>

#include "common/format.h"
#include "memory/retained_buffer.h"
#include "runtime/invocation_header.h"
#include "runtime/task_graph_image.h"

namespace replayrt {

namespace {

// Stages the HOST tensors of a run through the retained buffer; writes every tensor's device
// address.
Status stage_through_retained_buffer(const HostApi &api, const BindRequest &request,
                                     std::vector<void *> *addresses, BoundRun *out) {
  const auto params = request.callable->params();
  std::uint64_t required = 0;
  for (const rrt_tensor_arg_t &arg : request.args.tensors) {
    if (arg.space == RRT_SPACE_HOST) {
      required += RetainedBuffer::slice_bytes(arg.bytes);
    }
  }
  RRT_RETURN_IF_ERROR(api.retained_begin(required));
  for (std::size_t i = 0; i < params.size(); ++i) {
    const rrt_tensor_arg_t &arg = request.args.tensors[i];
    if (arg.space == RRT_SPACE_DEVICE) {
      (*addresses)[i] = arg.addr;
      continue;
    }
    void *slice = api.retained_acquire(arg.bytes);
    if (slice == nullptr) {
      return Status::error(RRT_ERR_INTERNAL,
                           format("retained staging has no room for param %zu (%llu bytes)", i,
                                  static_cast<unsigned long long>(arg.bytes)));
    }
    (*addresses)[i] = slice;
    if (params[i].direction != RRT_DIR_OUT) {
      out->copies_in.push_back(StagedCopy{slice, arg.addr, arg.bytes});
    }
    if (params[i].direction != RRT_DIR_IN) {
      out->copies_out.push_back(StagedCopy{arg.addr, slice, arg.bytes});
    }
  }
  return Status::ok();
}

// Program mode: the bank's prebuilt image, built and uploaded on a miss.
Status prepare_program_image(const HostApi &api, const BindRequest &request, const void **image) {
  const Callable &callable = *request.callable;
  const std::uint64_t key = image_cache_key(callable, request.generation);
  PrebuiltImageCache::Entry hit;
  if (api.lookup_prebuilt_image(key, &hit)) {
    *image = static_cast<const std::byte *>(hit.bases.runtime_pool) + hit.image_offset;
    return Status::ok();
  }
  const CallableRequirements &needs = callable.requirements();
  const BankRequest held = api.pooled_sizes();
  // A run never releases a region it does not need; teardown does.
  const BankRequest request_bytes{needs.gm_heap != 0 ? needs.gm_heap : held.gm_heap,
                                  needs.scheduler_state, needs.image};
  RRT_RETURN_IF_ERROR(api.setup_static_arena(request_bytes));
  const BankBases bases = api.pooled_bases();
  std::vector<std::byte> host_image(needs.image);
  const ImageBinding binding{request.callable_id, request.generation, bases.gm_heap, bases.gm_sm,
                             nullptr};
  RRT_RETURN_IF_ERROR(build_task_graph_image(callable, binding, host_image));
  RRT_RETURN_IF_ERROR(api.copy_to_device(bases.runtime_pool, host_image.data(), needs.image));
  api.store_prebuilt_image(PrebuiltImageCache::Entry{api.bank(), bases, key, 0, needs.image});
  *image = bases.runtime_pool;
  return Status::ok();
}

}  // namespace

void BoundRun::clear() noexcept {
  invocation_bytes = 0;
  copies_in.clear();
  copies_out.clear();
  referenced.clear();
}

std::uint64_t image_cache_key(const Callable &callable, std::uint64_t generation) noexcept {
  return callable.content_key() ^ (generation * 0x9e3779b97f4a7c15ULL);
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

Status bind_device_build(const HostApi &api, const BindRequest &request, BoundRun *out) {
  const Callable &callable = *request.callable;
  out->clear();
  thread_local std::vector<void *> addresses;
  addresses.assign(callable.params().size(), nullptr);
  RRT_RETURN_IF_ERROR(stage_through_retained_buffer(api, request, &addresses, out));

  const void *image = request.resident_image;
  if (!api.is_kernel_mode()) {
    RRT_RETURN_IF_ERROR(prepare_program_image(api, request, &image));
  } else if (image == nullptr) {
    return Status::error(RRT_ERR_CALLABLE_NOT_RESIDENT,
                         format("callable %d has no resident image", request.callable_id));
  }
  const BankBases bases = api.pooled_bases();
  const ExecutionMode mode =
      api.is_kernel_mode() ? ExecutionMode::kKernel : ExecutionMode::kProgram;
  encode_invocation(request, mode, image, addresses, out);

  out->referenced.push_back(image);
  out->referenced.push_back(bases.gm_sm);
  if (callable.requirements().gm_heap != 0) {
    out->referenced.push_back(bases.gm_heap);
  }
  if (request.profile_timings != nullptr) {
    out->referenced.push_back(request.profile_timings);
    out->referenced.push_back(request.profile_wall);
  }
  out->referenced.insert(out->referenced.end(), addresses.begin(), addresses.end());
  return Status::ok();
}

}  // namespace replayrt
