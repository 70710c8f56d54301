// Contexts, caller device memory and statistics.
#include <cstdint>
#include <utility>
#include <vector>

#include "capi/api_guard.h"
#include "capi/capacity_plan_codec.h"
#include "capi/handles.h"
#include "capi/stream_lookup.h"
#include "capi/validate.h"
#include "capi/wait_options.h"
#include "common/format.h"
#include "platform/device_factory.h"

using replayrt::Status;
using replayrt::capi::guarded;
using replayrt::capi::require_non_null;

namespace {

Status require_context(rrt_context_t ctx) {
  return require_non_null(ctx, "ctx");
}

// A copy's device range must lie inside one live allocation of the context's device. Checked
// at the call, so that a stream-ordered copy is rejected before it is enqueued rather than
// failing later on its stream. An empty range always passes.
Status check_device_range(rrt_context_t ctx, const void *ptr, std::size_t bytes, const char *what) {
  if (!ctx->engine->holds_device_range(ptr, bytes)) {
    return Status::error(RRT_ERR_INVALID_ARGUMENT,
                         replayrt::format("%s [%p, +%zu) does not lie inside one live device "
                                          "allocation",
                                          what, ptr, bytes));
  }
  return Status::ok();
}

}  // namespace

extern "C" {

RRT_API rrt_status_t rrt_context_create(const rrt_context_options_t *options, rrt_context_t *out) {
  return guarded("rrt_context_create", [&]() -> Status {
    RRT_RETURN_IF_ERROR(replayrt::capi::validate_context_options(options));
    RRT_RETURN_IF_ERROR(require_non_null(out, "out"));
    replayrt::HostWaitPolicy wait_policy;
    RRT_RETURN_IF_ERROR(replayrt::capi::context_wait_policy(*options, &wait_policy));
    std::unique_ptr<replayrt::Device> device;
    RRT_RETURN_IF_ERROR(replayrt::create_device(options->platform, options->device_id, &device));
    device->set_host_wait_policy(wait_policy);
    auto context = std::make_unique<rrt_context_s>();
    context->platform = options->platform;
    const unsigned workers = options->device_workers == 0 ? 1 : options->device_workers;
    RRT_RETURN_IF_ERROR(replayrt::Engine::create(std::move(device), workers,
                                                 replayrt::GenerationRegistry::process_wide(),
                                                 &context->engine));
    if (replayrt::capi::has_field(options->struct_size, offsetof(rrt_context_options_t, profiling),
                                  sizeof options->profiling) &&
        options->profiling != 0) {
      context->engine->enable_profiling();
      // An options struct that ends before wait_policy is an ABI 1.1 caller's: its
      // profiling_task_capacity holds one launch's tasks.
      if (!replayrt::capi::has_field(options->struct_size,
                                     offsetof(rrt_context_options_t, wait_policy),
                                     sizeof options->wait_policy)) {
        context->engine->profile_each_launch_from_the_first_record();
      }
    }
    *out = context.release();
    return Status::ok();
  });
}

RRT_API int rrt_kernel_mode_supported(rrt_context_t ctx) {
  return ctx != nullptr && replayrt::platform_supports_kernel_mode(ctx->platform) ? 1 : 0;
}

RRT_API rrt_status_t rrt_program_init(rrt_context_t ctx) {
  return guarded("rrt_program_init", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_context(ctx));
    return ctx->engine->program_init();
  });
}

RRT_API rrt_status_t rrt_kernel_init(rrt_context_t ctx, const rrt_kernel_config_t *config) {
  return guarded("rrt_kernel_init", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_context(ctx));
    RRT_RETURN_IF_ERROR(replayrt::capi::validate_kernel_config(config));
    if (!replayrt::platform_supports_kernel_mode(ctx->platform)) {
      return Status::error(RRT_ERR_UNSUPPORTED, "this platform has no kernel mode");
    }
    const std::uint32_t profile_tasks =
        replayrt::capi::has_field(config->struct_size,
                                  offsetof(rrt_kernel_config_t, profiling_task_capacity),
                                  sizeof config->profiling_task_capacity)
            ? config->profiling_task_capacity
            : 0;
    return ctx->engine->kernel_init(replayrt::capi::decode_capacity_plan(config->capacity),
                                    config->context_generation, profile_tasks);
  });
}

RRT_API rrt_status_t rrt_context_mode(rrt_context_t ctx, rrt_mode_t *mode, int *latched) {
  return guarded("rrt_context_mode", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_context(ctx));
    RRT_RETURN_IF_ERROR(require_non_null(mode, "mode"));
    RRT_RETURN_IF_ERROR(require_non_null(latched, "latched"));
    *latched = ctx->engine->is_latched() ? 1 : 0;
    *mode = ctx->engine->is_kernel() ? RRT_MODE_KERNEL : RRT_MODE_PROGRAM;
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_context_finalize(rrt_context_t ctx) {
  return guarded("rrt_context_finalize", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_context(ctx));
    std::vector<replayrt::Stream *> streams;
    {
      const std::lock_guard<std::mutex> lock(ctx->mutex);
      streams = replayrt::capi::streams_of(*ctx);
    }
    return ctx->engine->finalize(streams);
  });
}

