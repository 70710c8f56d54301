// Validation at the C ABI, through the public shared library only. Every exported function
// rejects bad input with the code the header documents, records the calling thread's
// last-error detail (a message that starts with the function's name), writes no
// out-parameter, and leaves every state the API lets a caller observe as it was: the context
// statistics, the latched mode, the handles it holds, and the results of the work that follows.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <replayrt/replayrt.h>

#include <gtest/gtest.h>

#include "abi_queries.h"

namespace {

using replayrt::testing::last_error;
using replayrt::testing::last_message;
using replayrt::testing::stats_of;

constexpr std::uint32_t kElements = 4;
constexpr std::uint64_t kTensorBytes = kElements * sizeof(float);
constexpr float kFactor = 3.0F;
constexpr std::int32_t kSentinelId = -7777;
constexpr std::uintptr_t kSentinelAddress = 0x5e7715e7;
// Bytes one staged HOST tensor takes from retained staging at the least.
constexpr std::uint64_t kStagingSlice = 1024;

// The sizes of the first published versioned structs: each ends with the field named here.
// A struct_size below them is too small; fields appended later leave them unchanged.
constexpr std::uint32_t kContextOptionsV1Bytes =
    offsetof(rrt_context_options_t, device_workers) + sizeof(std::uint32_t);
constexpr std::uint32_t kKernelConfigV1Bytes =
    offsetof(rrt_kernel_config_t, capacity) + sizeof(rrt_capacity_plan_t);
constexpr std::uint32_t kCallableDescV1Bytes =
    offsetof(rrt_callable_desc_t, tasks) + sizeof(const rrt_task_desc_t *);
constexpr std::uint32_t kRunArgsV1Bytes =
    offsetof(rrt_run_args_t, scalars) + sizeof(const std::uint64_t *);
constexpr std::uint32_t kStatsV1Bytes =
    offsetof(rrt_stats_t, regions) + sizeof(rrt_stats_t::regions);

// An out-parameter value no successful call writes: a rejected call must leave it in place.
template <class Handle>
Handle sentinel() {
  return reinterpret_cast<Handle>(kSentinelAddress);
}

// Stores `value` into an enum field the way a C caller can: as a raw 32-bit integer, which may
// lie outside the enumeration.
template <class Enum>
void store_raw(Enum *field, std::int32_t value) {
  static_assert(sizeof(Enum) == sizeof value);
  std::memcpy(field, &value, sizeof value);
}

// Records a failure of some function other than `function`, so that a detail left over from an
// earlier call of `function` cannot pass for the one under test.
void record_unrelated_failure(std::string_view function) {
  if (function == "rrt_graph_destroy") {
    (void)rrt_stream_destroy(nullptr);
  } else {
    (void)rrt_graph_destroy(nullptr);
  }
}

// Runs `call` and checks that it returns `expected` and records exactly that failure as this
// thread's last error: the same code, a message "<function>: <reason>", and no growth point.
template <class Call>
::testing::AssertionResult rejects(Call call, rrt_status_t expected, std::string_view function) {
  record_unrelated_failure(function);
  const rrt_status_t status = call();
  if (status != expected) {
    return ::testing::AssertionFailure() << function << " returned " << rrt_status_name(status)
                                         << ", expected " << rrt_status_name(expected);
  }
  const rrt_error_detail_t detail = last_error();
  const std::string message = detail.message;
  const std::string prefix = std::string(function) + ": ";
  if (detail.code != expected) {
    return ::testing::AssertionFailure()
           << "last error code " << rrt_status_name(detail.code) << " (" << message << ")";
  }
  if (message.rfind(prefix, 0) != 0 || message.size() == prefix.size()) {
    return ::testing::AssertionFailure()
           << "last error message \"" << message << "\" does not start with \"" << prefix
           << "\" followed by a reason";
  }
  if (detail.growth_point != RRT_GROWTH_NONE || detail.requested_bytes != 0 ||
      detail.capacity_bytes != 0) {
    return ::testing::AssertionFailure()
           << "a non-refusal carries growth point " << detail.growth_point << ": " << message;
  }
  return ::testing::AssertionSuccess() << message;
}

// EXPECT_REJECTED(code, rrt_function, args...): the call fails with `code` and records it.
#define EXPECT_REJECTED(code, function, ...) \
  EXPECT_TRUE(rejects([&] { return (function)(__VA_ARGS__); }, (code), #function))

rrt_context_options_t sim_options() {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_SIM;
  options.device_id = 0;
  options.device_workers = 1;
  return options;
}

rrt_context_t create_context() {
  const rrt_context_options_t options = sim_options();
  rrt_context_t ctx = nullptr;
  EXPECT_EQ(rrt_context_create(&options, &ctx), RRT_OK);
  return ctx;
}

rrt_kernel_config_t kernel_config(const rrt_capacity_plan_t &plan) {
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  config.context_generation = 0;  // the runtime picks a process-unique one
  config.capacity = plan;
  return config;
}

std::int32_t kernel_id(rrt_context_t ctx, const char *name) {
  std::int32_t id = kSentinelId;
  EXPECT_EQ(rrt_kernel_lookup(ctx, name, &id), RRT_OK) << name;
  return id;
}

// Every counter of `stats`, in a fixed order, for comparing two snapshots.
std::vector<std::uint64_t> counters_of(const rrt_stats_t &stats) {
  std::vector<std::uint64_t> counters = {stats.device_alloc_calls,
                                         stats.device_free_calls,
                                         stats.live_bytes,
                                         stats.peak_bytes,
                                         stats.launches,
                                         stats.replays,
                                         stats.stale_address_refusals};
  for (int i = 0; i < RRT_GROWTH_POINT_COUNT; ++i) {
    const rrt_region_stats_t &region = stats.regions[i];
    counters.insert(counters.end(), {stats.refusals[i], region.capacity_bytes, region.used_bytes,
                                     region.base_changes});
  }
  return counters;
}

// The object representation of `stats`, padding included.
std::vector<unsigned char> bytes_of(const rrt_stats_t &stats) {
  std::vector<unsigned char> bytes(sizeof stats);
  std::memcpy(bytes.data(), &stats, sizeof stats);
  return bytes;
}

rrt_tensor_desc_t f32_vector(std::uint64_t elements, rrt_direction_t direction) {
  rrt_tensor_desc_t desc{};
  desc.dtype = RRT_DTYPE_F32;
  desc.ndim = 1;
  desc.shape[0] = elements;
  desc.direction = direction;
  return desc;
}

// out = in * factor over kElements floats: one "scale" task; the factor is run scalar 0.
// The descriptor points into the object, which therefore neither copies nor moves.
struct ScaleCallable {
  explicit ScaleCallable(std::int32_t scale_kernel) {
    params[0] = f32_vector(kElements, RRT_DIR_IN);
    params[1] = f32_vector(kElements, RRT_DIR_OUT);
    operands[0] = {RRT_OPERAND_PARAM, 0};
    operands[1] = {RRT_OPERAND_PARAM, 1};
    operands[2] = {RRT_OPERAND_SCALAR, 0};
    task = {scale_kernel, 3, operands};
    desc.struct_size = sizeof desc;
    desc.bind = RRT_BIND_DEVICE_BUILD;
    desc.num_params = 2;
    desc.params = params;
    desc.num_scalars = 1;
    desc.num_tasks = 1;
    desc.tasks = &task;
  }
  ScaleCallable(const ScaleCallable &) = delete;
  ScaleCallable &operator=(const ScaleCallable &) = delete;

  rrt_tensor_desc_t params[2]{};
  rrt_operand_t operands[3]{};
  rrt_task_desc_t task{};
  rrt_callable_desc_t desc{};
};

// out = in * kFactor over `elements` floats through one intermediate: "scale" writes the
// intermediate (the factor an immediate), "copy" moves it to the output. Its gm_heap need
// grows with `elements`. Neither copies nor moves.
struct StagedScaleCallable {
  StagedScaleCallable(std::int32_t scale_kernel, std::int32_t copy_kernel, std::uint64_t elements) {
    params[0] = f32_vector(elements, RRT_DIR_IN);
    params[1] = f32_vector(elements, RRT_DIR_OUT);
    intermediate = f32_vector(elements, RRT_DIR_INOUT);
    scale_operands[0] = {RRT_OPERAND_PARAM, 0};
    scale_operands[1] = {RRT_OPERAND_INTERMEDIATE, 0};
    scale_operands[2] = {RRT_OPERAND_IMMEDIATE,
                         static_cast<std::uint32_t>(rrt_scalar_from_f32(kFactor))};
    copy_operands[0] = {RRT_OPERAND_INTERMEDIATE, 0};
    copy_operands[1] = {RRT_OPERAND_PARAM, 1};
    tasks[0] = {scale_kernel, 3, scale_operands};
    tasks[1] = {copy_kernel, 2, copy_operands};
    desc.struct_size = sizeof desc;
    desc.bind = RRT_BIND_DEVICE_BUILD;
    desc.num_params = 2;
    desc.params = params;
    desc.num_intermediates = 1;
    desc.intermediates = &intermediate;
    desc.num_tasks = 2;
    desc.tasks = tasks;
  }
  StagedScaleCallable(const StagedScaleCallable &) = delete;
  StagedScaleCallable &operator=(const StagedScaleCallable &) = delete;

  rrt_tensor_desc_t params[2]{};
  rrt_tensor_desc_t intermediate{};
  rrt_operand_t scale_operands[3]{};
  rrt_operand_t copy_operands[2]{};
  rrt_task_desc_t tasks[2]{};
  rrt_callable_desc_t desc{};
};

int succeeding_kernel(const rrt_kernel_args_t * /*args*/, void * /*user*/) {
  return 0;
}

std::vector<float> input_values() {
  return {1.0F, -2.0F, 0.5F, 4.0F};
}

std::vector<float> scaled(const std::vector<float> &values) {
  std::vector<float> out;
  out.reserve(values.size());
  for (const float value : values) {
    out.push_back(value * kFactor);
  }
  return out;
}

// A caller device allocation of kTensorBytes, holding `values`.
void *device_buffer(rrt_context_t ctx, const std::vector<float> &values) {
  void *ptr = nullptr;
  EXPECT_EQ(rrt_device_alloc(ctx, kTensorBytes, &ptr), RRT_OK);
  EXPECT_EQ(rrt_memcpy_h2d(ctx, ptr, values.data(), kTensorBytes, nullptr), RRT_OK);
  return ptr;
}

std::vector<float> read_device(rrt_context_t ctx, const void *ptr) {
  std::vector<float> values(kElements, 0.0F);
  EXPECT_EQ(rrt_memcpy_d2h(ctx, values.data(), ptr, kTensorBytes, nullptr), RRT_OK);
  return values;
}

// Checks that the last error is a kernel-mode capacity refusal by `function` at `point`: code
// RRT_ERR_INTERNAL, the frozen `capacity`, a request above it, a message naming the function.
::testing::AssertionResult refused_at(std::string_view function, rrt_growth_point_t point,
                                      std::uint64_t capacity) {
  const rrt_error_detail_t detail = last_error();
  const std::string message = detail.message;
  if (detail.code != RRT_ERR_INTERNAL || detail.growth_point != point) {
    return ::testing::AssertionFailure()
           << "last error " << rrt_status_name(detail.code) << " at growth point "
           << detail.growth_point << ": " << message;
  }
  if (detail.capacity_bytes != capacity || detail.requested_bytes <= capacity) {
    return ::testing::AssertionFailure()
           << "refusal requests " << detail.requested_bytes << " bytes of a frozen "
           << detail.capacity_bytes << ", expected more than " << capacity << " of " << capacity;
  }
  if (message.rfind(std::string(function) + ": ", 0) != 0) {
    return ::testing::AssertionFailure() << "message does not name " << function << ": " << message;
  }
  return ::testing::AssertionSuccess() << message;
}

// A mode-less sim context. TearDown destroys it, which fails unless the test destroyed every
// stream, event, graph and run it created.
class AbiContextTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (ctx_ != nullptr) {
      EXPECT_EQ(rrt_context_destroy(ctx_), RRT_OK) << last_message();
    }
  }

  rrt_context_t ctx_ = create_context();
};

class AbiProgramContextTest : public AbiContextTest {
 protected:
  void SetUp() override { ASSERT_EQ(rrt_program_init(ctx_), RRT_OK); }
};

// A program context with the scale callable prepared, and HOST run arguments for it.
class AbiProgramRunTest : public AbiProgramContextTest {
 protected:
  void SetUp() override {
    AbiProgramContextTest::SetUp();
    ASSERT_EQ(rrt_callable_prepare(ctx_, &callable_.desc, &callable_id_), RRT_OK);
  }

