// The C ABI under host out-of-memory: this program replaces the global operator new, so that
// while a thread has allocation failure switched on every allocation it makes (in the library
// too) throws std::bad_alloc. A call that runs out of host memory returns the documented code
// and records its last-error detail without allocating; nothing terminates.
#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

namespace {

thread_local bool allocation_fails = false;
std::atomic<int> refused_allocations{0};

void *allocate_or_throw(std::size_t bytes) {
  if (allocation_fails) {
    refused_allocations.fetch_add(1, std::memory_order_relaxed);
    throw std::bad_alloc();
  }
  void *ptr = std::malloc(bytes == 0 ? 1 : bytes);
  if (ptr == nullptr) {
    throw std::bad_alloc();
  }
  return ptr;
}

// Switches allocation failure on for the calling thread for its lifetime.
class HostAllocationFails {
 public:
  HostAllocationFails() { allocation_fails = true; }
  ~HostAllocationFails() { allocation_fails = false; }
  HostAllocationFails(const HostAllocationFails &) = delete;
  HostAllocationFails &operator=(const HostAllocationFails &) = delete;
  HostAllocationFails(HostAllocationFails &&) = delete;
  HostAllocationFails &operator=(HostAllocationFails &&) = delete;
};

TEST(HostOutOfMemoryTest, ContextCreateReportsInternalWithoutTerminating) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_SIM;
  rrt_context_t ctx = nullptr;
  const int refused_before = refused_allocations.load();
  rrt_status_t status = RRT_OK;
  {
    const HostAllocationFails failing;
    status = rrt_context_create(&options, &ctx);
  }
  EXPECT_EQ(status, RRT_ERR_INTERNAL);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_GT(refused_allocations.load(), refused_before);
  rrt_error_detail_t detail{};
  EXPECT_EQ(rrt_last_error(&detail), RRT_ERR_INTERNAL);
  EXPECT_EQ(std::string(detail.message), "rrt_context_create: host out of memory");
}

TEST(HostOutOfMemoryTest, TheLibraryWorksOnceMemoryIsBack) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_SIM;
  rrt_context_t ctx = nullptr;
  {
    const HostAllocationFails failing;
    EXPECT_EQ(rrt_context_create(&options, &ctx), RRT_ERR_INTERNAL);
  }
  ASSERT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

}  // namespace

void *operator new(std::size_t bytes) {
  return allocate_or_throw(bytes);
}
void *operator new[](std::size_t bytes) {
  return allocate_or_throw(bytes);
}
void *operator new(std::size_t bytes, const std::nothrow_t & /*tag*/) noexcept {
  try {
    return allocate_or_throw(bytes);
  } catch (const std::bad_alloc &) {
    return nullptr;
  }
}
void *operator new[](std::size_t bytes, const std::nothrow_t & /*tag*/) noexcept {
  try {
    return allocate_or_throw(bytes);
  } catch (const std::bad_alloc &) {
    return nullptr;
  }
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
