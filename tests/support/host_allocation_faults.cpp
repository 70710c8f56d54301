#include "support/host_allocation_faults.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace replayrt::testing {
namespace {

// Every allocation of the thread fails.
thread_local bool every_allocation_fails = false;
// The thread's allocations until the one that fails (1: the next); 0: none is armed.
thread_local std::uint64_t allocations_until_failure = 0;
// Whether every allocation after the armed one fails too.
thread_local bool failure_persists = false;
// The thread's allocations since it started.
thread_local std::uint64_t allocations_made = 0;
std::atomic<std::uint64_t> refused{0};

void *allocate_or_throw(std::size_t bytes) {
  ++allocations_made;
  const bool nth_fails = allocations_until_failure != 0 && --allocations_until_failure == 0;
  if (nth_fails && failure_persists) {
    every_allocation_fails = true;
  }
  if (every_allocation_fails || nth_fails) {
    refused.fetch_add(1, std::memory_order_relaxed);
    throw std::bad_alloc();
  }
  void *ptr = std::malloc(bytes == 0 ? 1 : bytes);
  if (ptr == nullptr) {
    throw std::bad_alloc();
  }
  return ptr;
}

void *allocate_or_null(std::size_t bytes) noexcept {
  try {
    return allocate_or_throw(bytes);
  } catch (const std::bad_alloc &) {
    return nullptr;
  }
}

}  // namespace

HostAllocationCounter::HostAllocationCounter() noexcept : start_(allocations_made) {}

std::uint64_t HostAllocationCounter::count() const noexcept {
  return allocations_made - start_;
}

HostAllocationFails::HostAllocationFails() noexcept {
  every_allocation_fails = true;
}

HostAllocationFails::~HostAllocationFails() {
  every_allocation_fails = false;
}

NthHostAllocationFails::NthHostAllocationFails(std::uint64_t n, bool persists) noexcept {
  allocations_until_failure = n;
  failure_persists = persists;
}

NthHostAllocationFails::~NthHostAllocationFails() {
  allocations_until_failure = 0;
  failure_persists = false;
  every_allocation_fails = false;
}

std::uint64_t refused_host_allocations() noexcept {
  return refused.load(std::memory_order_relaxed);
}

}  // namespace replayrt::testing

void *operator new(std::size_t bytes) {
  return replayrt::testing::allocate_or_throw(bytes);
}
void *operator new[](std::size_t bytes) {
  return replayrt::testing::allocate_or_throw(bytes);
}
void *operator new(std::size_t bytes, const std::nothrow_t & /*tag*/) noexcept {
  return replayrt::testing::allocate_or_null(bytes);
}
void *operator new[](std::size_t bytes, const std::nothrow_t & /*tag*/) noexcept {
  return replayrt::testing::allocate_or_null(bytes);
}
void operator delete(void *ptr) noexcept {
  std::free(ptr);
}
void operator delete[](void *ptr) noexcept {
  std::free(ptr);
}
void operator delete(void *ptr, std::size_t /*bytes*/) noexcept {
  std::free(ptr);
}
void operator delete[](void *ptr, std::size_t /*bytes*/) noexcept {
  std::free(ptr);
}
void operator delete(void *ptr, const std::nothrow_t & /*tag*/) noexcept {
  std::free(ptr);
}
void operator delete[](void *ptr, const std::nothrow_t & /*tag*/) noexcept {
  std::free(ptr);
}