  // rrt_run with fresh HOST tensors computes the scaled input.
  void expect_runs_correctly() {
    const std::vector<float> in = input_values();
    std::vector<float> out(kElements, 0.0F);
    const rrt_tensor_arg_t tensors[2] = {
        {const_cast<float *>(in.data()), kTensorBytes, RRT_SPACE_HOST},
        {out.data(), kTensorBytes, RRT_SPACE_HOST}};
    rrt_run_args_t args = args_;
    args.tensors = tensors;
    ASSERT_EQ(rrt_run(ctx_, callable_id_, &args), RRT_OK) << last_message();
    EXPECT_EQ(out, scaled(in));
  }

  // Both pipeline slots are free: two runs prepare side by side.
  void expect_both_slots_free() {
    rrt_run_t first = nullptr;
    rrt_run_t second = nullptr;
    ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &first), RRT_OK) << last_message();
    EXPECT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &second), RRT_OK) << last_message();
    EXPECT_EQ(rrt_run_finalize(first), RRT_OK);
    if (second != nullptr) {
      EXPECT_EQ(rrt_run_finalize(second), RRT_OK);
    }
  }

  // rrt_run_prepare of `args` fails with `expected`, writes no run and changes nothing: the
  // counters stay, both slots stay free, and the callable still runs correctly.
  void expect_run_prepare_rejects(const rrt_run_args_t &args, rrt_status_t expected) {
    const rrt_stats_t before = stats_of(ctx_);
    auto run = sentinel<rrt_run_t>();
    EXPECT_TRUE(rejects([&] { return rrt_run_prepare(ctx_, callable_id_, &args, &run); }, expected,
                        "rrt_run_prepare"));
    EXPECT_EQ(run, sentinel<rrt_run_t>());
    EXPECT_EQ(counters_of(stats_of(ctx_)), counters_of(before));
    expect_both_slots_free();
    expect_runs_correctly();
  }

  ScaleCallable callable_{kernel_id(ctx_, "scale")};
  std::int32_t callable_id_ = kSentinelId;
  std::vector<float> in_ = input_values();
  std::vector<float> out_ = std::vector<float>(kElements, 0.0F);
  rrt_tensor_arg_t tensors_[2] = {{in_.data(), kTensorBytes, RRT_SPACE_HOST},
                                  {out_.data(), kTensorBytes, RRT_SPACE_HOST}};
  std::uint64_t scalars_[1] = {rrt_scalar_from_f32(kFactor)};
  rrt_run_args_t args_ = {sizeof(rrt_run_args_t), 2, tensors_, 1, scalars_};
};

// A kernel-mode context planned for the scale callable (rrt_capacity_plan_fit), which it
// prepared; a stream; and DEVICE run arguments in caller allocations.
class AbiKernelLaunchTest : public AbiContextTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(rrt_capacity_plan_fit(&callable_.desc, &plan_), RRT_OK);
    const rrt_kernel_config_t config = kernel_config(plan_);
    ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK) << last_message();
    ASSERT_EQ(rrt_callable_prepare(ctx_, &callable_.desc, &callable_id_), RRT_OK) << last_message();
    ASSERT_EQ(rrt_stream_create(ctx_, &stream_), RRT_OK);
    in_ = device_buffer(ctx_, input_values());
    out_ = device_buffer(ctx_, std::vector<float>(kElements, 0.0F));
    tensors_[0] = {in_, kTensorBytes, RRT_SPACE_DEVICE};
    tensors_[1] = {out_, kTensorBytes, RRT_SPACE_DEVICE};
  }

  void TearDown() override {
    for (void *buffer : {in_, out_}) {
      if (buffer != nullptr) {
        EXPECT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
      }
    }
    if (stream_ != nullptr) {
      EXPECT_EQ(rrt_stream_destroy(stream_), RRT_OK);
    }
    AbiContextTest::TearDown();
  }

  // A launch with the fixture's arguments computes the scaled input.
  void expect_launches_correctly() {
    const std::vector<float> zeros(kElements, 0.0F);
    ASSERT_EQ(rrt_memcpy_h2d(ctx_, out_, zeros.data(), kTensorBytes, nullptr), RRT_OK);
    ASSERT_EQ(rrt_kernel_launch(ctx_, callable_id_, &args_, stream_), RRT_OK) << last_message();
    ASSERT_EQ(rrt_stream_synchronize(stream_), RRT_OK) << last_message();
    EXPECT_EQ(read_device(ctx_, out_), scaled(input_values()));
  }

  // rrt_kernel_launch of `args` fails with `expected`, enqueues and counts nothing, and the
  // next valid launch computes the right output.
  void expect_launch_rejects(const rrt_run_args_t &args, rrt_status_t expected) {
    const rrt_stats_t before = stats_of(ctx_);
    EXPECT_TRUE(rejects([&] { return rrt_kernel_launch(ctx_, callable_id_, &args, stream_); },
                        expected, "rrt_kernel_launch"));
    EXPECT_EQ(counters_of(stats_of(ctx_)), counters_of(before));
    expect_launches_correctly();
  }

  ScaleCallable callable_{kernel_id(ctx_, "scale")};
  rrt_capacity_plan_t plan_{};
  std::int32_t callable_id_ = kSentinelId;
  rrt_stream_t stream_ = nullptr;
  void *in_ = nullptr;
  void *out_ = nullptr;
  rrt_tensor_arg_t tensors_[2]{};
  std::uint64_t scalars_[1] = {rrt_scalar_from_f32(kFactor)};
  rrt_run_args_t args_ = {sizeof(rrt_run_args_t), 2, tensors_, 1, scalars_};
};

// ---- status names and the last error ----------------------------------------------------

TEST(AbiStatusNameTest, IsNeverNullAndNamesUnknownCodesUnknown) {
  for (const rrt_status_t code : {1, -1, -999, -1011, INT32_MIN, INT32_MAX}) {
    const char *name = rrt_status_name(code);
    ASSERT_NE(name, nullptr);
    EXPECT_STREQ(name, "RRT_ERR_UNKNOWN");
  }
}

TEST(AbiLastErrorTest, AThreadWithoutFailuresSeesOkAndAnEmptyMessage) {
  rrt_error_detail_t detail{};
  std::thread fresh([&detail] {
    std::memset(&detail, 0x5a, sizeof detail);
    (void)rrt_last_error(&detail);
  });
  fresh.join();
  EXPECT_EQ(detail.code, RRT_OK);
  EXPECT_EQ(detail.growth_point, RRT_GROWTH_NONE);
  EXPECT_STREQ(detail.message, "");
}

TEST(AbiLastErrorTest, NullOutIsInvalidArgumentAndKeepsTheRecordedDetail) {
  ASSERT_EQ(rrt_program_init(nullptr), RRT_ERR_INVALID_ARGUMENT);
  const std::string recorded = last_message();
  EXPECT_EQ(rrt_last_error(nullptr), RRT_ERR_INVALID_ARGUMENT);
  const rrt_error_detail_t detail = last_error();
  EXPECT_EQ(detail.code, RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(detail.message), recorded);
  EXPECT_EQ(recorded.rfind("rrt_program_init: ", 0), 0U) << recorded;
}

TEST(AbiLastErrorTest, ReturnsTheFailingCodeAndAMessageThatStartsWithTheFunction) {
  ASSERT_EQ(rrt_run_prepare(nullptr, 0, nullptr, nullptr), RRT_ERR_INVALID_ARGUMENT);
  rrt_error_detail_t detail{};
  EXPECT_EQ(rrt_last_error(&detail), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(detail.code, RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(detail.growth_point, RRT_GROWTH_NONE);
  EXPECT_EQ(detail.requested_bytes, 0U);
  EXPECT_EQ(detail.capacity_bytes, 0U);
  EXPECT_EQ(std::string(detail.message).rfind("rrt_run_prepare: ", 0), 0U) << detail.message;
}

TEST(AbiLastErrorTest, ASuccessfulCallDoesNotClearIt) {
  ASSERT_EQ(rrt_device_alloc(nullptr, 16, nullptr), RRT_ERR_INVALID_ARGUMENT);
  const std::string recorded = last_message();
  rrt_context_t ctx = create_context();
  ASSERT_EQ(rrt_program_init(ctx), RRT_OK);
  ASSERT_EQ(rrt_context_destroy(ctx), RRT_OK);
  rrt_error_detail_t detail{};
  EXPECT_EQ(rrt_last_error(&detail), RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(detail.message), recorded);
}

TEST(AbiLastErrorTest, IsPerThread) {
  ASSERT_EQ(rrt_stream_create(nullptr, nullptr), RRT_ERR_INVALID_ARGUMENT);
  const std::string mine = last_message();
  rrt_error_detail_t theirs{};
  std::thread other([&theirs] {
    (void)rrt_context_finalize(nullptr);
    (void)rrt_last_error(&theirs);
  });
  other.join();
  EXPECT_EQ(theirs.code, RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(theirs.message).rfind("rrt_context_finalize: ", 0), 0U);
  EXPECT_EQ(last_message(), mine);
  EXPECT_EQ(mine.rfind("rrt_stream_create: ", 0), 0U) << mine;
}

// ---- context creation ------------------------------------------------------------------

TEST(AbiContextCreateTest, RejectsNullOptionsAndNullOut) {
  const rrt_context_options_t options = sim_options();
  auto ctx = sentinel<rrt_context_t>();
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_create, nullptr, &ctx);
  EXPECT_EQ(ctx, sentinel<rrt_context_t>());
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_create, &options, nullptr);
}

