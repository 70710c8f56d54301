// EngineInspector: the tests' access to the parts an Engine keeps to itself, its device and
// its DeviceContext, to inspect (and, in white-box tests, to drive) what the engine's calls
// changed. Part of the testing library; nothing that ships uses it.
#pragma once

#include "context/device_context.h"
#include "platform/device.h"
#include "runtime/engine.h"

namespace replayrt {

class EngineInspector {
 public:
  static Device &device(Engine &engine) noexcept { return *engine.device_; }
  static DeviceContext &context(Engine &engine) noexcept { return engine.context_; }
  static const DeviceContext &context(const Engine &engine) noexcept { return engine.context_; }
};

}  // namespace replayrt
