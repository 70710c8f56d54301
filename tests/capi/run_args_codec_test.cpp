// Decoding rrt_run_args_t into a RunArgsView: every tensor decoded, held inline or on the heap,
// and the structural errors refused.
#include "capi/run_args_codec.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/raw_enum.h"
#include "runtime/callable.h"

namespace replayrt::capi {
namespace {

std::vector<rrt_tensor_arg_t> tensors(std::size_t count, std::vector<float> *storage) {
  storage->assign(count, 0.0F);
  std::vector<rrt_tensor_arg_t> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = {&(*storage)[i], 4 * (i + 1), i % 2 == 0 ? RRT_SPACE_HOST : RRT_SPACE_DEVICE};
  }
  return out;
}

void expect_decoded(std::size_t count) {
  std::vector<float> storage;
  const std::vector<rrt_tensor_arg_t> given = tensors(count, &storage);
  const std::uint64_t scalars[2] = {7, 9};
  const rrt_run_args_t args{sizeof(rrt_run_args_t), static_cast<std::uint32_t>(count), given.data(),
                            2, scalars};
  DecodedRunArgs decoded;
  ASSERT_TRUE(decoded.decode(&args).is_ok());
  const RunArgsView view = decoded.view();
  ASSERT_EQ(view.tensors.size(), count);
  for (std::size_t i = 0; i < count; ++i) {
    EXPECT_EQ(view.tensors[i].addr, given[i].addr) << i;
    EXPECT_EQ(view.tensors[i].bytes, given[i].bytes) << i;
    EXPECT_EQ(view.tensors[i].space, given[i].space) << i;
  }
  ASSERT_EQ(view.scalars.size(), 2u);
  EXPECT_EQ(view.scalars.data(), scalars);
}

TEST(RunArgsCodecTest, TensorsHeldInlineDecodeAsGiven) {
  expect_decoded(0);
  expect_decoded(3);
  expect_decoded(DecodedRunArgs::kInlineTensors);
}

TEST(RunArgsCodecTest, MoreTensorsThanFitInlineDecodeAsGiven) {
  expect_decoded(DecodedRunArgs::kInlineTensors + 1);
  expect_decoded(Callable::kMaxParams);
}

void expect_refused(const rrt_run_args_t *args, const std::string &fragment) {
  DecodedRunArgs decoded;
  const Status status = decoded.decode(args);
  EXPECT_EQ(status.code(), RRT_ERR_INVALID_ARGUMENT) << fragment;
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
}

TEST(RunArgsCodecTest, StructuralErrorsAreRefused) {
  std::vector<float> storage;
  std::vector<rrt_tensor_arg_t> given = tensors(2, &storage);
  const std::uint64_t scalar = 1;
  expect_refused(nullptr, "args is null");
  rrt_run_args_t args{sizeof(rrt_run_args_t), 2, given.data(), 1, &scalar};
  rrt_run_args_t small = args;
  small.struct_size = sizeof(rrt_run_args_t) - 1;
  expect_refused(&small, "struct_size");
  rrt_run_args_t no_tensors = args;
  no_tensors.tensors = nullptr;
  expect_refused(&no_tensors, "args->tensors is null with num_tensors 2");
  rrt_run_args_t no_scalars = args;
  no_scalars.scalars = nullptr;
  expect_refused(&no_scalars, "args->scalars is null with num_scalars 1");
  rrt_run_args_t too_many = args;
  too_many.num_tensors = Callable::kMaxParams + 1;  // refused by its count, never read
  expect_refused(&too_many, "no callable takes more than 1024 tensors");
  store_raw_enum(&given[1].space, 2);
  expect_refused(&args, "tensor 1: unknown address space 2");
}

}  // namespace
}  // namespace replayrt::capi