TEST(AbiContextCreateTest, RejectsAStructSizeSmallerThanTheOptions) {
  for (const std::uint32_t size : {0U, kContextOptionsV1Bytes - 1}) {
    rrt_context_options_t options = sim_options();
    options.struct_size = size;
    auto ctx = sentinel<rrt_context_t>();
    EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_create, &options, &ctx);
    EXPECT_NE(last_message().find("struct_size"), std::string::npos) << last_message();
    EXPECT_EQ(ctx, sentinel<rrt_context_t>());
  }
}

TEST(AbiContextCreateTest, AcceptsALargerStructSize) {
  struct {
    rrt_context_options_t options;
    std::uint64_t appended_field;
  } newer{};
  newer.options = sim_options();
  newer.options.struct_size = sizeof newer;
  newer.appended_field = ~std::uint64_t{0};
  rrt_context_t ctx = nullptr;
  ASSERT_EQ(rrt_context_create(&newer.options, &ctx), RRT_OK) << last_message();
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

TEST(AbiContextCreateTest, RejectsAnUnknownPlatform) {
  for (const std::int32_t platform : {2, 7, -1}) {
    rrt_context_options_t options = sim_options();
    store_raw(&options.platform, platform);
    auto ctx = sentinel<rrt_context_t>();
    EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_create, &options, &ctx);
    EXPECT_EQ(ctx, sentinel<rrt_context_t>());
  }
}

TEST(AbiContextCreateTest, RejectsANegativeDeviceId) {
  rrt_context_options_t options = sim_options();
  options.device_id = -1;
  auto ctx = sentinel<rrt_context_t>();
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_create, &options, &ctx);
  EXPECT_EQ(ctx, sentinel<rrt_context_t>());
}

TEST(AbiContextCreateTest, RejectsTooManyDeviceWorkers) {
  rrt_context_options_t options = sim_options();
  options.device_workers = 65;
  auto ctx = sentinel<rrt_context_t>();
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_create, &options, &ctx);
  EXPECT_EQ(ctx, sentinel<rrt_context_t>());
  options.device_workers = 0xffffffffU;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_create, &options, &ctx);
  EXPECT_EQ(ctx, sentinel<rrt_context_t>());
}

TEST(AbiContextCreateTest, KernelModeSupportedIsZeroForNull) {
  EXPECT_EQ(rrt_kernel_mode_supported(nullptr), 0);
  rrt_context_t ctx = create_context();
  EXPECT_EQ(rrt_kernel_mode_supported(ctx), 1);
  EXPECT_EQ(rrt_context_destroy(ctx), RRT_OK);
}

// ---- context lifecycle -----------------------------------------------------------------

TEST(AbiContextLifecycleTest, NullContextIsRejectedByEveryContextCall) {
  const rrt_kernel_config_t config = kernel_config({});
  rrt_mode_t mode = RRT_MODE_KERNEL;
  int latched = -1;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_program_init, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_init, nullptr, &config);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_mode, nullptr, &mode, &latched);
  EXPECT_EQ(mode, RRT_MODE_KERNEL);
  EXPECT_EQ(latched, -1);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_finalize, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_destroy, nullptr);
}

TEST_F(AbiContextTest, ContextModeRejectsNullOutputsAndWritesNeither) {
  rrt_mode_t mode = RRT_MODE_KERNEL;
  int latched = -1;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_mode, ctx_, nullptr, &latched);
  EXPECT_EQ(latched, -1);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_mode, ctx_, &mode, nullptr);
  EXPECT_EQ(mode, RRT_MODE_KERNEL);
  ASSERT_EQ(rrt_context_mode(ctx_, &mode, &latched), RRT_OK);
  EXPECT_EQ(latched, 0);
}

TEST_F(AbiContextTest, WorkBeforeInitIsInvalidStateAndLatchesNothing) {
  ScaleCallable callable(kernel_id(ctx_, "scale"));
  std::int32_t id = kSentinelId;
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_callable_prepare, ctx_, &callable.desc, &id);
  EXPECT_EQ(id, kSentinelId);

  std::vector<float> in = input_values();
  std::vector<float> out(kElements, 0.0F);
  const rrt_tensor_arg_t tensors[2] = {{in.data(), kTensorBytes, RRT_SPACE_HOST},
                                       {out.data(), kTensorBytes, RRT_SPACE_HOST}};
  const std::uint64_t scalars[1] = {rrt_scalar_from_f32(kFactor)};
  const rrt_run_args_t args = {sizeof(rrt_run_args_t), 2, tensors, 1, scalars};
  auto run = sentinel<rrt_run_t>();
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_run_prepare, ctx_, 0, &args, &run);
  EXPECT_EQ(run, sentinel<rrt_run_t>());
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_run, ctx_, 0, &args);

  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_kernel_launch, ctx_, 0, &args, stream);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_stream_begin_capture, stream);
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);

  rrt_mode_t mode = RRT_MODE_KERNEL;
  int latched = -1;
  ASSERT_EQ(rrt_context_mode(ctx_, &mode, &latched), RRT_OK);
  EXPECT_EQ(latched, 0);
  EXPECT_EQ(stats_of(ctx_).launches, 0U);
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  ASSERT_EQ(rrt_callable_prepare(ctx_, &callable.desc, &id), RRT_OK);
  EXPECT_EQ(rrt_run(ctx_, id, &args), RRT_OK) << last_message();
  EXPECT_EQ(out, scaled(in));
}

TEST_F(AbiContextTest, KernelInitRejectsANullOrShortConfigAndLeavesTheContextReusable) {
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_init, ctx_, nullptr);
  for (const std::uint32_t size : {0U, kKernelConfigV1Bytes - 1}) {
    rrt_kernel_config_t config = kernel_config({});
    config.struct_size = size;
    EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_init, ctx_, &config);
    EXPECT_NE(last_message().find("struct_size"), std::string::npos) << last_message();
  }
  rrt_mode_t mode = RRT_MODE_KERNEL;
  int latched = -1;
  ASSERT_EQ(rrt_context_mode(ctx_, &mode, &latched), RRT_OK);
  EXPECT_EQ(latched, 0);
  const rrt_kernel_config_t config = kernel_config({});
  ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK) << last_message();
  ASSERT_EQ(rrt_context_mode(ctx_, &mode, &latched), RRT_OK);
  EXPECT_EQ(latched, 1);
  EXPECT_EQ(mode, RRT_MODE_KERNEL);
}

TEST_F(AbiContextTest, KernelInitRejectsAContextGenerationAlreadyUsedInTheProcess) {
  rrt_kernel_config_t config = kernel_config({});
  config.context_generation = 0xab2000;  // explicit, and claimed by no other test
  rrt_context_t first = create_context();
  ASSERT_EQ(rrt_kernel_init(first, &config), RRT_OK) << last_message();
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_init, ctx_, &config);
  rrt_mode_t mode = RRT_MODE_KERNEL;
  int latched = -1;
  ASSERT_EQ(rrt_context_mode(ctx_, &mode, &latched), RRT_OK);
  EXPECT_EQ(latched, 0);
  const rrt_kernel_config_t fresh = kernel_config({});
  EXPECT_EQ(rrt_kernel_init(ctx_, &fresh), RRT_OK) << last_message();
  EXPECT_EQ(rrt_context_destroy(first), RRT_OK);
}

TEST_F(AbiContextTest, KernelInitAcceptsALargerStructSize) {
  struct {
    rrt_kernel_config_t config;
    std::uint64_t appended_field;
  } newer{};
  newer.config = kernel_config({});
  newer.config.struct_size = sizeof newer;
  newer.appended_field = ~std::uint64_t{0};
  EXPECT_EQ(rrt_kernel_init(ctx_, &newer.config), RRT_OK) << last_message();
}

TEST_F(AbiContextTest, KernelInitAfterProgramInitIsInvalidState) {
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  const rrt_stats_t before = stats_of(ctx_);
  const rrt_kernel_config_t config = kernel_config({4096, 4096, 4096, 4096, 0, 0});
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_kernel_init, ctx_, &config);
  EXPECT_EQ(counters_of(stats_of(ctx_)), counters_of(before));
  rrt_mode_t mode = RRT_MODE_KERNEL;
  int latched = -1;
  ASSERT_EQ(rrt_context_mode(ctx_, &mode, &latched), RRT_OK);
  EXPECT_EQ(latched, 1);
  EXPECT_EQ(mode, RRT_MODE_PROGRAM);
  EXPECT_EQ(rrt_program_init(ctx_), RRT_OK);
}

TEST_F(AbiContextTest, ProgramInitAfterKernelInitIsInvalidState) {
  const rrt_kernel_config_t config = kernel_config({4096, 4096, 4096, 4096, 0, 0});
  ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK) << last_message();
  const rrt_stats_t before = stats_of(ctx_);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_program_init, ctx_);
  EXPECT_EQ(counters_of(stats_of(ctx_)), counters_of(before));
  rrt_mode_t mode = RRT_MODE_PROGRAM;
  int latched = -1;
  ASSERT_EQ(rrt_context_mode(ctx_, &mode, &latched), RRT_OK);
  EXPECT_EQ(latched, 1);
  EXPECT_EQ(mode, RRT_MODE_KERNEL);
}

TEST_F(AbiContextTest, ASecondKernelInitIsInvalidStateAndChangesNothing) {
  const rrt_kernel_config_t config = kernel_config({4096, 4096, 4096, 4096, 0, 0});
  ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK) << last_message();
  const rrt_stats_t before = stats_of(ctx_);
  const rrt_kernel_config_t larger = kernel_config({8192, 8192, 8192, 8192, 0, 0});
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_kernel_init, ctx_, &larger);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_kernel_init, ctx_, &config);
  EXPECT_EQ(counters_of(stats_of(ctx_)), counters_of(before));
  EXPECT_EQ(stats_of(ctx_).regions[RRT_GROWTH_ARENA_GM_HEAP].capacity_bytes, 4096U);
}

TEST_F(AbiContextTest, ProgramInitIsIdempotent) {
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  EXPECT_EQ(rrt_program_init(ctx_), RRT_OK);
  rrt_mode_t mode = RRT_MODE_KERNEL;
  int latched = -1;
  ASSERT_EQ(rrt_context_mode(ctx_, &mode, &latched), RRT_OK);
  EXPECT_EQ(latched, 1);
  EXPECT_EQ(mode, RRT_MODE_PROGRAM);
}

