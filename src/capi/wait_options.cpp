#include "capi/wait_options.h"

#include <cstddef>

#include "capi/validate.h"
#include "common/format.h"
#include "common/raw_enum.h"

namespace replayrt::capi {

Status context_wait_policy(const rrt_context_options_t &options, HostWaitPolicy *out) {
  HostWaitPolicy policy;
  if (has_field(options.struct_size, offsetof(rrt_context_options_t, wait_policy),
                sizeof options.wait_policy)) {
    const std::int32_t kind = raw_enum(options.wait_policy);
    switch (kind) {
      case RRT_WAIT_SPIN_THEN_BLOCK:
        policy.kind = HostWaitPolicy::Kind::kSpinThenBlock;
        break;
      case RRT_WAIT_SPIN:
        policy.kind = HostWaitPolicy::Kind::kSpin;
        break;
      case RRT_WAIT_YIELD:
        policy.kind = HostWaitPolicy::Kind::kYield;
        break;
      case RRT_WAIT_BLOCK:
        policy.kind = HostWaitPolicy::Kind::kBlock;
        break;
      default:
        return Status::error(RRT_ERR_INVALID_ARGUMENT,
                             format("unknown wait_policy %d (RRT_WAIT_SPIN_THEN_BLOCK, "
                                    "RRT_WAIT_SPIN, RRT_WAIT_YIELD or RRT_WAIT_BLOCK)",
                                    kind));
    }
  }
  if (has_field(options.struct_size, offsetof(rrt_context_options_t, wait_spin_us),
                sizeof options.wait_spin_us) &&
      options.wait_spin_us != 0) {
    policy.spin_budget = std::chrono::microseconds(options.wait_spin_us);
  }
  *out = policy;
  return Status::ok();
}

}  // namespace replayrt::capi
