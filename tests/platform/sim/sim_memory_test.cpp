#include "platform/sim/sim_memory.h"

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace replayrt::sim {
namespace {

std::uintptr_t address(const void *ptr) {
  return reinterpret_cast<std::uintptr_t>(ptr);
}

TEST(SimMemoryTest, AllocationsAre1024AlignedAndDistinct) {
  SimMemory memory;
  std::set<void *> seen;
  for (const std::size_t bytes : {1u, 7u, 1024u, 1025u, 65536u}) {
    void *const ptr = memory.allocate(bytes);
    ASSERT_NE(ptr, nullptr);
    EXPECT_EQ(address(ptr) % SimMemory::kAlignment, 0u);
    EXPECT_TRUE(seen.insert(ptr).second);
  }
  for (void *ptr : seen) {
    EXPECT_TRUE(memory.free(ptr).is_ok());
  }
}

TEST(SimMemoryTest, ZeroByteAllocationReturnsNull) {
  SimMemory memory;
  EXPECT_EQ(memory.allocate(0), nullptr);
  EXPECT_EQ(memory.counters().allocation_calls, 0u);
}

TEST(SimMemoryTest, GenerationsAreUniqueAndNeverReused) {
  SimMemory memory(SimMemoryOptions{.quarantine_bytes = 0});
  std::set<std::uint64_t> generations;
  for (int i = 0; i < 32; ++i) {
    void *const ptr = memory.allocate(4096);
    const auto info = memory.find_allocation(ptr);
    ASSERT_TRUE(info.has_value());
    EXPECT_TRUE(generations.insert(info->generation).second);
    EXPECT_TRUE(memory.free(ptr).is_ok());
  }
}

TEST(SimMemoryTest, FindAllocationCoversInteriorAddressesOnly) {
  SimMemory memory;
  auto *const ptr = static_cast<std::byte *>(memory.allocate(3000));
  const auto base = memory.find_allocation(ptr);
  ASSERT_TRUE(base.has_value());
  EXPECT_EQ(base->base, address(ptr));
  EXPECT_EQ(base->size, 3072u);
  const auto interior = memory.find_allocation(ptr + 3071);
  ASSERT_TRUE(interior.has_value());
  EXPECT_EQ(interior->generation, base->generation);
  EXPECT_FALSE(memory.find_allocation(ptr + 3072).has_value());
  EXPECT_FALSE(memory.find_allocation(ptr - 1).has_value());
  EXPECT_TRUE(memory.is_live(ptr + 100, base->generation));
  EXPECT_FALSE(memory.is_live(ptr + 100, base->generation + 1));
  EXPECT_TRUE(memory.free(ptr).is_ok());
  EXPECT_FALSE(memory.is_live(ptr, base->generation));
}

TEST(SimMemoryTest, FreedMemoryIsPoisonedAndQuarantined) {
  SimMemory memory;
  auto *const ptr = static_cast<unsigned char *>(memory.allocate(2048));
  std::memset(ptr, 0x11, 2048);
  ASSERT_TRUE(memory.free(ptr).is_ok());
  EXPECT_EQ(memory.quarantined_bytes(), 2048u);
  // Quarantined memory is still host-allocated, so reading it here is defined.
  for (std::size_t i = 0; i < 2048; ++i) {
    ASSERT_EQ(ptr[i], SimMemory::kPoisonByte) << "byte " << i;
  }
  // While it is quarantined the address is not handed out again.
  std::vector<void *> later;
  for (int i = 0; i < 16; ++i) {
    later.push_back(memory.allocate(2048));
    EXPECT_NE(later.back(), ptr);
  }
  for (void *p : later) {
    EXPECT_TRUE(memory.free(p).is_ok());
  }
}

TEST(SimMemoryTest, QuarantineIsBoundedBySize) {
  SimMemory memory(SimMemoryOptions{.quarantine_bytes = 4096});
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(memory.free(memory.allocate(2048)).is_ok());
    EXPECT_LE(memory.quarantined_bytes(), 4096u);
  }
  EXPECT_EQ(memory.quarantined_bytes(), 4096u);
}

TEST(SimMemoryTest, DisabledQuarantineReturnsMemoryAtOnce) {
  SimMemory memory(SimMemoryOptions{.quarantine_bytes = 0});
  ASSERT_TRUE(memory.free(memory.allocate(2048)).is_ok());
  EXPECT_EQ(memory.quarantined_bytes(), 0u);
}

TEST(SimMemoryTest, DoubleFreeIsAnErrorThatChangesNothing) {
  SimMemory memory;
  void *const ptr = memory.allocate(1024);
  void *const other = memory.allocate(1024);
  ASSERT_TRUE(memory.free(ptr).is_ok());
  const MemoryCounters before = memory.counters();
  const Status second = memory.free(ptr);
  EXPECT_EQ(second.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(second.message().find("already freed"), std::string::npos) << second.message();
  const MemoryCounters after = memory.counters();
  EXPECT_EQ(after.free_calls, before.free_calls);
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_TRUE(memory.find_allocation(other).has_value());
  EXPECT_TRUE(memory.free(other).is_ok());
}

TEST(SimMemoryTest, FreeingUnknownOrInteriorPointersIsAnError) {
  SimMemory memory;
  auto *const ptr = static_cast<std::byte *>(memory.allocate(4096));
  int on_stack = 0;
  const Status unknown = memory.free(&on_stack);
  EXPECT_EQ(unknown.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(unknown.message().find("not a live device allocation"), std::string::npos);
  const Status interior = memory.free(ptr + 16);
  EXPECT_EQ(interior.code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(interior.message().find("not an allocation base"), std::string::npos);
  EXPECT_EQ(memory.free(nullptr).code(), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(memory.counters().free_calls, 0u);
  EXPECT_TRUE(memory.find_allocation(ptr).has_value());
  EXPECT_TRUE(memory.free(ptr).is_ok());
}

TEST(SimMemoryTest, CountersTrackCallsLiveAndPeakBytes) {
  SimMemory memory;
  void *const a = memory.allocate(1024);
  void *const b = memory.allocate(3000);
  EXPECT_EQ(memory.counters().live_bytes, 1024u + 3072u);
  ASSERT_TRUE(memory.free(a).is_ok());
  void *const c = memory.allocate(1024);
  const MemoryCounters counters = memory.counters();
  EXPECT_EQ(counters.allocation_calls, 3u);
  EXPECT_EQ(counters.free_calls, 1u);
  EXPECT_EQ(counters.live_bytes, 1024u + 3072u);
  EXPECT_EQ(counters.peak_live_bytes, 1024u + 3072u);
  ASSERT_TRUE(memory.free(b).is_ok());
  ASSERT_TRUE(memory.free(c).is_ok());
  EXPECT_EQ(memory.counters().live_bytes, 0u);
}

TEST(SimMemoryTest, CopiesRoundTripAndStayInsideOneAllocation) {
  SimMemory memory;
  auto *const device = static_cast<std::byte *>(memory.allocate(1024));
  auto *const device2 = static_cast<std::byte *>(memory.allocate(1024));
  std::vector<int> host(256);
  for (int i = 0; i < 256; ++i) {
    host[static_cast<std::size_t>(i)] = i;
  }
  ASSERT_TRUE(memory.copy_host_to_device(device, host.data(), 1024).is_ok());
  ASSERT_TRUE(memory.copy_device_to_device(device2, device, 1024).is_ok());
  std::vector<int> back(256, -1);
  ASSERT_TRUE(memory.copy_device_to_host(back.data(), device2, 1024).is_ok());
  EXPECT_EQ(back, host);
  ASSERT_TRUE(memory.memset(device2, 0, 1024).is_ok());
  ASSERT_TRUE(memory.copy_device_to_host(back.data(), device2, 4).is_ok());
  EXPECT_EQ(back[0], 0);

  EXPECT_EQ(memory.copy_host_to_device(device + 512, host.data(), 1024).code(),
            RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(memory.copy_device_to_host(back.data(), host.data(), 16).code(),
            RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(memory.memset(device + 1000, 0, 100).code(), RRT_ERR_INVALID_ARGUMENT);
  ASSERT_TRUE(memory.free(device).is_ok());
  EXPECT_EQ(memory.copy_host_to_device(device, host.data(), 16).code(), RRT_ERR_INVALID_ARGUMENT);
  ASSERT_TRUE(memory.free(device2).is_ok());
}

TEST(SimMemoryTest, ConcurrentAllocationAndFreeKeepTheTableConsistent) {
  SimMemory memory(SimMemoryOptions{.quarantine_bytes = 1 << 16});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&memory] {
      for (int i = 0; i < 500; ++i) {
        void *const ptr = memory.allocate(1024 + static_cast<std::size_t>(i % 7) * 512);
        ASSERT_NE(ptr, nullptr);
        ASSERT_TRUE(memory.find_allocation(ptr).has_value());
        ASSERT_TRUE(memory.free(ptr).is_ok());
      }
    });
  }
  for (std::thread &thread : threads) {
    thread.join();
  }
  const MemoryCounters counters = memory.counters();
  EXPECT_EQ(counters.allocation_calls, 2000u);
  EXPECT_EQ(counters.free_calls, 2000u);
  EXPECT_EQ(counters.live_bytes, 0u);
}

// A copy or memset racing a free of its block either fails (the block is gone when it is
// checked) or runs entirely before the free: with the quarantine off, the freed block goes back
// to the host allocator at once, so any byte touched after the free is a host use-after-free,
// which AddressSanitizer and ThreadSanitizer builds report.
TEST(SimMemoryTest, CopiesRacingAFreeNeverTouchTheFreedBlock) {
  SimMemory memory(SimMemoryOptions{.quarantine_bytes = 0});
  constexpr std::size_t kBytes = 4096;
  constexpr int kRounds = 2000;
  std::atomic<void *> current{nullptr};
  std::atomic<bool> done{false};
  std::thread copier([&] {
    std::vector<unsigned char> host(kBytes, 0x5A);
    while (!done.load(std::memory_order_acquire)) {
      void *const device = current.load(std::memory_order_acquire);
      if (device == nullptr) {
        continue;
      }
      for (const Status &status : {memory.copy_host_to_device(device, host.data(), kBytes),
                                   memory.copy_device_to_host(host.data(), device, kBytes),
                                   memory.copy_device_to_device(device, device, kBytes),
                                   memory.memset(device, 0x11, kBytes)}) {
        EXPECT_TRUE(status.is_ok() || status.code() == RRT_ERR_INVALID_ARGUMENT)
            << status.message();
      }
    }
  });
  for (int i = 0; i < kRounds; ++i) {
    void *const device = memory.allocate(kBytes);
    ASSERT_NE(device, nullptr);
    current.store(device, std::memory_order_release);
    std::this_thread::yield();
    current.store(nullptr, std::memory_order_release);
    ASSERT_TRUE(memory.free(device).is_ok());
  }
  done.store(true, std::memory_order_release);
  copier.join();
  EXPECT_EQ(memory.counters().live_bytes, 0u);
}

}  // namespace
}  // namespace replayrt::sim