// A kernel init whose plan the device cannot hold poisons the context: every call but
// finalize, destroy, mode and stats is then RRT_ERR_INVALID_STATE. Streams and events made
// before the init can still be destroyed, since destroy requires that none is alive.
TEST_F(AbiContextTest, AFailedKernelInitLeavesNothingAllocatedAndTheContextReusable) {
  // Every region but the last stages first; the last one cannot be allocated.
  rrt_kernel_config_t config =
      kernel_config({4096, 4096, 4096, 4096, 4096, std::uint64_t{1} << 41});
  // An explicit generation no other test claims: the failed init must give it back.
  config.context_generation = 0xab1000;
  const rrt_stats_t before = stats_of(ctx_);
  EXPECT_REJECTED(RRT_ERR_OUT_OF_MEMORY, rrt_kernel_init, ctx_, &config);
  const rrt_stats_t after = stats_of(ctx_);
  EXPECT_EQ(after.live_bytes, 0U);
  EXPECT_EQ(after.device_alloc_calls, after.device_free_calls);
  EXPECT_GT(after.device_alloc_calls, before.device_alloc_calls);
  for (int point = 0; point < RRT_GROWTH_POINT_COUNT; ++point) {
    EXPECT_EQ(after.regions[point].capacity_bytes, 0U) << point;
  }
  rrt_mode_t mode = RRT_MODE_PROGRAM;
  int latched = -1;
  EXPECT_EQ(rrt_context_mode(ctx_, &mode, &latched), RRT_OK);
  EXPECT_EQ(latched, 0);

  // The same generation is accepted again, and the context works.
  config.capacity = rrt_capacity_plan_t{};
  ScaleCallable callable(kernel_id(ctx_, "scale"));
  ASSERT_EQ(rrt_capacity_plan_fit(&callable.desc, &config.capacity), RRT_OK);
  ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK) << last_message();
  std::int32_t id = kSentinelId;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &callable.desc, &id), RRT_OK) << last_message();
  EXPECT_EQ(rrt_context_mode(ctx_, &mode, &latched), RRT_OK);
  EXPECT_EQ(latched, 1);
  EXPECT_EQ(mode, RRT_MODE_KERNEL);
}

TEST_F(AbiProgramContextTest, DestroyIsInvalidStateWhileAStreamIsAlive) {
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_context_destroy, ctx_);
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  ASSERT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

TEST_F(AbiProgramContextTest, DestroyIsInvalidStateWhileAnEventIsAlive) {
  rrt_event_t event = nullptr;
  ASSERT_EQ(rrt_event_create(ctx_, &event), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_context_destroy, ctx_);
  EXPECT_EQ(rrt_event_synchronize(event), RRT_OK);
  ASSERT_EQ(rrt_event_destroy(event), RRT_OK);
}

TEST_F(AbiProgramContextTest, DestroyIsInvalidStateWhileAGraphIsAlive) {
  rrt_stream_t stream = nullptr;
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  ASSERT_EQ(rrt_stream_destroy(stream), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_context_destroy, ctx_);
  ASSERT_EQ(rrt_graph_destroy(graph), RRT_OK);
}

TEST_F(AbiProgramRunTest, DestroyIsInvalidStateWhileARunIsAlive) {
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &run), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_context_destroy, ctx_);
  ASSERT_EQ(rrt_run_launch(run, nullptr), RRT_OK);
  ASSERT_EQ(rrt_run_wait(run), RRT_OK);
  EXPECT_EQ(out_, scaled(in_));
  ASSERT_EQ(rrt_run_finalize(run), RRT_OK);
}

// ---- caller device memory ----------------------------------------------------------------

TEST_F(AbiProgramContextTest, DeviceAllocRejectsNullArgumentsAndZeroBytes) {
  const rrt_stats_t before = stats_of(ctx_);
  auto *ptr = sentinel<void *>();
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_device_alloc, nullptr, kTensorBytes, &ptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_device_alloc, ctx_, kTensorBytes, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_device_alloc, ctx_, 0, &ptr);
  EXPECT_EQ(ptr, sentinel<void *>());
  EXPECT_EQ(counters_of(stats_of(ctx_)), counters_of(before));
}

TEST_F(AbiProgramContextTest, DeviceAllocBeyondTheDeviceIsOutOfMemory) {
  auto *ptr = sentinel<void *>();
  EXPECT_REJECTED(RRT_ERR_OUT_OF_MEMORY, rrt_device_alloc, ctx_, SIZE_MAX, &ptr);
  EXPECT_EQ(ptr, sentinel<void *>());
}

TEST_F(AbiProgramContextTest, DeviceFreeRejectsNullArguments) {
  void *buffer = device_buffer(ctx_, input_values());
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_device_free, nullptr, buffer);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_device_free, ctx_, nullptr);
  EXPECT_EQ(read_device(ctx_, buffer), input_values());
  EXPECT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
}

TEST_F(AbiProgramContextTest, DeviceFreeRejectsPointersThatDeviceAllocDidNotReturn) {
  void *buffer = device_buffer(ctx_, input_values());
  rrt_context_t other = create_context();
  void *foreign = device_buffer(other, input_values());
  std::vector<float> host(kElements);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_device_free, ctx_, host.data());
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_device_free, ctx_,
                  static_cast<std::byte *>(buffer) + sizeof(float));
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_device_free, ctx_, foreign);
  EXPECT_EQ(read_device(ctx_, buffer), input_values());
  EXPECT_EQ(read_device(other, foreign), input_values());
  EXPECT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
  EXPECT_EQ(rrt_device_free(other, foreign), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(other), RRT_OK);
}

TEST_F(AbiProgramContextTest, DeviceFreeRejectsASecondFree) {
  void *buffer = device_buffer(ctx_, input_values());
  ASSERT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_device_free, ctx_, buffer);
}

TEST_F(AbiProgramContextTest, MemcpyRejectsNullArguments) {
  void *buffer = device_buffer(ctx_, input_values());
  std::vector<float> host(kElements, 9.0F);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_memcpy_h2d, nullptr, buffer, host.data(),
                  kTensorBytes, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_memcpy_h2d, ctx_, nullptr, host.data(),
                  kTensorBytes, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_memcpy_h2d, ctx_, buffer, nullptr, kTensorBytes,
                  nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_memcpy_d2h, nullptr, host.data(), buffer,
                  kTensorBytes, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_memcpy_d2h, ctx_, nullptr, buffer, kTensorBytes,
                  nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_memcpy_d2h, ctx_, host.data(), nullptr,
                  kTensorBytes, nullptr);
  EXPECT_EQ(host, std::vector<float>(kElements, 9.0F));
  EXPECT_EQ(read_device(ctx_, buffer), input_values());
  EXPECT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
}

// Synchronous and stream-ordered copies alike check their device range at the call.
TEST_F(AbiProgramContextTest, MemcpyRejectsADeviceRangeOutsideOneLiveAllocation) {
  void *buffer = nullptr;
  ASSERT_EQ(rrt_device_alloc(ctx_, 1024, &buffer), RRT_OK);
  const std::vector<float> values = input_values();
  ASSERT_EQ(rrt_memcpy_h2d(ctx_, buffer, values.data(), kTensorBytes, nullptr), RRT_OK);
  void *freed = device_buffer(ctx_, values);
  ASSERT_EQ(rrt_device_free(ctx_, freed), RRT_OK);
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  std::vector<float> host(kElements, 9.0F);
  std::vector<float> not_device(kElements, 7.0F);
  void *past_end = static_cast<std::byte *>(buffer) + 1024 - sizeof(float);

  for (const rrt_stream_t on : {static_cast<rrt_stream_t>(nullptr), stream}) {
    SCOPED_TRACE(on == nullptr ? "synchronous" : "on a stream");
    for (void *device : {static_cast<void *>(not_device.data()), past_end, freed}) {
      EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_memcpy_h2d, ctx_, device, host.data(),
                      kTensorBytes, on);
      EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_memcpy_d2h, ctx_, host.data(), device,
                      kTensorBytes, on);
    }
  }
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK) << last_message();
  EXPECT_EQ(host, std::vector<float>(kElements, 9.0F));
  EXPECT_EQ(not_device, std::vector<float>(kElements, 7.0F));
  EXPECT_EQ(read_device(ctx_, buffer), values);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
  EXPECT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
}

TEST_F(AbiProgramContextTest, MemcpyRejectsAStreamOfAnotherContext) {
  void *buffer = device_buffer(ctx_, input_values());
  rrt_context_t other = create_context();
  rrt_stream_t foreign = nullptr;
  ASSERT_EQ(rrt_stream_create(other, &foreign), RRT_OK);
  std::vector<float> host(kElements, 9.0F);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_memcpy_h2d, ctx_, buffer, host.data(), kTensorBytes,
                  foreign);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_memcpy_d2h, ctx_, host.data(), buffer, kTensorBytes,
                  foreign);
  EXPECT_EQ(rrt_stream_synchronize(foreign), RRT_OK);
  EXPECT_EQ(host, std::vector<float>(kElements, 9.0F));
  EXPECT_EQ(read_device(ctx_, buffer), input_values());
  EXPECT_EQ(rrt_stream_destroy(foreign), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(other), RRT_OK);
  EXPECT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
}

// ---- streams, events, capture and replay --------------------------------------------------

TEST_F(AbiProgramContextTest, StreamAndEventCreateRejectNullArguments) {
  auto stream = sentinel<rrt_stream_t>();
  auto event = sentinel<rrt_event_t>();
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_stream_create, nullptr, &stream);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_stream_create, ctx_, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_event_create, nullptr, &event);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_event_create, ctx_, nullptr);
  EXPECT_EQ(stream, sentinel<rrt_stream_t>());
  EXPECT_EQ(event, sentinel<rrt_event_t>());
}

TEST_F(AbiProgramContextTest, StreamEventAndGraphCallsRejectNullHandles) {
  rrt_stream_t stream = nullptr;
  rrt_event_t event = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  ASSERT_EQ(rrt_event_create(ctx_, &event), RRT_OK);
  auto graph = sentinel<rrt_graph_t>();
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_stream_destroy, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_stream_synchronize, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_event_record, nullptr, stream);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_event_record, event, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_stream_wait_event, nullptr, event);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_stream_wait_event, stream, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_event_synchronize, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_event_destroy, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_stream_begin_capture, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_stream_end_capture, nullptr, &graph);
  EXPECT_EQ(graph, sentinel<rrt_graph_t>());
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_graph_replay, nullptr, stream);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_graph_destroy, nullptr);
  EXPECT_EQ(rrt_event_record(event, stream), RRT_OK);
  EXPECT_EQ(rrt_event_synchronize(event), RRT_OK);
  EXPECT_EQ(rrt_event_destroy(event), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

TEST_F(AbiProgramContextTest, EventCallsRejectAStreamOfAnotherContext) {
  rrt_event_t event = nullptr;
  ASSERT_EQ(rrt_event_create(ctx_, &event), RRT_OK);
  rrt_context_t other = create_context();
  rrt_stream_t foreign = nullptr;
  ASSERT_EQ(rrt_stream_create(other, &foreign), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_event_record, event, foreign);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_stream_wait_event, foreign, event);
  EXPECT_EQ(rrt_stream_synchronize(foreign), RRT_OK);
  EXPECT_EQ(rrt_event_synchronize(event), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(foreign), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(other), RRT_OK);
  EXPECT_EQ(rrt_event_destroy(event), RRT_OK);
}

TEST_F(AbiProgramContextTest, SynchronizingACapturingStreamIsInvalidState) {
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_stream_synchronize, stream);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

TEST_F(AbiProgramContextTest, BeginningACaptureTwiceIsInvalidStateAndKeepsTheFirst) {
  void *buffer = device_buffer(ctx_, std::vector<float>(kElements, 0.0F));
  const std::vector<float> values = input_values();
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  ASSERT_EQ(rrt_memcpy_h2d(ctx_, buffer, values.data(), kTensorBytes, stream), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_stream_begin_capture, stream);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  EXPECT_EQ(read_device(ctx_, buffer), std::vector<float>(kElements, 0.0F));
  ASSERT_EQ(rrt_graph_replay(graph, stream), RRT_OK);
  ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  EXPECT_EQ(read_device(ctx_, buffer), values);
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
  EXPECT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
}

