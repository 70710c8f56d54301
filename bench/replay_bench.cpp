// Replay cost: a kernel-mode launch of an N-task callable captured once into a graph, then
// replayed (rrt_graph_replay + rrt_stream_synchronize, timed together), against
//   - the limit: the same kernel function called N times in a loop on the benchmark thread,
//     with the arguments the device half would pass (no scheduling, no handoff), and
//   - the eager baseline: rrt_kernel_launch of the same callable + rrt_stream_synchronize.
//
// Matrix: kernel {tiny: returns at once (launch-bound); compute: ~10 us of deterministic
// arithmetic, its round count calibrated once per process} x shape {chain: every task touches
// the same intermediate, so task i waits for task i-1; fanout: no task touches a tensor, so all
// N are ready at once} x device workers {1, 2} x N {1, 16, 256, 4096}.
//
// Names: replay/<kernel>/<shape>/w<workers>/n<N>, eager/<kernel>/<shape>/w<workers>/n<N>,
// direct/<kernel>/n<N>. Every benchmark reports the counter `tasks` (= N); per-task costs are
// the per-iteration time divided by it.
#include <chrono>
#include <cstdint>
#include <string>

#include "bench_support.h"

namespace {

enum class Kernel { kTiny, kCompute };
enum class Shape { kChain, kFanOut };

constexpr std::uint32_t kTaskCounts[] = {1, 16, 256, 4096};
constexpr unsigned kWorkerCounts[] = {1, 2};

const char *name_of(Kernel kernel) {
  return kernel == Kernel::kTiny ? "tiny" : "compute10us";
}
const char *name_of(Shape shape) {
  return shape == Shape::kChain ? "chain" : "fanout";
}

rrt_kernel_fn function_of(Kernel kernel) {
  return kernel == Kernel::kTiny ? &replayrt::bench::tiny_kernel : &replayrt::bench::compute_kernel;
}

// The compute kernel's round count for ~10 us, measured once per process.
std::uint32_t compute_rounds() {
  static const std::uint32_t rounds =
      replayrt::bench::compute_rounds_for(std::chrono::microseconds(10));
  return rounds;
}

std::uint32_t rounds_of(Kernel kernel) {
  return kernel == Kernel::kTiny ? 0 : compute_rounds();
}

// N tasks of `kernel_id`, each with the round count as an immediate scalar. A user kernel
// counts as reading and writing every tensor operand, so in the chain (every task touches
// intermediate 0) task i depends on task i-1; the fan-out touches no tensor and has no edge.
replayrt::bench::DescBuilder graph_desc(std::int32_t kernel_id, Shape shape, std::uint32_t tasks,
                                        std::uint32_t rounds) {
  replayrt::bench::DescBuilder builder;
  if (shape == Shape::kChain) {
    builder.intermediate(replayrt::bench::tensor(RRT_DTYPE_F32, 1));
  }
  for (std::uint32_t t = 0; t < tasks; ++t) {
    if (shape == Shape::kChain) {
      builder.task(kernel_id, {{RRT_OPERAND_INTERMEDIATE, 0}, {RRT_OPERAND_IMMEDIATE, rounds}});
    } else {
      builder.task(kernel_id, {{RRT_OPERAND_IMMEDIATE, rounds}});
    }
  }
  return builder;
}

// A kernel-mode context with `workers` device workers, the N-task callable prepared and one
// launch of it captured into a graph.
class ReplaySetup : public replayrt::bench::CapturedGraph {
 public:
  ReplaySetup(Kernel kernel, Shape shape, unsigned workers, std::uint32_t tasks)
      : CapturedGraph(workers, "bench_kernel", function_of(kernel), nullptr,
                      [&](std::int32_t kernel_id) {
                        return graph_desc(kernel_id, shape, tasks, rounds_of(kernel));
                      }) {}
};

void replay(benchmark::State &state, Kernel kernel, Shape shape, unsigned workers,
            std::uint32_t tasks) {
  const ReplaySetup setup(kernel, shape, workers, tasks);
  setup.replay_and_wait();
  for (auto _ : state) {
    setup.replay_and_wait();
  }
  state.counters["tasks"] = tasks;
}

void eager(benchmark::State &state, Kernel kernel, Shape shape, unsigned workers,
           std::uint32_t tasks) {
  const ReplaySetup setup(kernel, shape, workers, tasks);
  setup.launch_and_wait();
  for (auto _ : state) {
    setup.launch_and_wait();
  }
  state.counters["tasks"] = tasks;
}

// The limit: the kernel function called `tasks` times through a pointer the compiler cannot
// see through, with the arguments the device half builds for a chain task (one tensor, the
// round count).
void direct(benchmark::State &state, Kernel kernel, std::uint32_t tasks) {
  rrt_kernel_fn fn = function_of(kernel);
  benchmark::DoNotOptimize(fn);
  float cell = 0.0F;
  void *tensors[1] = {&cell};
  const std::uint64_t bytes[1] = {sizeof cell};
  const std::uint64_t scalars[1] = {rounds_of(kernel)};
  const rrt_kernel_args_t args{1, tensors, bytes, 1, scalars, 0, nullptr};
  for (auto _ : state) {
    for (std::uint32_t t = 0; t < tasks; ++t) {
      if (fn(&args, nullptr) != 0) {
        state.SkipWithError("the kernel failed");
      }
    }
  }
  state.counters["tasks"] = tasks;
}

void register_all() {
  benchmark::AddCustomContext("compute_kernel_rounds", std::to_string(compute_rounds()));
  for (const Kernel kernel : {Kernel::kTiny, Kernel::kCompute}) {
    for (const std::uint32_t tasks : kTaskCounts) {
      const std::string n = "/n" + std::to_string(tasks);
      std::string direct_name = "direct/";
      direct_name.append(name_of(kernel)).append(n);
      benchmark::RegisterBenchmark(direct_name.c_str(), direct, kernel, tasks)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
      for (const Shape shape : {Shape::kChain, Shape::kFanOut}) {
        for (const unsigned workers : kWorkerCounts) {
          std::string tail = "/";
          tail.append(name_of(kernel))
              .append("/")
              .append(name_of(shape))
              .append("/w")
              .append(std::to_string(workers))
              .append(n);
          benchmark::RegisterBenchmark(("replay" + tail).c_str(), replay, kernel, shape, workers,
                                       tasks)
              ->UseRealTime()
              ->Unit(benchmark::kMicrosecond);
          benchmark::RegisterBenchmark(("eager" + tail).c_str(), eager, kernel, shape, workers,
                                       tasks)
              ->UseRealTime()
              ->Unit(benchmark::kMicrosecond);
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  return replayrt::bench::bench_main(argc, argv, &register_all);
}
