// Host wait policies (rrt_wait_policy_t) on decode-sized steps: a kernel-mode launch of one
// task that runs for kStep and an event record behind it, then rrt_event_synchronize. The
// event makes the stream's executor run the step (a stream synchronize would find the launch
// untaken and run it on the waiting thread itself, so its host would never wait), as happens
// whenever work is waited for through an event or synchronized after the executor took it.
// The counter wake_ns is the time from the task's last instruction to the event synchronize
// returning, averaged over the iterations: what a policy costs on top of the step. run_all.py
// reports each policy's wake-up next to SPIN's, the limit (a waiter that never leaves the processor
// sees completion soonest), as a ratio within the same run.
#include <atomic>
#include <chrono>
#include <cstdint>

#include "bench_support.h"

namespace replayrt::bench {
namespace {

constexpr std::chrono::microseconds kStep{4000};

struct StepClock {
  std::atomic<std::int64_t> done_ns{0};
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Busy for kStep (a decode step's device time), then stamps its end.
int step_kernel(const rrt_kernel_args_t * /*args*/, void *user) {
  const auto until = std::chrono::steady_clock::now() + kStep;
  while (std::chrono::steady_clock::now() < until) {
  }
  static_cast<StepClock *>(user)->done_ns.store(now_ns(), std::memory_order_release);
  return 0;
}

void wait_policy(benchmark::State &state, rrt_wait_policy_t policy, std::uint32_t spin_us) {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_SIM;
  options.wait_policy = policy;
  options.wait_spin_us = spin_us;
  rrt_context_t ctx = nullptr;
  check(rrt_context_create(&options, &ctx), "rrt_context_create");
  StepClock clock;
  std::int32_t kernel = -1;
  check(rrt_kernel_register(ctx, "step", step_kernel, &clock, &kernel), "rrt_kernel_register");
  testing::CallableBuilder builder;
  builder.param(tensor(RRT_DTYPE_F32, 16, RRT_DIR_INOUT));
  builder.task(kernel, {testing::param(0)});
  const rrt_callable_desc_t &desc = builder.desc();
  kernel_init_for(ctx, desc);
  const std::int32_t id = prepare(ctx, desc);
  void *buffer = nullptr;
  check(rrt_device_alloc(ctx, 16 * sizeof(float), &buffer), "rrt_device_alloc");
  const rrt_tensor_arg_t arg{buffer, 16 * sizeof(float), RRT_SPACE_DEVICE};
  const rrt_run_args_t args = run_args(&arg, 1);
  rrt_stream_t stream = nullptr;
  check(rrt_stream_create(ctx, &stream), "rrt_stream_create");
  rrt_event_t step_done = nullptr;
  check(rrt_event_create(ctx, &step_done), "rrt_event_create");

  double wake_ns = 0;
  for (auto _ : state) {
    check(rrt_kernel_launch(ctx, id, &args, stream), "rrt_kernel_launch");
    check(rrt_event_record(step_done, stream), "rrt_event_record");
    check(rrt_event_synchronize(step_done), "rrt_event_synchronize");
    const std::int64_t returned = now_ns();
    wake_ns += static_cast<double>(returned - clock.done_ns.load(std::memory_order_acquire));
  }
  state.counters["wake_ns"] = benchmark::Counter(wake_ns, benchmark::Counter::kAvgIterations);

  check(rrt_event_destroy(step_done), "rrt_event_destroy");
  check(rrt_stream_destroy(stream), "rrt_stream_destroy");
  check(rrt_device_free(ctx, buffer), "rrt_device_free");
  check(rrt_context_destroy(ctx), "rrt_context_destroy");
}

BENCHMARK_CAPTURE(wait_policy, spin, RRT_WAIT_SPIN, 0)
    ->Name("wait/spin")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(wait_policy, yield, RRT_WAIT_YIELD, 0)
    ->Name("wait/yield")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(wait_policy, block, RRT_WAIT_BLOCK, 0)
    ->Name("wait/block")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(wait_policy, spin_then_block, RRT_WAIT_SPIN_THEN_BLOCK, 0)
    ->Name("wait/spin_then_block_250us")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(wait_policy, spin_then_block_long, RRT_WAIT_SPIN_THEN_BLOCK, 5000)
    ->Name("wait/spin_then_block_5000us")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace replayrt::bench

BENCHMARK_MAIN();