TEST_F(AbiProgramContextTest, EndingACaptureThatWasNotBegunIsInvalidState) {
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  auto graph = sentinel<rrt_graph_t>();
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_stream_end_capture, stream, &graph);
  EXPECT_EQ(graph, sentinel<rrt_graph_t>());
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

TEST_F(AbiProgramContextTest, EndCaptureWithANullOutKeepsCapturing) {
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_stream_end_capture, stream, nullptr);
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_ERR_INVALID_STATE);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

TEST_F(AbiProgramContextTest, DestroyingACapturingStreamIsInvalidState) {
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_stream_destroy, stream);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

TEST_F(AbiProgramContextTest, ReplayOnACapturingStreamIsInvalidState) {
  rrt_stream_t stream = nullptr;
  rrt_stream_t capturing = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  ASSERT_EQ(rrt_stream_create(ctx_, &capturing), RRT_OK);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  ASSERT_EQ(rrt_stream_begin_capture(capturing), RRT_OK);
  const std::uint64_t replays = stats_of(ctx_).replays;
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_graph_replay, graph, capturing);
  EXPECT_EQ(stats_of(ctx_).replays, replays);
  rrt_graph_t nested = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(capturing, &nested), RRT_OK);
  EXPECT_EQ(rrt_graph_replay(graph, capturing), RRT_OK);
  EXPECT_EQ(rrt_stream_synchronize(capturing), RRT_OK);
  EXPECT_EQ(rrt_graph_destroy(nested), RRT_OK);
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(capturing), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

TEST_F(AbiProgramContextTest, ReplayRejectsAStreamOfAnotherContext) {
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  rrt_context_t other = create_context();
  ASSERT_EQ(rrt_program_init(other), RRT_OK);
  rrt_stream_t foreign = nullptr;
  ASSERT_EQ(rrt_stream_create(other, &foreign), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_graph_replay, graph, foreign);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_graph_replay, graph, nullptr);
  EXPECT_EQ(stats_of(ctx_).replays, 0U);
  EXPECT_EQ(stats_of(other).replays, 0U);
  EXPECT_EQ(rrt_stream_destroy(foreign), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(other), RRT_OK);
  EXPECT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

TEST_F(AbiProgramContextTest, EventDestroyIsInvalidStateWhileAGraphRecordsIt) {
  rrt_stream_t stream = nullptr;
  rrt_event_t event = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  ASSERT_EQ(rrt_event_create(ctx_, &event), RRT_OK);
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  ASSERT_EQ(rrt_event_record(event, stream), RRT_OK);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_event_destroy, event);
  ASSERT_EQ(rrt_graph_replay(graph, stream), RRT_OK);
  EXPECT_EQ(rrt_event_synchronize(event), RRT_OK);
  ASSERT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(rrt_event_destroy(event), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

TEST_F(AbiProgramContextTest, EventDestroyIsInvalidStateWhileACaptureInProgressWaitsOnIt) {
  rrt_stream_t stream = nullptr;
  rrt_event_t event = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  ASSERT_EQ(rrt_event_create(ctx_, &event), RRT_OK);
  ASSERT_EQ(rrt_stream_begin_capture(stream), RRT_OK);
  ASSERT_EQ(rrt_stream_wait_event(stream, event), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_event_destroy, event);
  rrt_graph_t graph = nullptr;
  ASSERT_EQ(rrt_stream_end_capture(stream, &graph), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_event_destroy, event);
  ASSERT_EQ(rrt_graph_replay(graph, stream), RRT_OK);
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  ASSERT_EQ(rrt_graph_destroy(graph), RRT_OK);
  EXPECT_EQ(rrt_event_destroy(event), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

// ---- kernels -----------------------------------------------------------------------------

TEST_F(AbiProgramContextTest, KernelRegisterRejectsNullArguments) {
  std::int32_t id = kSentinelId;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_register, nullptr, "mine", succeeding_kernel,
                  nullptr, &id);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_register, ctx_, nullptr, succeeding_kernel,
                  nullptr, &id);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_register, ctx_, "mine", nullptr, nullptr,
                  &id);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_register, ctx_, "mine", succeeding_kernel,
                  nullptr, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_register, ctx_, "", succeeding_kernel,
                  nullptr, &id);
  EXPECT_EQ(id, kSentinelId);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_lookup, ctx_, "mine", &id);
  EXPECT_EQ(rrt_kernel_register(ctx_, "mine", succeeding_kernel, nullptr, &id), RRT_OK);
  EXPECT_EQ(kernel_id(ctx_, "mine"), id);
}

TEST_F(AbiProgramContextTest, KernelRegisterRejectsANameRegisteredBefore) {
  const std::int32_t scale = kernel_id(ctx_, "scale");
  std::int32_t id = kSentinelId;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_register, ctx_, "scale", succeeding_kernel,
                  nullptr, &id);
  EXPECT_EQ(id, kSentinelId);
  EXPECT_EQ(kernel_id(ctx_, "scale"), scale);

  std::int32_t mine = kSentinelId;
  ASSERT_EQ(rrt_kernel_register(ctx_, "mine", succeeding_kernel, nullptr, &mine), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_register, ctx_, "mine", succeeding_kernel,
                  nullptr, &id);
  EXPECT_EQ(id, kSentinelId);
  EXPECT_EQ(kernel_id(ctx_, "mine"), mine);
}

TEST_F(AbiProgramContextTest, KernelLookupRejectsNullArgumentsAndUnknownNames) {
  std::int32_t id = kSentinelId;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_lookup, nullptr, "scale", &id);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_lookup, ctx_, nullptr, &id);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_lookup, ctx_, "scale", nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_lookup, ctx_, "no such kernel", &id);
  EXPECT_EQ(id, kSentinelId);
}

// ---- capacity plans and callables ---------------------------------------------------------

class AbiCallableTest : public AbiProgramContextTest {
 protected:
  // rrt_callable_prepare of `desc` fails with `expected` and writes no id; the context still
  // prepares the valid callable, which runs correctly.
  void expect_prepare_rejects(const rrt_callable_desc_t &desc,
                              rrt_status_t expected = RRT_ERR_INVALID_ARGUMENT) {
    const rrt_stats_t before = stats_of(ctx_);
    std::int32_t id = kSentinelId;
    EXPECT_TRUE(rejects([&] { return rrt_callable_prepare(ctx_, &desc, &id); }, expected,
                        "rrt_callable_prepare"));
    EXPECT_EQ(id, kSentinelId);
    EXPECT_EQ(counters_of(stats_of(ctx_)), counters_of(before));
    expect_valid_callable_runs();
  }

  void expect_valid_callable_runs() {
    const ScaleCallable valid(scale_);
    std::int32_t id = kSentinelId;
    ASSERT_EQ(rrt_callable_prepare(ctx_, &valid.desc, &id), RRT_OK) << last_message();
    std::vector<float> in = input_values();
    std::vector<float> out(kElements, 0.0F);
    const rrt_tensor_arg_t tensors[2] = {{in.data(), kTensorBytes, RRT_SPACE_HOST},
                                         {out.data(), kTensorBytes, RRT_SPACE_HOST}};
    const std::uint64_t scalars[1] = {rrt_scalar_from_f32(kFactor)};
    const rrt_run_args_t args = {sizeof(rrt_run_args_t), 2, tensors, 1, scalars};
    ASSERT_EQ(rrt_run(ctx_, id, &args), RRT_OK) << last_message();
    EXPECT_EQ(out, scaled(in));
  }

  std::int32_t scale_ = kernel_id(ctx_, "scale");
  ScaleCallable callable_{scale_};
};

TEST_F(AbiCallableTest, CapacityPlanFitRejectsNullArgumentsAndLeavesThePlan) {
  rrt_capacity_plan_t plan = {1, 2, 3, 4, 5, 6};
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_capacity_plan_fit, nullptr, &plan);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_capacity_plan_fit, &callable_.desc, nullptr);
  callable_.desc.struct_size = kCallableDescV1Bytes - 1;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_capacity_plan_fit, &callable_.desc, &plan);
  EXPECT_NE(last_message().find("struct_size"), std::string::npos) << last_message();
  EXPECT_EQ(plan.gm_heap_bytes, 1U);
  EXPECT_EQ(plan.gm_sm_bytes, 2U);
  EXPECT_EQ(plan.runtime_pool_bytes, 3U);
  EXPECT_EQ(plan.retained_staging_bytes, 4U);
  EXPECT_EQ(plan.graph_definition_bytes, 5U);
  EXPECT_EQ(plan.host_staging_bytes, 6U);
}

TEST_F(AbiCallableTest, CapacityPlanFitRejectsAnInvalidDescriptorAndLeavesThePlan) {
  rrt_capacity_plan_t plan = {1, 2, 3, 4, 5, 6};
  callable_.operands[1].index = 2;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_capacity_plan_fit, &callable_.desc, &plan);
  EXPECT_EQ(plan.gm_sm_bytes, 2U);
  EXPECT_EQ(plan.runtime_pool_bytes, 3U);
  EXPECT_EQ(plan.retained_staging_bytes, 4U);
}

TEST_F(AbiCallableTest, CapacityPlanFitAllRejectsNullArgumentsAndNamesTheBadEntry) {
  const ScaleCallable valid(scale_);
  rrt_capacity_plan_t plan = {1, 2, 3, 4, 5, 6};
  const rrt_callable_desc_t *const with_null[2] = {&valid.desc, nullptr};
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_capacity_plan_fit_all, with_null, 2, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_capacity_plan_fit_all, nullptr, 1, &plan);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_capacity_plan_fit_all, with_null, 2, &plan);
  EXPECT_NE(last_message().find("descs[1]"), std::string::npos) << last_message();
  callable_.desc.struct_size = 4;
  const rrt_callable_desc_t *const with_short[2] = {&valid.desc, &callable_.desc};
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_capacity_plan_fit_all, with_short, 2, &plan);
  EXPECT_NE(last_message().find("descs[1]"), std::string::npos) << last_message();
  EXPECT_NE(last_message().find("struct_size"), std::string::npos) << last_message();
  EXPECT_EQ(plan.runtime_pool_bytes, 3U);
  EXPECT_EQ(plan.retained_staging_bytes, 4U);
  EXPECT_EQ(rrt_capacity_plan_fit_all(nullptr, 0, &plan), RRT_OK);
  EXPECT_EQ(plan.runtime_pool_bytes, 3U);
}

TEST_F(AbiCallableTest, PrepareRejectsNullArguments) {
  std::int32_t id = kSentinelId;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_callable_prepare, nullptr, &callable_.desc, &id);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_callable_prepare, ctx_, nullptr, &id);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_callable_prepare, ctx_, &callable_.desc, nullptr);
  EXPECT_EQ(id, kSentinelId);
  expect_valid_callable_runs();
}

TEST_F(AbiCallableTest, PrepareRejectsAStructSizeSmallerThanTheDescriptor) {
  callable_.desc.struct_size = kCallableDescV1Bytes - 1;
  expect_prepare_rejects(callable_.desc);
  callable_.desc.struct_size = 0;
  expect_prepare_rejects(callable_.desc);
  EXPECT_NE(last_message().find("struct_size"), std::string::npos) << last_message();
}

