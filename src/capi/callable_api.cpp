// Kernels, capacity plans and callables.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "capi/api_guard.h"
#include "capi/callable_spec_codec.h"
#include "capi/capacity_plan_codec.h"
#include "capi/handles.h"
#include "capi/validate.h"
#include "common/format.h"
#include "runtime/plan_fit.h"

using replayrt::Status;
using replayrt::capi::guarded;
using replayrt::capi::require_non_null;

namespace {

// Decodes `count` descs (a null array only when count is 0), naming descs[i] in a failure.
Status decode_descs(const rrt_callable_desc_t *const *descs, uint32_t count,
                    std::vector<replayrt::CallableSpec> *out) {
  if (count != 0) {
    RRT_RETURN_IF_ERROR(require_non_null(descs, "descs"));
  }
  const std::span<const rrt_callable_desc_t *const> all(descs, count);
  out->resize(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    Status decoded = replayrt::capi::decode_callable_desc(all[i], &(*out)[i]);
    if (!decoded.is_ok()) {
      return std::move(decoded).with_context(replayrt::format("descs[%zu]", i));
    }
  }
  return Status::ok();
}

// rrt_kernel_config_fit, with a context's kernel table when `kernels` is set.
Status fit_kernel_config(const rrt_callable_desc_t *const *descs, uint32_t count,
                         const replayrt::KernelRegistry *kernels, rrt_kernel_config_t *config) {
  RRT_RETURN_IF_ERROR(replayrt::capi::validate_kernel_config(config));
  std::vector<replayrt::CallableSpec> all;
  RRT_RETURN_IF_ERROR(decode_descs(descs, count, &all));
  const bool has_task_capacity = replayrt::capi::has_field(
      config->struct_size, offsetof(rrt_kernel_config_t, profiling_task_capacity),
      sizeof config->profiling_task_capacity);
  std::uint32_t tasks = has_task_capacity ? config->profiling_task_capacity : 0;
  replayrt::CapacityPlan plan = replayrt::capi::decode_capacity_plan(config->capacity);
  RRT_RETURN_IF_ERROR(
      replayrt::fit_capacity_plan(all, replayrt::PlanFit::kSideBySide, &plan, &tasks, kernels));
  config->capacity = replayrt::capi::encode_capacity_plan(plan);
  if (has_task_capacity) {
    config->profiling_task_capacity = tasks;
  }
  return Status::ok();
}

}  // namespace

extern "C" {

RRT_API rrt_status_t rrt_kernel_register(rrt_context_t ctx, const char *name, rrt_kernel_fn fn,
                                         void *user, int32_t *out_kernel_id) {
  return guarded("rrt_kernel_register", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    RRT_RETURN_IF_ERROR(require_non_null(name, "name"));
    RRT_RETURN_IF_ERROR(require_non_null(reinterpret_cast<const void *>(fn), "fn"));
    RRT_RETURN_IF_ERROR(require_non_null(out_kernel_id, "out_kernel_id"));
    if (!ctx->engine->device_properties().runs_host_kernels) {
      return Status::error(RRT_ERR_UNSUPPORTED,
                           replayrt::format("%s contexts cannot run host-function kernels; "
                                            "register a native launcher with "
                                            "rrt_kernel_register_native",
                                            ctx->engine->device_properties().name));
    }
    replayrt::KernelEntry entry;
    entry.name = name;
    entry.host_fn = fn;
    entry.user = user;
    return ctx->engine->kernels().add(std::move(entry), out_kernel_id);
  });
}

RRT_API rrt_status_t rrt_kernel_lookup(rrt_context_t ctx, const char *name,
                                       int32_t *out_kernel_id) {
  return guarded("rrt_kernel_lookup", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    RRT_RETURN_IF_ERROR(require_non_null(name, "name"));
    RRT_RETURN_IF_ERROR(require_non_null(out_kernel_id, "out_kernel_id"));
    return ctx->engine->kernels().find(name, out_kernel_id);
  });
}

RRT_API rrt_status_t rrt_capacity_plan_fit(const rrt_callable_desc_t *desc,
                                           rrt_capacity_plan_t *plan) {
  return guarded("rrt_capacity_plan_fit", [&]() -> Status {
    replayrt::CallableSpec spec;
    RRT_RETURN_IF_ERROR(replayrt::capi::decode_callable_desc(desc, &spec));
    RRT_RETURN_IF_ERROR(require_non_null(plan, "plan"));
    replayrt::CapacityPlan grown = replayrt::capi::decode_capacity_plan(*plan);
    RRT_RETURN_IF_ERROR(
        replayrt::fit_capacity_plan(std::span(&spec, 1), replayrt::PlanFit::kOneCallable, &grown));
    *plan = replayrt::capi::encode_capacity_plan(grown);
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_capacity_plan_fit_all(const rrt_callable_desc_t *const *descs,
                                               uint32_t count, rrt_capacity_plan_t *plan) {
  return guarded("rrt_capacity_plan_fit_all", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(plan, "plan"));
    std::vector<replayrt::CallableSpec> all;
    RRT_RETURN_IF_ERROR(decode_descs(descs, count, &all));
    replayrt::CapacityPlan grown = replayrt::capi::decode_capacity_plan(*plan);
    RRT_RETURN_IF_ERROR(replayrt::fit_capacity_plan(all, replayrt::PlanFit::kSideBySide, &grown));
    *plan = replayrt::capi::encode_capacity_plan(grown);
    return Status::ok();
  });
}

RRT_API rrt_status_t rrt_kernel_config_fit(const rrt_callable_desc_t *const *descs, uint32_t count,
                                           rrt_kernel_config_t *config) {
  return guarded("rrt_kernel_config_fit",
                 [&]() -> Status { return fit_kernel_config(descs, count, nullptr, config); });
}

RRT_API rrt_status_t rrt_context_kernel_config_fit(rrt_context_t ctx,
                                                   const rrt_callable_desc_t *const *descs,
                                                   uint32_t count, rrt_kernel_config_t *config) {
  return guarded("rrt_context_kernel_config_fit", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    return fit_kernel_config(descs, count, &ctx->engine->kernels(), config);
  });
}

RRT_API rrt_status_t rrt_callable_prepare(rrt_context_t ctx, const rrt_callable_desc_t *desc,
                                          int32_t *out_callable_id) {
  return guarded("rrt_callable_prepare", [&]() -> Status {
    RRT_RETURN_IF_ERROR(require_non_null(ctx, "ctx"));
    replayrt::CallableSpec spec;
    RRT_RETURN_IF_ERROR(replayrt::capi::decode_callable_desc(desc, &spec));
    RRT_RETURN_IF_ERROR(require_non_null(out_callable_id, "out_callable_id"));
    return ctx->engine->prepare_callable(spec, out_callable_id);
  });
}

}  // extern "C"
