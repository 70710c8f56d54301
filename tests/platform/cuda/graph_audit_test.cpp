#include "platform/cuda/graph_audit.h"

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace replayrt::cuda {
namespace {

constexpr std::uintptr_t kBase = 0x7f0000100000;

struct HiddenPointer {
  int flag;
  int pad;
  const float *data;  // a pointer inside a by-value struct
  std::uint64_t count;
};

class GraphAuditTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(table_.insert(kBase, 4096, false, &generation_).is_ok()); }
  AllocationTable table_{0};
  std::uint64_t generation_ = 0;
  std::vector<CapturedAddress> found_;
  AuditCounts counts_;
};

TEST_F(GraphAuditTest, APointerInsideAByValueStructIsFound) {
  const HiddenPointer params{1, 0, reinterpret_cast<const float *>(kBase + 64), 256};
  std::vector<std::byte> blob(sizeof params);
  std::memcpy(blob.data(), &params, sizeof params);
  const KernelParameter whole{0, sizeof params};
  scan_kernel_parameters(blob, std::span(&whole, 1), table_, &found_, &counts_);
  ASSERT_EQ(found_.size(), 1U);
  EXPECT_EQ(found_[0].address, kBase + 64);
  EXPECT_EQ(found_[0].base, kBase);
  EXPECT_EQ(found_[0].generation, generation_);
  EXPECT_EQ(counts_.words_scanned, 3U);
}

TEST_F(GraphAuditTest, UntrackedAndUnalignedWordsAreNotRecorded) {
  std::vector<std::byte> blob(24);
  const std::uint64_t untracked = kBase + 8192;
  const std::uint64_t tracked = kBase + 8;
  std::memcpy(blob.data(), &untracked, 8);
  std::memcpy(blob.data() + 12, &tracked, 8);  // straddles two aligned words
  const KernelParameter whole{0, blob.size()};
  scan_kernel_parameters(blob, std::span(&whole, 1), table_, &found_, &counts_);
  EXPECT_TRUE(found_.empty());
}

TEST_F(GraphAuditTest, OnlyTheDeclaredParametersAreScannedAndNeverPastTheBlob) {
  std::vector<std::byte> blob(32);
  const std::uint64_t tracked = kBase;
  std::memcpy(blob.data(), &tracked, 8);
  std::memcpy(blob.data() + 24, &tracked, 8);
  const KernelParameter parameters[] = {{8, 8}, {24, 64}, {100, 8}};
  scan_kernel_parameters(blob, parameters, table_, &found_, &counts_);
  ASSERT_EQ(found_.size(), 1U) << "the first word lies in no parameter";
  EXPECT_EQ(counts_.words_scanned, 2U);
}

TEST_F(GraphAuditTest, UndeclaredAllocationsAreReported) {
  std::uint64_t other = 0;
  ASSERT_TRUE(table_.insert(kBase + 8192, 4096, false, &other).is_ok());
  const std::vector<CapturedAddress> declared = {{kBase + 4, kBase, generation_}};
  const std::vector<CapturedAddress> audited = {{kBase + 100, kBase, generation_},
                                                {kBase + 8200, kBase + 8192, other}};
  EXPECT_EQ(first_undeclared(std::span(audited).first(1), declared), 1U)
      << "another address in a declared allocation is covered";
  EXPECT_EQ(first_undeclared(audited, declared), 1U);
}

TEST_F(GraphAuditTest, DeduplicateKeepsOneOfEachAddress) {
  std::vector<CapturedAddress> addresses = {{kBase + 8, kBase, generation_},
                                            {kBase, kBase, generation_},
                                            {kBase + 8, kBase, generation_}};
  deduplicate(&addresses);
  ASSERT_EQ(addresses.size(), 2U);
  EXPECT_EQ(addresses[0].address, kBase);
}

}  // namespace
}  // namespace replayrt::cuda
