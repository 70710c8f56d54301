// A HostApiOps table that forwards to a real DeviceContext and counts the arena calls and
// synchronous uploads a bind makes.
#pragma once

#include "context/device_context.h"

namespace replayrt::testing {

struct CountingRunner {
  DeviceContext *context = nullptr;
  int arena_calls = 0;
  int uploads = 0;
};

inline DeviceContext &forwarded(void *runner) {
  return *static_cast<CountingRunner *>(runner)->context;
}

// Every entry of DeviceContext::host_api_ops(), re-pointed at a CountingRunner.
inline HostApiOps counting_ops() {
  HostApiOps ops;
  ops.device_malloc = [](void *runner, GrowthContext growth, std::size_t bytes, void **out) {
    return forwarded(runner).device_malloc(growth, bytes, out);
  };
  ops.device_free = [](void *runner, void *ptr) { return forwarded(runner).device_free(ptr); };
  ops.copy_to_device = [](void *runner, void *dst, const void *src, std::size_t bytes) {
    ++static_cast<CountingRunner *>(runner)->uploads;
    return forwarded(runner).device().copy_host_to_device(dst, src, bytes);
  };
  ops.copy_from_device = [](void *runner, void *dst, const void *src, std::size_t bytes) {
    return forwarded(runner).device().copy_device_to_host(dst, src, bytes);
  };
  ops.retained_begin = [](void *runner, GrowthContext growth, int slot, std::uint64_t required) {
    return forwarded(runner).retained_begin(growth, slot, required);
  };
  ops.retained_acquire = [](void *runner, int slot, std::uint64_t bytes) {
    return forwarded(runner).retained_acquire(slot, bytes);
  };
  ops.setup_static_arena = [](void *runner, GrowthContext growth, int bank,
                              const BankRequest &request) {
    ++static_cast<CountingRunner *>(runner)->arena_calls;
    return forwarded(runner).setup_static_arena(growth, bank, request);
  };
  ops.pooled_bases = [](void *runner, int bank) { return forwarded(runner).pooled_bases(bank); };
  ops.pooled_sizes = [](void *runner, int bank) { return forwarded(runner).pooled_sizes(bank); };
  ops.lookup_prebuilt_image = [](void *runner, int bank, std::uint64_t key,
                                 PrebuiltImageCache::Entry *out) {
    return forwarded(runner).lookup_prebuilt_image(bank, key, out);
  };
  ops.store_prebuilt_image = [](void *runner, const PrebuiltImageCache::Entry &entry) {
    forwarded(runner).store_prebuilt_image(entry);
  };
  ops.acquire_graph_definition = [](void *runner, GrowthContext growth, int slot, std::uint64_t key,
                                    std::uint64_t bytes, GraphDefinitionStore::Placement *out) {
    return forwarded(runner).acquire_graph_definition(growth, slot, key, bytes, out);
  };
  ops.host_staging_begin = [](void *runner, GrowthContext growth, int slot,
                              std::uint64_t required) {
    return forwarded(runner).host_staging_begin(growth, slot, required);
  };
  ops.host_staging_stage = [](void *runner, GrowthContext growth, int slot, std::uint64_t bytes,
                              void **out) {
    return forwarded(runner).host_staging_stage(growth, slot, bytes, out);
  };
  ops.profile_area = [](void *runner, GrowthContext growth, int slot, std::uint32_t tasks,
                        TaskTiming **timings, LaunchRecord **wall) {
    return forwarded(runner).profile_area(growth, slot, tasks, timings, wall);
  };
  ops.is_kernel_mode = [](void *runner) { return forwarded(runner).latch().is_kernel(); };
  return ops;
}

}  // namespace replayrt::testing
