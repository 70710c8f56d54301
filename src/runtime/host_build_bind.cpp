#include "runtime/host_build_bind.h"

#include <vector>

#include "runtime/task_graph_builder.h"

namespace replayrt {

namespace {

constexpr std::uint64_t kSeedKeySalt = 0x486f73744275696cULL;  // "HostBuil"

std::uint64_t mix(std::uint64_t hash, std::uint64_t value) {
  hash ^= value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
  return hash;
}

// What a definition bakes: the gm_heap and the seed it points into.
std::uint64_t definition_binding(const void *gm_heap, const void *seed) {
  return mix(reinterpret_cast<std::uint64_t>(gm_heap), reinterpret_cast<std::uint64_t>(seed));
}

// Builds the definition of `callable` against `gm_heap` and the seed at `seed` (the working
// state follows it) and uploads it to `dst` through `upload`.
template <typename Upload>
Status upload_definition(const Callable &callable, std::int32_t id, std::uint64_t generation,
                         const void *gm_heap, std::byte *seed, void *dst, Upload &&upload) {
  const std::uint64_t seed_bytes = callable.requirements().scheduler_state;
  std::vector<std::byte> image(callable.requirements().image);
  const ImageBinding binding{id, generation, gm_heap, seed + seed_bytes, seed};
  RRT_RETURN_IF_ERROR(build_task_graph_image(callable, binding, image));
  return upload(dst, image.data(), image.size());
}

template <typename Upload>
Status upload_seed(const Callable &callable, std::uint64_t generation, void *dst, Upload &&upload) {
  std::vector<std::byte> seed(callable.requirements().scheduler_state);
  RRT_RETURN_IF_ERROR(build_scheduler_seed(callable, generation, seed));
  return upload(dst, seed.data(), seed.size());
}

}  // namespace

Footprint HostBuildBind::footprint(const Callable &callable) const noexcept {
  const CallableRequirements &needs = callable.requirements();
  return Footprint{.gm_heap = needs.gm_heap,
                   .gm_sm = 0,
                   .runtime_pool = 2 * needs.scheduler_state,
                   .graph_definition = needs.image,
                   .staging_all_host = needs.staged_all_host,
                   .staging = StagingKind::kHost};
}

Status HostBuildBind::place_resident(DeviceContext &context, const Callable &callable,
                                     std::int32_t id, std::uint64_t generation,
                                     ResidentPlacement *out) const {
  const Footprint needs = footprint(callable);
  DeviceContext::ResidentTransaction placement(context);
  RRT_RETURN_IF_ERROR(placement.stage(
      ResidentRequest{.gm_heap = needs.gm_heap,
                      .gm_sm = 0,
                      .pool_bytes = needs.runtime_pool,
                      .place_definition = true,
                      .definition_key = mix(callable.content_key(), generation),
                      .definition_bytes = needs.graph_definition,
                      .definition_binding = 0,
                      .profile_tasks = static_cast<std::uint32_t>(callable.tasks().size())}));
  const ResidentGrant &grant = placement.grant();
  auto upload = [&](void *dst, const void *src, std::size_t bytes) {
    return context.device().copy_host_to_device(dst, src, bytes);
  };
  auto *seed = static_cast<std::byte *>(grant.pool);
  RRT_RETURN_IF_ERROR(upload_seed(callable, generation, seed, upload));
  RRT_RETURN_IF_ERROR(upload_definition(callable, id, generation, grant.bases.gm_heap, seed,
                                        grant.definition, upload));
  *out = ResidentPlacement{grant.definition, seed, grant.bases.gm_heap};
  placement.commit();
  return Status::ok();
}

Status HostBuildBind::bind(SlotView &slot, const BindRequest &request, BoundRun *out) const {
  const Callable &callable = *request.callable;
  out->clear();
  const Footprint needs = footprint(callable);
  const bool kernel = slot.mode() == ExecutionMode::kKernel;
  const std::uint64_t seed_key = image_cache_key(callable, request.generation) ^ kSeedKeySalt;
  PrebuiltImageCache::Entry hit;
  const bool seeded = !kernel && slot.find_prebuilt(seed_key, &hit);
  SlotRequest reserve{.staging_kind = StagingKind::kHost,
                      .staging_bytes = run_staging_bytes(request.args),
                      .size_bank = !kernel && !seeded,
                      .bank = BankRequest{needs.gm_heap, 0, needs.runtime_pool},
                      .place_definition = !kernel,
                      .definition_key = mix(callable.content_key(), request.generation),
                      .definition_bytes = needs.graph_definition,
                      .profile_tasks = static_cast<std::uint32_t>(callable.tasks().size()),
                      .profile_offset = request.profile_offset,
                      .fill = nullptr};
  if (!kernel) {
    const BankBases bases = seeded ? hit.bases : BankBases{};
    reserve.definition_binding = seeded ? definition_binding(bases.gm_heap, bases.runtime_pool) : 0;
  }
  SlotGrant grant;
  if (kernel) {
    RRT_RETURN_IF_ERROR(slot.reserve(reserve, &grant));
    stage_host_tensors(request, grant.staging, out);
    finish_bind(ExecutionMode::kKernel, request, request.resident.image, request.resident.scheduler,
                request.resident.gm_heap, grant, out);
    return Status::ok();
  }
  // Program mode: the seed and the definition are uploaded and the run encoded before the
  // slot's blocks publish, so a failure anywhere leaves the slot (and the definition's key)
  // as it was.
  const auto fill = [&](const SlotGrant &staged) {
    stage_host_tensors(request, staged.staging, out);
    auto upload = [&](void *dst, const void *src, std::size_t bytes) {
      return slot.upload(dst, src, bytes);
    };
    auto *seed = static_cast<std::byte *>(staged.bases.runtime_pool);
    if (!seeded) {
      RRT_RETURN_IF_ERROR(upload_seed(callable, request.generation, seed, upload));
    }
    if (staged.definition.needs_upload || !seeded) {
      RRT_RETURN_IF_ERROR(upload_definition(callable, request.callable_id, request.generation,
                                            staged.bases.gm_heap, seed, staged.definition.address,
                                            upload));
    }
    finish_bind(ExecutionMode::kProgram, request, staged.definition.address, seed,
                staged.bases.gm_heap, staged, out);
    return Status::ok();
  };
  reserve.fill = fill;
  RRT_RETURN_IF_ERROR(slot.reserve(reserve, &grant));
  if (!seeded) {
    slot.remember_prebuilt(
        PrebuiltImageCache::Entry{slot.index(), grant.bases, seed_key, 0, needs.runtime_pool});
  }
  return Status::ok();
}

}  // namespace replayrt
