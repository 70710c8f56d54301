// Program-mode runs and kernel-mode launches.
#include "capi/api_guard.h"
#include "capi/handles.h"
#include "capi/run_args_codec.h"
#include "capi/stream_lookup.h"
#include "capi/validate.h"

using replayrt::Status;
using replayrt::capi::guarded;
using replayrt::capi::require_non_null;

using replayrt::capi::DecodedRunArgs;

namespace {

// Finalizes `run` while an exception from a later step unwinds towards the guard, so the slot
// goes back first. A failure of the finalize itself gives way to that exception, which is the
// one the guard reports.
void finalize_while_unwinding(replayrt::Engine &engine, replayrt::ProgramRun &run) noexcept {
  try {
    static_cast<void>(engine.run_finalize(run));
  } catch (...) {
    // Dropped: the exception already unwinding is the one reported.
  }
}

}  // namespace

extern "C" {

RRT_API rrt_status_t rrt_run_prepare(rrt_context_t ctx, int32_t callable_id,
                                     const rrt_run_args_t *args, rrt_run_t *out) {
  return guarded("rrt_run_prepare", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    DecodedRunArgs decoded;
    RRT_RETURN_IF_ERROR(decoded.decode(args));
    RRT_RETURN_IF_ERROR(require_non_null(out, "out"));
    auto run = std::make_unique<rrt_run_s>();
    run->context = ctx;
    RRT_RETURN_IF_ERROR(ctx->engine->run_prepare(callable_id, decoded.view(), &run->run));
    ctx->live_runs.fetch_add(1);
    *out = run.release();
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_run_launch(rrt_run_t run, rrt_stream_t stream) {
  return guarded("rrt_run_launch", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(run, "run"));
    if (stream != nullptr) {
      RRT_RETURN_IF_ERROR(replayrt::capi::check_stream_of(run->context, stream));
    }
    return run->context->engine->run_launch(*run->run,
                                            stream != nullptr ? stream->stream.get() : nullptr);
  });
}

RRT_API rrt_status_t rrt_run_wait(rrt_run_t run) {
  return guarded("rrt_run_wait", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(run, "run"));
    return run->context->engine->run_wait(*run->run);
  });
}

RRT_API rrt_status_t rrt_run_finalize(rrt_run_t run) {
  return guarded("rrt_run_finalize", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(run, "run"));
    Status finalized = run->context->engine->run_finalize(*run->run);
    run->context->live_runs.fetch_sub(1);
    delete run;
    return finalized;
  });
}

RRT_API rrt_status_t rrt_run(rrt_context_t ctx, int32_t callable_id, const rrt_run_args_t *args) {
  return guarded("rrt_run", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    DecodedRunArgs decoded;
    RRT_RETURN_IF_ERROR(decoded.decode(args));
    replayrt::Engine &engine = *ctx->engine;
    std::unique_ptr<replayrt::ProgramRun> run;
    RRT_RETURN_IF_ERROR(engine.run_prepare(callable_id, decoded.view(), &run));
    Status status;
    try {
      status = engine.run_launch(*run, nullptr);
      if (status.is_ok()) {
        status = engine.run_wait(*run);
      }
    } catch (...) {
      finalize_while_unwinding(engine, *run);
      throw;
    }
    Status finalized = engine.run_finalize(*run);
    return status.is_ok() ? finalized : status;
  });
}

RRT_API rrt_status_t rrt_kernel_launch(rrt_context_t ctx, int32_t callable_id,
                                       const rrt_run_args_t *args, rrt_stream_t caller_stream) {
  return guarded("rrt_kernel_launch", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    DecodedRunArgs decoded;
    RRT_RETURN_IF_ERROR(decoded.decode(args));
    RRT_RETURN_IF_ERROR(replayrt::capi::check_stream_of(ctx, caller_stream));
    return ctx->engine->kernel_launch(callable_id, decoded.view(), *caller_stream->stream);
  });
}

}  // extern "C"
