// record_or_wait_idle: how a caller keeps later work ordered after a stream's queued work when
// the event that would mark that work cannot be recorded.
#pragma once

#include "platform/device.h"

namespace replayrt {

// Records `event` on `stream`, so that a wait on `event` waits for the work queued on `stream`
// so far, and returns true. When the record fails (a returned status, or a thrown exception
// such as a host allocation failure), waits until that work has completed instead and returns
// false: nothing queued is left to mark, and `event` still marks what it marked before, which
// is all older. Never throws. Thread safety: as Stream::record_event and Stream::wait_idle.
bool record_or_wait_idle(Stream &stream, Event &event) noexcept;

}  // namespace replayrt
