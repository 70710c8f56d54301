#include "runtime/device_build_bind.h"

#include <vector>

#include "runtime/task_graph_builder.h"

namespace replayrt {

Footprint DeviceBuildBind::footprint(const Callable &callable) const noexcept {
  const CallableRequirements &needs = callable.requirements();
  return Footprint{.gm_heap = needs.gm_heap,
                   .gm_sm = needs.scheduler_state,
                   .runtime_pool = needs.image,
                   .graph_definition = 0,
                   .staging_all_host = needs.staged_all_host,
                   .staging = StagingKind::kRetained};
}

Status DeviceBuildBind::place_resident(DeviceContext &context, const Callable &callable,
                                       std::int32_t id, std::uint64_t generation,
                                       ResidentPlacement *out) const {
  const Footprint needs = footprint(callable);
  DeviceContext::ResidentTransaction placement(context);
  RRT_RETURN_IF_ERROR(placement.stage(
      ResidentRequest{.gm_heap = needs.gm_heap,
                      .gm_sm = needs.gm_sm,
                      .pool_bytes = needs.runtime_pool,
                      .profile_tasks = static_cast<std::uint32_t>(callable.tasks().size())}));
  const ResidentGrant &grant = placement.grant();
  std::vector<std::byte> image(needs.runtime_pool);
  const ImageBinding binding{id, generation, grant.bases.gm_heap, grant.bases.gm_sm, nullptr};
  RRT_RETURN_IF_ERROR(build_task_graph_image(callable, binding, image));
  RRT_RETURN_IF_ERROR(context.device().copy_host_to_device(grant.pool, image.data(), image.size()));
  *out = ResidentPlacement{grant.pool, grant.bases.gm_sm, grant.bases.gm_heap};
  placement.commit();
  return Status::ok();
}

Status DeviceBuildBind::bind(SlotView &slot, const BindRequest &request, BoundRun *out) const {
  const Callable &callable = *request.callable;
  out->clear();
  const Footprint needs = footprint(callable);
  const bool kernel = slot.mode() == ExecutionMode::kKernel;
  const std::uint64_t key = image_cache_key(callable, request.generation);
  PrebuiltImageCache::Entry hit;
  const bool cached = !kernel && slot.find_prebuilt(key, &hit);
  SlotRequest reserve{.staging_kind = StagingKind::kRetained,
                      .staging_bytes = run_staging_bytes(request.args),
                      .size_bank = !kernel && !cached,
                      .bank = BankRequest{needs.gm_heap, needs.gm_sm, needs.runtime_pool},
                      .profile_tasks = static_cast<std::uint32_t>(callable.tasks().size()),
                      .profile_offset = request.profile_offset,
                      .fill = nullptr};
  SlotGrant grant;
  if (kernel) {
    RRT_RETURN_IF_ERROR(slot.reserve(reserve, &grant));
    stage_host_tensors(request, grant.staging, out);
    finish_bind(ExecutionMode::kKernel, request, request.resident.image, request.resident.scheduler,
                request.resident.gm_heap, grant, out);
    return Status::ok();
  }
  // Program mode: the image is built and uploaded and the run encoded before the slot's
  // blocks publish, so a failure anywhere leaves the slot as it was.
  const auto fill = [&](const SlotGrant &staged) {
    stage_host_tensors(request, staged.staging, out);
    const void *image =
        static_cast<const std::byte *>(staged.bases.runtime_pool) + hit.image_offset;
    if (!cached) {
      std::vector<std::byte> host_image(needs.runtime_pool);
      const ImageBinding binding{request.callable_id, request.generation, staged.bases.gm_heap,
                                 staged.bases.gm_sm, nullptr};
      RRT_RETURN_IF_ERROR(build_task_graph_image(callable, binding, host_image));
      RRT_RETURN_IF_ERROR(
          slot.upload(staged.bases.runtime_pool, host_image.data(), host_image.size()));
      image = staged.bases.runtime_pool;
    }
    finish_bind(ExecutionMode::kProgram, request, image, staged.bases.gm_sm, staged.bases.gm_heap,
                staged, out);
    return Status::ok();
  };
  reserve.fill = fill;
  RRT_RETURN_IF_ERROR(slot.reserve(reserve, &grant));
  if (!cached) {
    slot.remember_prebuilt(
        PrebuiltImageCache::Entry{slot.index(), grant.bases, key, 0, needs.runtime_pool});
  }
  return Status::ok();
}

}  // namespace replayrt
