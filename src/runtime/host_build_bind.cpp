#include "runtime/host_build_bind.h"

#include <vector>

#include "common/format.h"
#include "runtime/task_graph_builder.h"

namespace replayrt {

namespace {

constexpr std::uint64_t kPoolKeySalt = 0x486f73744275696cULL;  // "HostBuil"

std::uint64_t mix(std::uint64_t hash, std::uint64_t value) {
  hash ^= value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
  return hash;
}

// Program mode: the scheduler seed in the bank's runtime pool and the definition in the
// slot's store. Writes the definition and the pool address.
Status place_program_graph(const HostApi &api, const BindRequest &request, const void **definition,
                           const void **pool, const void **gm_heap) {
  const Callable &callable = *request.callable;
  const CallableRequirements &needs = callable.requirements();
  const std::uint64_t pool_bytes = host_build_pool_bytes(callable);
  const std::uint64_t pool_key = image_cache_key(callable, request.generation) ^ kPoolKeySalt;
  BankBases bases;
  PrebuiltImageCache::Entry hit;
  if (api.lookup_prebuilt_image(pool_key, &hit)) {
    bases = hit.bases;
  } else {
    const BankRequest held = api.pooled_sizes();
    const BankRequest request_bytes{needs.gm_heap != 0 ? needs.gm_heap : held.gm_heap, held.gm_sm,
                                    pool_bytes};
    RRT_RETURN_IF_ERROR(api.setup_static_arena(request_bytes));
    bases = api.pooled_bases();
    std::vector<std::byte> seed(needs.scheduler_state);
    RRT_RETURN_IF_ERROR(build_scheduler_seed(callable, request.generation, seed));
    RRT_RETURN_IF_ERROR(api.copy_to_device(bases.runtime_pool, seed.data(), seed.size()));
    api.store_prebuilt_image(PrebuiltImageCache::Entry{api.bank(), bases, pool_key, 0, pool_bytes});
  }
  auto *seed_address = static_cast<std::byte *>(bases.runtime_pool);
  std::byte *state_address = seed_address + needs.scheduler_state;
  GraphDefinitionStore::Placement placement;
  RRT_RETURN_IF_ERROR(api.acquire_graph_definition(
      host_build_definition_key(callable, request.generation, bases.gm_heap, seed_address),
      needs.image, &placement));
  if (placement.needs_upload) {
    std::vector<std::byte> image(needs.image);
    const ImageBinding binding{request.callable_id, request.generation, bases.gm_heap,
                               state_address, seed_address};
    RRT_RETURN_IF_ERROR(build_task_graph_image(callable, binding, image));
    RRT_RETURN_IF_ERROR(api.copy_to_device(placement.address, image.data(), image.size()));
  }
  *definition = placement.address;
  *pool = seed_address;
  *gm_heap = bases.gm_heap;
  return Status::ok();
}

}  // namespace

std::uint64_t host_build_pool_bytes(const Callable &callable) noexcept {
  return 2 * callable.requirements().scheduler_state;
}

std::uint64_t host_build_definition_key(const Callable &callable, std::uint64_t generation,
                                        const void *gm_heap, const void *scheduler) noexcept {
  std::uint64_t key = mix(callable.content_key(), generation);
  key = mix(key, reinterpret_cast<std::uint64_t>(gm_heap));
  return mix(key, reinterpret_cast<std::uint64_t>(scheduler));
}

Status bind_host_build(const HostApi &api, const BindRequest &request, BoundRun *out) {
  const Callable &callable = *request.callable;
  out->clear();
  std::vector<void *> &addresses = out->tensor_addresses;
  addresses.assign(callable.params().size(), nullptr);
  RRT_RETURN_IF_ERROR(stage_host_tensors(api, request, kHostStagingSource, &addresses, out));

  const void *definition = request.resident_image;
  const void *pool = request.resident_scheduler;
  const void *gm_heap = request.resident_gm_heap;
  if (!api.is_kernel_mode()) {
    RRT_RETURN_IF_ERROR(place_program_graph(api, request, &definition, &pool, &gm_heap));
  } else if (definition == nullptr || pool == nullptr) {
    return Status::error(RRT_ERR_CALLABLE_NOT_RESIDENT,
                         format("callable %d has no resident definition", request.callable_id));
  }
  finish_bind(api, request, definition, pool, gm_heap, addresses, out);
  return Status::ok();
}

}  // namespace replayrt
