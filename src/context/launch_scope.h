// LaunchScope: marks the calling thread as encoding a launch of one context.
#pragma once

namespace replayrt {

class DeviceContext;

// While a LaunchScope for a context is alive on a thread, that context's blocks see
// "inside a launch": any growth or first allocation is refused (growth point
// launch_allocation). Scopes do not nest. Thread safety: the scope belongs to its thread.
class LaunchScope {
 public:
  explicit LaunchScope(const DeviceContext &context) noexcept;
  ~LaunchScope();
  LaunchScope(const LaunchScope &) = delete;
  LaunchScope &operator=(const LaunchScope &) = delete;
  LaunchScope(LaunchScope &&) = delete;
  LaunchScope &operator=(LaunchScope &&) = delete;

  // True while a scope for `context` is open on the calling thread.
  static bool is_open_for(const DeviceContext &context) noexcept;
};

}  // namespace replayrt
