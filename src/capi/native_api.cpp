// Native interop: native kernel launchers, wrapped native streams, foreign device memory.
#include <memory>
#include <mutex>

#include "capi/api_guard.h"
#include "capi/handles.h"
#include "capi/stream_lookup.h"
#include "common/format.h"

using replayrt::Status;
using replayrt::capi::guarded;
using replayrt::capi::require_non_null;

namespace {

Status unsupported_on(const rrt_context_s *ctx, const char *what) {
  return Status::error(
      RRT_ERR_UNSUPPORTED,
      replayrt::format("%s contexts have no %s", ctx->engine->device_properties().name, what));
}

}  // namespace

extern "C" {

RRT_API rrt_status_t rrt_kernel_register_native(rrt_context_t ctx, const char *name,
                                                rrt_native_launch_fn fn, void *user,
                                                int32_t *out_kernel_id) {
  return guarded("rrt_kernel_register_native", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    RRT_RETURN_IF_ERROR(require_non_null(name, "name"));
    RRT_RETURN_IF_ERROR(require_non_null(reinterpret_cast<const void *>(fn), "fn"));
    RRT_RETURN_IF_ERROR(require_non_null(out_kernel_id, "out_kernel_id"));
    if (ctx->engine->device_properties().runs_host_kernels) {
      return Status::error(
          RRT_ERR_UNSUPPORTED,
          replayrt::format("%s contexts run host-function kernels only; use rrt_kernel_register",
                           ctx->engine->device_properties().name));
    }
    replayrt::KernelEntry entry;
    entry.name = name;
    entry.native_launch = fn;
    entry.user = user;
    return ctx->engine->kernels().add(std::move(entry), out_kernel_id);
  });
}

RRT_API rrt_status_t rrt_stream_wrap_native(rrt_context_t ctx, void *native_stream,
                                            rrt_stream_t *out) {
  return guarded("rrt_stream_wrap_native", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    RRT_RETURN_IF_ERROR(require_non_null(out, "out"));
    auto stream = std::make_unique<rrt_stream_s>();
    stream->context = ctx;
    RRT_RETURN_IF_ERROR(ctx->engine->wrap_native_stream(native_stream, &stream->stream));
    const std::lock_guard<std::mutex> lock(ctx->mutex);
    ctx->streams.insert(stream.get());
    *out = stream.release();
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_stream_native_handle(rrt_stream_t stream, void **out) {
  return guarded("rrt_stream_native_handle", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(stream, "stream"));
    RRT_RETURN_IF_ERROR(require_non_null(out, "out"));
    void *handle = stream->stream->share_native_handle();
    if (handle == nullptr) {
      return unsupported_on(stream->context, "native stream handles");
    }
    *out = handle;
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_device_register(rrt_context_t ctx, void *device_ptr, size_t bytes) {
  return guarded("rrt_device_register", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    RRT_RETURN_IF_ERROR(require_non_null(device_ptr, "device_ptr"));
    if (bytes == 0) {
      return Status::error(RRT_ERR_INVALID_ARGUMENT, "register of an empty device range");
    }
    return ctx->engine->register_foreign(device_ptr, bytes);
  });
}

RRT_API rrt_status_t rrt_device_unregister(rrt_context_t ctx, void *device_ptr) {
  return guarded("rrt_device_unregister", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    RRT_RETURN_IF_ERROR(require_non_null(device_ptr, "device_ptr"));
    // Queued work may still use the memory: the unregister waits for every stream of the
    // context, as rrt_device_free does.
    const std::lock_guard<std::mutex> lock(ctx->mutex);
    return ctx->engine->unregister_foreign(device_ptr, replayrt::capi::streams_of(*ctx));
  });
}

}  // extern "C"
