// Shared pieces of the simulator execution tests: device entries that log, fail or block, and
// a fixture that owns a SimDevice with its streams and events.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "platform/device.h"
#include "platform/sim/sim_device.h"

namespace replayrt::sim::testing {

// Appends the int in its invocation bytes to the std::vector<int> in its context. Only the
// stream's executor touches the vector while work is queued; read it after synchronizing.
inline Status append_entry(void *context, const std::byte *invocation, std::size_t bytes) {
  int value = 0;
  if (bytes != sizeof value) {
    return Status::error(RRT_ERR_KERNEL_FAILED, "append_entry: invocation is not one int");
  }
  std::memcpy(&value, invocation, sizeof value);
  static_cast<std::vector<int> *>(context)->push_back(value);
  return Status::ok();
}

// Copies the int its context's source points to into its context's destination.
struct Transfer {
  const int *source = nullptr;
  int *destination = nullptr;
};

inline Status transfer_entry(void *context, const std::byte * /*invocation*/,
                             std::size_t /*bytes*/) {
  const auto *const transfer = static_cast<const Transfer *>(context);
  *transfer->destination = *transfer->source;
  return Status::ok();
}

// Sets the std::atomic<bool> in its context.
inline Status set_flag_entry(void *context, const std::byte * /*invocation*/,
                             std::size_t /*bytes*/) {
  static_cast<std::atomic<bool> *>(context)->store(true, std::memory_order_release);
  return Status::ok();
}

inline Status failing_entry(void * /*context*/, const std::byte * /*invocation*/,
                            std::size_t /*bytes*/) {
  return Status::error(RRT_ERR_KERNEL_FAILED, "failing_entry: task 7 reported failure");
}

// Enqueues a launch of append_entry; the value's bytes live only for this call.
inline Status launch_append(Stream &stream, std::vector<int> &log, int value,
                            std::span<const void *const> referenced = {}) {
  LaunchRequest request;
  request.entry = &append_entry;
  request.entry_context = &log;
  request.invocation = std::as_bytes(std::span<const int>(&value, 1));
  request.referenced = referenced;
  return stream.enqueue_launch(request);
}

inline Status launch_failing(Stream &stream) {
  LaunchRequest request;
  request.entry = &failing_entry;
  return stream.enqueue_launch(request);
}

// A launch that blocks its stream's executor until open() is called.
class Gate {
 public:
  Status block(Stream &stream) {
    LaunchRequest request;
    request.entry = &Gate::entry;
    request.entry_context = this;
    return stream.enqueue_launch(request);
  }
  void wait_until_entered() const { entered_.wait(false); }
  void open() {
    open_.store(true);
    open_.notify_all();
  }

 private:
  static Status entry(void *context, const std::byte * /*invocation*/, std::size_t /*bytes*/) {
    auto *const gate = static_cast<Gate *>(context);
    gate->entered_.store(true);
    gate->entered_.notify_all();
    gate->open_.wait(false);
    return Status::ok();
  }

  std::atomic<bool> entered_{false};
  std::atomic<bool> open_{false};
};

// Owns a device and the gates, streams and events a test creates. The gates open before the
// streams are destroyed, so a failed assertion cannot leave a stream blocked forever.
class SimExecutionTest : public ::testing::Test {
 public:
  SimExecutionTest(const SimExecutionTest &) = delete;
  SimExecutionTest &operator=(const SimExecutionTest &) = delete;
  SimExecutionTest(SimExecutionTest &&) = delete;
  SimExecutionTest &operator=(SimExecutionTest &&) = delete;

 protected:
  SimExecutionTest() = default;
  ~SimExecutionTest() override {
    for (Gate &gate : gates_) {
      gate.open();
    }
  }

  Stream &new_stream() {
    std::unique_ptr<Stream> stream;
    const Status status = device_.create_stream(&stream);
    EXPECT_TRUE(status.is_ok()) << status.message();
    return *streams_.emplace_back(std::move(stream));
  }
  Event &new_event() {
    std::unique_ptr<Event> event;
    const Status status = device_.create_event(&event);
    EXPECT_TRUE(status.is_ok()) << status.message();
    return *events_.emplace_back(std::move(event));
  }
  Gate &new_gate() { return gates_.emplace_back(); }
  void *allocate(std::size_t bytes) {
    void *const ptr = device_.allocate(bytes);
    EXPECT_NE(ptr, nullptr);
    return ptr;
  }

  std::deque<Gate> gates_;
  SimDevice device_;
  std::vector<std::unique_ptr<Event>> events_;
  std::vector<std::unique_ptr<Stream>> streams_;
};

}  // namespace replayrt::sim::testing