TEST_F(AbiCallableTest, PrepareAcceptsALargerStructSize) {
  struct {
    rrt_callable_desc_t desc;
    std::uint64_t appended_field;
  } newer{};
  newer.desc = callable_.desc;
  newer.desc.struct_size = sizeof newer;
  newer.appended_field = ~std::uint64_t{0};
  std::int32_t id = kSentinelId;
  EXPECT_EQ(rrt_callable_prepare(ctx_, &newer.desc, &id), RRT_OK) << last_message();
  EXPECT_NE(id, kSentinelId);
}

TEST_F(AbiCallableTest, PrepareRejectsAnUnknownBindStrategy) {
  for (const std::int32_t bind : {2, -1, 100}) {
    store_raw(&callable_.desc.bind, bind);
    expect_prepare_rejects(callable_.desc);
  }
}

TEST_F(AbiCallableTest, PrepareRejectsAnUnknownDtype) {
  for (const std::int32_t dtype : {6, 7, 99, -1}) {
    store_raw(&callable_.params[0].dtype, dtype);
    expect_prepare_rejects(callable_.desc);
  }
}

TEST_F(AbiCallableTest, PrepareRejectsAnUnknownParamDirection) {
  for (const std::int32_t direction : {3, 42, -1}) {
    store_raw(&callable_.params[1].direction, direction);
    expect_prepare_rejects(callable_.desc);
  }
}

TEST_F(AbiCallableTest, PrepareRejectsAnUnknownOperandKind) {
  for (const std::int32_t kind : {4, 1000, -1}) {
    store_raw(&callable_.operands[2].kind, kind);
    expect_prepare_rejects(callable_.desc);
  }
}

TEST_F(AbiCallableTest, PrepareRejectsAParamIndexOutOfRange) {
  callable_.operands[1].index = 2;
  expect_prepare_rejects(callable_.desc);
}

TEST_F(AbiCallableTest, PrepareRejectsAnIntermediateIndexOutOfRange) {
  callable_.operands[1] = {RRT_OPERAND_INTERMEDIATE, 0};
  expect_prepare_rejects(callable_.desc);
}

TEST_F(AbiCallableTest, PrepareRejectsAScalarIndexOutOfRange) {
  callable_.operands[2].index = 1;
  expect_prepare_rejects(callable_.desc);
}

TEST_F(AbiCallableTest, PrepareRejectsAnUnregisteredKernel) {
  for (const std::int32_t kernel : {-1, 4096, 12345}) {
    callable_.task.kernel_id = kernel;
    expect_prepare_rejects(callable_.desc);
  }
}

TEST_F(AbiCallableTest, PrepareRejectsAnOperandCountTheKernelDoesNotTake) {
  callable_.task.num_operands = 2;
  expect_prepare_rejects(callable_.desc);
}

TEST_F(AbiCallableTest, PrepareRejectsACallableWithoutTasks) {
  callable_.desc.num_tasks = 0;
  expect_prepare_rejects(callable_.desc);
  callable_.desc.num_tasks = 1;
  callable_.desc.tasks = nullptr;
  expect_prepare_rejects(callable_.desc);
}

TEST_F(AbiCallableTest, PrepareRejectsNullArraysWithNonzeroCounts) {
  callable_.desc.params = nullptr;
  expect_prepare_rejects(callable_.desc);
  callable_.desc.params = callable_.params;
  callable_.desc.num_intermediates = 1;
  expect_prepare_rejects(callable_.desc);
  callable_.desc.num_intermediates = 0;
  callable_.task.operands = nullptr;
  expect_prepare_rejects(callable_.desc);
}

TEST_F(AbiCallableTest, PrepareRejectsAMalformedTensorShape) {
  callable_.params[0].ndim = RRT_MAX_DIMS + 1;
  expect_prepare_rejects(callable_.desc);
  callable_.params[0].ndim = 2;
  callable_.params[0].shape[1] = 0;
  expect_prepare_rejects(callable_.desc);
}

// Kernel mode: a callable whose gm_heap need exceeds the frozen plan is refused at gm_heap and
// changes nothing; the callable prepared before it still launches correctly.
TEST_F(AbiContextTest, KernelPrepareBeyondTheFrozenGmHeapIsRefusedAtGmHeap) {
  const StagedScaleCallable small(kernel_id(ctx_, "scale"), kernel_id(ctx_, "copy"), kElements);
  const StagedScaleCallable large(kernel_id(ctx_, "scale"), kernel_id(ctx_, "copy"), 1024);
  rrt_capacity_plan_t small_plan{};
  rrt_capacity_plan_t large_plan{};
  ASSERT_EQ(rrt_capacity_plan_fit(&small.desc, &small_plan), RRT_OK);
  ASSERT_EQ(rrt_capacity_plan_fit(&large.desc, &large_plan), RRT_OK);
  ASSERT_GT(large_plan.gm_heap_bytes, small_plan.gm_heap_bytes);
  ASSERT_GT(small_plan.gm_heap_bytes, 0U);
  const rrt_callable_desc_t *const both[2] = {&small.desc, &large.desc};
  rrt_capacity_plan_t plan{};
  ASSERT_EQ(rrt_capacity_plan_fit_all(both, 2, &plan), RRT_OK);
  plan.gm_heap_bytes = small_plan.gm_heap_bytes;
  const rrt_kernel_config_t config = kernel_config(plan);
  ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK) << last_message();
  std::int32_t small_id = kSentinelId;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &small.desc, &small_id), RRT_OK) << last_message();

  const rrt_stats_t before = stats_of(ctx_);
  std::int32_t large_id = kSentinelId;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &large.desc, &large_id), RRT_ERR_INTERNAL);
  EXPECT_TRUE(refused_at("rrt_callable_prepare", RRT_GROWTH_ARENA_GM_HEAP, plan.gm_heap_bytes));
  EXPECT_EQ(last_error().requested_bytes, large_plan.gm_heap_bytes);
  EXPECT_NE(last_message().find("gm_heap"), std::string::npos) << last_message();
  EXPECT_EQ(large_id, kSentinelId);
  rrt_stats_t expected = before;
  ++expected.refusals[RRT_GROWTH_ARENA_GM_HEAP];
  EXPECT_EQ(counters_of(stats_of(ctx_)), counters_of(expected));

  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  void *in = device_buffer(ctx_, input_values());
  void *out = device_buffer(ctx_, std::vector<float>(kElements, 0.0F));
  const rrt_tensor_arg_t tensors[2] = {{in, kTensorBytes, RRT_SPACE_DEVICE},
                                       {out, kTensorBytes, RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = {sizeof(rrt_run_args_t), 2, tensors, 0, nullptr};
  ASSERT_EQ(rrt_kernel_launch(ctx_, small_id, &args, stream), RRT_OK) << last_message();
  ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK) << last_message();
  EXPECT_EQ(read_device(ctx_, out), scaled(input_values()));
  EXPECT_EQ(rrt_device_free(ctx_, in), RRT_OK);
  EXPECT_EQ(rrt_device_free(ctx_, out), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

// Kernel mode: the plan of one callable holds one resident image; a second is refused at the
// runtime pool.
TEST_F(AbiContextTest, KernelPrepareBeyondTheFrozenRuntimePoolIsRefusedAtRuntimePool) {
  const ScaleCallable callable(kernel_id(ctx_, "scale"));
  rrt_capacity_plan_t plan{};
  ASSERT_EQ(rrt_capacity_plan_fit(&callable.desc, &plan), RRT_OK);
  const rrt_kernel_config_t config = kernel_config(plan);
  ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK) << last_message();
  std::int32_t first = kSentinelId;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &callable.desc, &first), RRT_OK) << last_message();
  const rrt_stats_t before = stats_of(ctx_);
  std::int32_t second = kSentinelId;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &callable.desc, &second), RRT_ERR_INTERNAL);
  EXPECT_TRUE(
      refused_at("rrt_callable_prepare", RRT_GROWTH_ARENA_RUNTIME_POOL, plan.runtime_pool_bytes));
  EXPECT_EQ(second, kSentinelId);
  rrt_stats_t expected = before;
  ++expected.refusals[RRT_GROWTH_ARENA_RUNTIME_POOL];
  EXPECT_EQ(counters_of(stats_of(ctx_)), counters_of(expected));
}

// ---- program-mode runs ---------------------------------------------------------------------

TEST_F(AbiProgramRunTest, RunPrepareRejectsNullArguments) {
  auto run = sentinel<rrt_run_t>();
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run_prepare, nullptr, callable_id_, &args_, &run);
  EXPECT_EQ(run, sentinel<rrt_run_t>());
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run_prepare, ctx_, callable_id_, nullptr, &run);
  EXPECT_EQ(run, sentinel<rrt_run_t>());
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run_prepare, ctx_, callable_id_, &args_, nullptr);
  expect_both_slots_free();
  expect_runs_correctly();
}

TEST_F(AbiProgramRunTest, RunPrepareRejectsAStructSizeSmallerThanTheArgs) {
  rrt_run_args_t args = args_;
  args.struct_size = kRunArgsV1Bytes - 1;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
  args.struct_size = 0;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("struct_size"), std::string::npos) << last_message();
}

TEST_F(AbiProgramRunTest, RunPrepareAcceptsALargerStructSize) {
  struct {
    rrt_run_args_t args;
    std::uint64_t appended_field;
  } newer{};
  newer.args = args_;
  newer.args.struct_size = sizeof newer;
  newer.appended_field = ~std::uint64_t{0};
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &newer.args, &run), RRT_OK) << last_message();
  EXPECT_EQ(rrt_run_launch(run, nullptr), RRT_OK);
  EXPECT_EQ(rrt_run_wait(run), RRT_OK);
  EXPECT_EQ(rrt_run_finalize(run), RRT_OK);
  EXPECT_EQ(out_, scaled(in_));
}

TEST_F(AbiProgramRunTest, RunPrepareOfAnUnknownCallableIsNotResident) {
  for (const std::int32_t id : {callable_id_ + 1, -1, 4096}) {
    auto run = sentinel<rrt_run_t>();
    EXPECT_REJECTED(RRT_ERR_CALLABLE_NOT_RESIDENT, rrt_run_prepare, ctx_, id, &args_, &run);
    EXPECT_EQ(run, sentinel<rrt_run_t>());
  }
  expect_both_slots_free();
  expect_runs_correctly();
}