RRT_API rrt_status_t rrt_context_destroy(rrt_context_t ctx) {
  return guarded("rrt_context_destroy", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_context(ctx));
    std::size_t streams = 0;
    {
      const std::lock_guard<std::mutex> lock(ctx->mutex);
      streams = ctx->streams.size();
    }
    const int events = ctx->live_events.load();
    const int graphs = ctx->live_graphs.load();
    const int runs = ctx->live_runs.load();
    if (streams != 0 || events != 0 || graphs != 0 || runs != 0) {
      return Status::error(RRT_ERR_INVALID_STATE,
                           replayrt::format("%zu streams, %d events, %d graphs and %d runs of "
                                            "this context are still alive; destroy them first",
                                            streams, events, graphs, runs));
    }
    RRT_RETURN_IF_ERROR(ctx->engine->finalize({}));
    for (void *ptr : ctx->caller_allocations) {
      ctx->engine->release_caller_buffer(ptr);
    }
    delete ctx;
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_device_alloc(rrt_context_t ctx, size_t bytes, void **out) {
  return guarded("rrt_device_alloc", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_context(ctx));
    RRT_RETURN_IF_ERROR(require_non_null(out, "out"));
    if (bytes == 0) {
      return Status::error(RRT_ERR_INVALID_ARGUMENT, "bytes is zero");
    }
    void *ptr = nullptr;
    RRT_RETURN_IF_ERROR(ctx->engine->allocate_caller_buffer(bytes, &ptr));
    const std::lock_guard<std::mutex> lock(ctx->mutex);
    try {
      ctx->caller_allocations.insert(ptr);
    } catch (...) {
      ctx->engine->release_caller_buffer(ptr);
      throw;
    }
    *out = ptr;
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_device_free(rrt_context_t ctx, void *device_ptr) {
  return guarded("rrt_device_free", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_context(ctx));
    RRT_RETURN_IF_ERROR(require_non_null(device_ptr, "device_ptr"));
    const std::lock_guard<std::mutex> lock(ctx->mutex);
    const auto it = ctx->caller_allocations.find(device_ptr);
    if (it == ctx->caller_allocations.end()) {
      return Status::error(RRT_ERR_INVALID_ARGUMENT,
                           replayrt::format("%p was not returned by rrt_device_alloc on this "
                                            "context, or was freed already",
                                            device_ptr));
    }
    // Queued work may still use the buffer: the free waits for every stream of the context.
    RRT_RETURN_IF_ERROR(
        ctx->engine->free_caller_buffer(device_ptr, replayrt::capi::streams_of(*ctx)));
    ctx->caller_allocations.erase(it);
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_memcpy_h2d(rrt_context_t ctx, void *dst, const void *src, size_t bytes,
                                    rrt_stream_t stream) {
  return guarded("rrt_memcpy_h2d", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_context(ctx));
    RRT_RETURN_IF_ERROR(require_non_null(dst, "dst"));
    RRT_RETURN_IF_ERROR(require_non_null(src, "src"));
    RRT_RETURN_IF_ERROR(check_device_range(ctx, dst, bytes, "dst"));
    if (stream == nullptr) {
      return ctx->engine->copy_host_to_device(dst, src, bytes);
    }
    RRT_RETURN_IF_ERROR(replayrt::capi::check_stream_of(ctx, stream));
    return stream->stream->enqueue_copy_host_to_device(dst, src, bytes);
  });
}

RRT_API rrt_status_t rrt_memcpy_d2h(rrt_context_t ctx, void *dst, const void *src, size_t bytes,
                                    rrt_stream_t stream) {
  return guarded("rrt_memcpy_d2h", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_context(ctx));
    RRT_RETURN_IF_ERROR(require_non_null(dst, "dst"));
    RRT_RETURN_IF_ERROR(require_non_null(src, "src"));
    RRT_RETURN_IF_ERROR(check_device_range(ctx, src, bytes, "src"));
    if (stream == nullptr) {
      return ctx->engine->copy_device_to_host(dst, src, bytes);
    }
    RRT_RETURN_IF_ERROR(replayrt::capi::check_stream_of(ctx, stream));
    return stream->stream->enqueue_copy_device_to_host(dst, src, bytes);
  });
}

RRT_API rrt_status_t rrt_context_stats(rrt_context_t ctx, rrt_stats_t *out) {
  return guarded("rrt_context_stats", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_context(ctx));
    RRT_RETURN_IF_ERROR(replayrt::capi::validate_stats_out(out));
    const replayrt::ContextStatistics snapshot = ctx->engine->statistics();
    rrt_stats_t stats{};
    stats.struct_size = out->struct_size;
    stats.device_alloc_calls = snapshot.device_alloc_calls;
    stats.device_free_calls = snapshot.device_free_calls;
    stats.live_bytes = snapshot.live_bytes;
    stats.peak_bytes = snapshot.peak_bytes;
    stats.launches = snapshot.launches;
    stats.replays = snapshot.replays;
    stats.stale_address_refusals = snapshot.stale_address_refusals;
    for (std::size_t i = 0; i < snapshot.regions.size(); ++i) {
      const replayrt::RegionStats &region = snapshot.regions[i];
      stats.refusals[i] = snapshot.refusals[i];
      stats.regions[i] = rrt_region_stats_t{region.capacity, region.used, region.base_changes};
    }
    replayrt::capi::write_versioned_out(out, stats);
    return Status::ok();
  });
}

}  // extern "C"
