// Ownership checks between handles of the C ABI.
#pragma once

#include <vector>

#include "capi/handles.h"
#include "common/status.h"

namespace replayrt::capi {

// RRT_ERR_INVALID_ARGUMENT unless `stream` is non-null and was created from `ctx`.
Status check_stream_of(const rrt_context_s *ctx, const rrt_stream_s *stream);

// The streams behind `ctx`'s stream handles. The caller holds ctx.mutex.
std::vector<Stream *> streams_of(const rrt_context_s &ctx);

}  // namespace replayrt::capi
