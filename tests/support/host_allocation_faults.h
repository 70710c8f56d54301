// Host allocation faults for the test programs that link host_allocation_faults.cpp: that file
// replaces the global operator new (every form), so that the calling thread's allocations are
// counted and, while a guard below is alive, fail with std::bad_alloc (the nothrow forms
// return null). Other threads are untouched. A program must link the file once, and not under
// ThreadSanitizer, whose runtime defines operator new itself.
#pragma once

#include <cstdint>

namespace replayrt::testing {

// Counts the calling thread's host allocations from its construction on.
class HostAllocationCounter {
 public:
  HostAllocationCounter() noexcept;
  // The allocations the calling thread made since construction (refused ones included).
  std::uint64_t count() const noexcept;

 private:
  std::uint64_t start_;
};

// While alive, every host allocation of the constructing thread fails.
class HostAllocationFails {
 public:
  HostAllocationFails() noexcept;
  ~HostAllocationFails();
  HostAllocationFails(const HostAllocationFails &) = delete;
  HostAllocationFails &operator=(const HostAllocationFails &) = delete;
  HostAllocationFails(HostAllocationFails &&) = delete;
  HostAllocationFails &operator=(HostAllocationFails &&) = delete;
};

// While alive, the constructing thread's nth host allocation from construction (1: the next)
// fails, and with `persists` every one after it too.
class NthHostAllocationFails {
 public:
  NthHostAllocationFails(std::uint64_t n, bool persists) noexcept;
  ~NthHostAllocationFails();
  NthHostAllocationFails(const NthHostAllocationFails &) = delete;
  NthHostAllocationFails &operator=(const NthHostAllocationFails &) = delete;
  NthHostAllocationFails(NthHostAllocationFails &&) = delete;
  NthHostAllocationFails &operator=(NthHostAllocationFails &&) = delete;
};

// The host allocations refused so far, over all threads.
std::uint64_t refused_host_allocations() noexcept;

}  // namespace replayrt::testing