TEST_F(AbiProgramRunTest, RunPrepareRejectsTheWrongTensorCount) {
  const rrt_tensor_arg_t three[3] = {tensors_[0], tensors_[1], tensors_[1]};
  rrt_run_args_t args = args_;
  args.num_tensors = 1;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
  args.num_tensors = 3;
  args.tensors = three;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
  args.num_tensors = 0;
  args.tensors = nullptr;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(AbiProgramRunTest, RunPrepareRejectsTheWrongScalarCount) {
  const std::uint64_t two[2] = {scalars_[0], scalars_[0]};
  rrt_run_args_t args = args_;
  args.num_scalars = 0;
  args.scalars = nullptr;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
  args.num_scalars = 2;
  args.scalars = two;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(AbiProgramRunTest, RunPrepareRejectsATensorOfTheWrongSize) {
  for (const std::uint64_t bytes : {kTensorBytes - sizeof(float), kTensorBytes + 1, 0UL}) {
    rrt_tensor_arg_t tensors[2] = {tensors_[0], tensors_[1]};
    tensors[1].bytes = bytes;
    rrt_run_args_t args = args_;
    args.tensors = tensors;
    expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
  }
}

TEST_F(AbiProgramRunTest, RunPrepareRejectsAnUnknownAddressSpace) {
  for (const std::int32_t space : {2, -1, 77}) {
    rrt_tensor_arg_t tensors[2] = {tensors_[0], tensors_[1]};
    store_raw(&tensors[0].space, space);
    rrt_run_args_t args = args_;
    args.tensors = tensors;
    expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
  }
}

TEST_F(AbiProgramRunTest, RunPrepareRejectsANullTensorAddress) {
  rrt_tensor_arg_t tensors[2] = {tensors_[0], tensors_[1]};
  tensors[0].addr = nullptr;
  rrt_run_args_t args = args_;
  args.tensors = tensors;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(AbiProgramRunTest, RunPrepareRejectsADeviceTensorOutsideEveryLiveAllocation) {
  rrt_tensor_arg_t tensors[2] = {tensors_[0], tensors_[1]};
  tensors[0].space = RRT_SPACE_DEVICE;
  rrt_run_args_t args = args_;
  args.tensors = tensors;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(AbiProgramRunTest, RunPrepareRejectsADeviceTensorRunningPastItsAllocation) {
  void *buffer = nullptr;
  ASSERT_EQ(rrt_device_alloc(ctx_, 1024, &buffer), RRT_OK);
  rrt_tensor_arg_t tensors[2] = {tensors_[0], tensors_[1]};
  tensors[0] = {static_cast<std::byte *>(buffer) + 1024 - sizeof(float), kTensorBytes,
                RRT_SPACE_DEVICE};
  rrt_run_args_t args = args_;
  args.tensors = tensors;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
}

TEST_F(AbiProgramRunTest, RunPrepareRejectsADeviceTensorThatWasFreed) {
  void *buffer = device_buffer(ctx_, input_values());
  ASSERT_EQ(rrt_device_free(ctx_, buffer), RRT_OK);
  rrt_tensor_arg_t tensors[2] = {tensors_[0], tensors_[1]};
  tensors[0] = {buffer, kTensorBytes, RRT_SPACE_DEVICE};
  rrt_run_args_t args = args_;
  args.tensors = tensors;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(AbiProgramRunTest, RunPrepareRejectsADeviceTensorOfAnotherContext) {
  rrt_context_t other = create_context();
  void *foreign = device_buffer(other, input_values());
  rrt_tensor_arg_t tensors[2] = {tensors_[0], tensors_[1]};
  tensors[0] = {foreign, kTensorBytes, RRT_SPACE_DEVICE};
  rrt_run_args_t args = args_;
  args.tensors = tensors;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rrt_device_free(other, foreign), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(other), RRT_OK);
}

TEST_F(AbiProgramRunTest, RunPrepareRejectsNullArraysWithNonzeroCounts) {
  rrt_run_args_t args = args_;
  args.tensors = nullptr;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
  args = args_;
  args.scalars = nullptr;
  expect_run_prepare_rejects(args, RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(AbiProgramRunTest, ThirdRunPrepareWhileTwoRunsHoldBothSlotsIsInvalidState) {
  rrt_run_t first = nullptr;
  rrt_run_t second = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &first), RRT_OK);
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &second), RRT_OK);
  auto third = sentinel<rrt_run_t>();
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_run_prepare, ctx_, callable_id_, &args_, &third);
  EXPECT_EQ(third, sentinel<rrt_run_t>());
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_run, ctx_, callable_id_, &args_);
  ASSERT_EQ(rrt_run_launch(first, nullptr), RRT_OK);
  ASSERT_EQ(rrt_run_wait(first), RRT_OK);
  ASSERT_EQ(rrt_run_finalize(first), RRT_OK);
  EXPECT_EQ(out_, scaled(in_));
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &third), RRT_OK);
  EXPECT_EQ(rrt_run_finalize(third), RRT_OK);
  EXPECT_EQ(rrt_run_finalize(second), RRT_OK);
}

TEST_F(AbiProgramRunTest, RunLaunchTwiceIsInvalidStateAndLaunchesOnce) {
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &run), RRT_OK);
  ASSERT_EQ(rrt_run_launch(run, nullptr), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_run_launch, run, nullptr);
  EXPECT_EQ(rrt_run_wait(run), RRT_OK);
  EXPECT_EQ(out_, scaled(in_));
  EXPECT_EQ(stats_of(ctx_).launches, 1U);
  EXPECT_EQ(rrt_run_finalize(run), RRT_OK);
}

TEST_F(AbiProgramRunTest, RunLaunchRejectsANullRunAndAStreamOfAnotherContext) {
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run_launch, nullptr, nullptr);
  rrt_context_t other = create_context();
  rrt_stream_t foreign = nullptr;
  ASSERT_EQ(rrt_stream_create(other, &foreign), RRT_OK);
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &run), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run_launch, run, foreign);
  EXPECT_EQ(stats_of(ctx_).launches, 0U);
  ASSERT_EQ(rrt_run_launch(run, nullptr), RRT_OK) << last_message();
  EXPECT_EQ(rrt_run_wait(run), RRT_OK);
  EXPECT_EQ(out_, scaled(in_));
  EXPECT_EQ(rrt_run_finalize(run), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(foreign), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(other), RRT_OK);
}

TEST_F(AbiProgramRunTest, RunWaitBeforeLaunchIsInvalidState) {
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &run), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_run_wait, run);
  ASSERT_EQ(rrt_run_launch(run, nullptr), RRT_OK);
  EXPECT_EQ(rrt_run_wait(run), RRT_OK);
  EXPECT_EQ(out_, scaled(in_));
  EXPECT_EQ(rrt_run_finalize(run), RRT_OK);
}

TEST_F(AbiProgramRunTest, RunWaitAndFinalizeRejectANullRun) {
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run_wait, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run_finalize, nullptr);
  expect_both_slots_free();
}

TEST_F(AbiProgramRunTest, RunLaunchAfterContextFinalizeIsInvalidState) {
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &run), RRT_OK);
  ASSERT_EQ(rrt_context_finalize(ctx_), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_run_launch, run, nullptr);
  auto after = sentinel<rrt_run_t>();
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_run_prepare, ctx_, callable_id_, &args_, &after);
  EXPECT_EQ(after, sentinel<rrt_run_t>());
  EXPECT_EQ(rrt_run_finalize(run), RRT_OK);
  EXPECT_EQ(stats_of(ctx_).launches, 0U);
}

// Finalize released the slot of a run prepared before it; after the context is initialized
// again, finalizing that run releases nothing the new session's runs hold.
TEST_F(AbiProgramRunTest, ARunFromBeforeAFinalizeReleasesNothingOfTheNextSession) {
  rrt_run_t old = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &old), RRT_OK);
  ASSERT_EQ(rrt_context_finalize(ctx_), RRT_OK);
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  ASSERT_EQ(rrt_callable_prepare(ctx_, &callable_.desc, &callable_id_), RRT_OK) << last_message();
  rrt_run_t first = nullptr;
  rrt_run_t second = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &first), RRT_OK) << last_message();
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &second), RRT_OK) << last_message();
  EXPECT_EQ(rrt_run_finalize(old), RRT_OK);
  auto third = sentinel<rrt_run_t>();
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_run_prepare, ctx_, callable_id_, &args_, &third);
  EXPECT_EQ(rrt_run_finalize(first), RRT_OK);
  EXPECT_EQ(rrt_run_finalize(second), RRT_OK);
  expect_runs_correctly();
}

TEST_F(AbiProgramRunTest, RunRejectsWhatRunPrepareRejects) {
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run, nullptr, callable_id_, &args_);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run, ctx_, callable_id_, nullptr);
  rrt_run_args_t args = args_;
  args.struct_size = 8;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run, ctx_, callable_id_, &args);
  EXPECT_REJECTED(RRT_ERR_CALLABLE_NOT_RESIDENT, rrt_run, ctx_, callable_id_ + 1, &args_);
  rrt_tensor_arg_t tensors[2] = {tensors_[0], tensors_[1]};
  tensors[1].bytes = kTensorBytes * 2;
  args = args_;
  args.tensors = tensors;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run, ctx_, callable_id_, &args);
  EXPECT_EQ(out_, std::vector<float>(kElements, 0.0F));
  EXPECT_EQ(stats_of(ctx_).launches, 0U);
  expect_both_slots_free();
  expect_runs_correctly();
}

TEST_F(AbiKernelLaunchTest, ProgramRunsOnAKernelContextAreInvalidState) {
  auto run = sentinel<rrt_run_t>();
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_run_prepare, ctx_, callable_id_, &args_, &run);
  EXPECT_EQ(run, sentinel<rrt_run_t>());
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_run, ctx_, callable_id_, &args_);
  EXPECT_EQ(stats_of(ctx_).launches, 0U);
  expect_launches_correctly();
}

// ---- kernel-mode launches ----------------------------------------------------------------

TEST_F(AbiKernelLaunchTest, RejectsNullArguments) {
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_launch, nullptr, callable_id_, &args_,
                  stream_);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_launch, ctx_, callable_id_, nullptr,
                  stream_);
  EXPECT_EQ(stats_of(ctx_).launches, 0U);
  expect_launches_correctly();
}

TEST_F(AbiKernelLaunchTest, RejectsANullOrForeignStream) {
  rrt_context_t other = create_context();
  rrt_stream_t foreign = nullptr;
  ASSERT_EQ(rrt_stream_create(other, &foreign), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_launch, ctx_, callable_id_, &args_, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_kernel_launch, ctx_, callable_id_, &args_, foreign);
  EXPECT_EQ(stats_of(ctx_).launches, 0U);
  EXPECT_EQ(rrt_stream_synchronize(foreign), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(foreign), RRT_OK);
  EXPECT_EQ(rrt_context_destroy(other), RRT_OK);
  expect_launches_correctly();
}

TEST_F(AbiProgramRunTest, KernelLaunchOnAProgramContextIsInvalidState) {
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_kernel_launch, ctx_, callable_id_, &args_, stream);
  EXPECT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  EXPECT_EQ(out_, std::vector<float>(kElements, 0.0F));
  EXPECT_EQ(stats_of(ctx_).launches, 0U);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
  expect_runs_correctly();
}

TEST_F(AbiKernelLaunchTest, AnUnknownCallableIsNotResident) {
  for (const std::int32_t id : {callable_id_ + 1, -1}) {
    EXPECT_REJECTED(RRT_ERR_CALLABLE_NOT_RESIDENT, rrt_kernel_launch, ctx_, id, &args_, stream_);
  }
  EXPECT_EQ(stats_of(ctx_).launches, 0U);
  expect_launches_correctly();
}

