#include "runtime/device_build_bind.h"

#include <vector>

#include "common/format.h"
#include "runtime/task_graph_builder.h"

namespace replayrt {

namespace {

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

Status bind_device_build(const HostApi &api, const BindRequest &request, BoundRun *out) {
  const Callable &callable = *request.callable;
  out->clear();
  std::vector<void *> &addresses = out->tensor_addresses;
  addresses.assign(callable.params().size(), nullptr);
  RRT_RETURN_IF_ERROR(stage_host_tensors(api, request, kRetainedStagingSource, &addresses, out));

  if (api.is_kernel_mode()) {
    if (request.resident_image == nullptr) {
      return Status::error(RRT_ERR_CALLABLE_NOT_RESIDENT,
                           format("callable %d has no resident image", request.callable_id));
    }
    finish_bind(api, request, request.resident_image, request.resident_scheduler,
                request.resident_gm_heap, addresses, out);
    return Status::ok();
  }
  const void *image = nullptr;
  RRT_RETURN_IF_ERROR(prepare_program_image(api, request, &image));
  const BankBases bases = api.pooled_bases();
  finish_bind(api, request, image, bases.gm_sm, bases.gm_heap, addresses, out);
  return Status::ok();
}

}  // namespace replayrt
