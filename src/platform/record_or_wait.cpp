#include "platform/record_or_wait.h"

namespace replayrt {

bool record_or_wait_idle(Stream &stream, Event &event) noexcept {
  bool recorded = false;
  try {
    recorded = stream.record_event(event).is_ok();
  } catch (...) {
    recorded = false;
  }
  if (!recorded) {
    (void)stream.wait_idle();
  }
  return recorded;
}

}  // namespace replayrt