TEST_F(AbiKernelLaunchTest, RejectsAStructSizeSmallerThanTheArgs) {
  rrt_run_args_t args = args_;
  args.struct_size = kRunArgsV1Bytes - 1;
  expect_launch_rejects(args, RRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_message().find("struct_size"), std::string::npos) << last_message();
}

TEST_F(AbiKernelLaunchTest, RejectsTheWrongTensorOrScalarCount) {
  rrt_run_args_t args = args_;
  args.num_tensors = 1;
  expect_launch_rejects(args, RRT_ERR_INVALID_ARGUMENT);
  args = args_;
  args.num_scalars = 0;
  expect_launch_rejects(args, RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(AbiKernelLaunchTest, RejectsATensorOfTheWrongSize) {
  rrt_tensor_arg_t tensors[2] = {tensors_[0], tensors_[1]};
  tensors[0].bytes = kTensorBytes / 2;
  rrt_run_args_t args = args_;
  args.tensors = tensors;
  expect_launch_rejects(args, RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(AbiKernelLaunchTest, RejectsAnUnknownAddressSpace) {
  rrt_tensor_arg_t tensors[2] = {tensors_[0], tensors_[1]};
  store_raw(&tensors[1].space, 9);
  rrt_run_args_t args = args_;
  args.tensors = tensors;
  expect_launch_rejects(args, RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(AbiKernelLaunchTest, RejectsADeviceTensorOutsideEveryLiveAllocation) {
  std::vector<float> host = input_values();
  rrt_tensor_arg_t tensors[2] = {tensors_[0], tensors_[1]};
  tensors[0].addr = host.data();
  rrt_run_args_t args = args_;
  args.tensors = tensors;
  expect_launch_rejects(args, RRT_ERR_INVALID_ARGUMENT);
}

TEST_F(AbiKernelLaunchTest, RejectsNullArraysWithNonzeroCounts) {
  rrt_run_args_t args = args_;
  args.tensors = nullptr;
  expect_launch_rejects(args, RRT_ERR_INVALID_ARGUMENT);
  args = args_;
  args.scalars = nullptr;
  expect_launch_rejects(args, RRT_ERR_INVALID_ARGUMENT);
}

// HOST tensors of a launch are staged in the retained staging frozen at init; a launch needing
// more is refused at retained_staging, and a launch that fits still runs.
TEST_F(AbiContextTest, KernelLaunchBeyondTheFrozenRetainedStagingIsRefusedAtRetainedStaging) {
  const ScaleCallable callable(kernel_id(ctx_, "scale"));
  rrt_capacity_plan_t plan{};
  ASSERT_EQ(rrt_capacity_plan_fit(&callable.desc, &plan), RRT_OK);
  plan.retained_staging_bytes = kStagingSlice;
  const rrt_kernel_config_t config = kernel_config(plan);
  ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK) << last_message();
  std::int32_t id = kSentinelId;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &callable.desc, &id), RRT_OK) << last_message();
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  std::vector<float> in = input_values();
  std::vector<float> out(kElements, 0.0F);
  const rrt_tensor_arg_t host_tensors[2] = {{in.data(), kTensorBytes, RRT_SPACE_HOST},
                                            {out.data(), kTensorBytes, RRT_SPACE_HOST}};
  const std::uint64_t scalars[1] = {rrt_scalar_from_f32(kFactor)};
  rrt_run_args_t args = {sizeof(rrt_run_args_t), 2, host_tensors, 1, scalars};

  const rrt_stats_t before = stats_of(ctx_);
  ASSERT_EQ(rrt_kernel_launch(ctx_, id, &args, stream), RRT_ERR_INTERNAL);
  EXPECT_TRUE(refused_at("rrt_kernel_launch", RRT_GROWTH_RETAINED_STAGING, kStagingSlice));
  EXPECT_GE(last_error().requested_bytes, 2 * kTensorBytes);
  rrt_stats_t expected = before;
  ++expected.refusals[RRT_GROWTH_RETAINED_STAGING];
  EXPECT_EQ(counters_of(stats_of(ctx_)), counters_of(expected));
  ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  EXPECT_EQ(out, std::vector<float>(kElements, 0.0F));

  void *device_out = device_buffer(ctx_, std::vector<float>(kElements, 0.0F));
  const rrt_tensor_arg_t fitting[2] = {{in.data(), kTensorBytes, RRT_SPACE_HOST},
                                       {device_out, kTensorBytes, RRT_SPACE_DEVICE}};
  args.tensors = fitting;
  ASSERT_EQ(rrt_kernel_launch(ctx_, id, &args, stream), RRT_OK) << last_message();
  ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK) << last_message();
  EXPECT_EQ(read_device(ctx_, device_out), scaled(in));
  EXPECT_EQ(rrt_device_free(ctx_, device_out), RRT_OK);
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

// With no retained staging planned, staging a HOST tensor would allocate during the launch:
// refused at launch_allocation.
TEST_F(AbiContextTest, KernelLaunchOfHostTensorsWithoutPlannedStagingIsRefusedAtLaunchAllocation) {
  const ScaleCallable callable(kernel_id(ctx_, "scale"));
  rrt_capacity_plan_t plan{};
  ASSERT_EQ(rrt_capacity_plan_fit(&callable.desc, &plan), RRT_OK);
  plan.retained_staging_bytes = 0;
  const rrt_kernel_config_t config = kernel_config(plan);
  ASSERT_EQ(rrt_kernel_init(ctx_, &config), RRT_OK) << last_message();
  std::int32_t id = kSentinelId;
  ASSERT_EQ(rrt_callable_prepare(ctx_, &callable.desc, &id), RRT_OK) << last_message();
  rrt_stream_t stream = nullptr;
  ASSERT_EQ(rrt_stream_create(ctx_, &stream), RRT_OK);
  std::vector<float> in = input_values();
  std::vector<float> out(kElements, 0.0F);
  const rrt_tensor_arg_t tensors[2] = {{in.data(), kTensorBytes, RRT_SPACE_HOST},
                                       {out.data(), kTensorBytes, RRT_SPACE_HOST}};
  const std::uint64_t scalars[1] = {rrt_scalar_from_f32(kFactor)};
  const rrt_run_args_t args = {sizeof(rrt_run_args_t), 2, tensors, 1, scalars};

  const rrt_stats_t before = stats_of(ctx_);
  ASSERT_EQ(rrt_kernel_launch(ctx_, id, &args, stream), RRT_ERR_INTERNAL);
  EXPECT_TRUE(refused_at("rrt_kernel_launch", RRT_GROWTH_LAUNCH_ALLOCATION, 0));
  rrt_stats_t expected = before;
  ++expected.refusals[RRT_GROWTH_LAUNCH_ALLOCATION];
  EXPECT_EQ(counters_of(stats_of(ctx_)), counters_of(expected));
  ASSERT_EQ(rrt_stream_synchronize(stream), RRT_OK);
  EXPECT_EQ(out, std::vector<float>(kElements, 0.0F));
  EXPECT_EQ(rrt_stream_destroy(stream), RRT_OK);
}

// ---- profiling -----------------------------------------------------------------------------

constexpr std::uint32_t kSentinelCount = 12345;

TEST_F(AbiProgramRunTest, RunProfileRejectsNullArgumentsAndWritesNoCount) {
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &run), RRT_OK);
  ASSERT_EQ(rrt_run_launch(run, nullptr), RRT_OK);
  ASSERT_EQ(rrt_run_wait(run), RRT_OK);
  rrt_task_timing_t timings[1]{};
  std::uint32_t count = kSentinelCount;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run_profile, nullptr, timings, 1, &count);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run_profile, run, timings, 1, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_run_profile, run, nullptr, 1, &count);
  EXPECT_EQ(count, kSentinelCount);
  EXPECT_EQ(rrt_run_finalize(run), RRT_OK);
  EXPECT_EQ(out_, scaled(in_));
}

TEST_F(AbiProgramRunTest, RunProfileOfARunNotCompletedOrNotProfiledIsInvalidState) {
  rrt_run_t run = nullptr;
  ASSERT_EQ(rrt_run_prepare(ctx_, callable_id_, &args_, &run), RRT_OK);
  std::uint32_t count = kSentinelCount;
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_run_profile, run, nullptr, 0, &count);
  ASSERT_EQ(rrt_run_launch(run, nullptr), RRT_OK);
  ASSERT_EQ(rrt_run_wait(run), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_run_profile, run, nullptr, 0, &count);
  EXPECT_EQ(count, kSentinelCount);
  EXPECT_EQ(rrt_run_finalize(run), RRT_OK);
  EXPECT_EQ(out_, scaled(in_));
}

TEST_F(AbiContextTest, ContextProfileRejectsNullArgumentsAndNonKernelContexts) {
  rrt_task_timing_t timings[1]{};
  std::uint32_t count = kSentinelCount;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_profile, nullptr, timings, 1, &count);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_profile, ctx_, timings, 1, nullptr);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_profile, ctx_, nullptr, 1, &count);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_context_profile, ctx_, timings, 1, &count);
  ASSERT_EQ(rrt_program_init(ctx_), RRT_OK);
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_context_profile, ctx_, timings, 1, &count);
  EXPECT_EQ(count, kSentinelCount);
}

TEST_F(AbiKernelLaunchTest, ContextProfileWithProfilingOffIsInvalidState) {
  expect_launches_correctly();
  rrt_task_timing_t timings[1]{};
  std::uint32_t count = kSentinelCount;
  EXPECT_REJECTED(RRT_ERR_INVALID_STATE, rrt_context_profile, ctx_, timings, 1, &count);
  EXPECT_EQ(count, kSentinelCount);
  expect_launches_correctly();
}

// ---- statistics ----------------------------------------------------------------------------

TEST_F(AbiProgramRunTest, StatsRejectsNullArgumentsAndAShortStructSizeAndWritesNothing) {
  expect_runs_correctly();
  rrt_stats_t stats{};
  std::memset(&stats, 0x5a, sizeof stats);
  rrt_stats_t untouched{};
  std::memset(&untouched, 0x5a, sizeof untouched);
  stats.struct_size = sizeof stats;
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_stats, nullptr, &stats);
  EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_stats, ctx_, nullptr);
  for (const std::uint32_t size : {0U, kStatsV1Bytes - 1}) {
    stats.struct_size = size;
    untouched.struct_size = size;
    EXPECT_REJECTED(RRT_ERR_INVALID_ARGUMENT, rrt_context_stats, ctx_, &stats);
    EXPECT_NE(last_message().find("struct_size"), std::string::npos) << last_message();
    EXPECT_EQ(bytes_of(stats), bytes_of(untouched));
  }
}

TEST_F(AbiProgramRunTest, StatsAcceptsALargerStructSizeAndLeavesTheAppendedBytes) {
  expect_runs_correctly();
  struct {
    rrt_stats_t stats;
    std::uint64_t appended_field;
  } newer{};
  newer.stats.struct_size = sizeof newer;
  newer.appended_field = 0x0123456789abcdefULL;
  ASSERT_EQ(rrt_context_stats(ctx_, &newer.stats), RRT_OK) << last_message();
  EXPECT_EQ(newer.stats.struct_size, sizeof newer);
  EXPECT_EQ(newer.stats.launches, 1U);
  EXPECT_EQ(newer.appended_field, 0x0123456789abcdefULL);
}

}  // namespace
