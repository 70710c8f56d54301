// Staging of HOST tensors in a device-build bind: a kernel-mode launch of a one-task callable
// whose only parameter is a HOST input of B bytes (staged into the retained buffer with a
// host-to-device copy on the stream), waited for, against the limit: memcpy of the same B
// bytes from the same host buffer into a device allocation (the simulator's device memory is
// host memory, so no copy into it can move bytes faster than memcpy does).
//
//   staging/replayrt/<B>       rrt_kernel_launch (HOST tensor) + rrt_stream_synchronize
//   staging/device_tensor/<B>  the same launch with the tensor already on the device: the
//                              fixed cost a staged launch adds to its copy
//   staging/memcpy/<B>         memcpy of the B bytes into device memory (the limit)
// B runs from 1 KiB to 64 MiB by factors of 4. Every benchmark reports the counter `bytes`.
#include <cstdint>
#include <cstring>
#include <vector>

#include "bench_support.h"

namespace {

using replayrt::bench::check;

constexpr std::int64_t kMinBytes = std::int64_t{1} << 10;
constexpr std::int64_t kMaxBytes = std::int64_t{64} << 20;

// A kernel-mode context whose callable takes one IN tensor of `bytes` bytes; a host buffer
// and a device buffer of that size to pass as the tensor.
class StagingSetup {
 public:
  explicit StagingSetup(std::uint64_t bytes)
      : ctx_(replayrt::bench::make_context(1)), host_(bytes, std::byte{0x5a}), bytes_(bytes) {
    std::int32_t kernel_id = -1;
    check(
        rrt_kernel_register(ctx_, "bench_tiny", &replayrt::bench::tiny_kernel, nullptr, &kernel_id),
        "rrt_kernel_register");
    replayrt::bench::DescBuilder builder;
    builder.param(replayrt::bench::tensor(RRT_DTYPE_U8, bytes, RRT_DIR_IN))
        .task(kernel_id, {{RRT_OPERAND_PARAM, 0}});
    replayrt::bench::kernel_init_for(ctx_, builder.desc());
    callable_ = replayrt::bench::prepare(ctx_, builder.desc());
    check(rrt_stream_create(ctx_, &stream_), "rrt_stream_create");
    check(rrt_device_alloc(ctx_, bytes, &device_), "rrt_device_alloc");
  }
  ~StagingSetup() {
    check(rrt_stream_synchronize(stream_), "rrt_stream_synchronize");
    check(rrt_stream_destroy(stream_), "rrt_stream_destroy");
    check(rrt_device_free(ctx_, device_), "rrt_device_free");
    check(rrt_context_destroy(ctx_), "rrt_context_destroy");
  }
  StagingSetup(const StagingSetup &) = delete;
  StagingSetup &operator=(const StagingSetup &) = delete;
  StagingSetup(StagingSetup &&) = delete;
  StagingSetup &operator=(StagingSetup &&) = delete;

  void launch_and_wait(rrt_address_space_t space) {
    const rrt_tensor_arg_t tensor{
        space == RRT_SPACE_HOST ? static_cast<void *>(host_.data()) : device_, bytes_, space};
    const rrt_run_args_t args = replayrt::bench::run_args(&tensor, 1);
    check(rrt_kernel_launch(ctx_, callable_, &args, stream_), "rrt_kernel_launch");
    check(rrt_stream_synchronize(stream_), "rrt_stream_synchronize");
  }
  void copy_to_device() { std::memcpy(device_, host_.data(), bytes_); }

 private:
  rrt_context_t ctx_;
  std::vector<std::byte> host_;
  std::uint64_t bytes_;
  std::int32_t callable_ = -1;
  rrt_stream_t stream_ = nullptr;
  void *device_ = nullptr;
};

void staged_launch(benchmark::State &state, rrt_address_space_t space) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  StagingSetup setup(bytes);
  setup.launch_and_wait(space);
  for (auto _ : state) {
    setup.launch_and_wait(space);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}

// The limit: memcpy of the same bytes from the same host buffer into a device allocation of
// the same size (simulator device memory is host memory).
void host_memcpy(benchmark::State &state) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  StagingSetup setup(bytes);
  setup.copy_to_device();
  for (auto _ : state) {
    setup.copy_to_device();
    benchmark::ClobberMemory();
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}

// Per size, the staged launch, its limit and the fixed cost run back to back, so a change in
// the machine's load between sizes cannot tilt a ratio.
void register_all() {
  for (std::int64_t bytes = kMinBytes; bytes <= kMaxBytes; bytes *= 4) {
    benchmark::RegisterBenchmark("staging/replayrt", staged_launch, RRT_SPACE_HOST)
        ->Arg(bytes)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("staging/memcpy", host_memcpy)
        ->Arg(bytes)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("staging/device_tensor", staged_launch, RRT_SPACE_DEVICE)
        ->Arg(bytes)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

int main(int argc, char **argv) {
  return replayrt::bench::bench_main(argc, argv, &register_all);
}
