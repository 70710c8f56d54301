#include "platform/launch/invocation_header.h"

#include <array>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "common/execution_mode.h"

namespace replayrt {
namespace {

std::vector<std::uint64_t> blob(std::size_t tensors, std::size_t scalars, InvocationHeader header) {
  const std::size_t bytes = invocation_bytes(tensors, scalars);
  std::vector<std::uint64_t> words(bytes / 8, 0);
  header.payload_bytes = bytes - sizeof(InvocationHeader);
  header.tensor_count = static_cast<std::int32_t>(tensors);
  header.scalar_count = static_cast<std::int32_t>(scalars);
  std::memcpy(words.data(), &header, sizeof header);
  return words;
}

Status decode(const std::vector<std::uint64_t> &words, InvocationHeader *header,
              InvocationPayloadView *payload) {
  return decode_invocation(reinterpret_cast<const std::byte *>(words.data()), words.size() * 8,
                           header, payload);
}

TEST(InvocationHeaderTest, LayoutIsPinned) {
  EXPECT_EQ(sizeof(InvocationHeader), 40u);
  EXPECT_EQ(offsetof(InvocationHeader, generation), 8u);
  EXPECT_EQ(offsetof(InvocationHeader, host_copy_tensor_count), 32u);
  EXPECT_EQ(invocation_bytes(0, 0), 40u + 24u);
  EXPECT_EQ(invocation_bytes(3, 2), 40u + 8u * (3 + 6 + 2));
}

TEST(InvocationHeaderTest, AnAllZeroHeaderReadsAsProgramWithZeroCounts) {
  const std::array<std::byte, sizeof(InvocationHeader)> zeros{};
  InvocationHeader header;
  header.mode = 1;
  header.tensor_count = 5;
  std::memcpy(&header, zeros.data(), sizeof header);
  EXPECT_EQ(header.mode, static_cast<std::uint32_t>(ExecutionMode::kProgram));
  EXPECT_EQ(header.tensor_count, 0);
  EXPECT_EQ(header.scalar_count, 0);
}

TEST(InvocationHeaderTest, RoundTripsEveryFieldAndThePayload) {
  InvocationHeader header{};
  header.mode = 1;
  header.callable_id = 7;
  header.generation = 0x1122334455667788ULL;
  std::vector<std::uint64_t> words = blob(2, 1, header);
  words[5] = 0xAAAA;  // image
  words[6] = 0xBBBB;  // task timings
  words[7] = 0xCCCC;  // device-wall record
  words[8] = 0x1000;  // tensor 0
  words[9] = 0x2000;  // tensor 1
  words[10] = 64;     // bytes 0
  words[11] = 128;    // bytes 1
  words[12] = 99;     // scalar 0
  InvocationHeader decoded;
  InvocationPayloadView payload;
  ASSERT_TRUE(decode(words, &decoded, &payload).is_ok());
  EXPECT_EQ(decoded.mode, 1u);
  EXPECT_EQ(decoded.callable_id, 7);
  EXPECT_EQ(decoded.generation, header.generation);
  EXPECT_EQ(payload.image_address, 0xAAAAu);
  EXPECT_EQ(payload.timings_address, 0xBBBBu);
  EXPECT_EQ(payload.wall_address, 0xCCCCu);
  ASSERT_EQ(payload.tensor_addresses.size(), 2u);
  EXPECT_EQ(payload.tensor_addresses[1], 0x2000u);
  EXPECT_EQ(payload.tensor_bytes[1], 128u);
  ASSERT_EQ(payload.scalars.size(), 1u);
  EXPECT_EQ(payload.scalars[0], 99u);
}

TEST(InvocationHeaderTest, RejectsMalformedHeaders) {
  InvocationHeader decoded;
  InvocationPayloadView payload;
  const auto rejects = [&](const std::vector<std::uint64_t> &words, const char *fragment) {
    const Status status = decode(words, &decoded, &payload);
    EXPECT_EQ(status.code(), RRT_ERR_KERNEL_FAILED);
    EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
  };
  InvocationHeader reserved{};
  reserved.reserved = 1;
  rejects(blob(0, 0, reserved), "reserved");
  InvocationHeader host_copy{};
  host_copy.host_copy_tensor_count = 1;
  rejects(blob(0, 0, host_copy), "host_copy_tensor_count");
  InvocationHeader mode{};
  mode.mode = 2;
  rejects(blob(0, 0, mode), "mode");
  std::vector<std::uint64_t> short_payload = blob(2, 0, InvocationHeader{});
  short_payload.pop_back();
  rejects(short_payload, "does not match");
  EXPECT_EQ(decode_invocation(nullptr, 0, &decoded, &payload).code(), RRT_ERR_KERNEL_FAILED);
}

}  // namespace
}  // namespace replayrt
