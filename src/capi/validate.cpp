#include "capi/validate.h"

#include <cstdint>
#include <cstring>

#include "common/format.h"
#include "common/raw_enum.h"

namespace replayrt::capi {

Status check_struct_size(const char *name, uint32_t size, uint32_t minimum) {
  if (size < minimum) {
    return Status::invalid_argument(
        format("%s.struct_size is %u; this version needs at least %u (set it to "
               "sizeof(%s))",
               name, size, minimum, name));
  }
  return Status::ok();
}

Status validate_context_options(const rrt_context_options_t *options) {
  if (options == nullptr) {
    return Status::invalid_argument("options is null");
  }
  RRT_RETURN_IF_ERROR(
      check_struct_size("rrt_context_options_t", options->struct_size, kContextOptionsV1Size));
  const std::int32_t platform = raw_enum(options->platform);
  if (platform != RRT_PLATFORM_SIM && platform != RRT_PLATFORM_CUDA) {
    return Status::invalid_argument(format("unknown platform %d", platform));
  }
  if (options->device_id < 0) {
    return Status::invalid_argument(
        format("device_id %d is negative", static_cast<int>(options->device_id)));
  }
  if (options->device_workers > kMaxDeviceWorkers) {
    return Status::invalid_argument(
        format("device_workers %u exceeds %u", options->device_workers, kMaxDeviceWorkers));
  }
  return Status::ok();
}

Status validate_kernel_config(const rrt_kernel_config_t *config) {
  if (config == nullptr) {
    return Status::invalid_argument("config is null");
  }
  RRT_RETURN_IF_ERROR(
      check_struct_size("rrt_kernel_config_t", config->struct_size, kKernelConfigV1Size));
  return Status::ok();
}

Status validate_stats_out(const rrt_stats_t *out) {
  if (out == nullptr) {
    return Status::invalid_argument("out is null");
  }
  return check_struct_size("rrt_stats_t", out->struct_size, kStatsV1Size);
}

}  // namespace replayrt::capi
