// The simulator's fixed costs next to oneTBB's flow graph and Taskflow on the same task bodies,
// in one process with the runtimes registered side by side: a one-task replay, the same after a
// 1 ms idle gap, the time from the replay call to its first task's start, and tiny-task chains
// and fan-outs of 4096 tasks, each on 1 and 2 workers. Names: contention/<case>/<runtime>/w<W>,
// runtime `replayrt`, `tbb` or `taskflow` (the best of the last two is the limit). Taskflow is
// compiled in only when the build found its headers (REPLAYRT_BENCH_TASKFLOW, from
// scripts/fetch-taskflow.sh); without them the program says so on stderr. Every benchmark
// reports `cores`: the process's CPU time (every thread, getrusage) over the loop's wall-clock
// time, so a runtime whose idle threads spin shows more than one core busy.
//
// The results' context names each peer's version: `peer_onetbb` (the library loaded) and, when
// compiled in, `peer_taskflow` (its release and the commit its copy came from).
//
// RRT_BENCH_CPU_HOGS=N starts N child processes that spin for the program's lifetime, the
// calibrated load of a shared machine; every benchmark then reports `hogs` = N.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sched.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/version.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#ifdef REPLAYRT_BENCH_TASKFLOW
#include <taskflow/taskflow.hpp>
#endif

#include "bench_support.h"

namespace replayrt::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kManyTasks = 4096;
constexpr std::chrono::milliseconds kIdleGap{1};
// Runs per repetition of after_idle_gap: each sleeps kIdleGap, so a count chosen from the
// (microsecond) timed part alone would take minutes.
constexpr benchmark::IterationCount kIdleGapRuns = 1000;

int hog_count() {
  const char *value = std::getenv("RRT_BENCH_CPU_HOGS");
  return value != nullptr ? std::atoi(value) : 0;
}

// The child processes that keep the machine's cores busy; killed when this object dies.
class CpuHogs {
 public:
  explicit CpuHogs(int count) {
    for (int i = 0; i < count; ++i) {
      const pid_t child = fork();
      if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        volatile std::uint64_t spin = 0;
        for (;;) {
          spin = spin + 1;
        }
      }
      if (child > 0) {
        children_.push_back(child);
      }
    }
  }
  ~CpuHogs() {
    for (const pid_t child : children_) {
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
    }
  }
  CpuHogs(const CpuHogs &) = delete;
  CpuHogs &operator=(const CpuHogs &) = delete;
  CpuHogs(CpuHogs &&) = delete;
  CpuHogs &operator=(CpuHogs &&) = delete;

 private:
  std::vector<pid_t> children_;
};

std::chrono::nanoseconds process_cpu_time() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec;
  const auto micros = usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
  return std::chrono::seconds(seconds) + std::chrono::microseconds(micros);
}

// Measures the cores counter over the benchmark loop it encloses.
class CoresBusy {
 public:
  CoresBusy() : cpu_(process_cpu_time()), wall_(Clock::now()) {}
  void report(benchmark::State &state) const {
    const double cpu = std::chrono::duration<double>(process_cpu_time() - cpu_).count();
    const double wall = std::chrono::duration<double>(Clock::now() - wall_).count();
    state.counters["cores"] = wall > 0 ? cpu / wall : 0;
    state.counters["hogs"] = hog_count();
  }

 private:
  std::chrono::nanoseconds cpu_;
  Clock::time_point wall_;
};

// The task body both runtimes run: the first task of an iteration stamps its start.
struct FirstTask {
  std::atomic<std::int64_t> start_ns{0};
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

int stamping_kernel(const rrt_kernel_args_t * /*args*/, void *user) {
  auto &first = *static_cast<FirstTask *>(user);
  if (first.start_ns.load(std::memory_order_relaxed) == 0) {
    std::int64_t unset = 0;
    first.start_ns.compare_exchange_strong(unset, now_ns(), std::memory_order_acq_rel);
  }
  return 0;
}

enum class Shape { kChain, kFanout };

// stamping_kernel in every task.
DescBuilder graph_desc(std::int32_t kernel, Shape shape, std::uint32_t tasks) {
  DescBuilder builder(RRT_BIND_DEVICE_BUILD);
  if (shape == Shape::kChain) {
    builder.intermediate(tensor(RRT_DTYPE_F32, 1));
  }
  for (std::uint32_t t = 0; t < tasks; ++t) {
    if (shape == Shape::kChain) {
      builder.task(kernel, {{RRT_OPERAND_INTERMEDIATE, 0}});
    } else {
      builder.task(kernel, {});
    }
  }
  return builder;
}

// A kernel-mode sim context with `workers` device workers and one launch of the N-task
// callable captured into a graph.
class ReplayrtGraph {
 public:
  ReplayrtGraph(unsigned workers, Shape shape, std::uint32_t tasks, FirstTask *first)
      : graph_(workers, "stamp", &stamping_kernel, first,
               [&](std::int32_t kernel) { return graph_desc(kernel, shape, tasks); }) {}

  void run() const { graph_.replay_and_wait(); }

 private:
  CapturedGraph graph_;
};

// The same graph as a oneTBB flow graph in an arena of `workers` threads (the caller's
// included), run by try_put into its source and wait_for_all.
class TbbGraph {
 public:
  TbbGraph(unsigned workers, Shape shape, std::uint32_t tasks, FirstTask *first)
      : arena_(static_cast<int>(workers)), first_(first) {
    arena_.execute([&] {
      graph_ = std::make_unique<oneapi::tbb::flow::graph>();
      source_ =
          std::make_unique<oneapi::tbb::flow::broadcast_node<oneapi::tbb::flow::continue_msg>>(
              *graph_);
      nodes_.reserve(tasks);
      for (std::uint32_t t = 0; t < tasks; ++t) {
        nodes_.emplace_back(*graph_, [this](const oneapi::tbb::flow::continue_msg &) {
          stamping_kernel(nullptr, first_);
        });
        if (shape == Shape::kChain && t > 0) {
          oneapi::tbb::flow::make_edge(nodes_[t - 1], nodes_[t]);
        } else {
          oneapi::tbb::flow::make_edge(*source_, nodes_[t]);
        }
      }
    });
  }

  void run() {
    arena_.execute([&] {
      source_->try_put(oneapi::tbb::flow::continue_msg());
      graph_->wait_for_all();
    });
  }

 private:
  using Node = oneapi::tbb::flow::continue_node<oneapi::tbb::flow::continue_msg>;
  oneapi::tbb::task_arena arena_;
  FirstTask *first_;
  std::unique_ptr<oneapi::tbb::flow::graph> graph_;
  std::unique_ptr<oneapi::tbb::flow::broadcast_node<oneapi::tbb::flow::continue_msg>> source_;
  std::vector<Node> nodes_;
};

#ifdef REPLAYRT_BENCH_TASKFLOW
// The same graph as a Taskflow taskflow on an executor of `workers` threads, run by
// Executor::run and waited for on the caller's thread, as the simulator's host waits.
class TaskflowGraph {
 public:
  TaskflowGraph(unsigned workers, Shape shape, std::uint32_t tasks, FirstTask *first)
      : executor_(workers) {
    std::vector<tf::Task> nodes;
    nodes.reserve(tasks);
    for (std::uint32_t t = 0; t < tasks; ++t) {
      nodes.push_back(taskflow_.emplace([first] { stamping_kernel(nullptr, first); }));
      if (shape == Shape::kChain && t > 0) {
        nodes[t - 1].precede(nodes[t]);
      }
    }
  }

  void run() { executor_.run(taskflow_).wait(); }

 private:
  tf::Executor executor_;
  tf::Taskflow taskflow_;
};
#endif

// Back-to-back runs; per-task time when tasks > 1.
template <class Graph>
void back_to_back(benchmark::State &state, unsigned workers, Shape shape, std::uint32_t tasks) {
  FirstTask first;
  Graph graph(workers, shape, tasks, &first);
  graph.run();
  const CoresBusy cores;
  for (auto _ : state) {
    graph.run();
  }
  cores.report(state);
  state.counters["tasks"] = tasks;
}

// One run after kIdleGap of sleep, so the runtime's threads have gone idle; only the run is
// timed.
template <class Graph>
void after_idle_gap(benchmark::State &state, unsigned workers) {
  FirstTask first;
  Graph graph(workers, Shape::kChain, 1, &first);
  graph.run();
  for (auto _ : state) {
    std::this_thread::sleep_for(kIdleGap);
    const auto start = Clock::now();
    graph.run();
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
  }
  state.counters["hogs"] = hog_count();
}

// From the call that starts a back-to-back run to its one task's start.
template <class Graph>
void to_first_task(benchmark::State &state, unsigned workers) {
  FirstTask first;
  Graph graph(workers, Shape::kChain, 1, &first);
  graph.run();
  const CoresBusy cores;
  for (auto _ : state) {
    first.start_ns.store(0, std::memory_order_relaxed);
    const std::int64_t start = now_ns();
    graph.run();
    state.SetIterationTime(static_cast<double>(first.start_ns.load() - start) * 1e-9);
  }
  cores.report(state);
}

template <class Graph>
void register_runtime(const std::string &runtime) {
  for (const unsigned workers : {1U, 2U}) {
    const std::string tail = "/" + runtime + "/w" + std::to_string(workers);
    benchmark::RegisterBenchmark(("contention/one_task" + tail).c_str(), back_to_back<Graph>,
                                 workers, Shape::kChain, 1)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("contention/after_idle_gap" + tail).c_str(),
                                 after_idle_gap<Graph>, workers)
        ->UseManualTime()
        ->Iterations(kIdleGapRuns);
    benchmark::RegisterBenchmark(("contention/to_first_task" + tail).c_str(), to_first_task<Graph>,
                                 workers)
        ->UseManualTime();
    benchmark::RegisterBenchmark(("contention/chain" + tail).c_str(), back_to_back<Graph>, workers,
                                 Shape::kChain, kManyTasks)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("contention/fanout" + tail).c_str(), back_to_back<Graph>, workers,
                                 Shape::kFanout, kManyTasks)
        ->UseRealTime();
  }
}

}  // namespace
}  // namespace replayrt::bench

int main(int argc, char **argv) {
  const replayrt::bench::CpuHogs hogs(replayrt::bench::hog_count());
  replayrt::bench::register_runtime<replayrt::bench::ReplayrtGraph>("replayrt");
  replayrt::bench::register_runtime<replayrt::bench::TbbGraph>("tbb");
  benchmark::AddCustomContext("peer_onetbb", TBB_runtime_version());
#ifdef REPLAYRT_BENCH_TASKFLOW
  replayrt::bench::register_runtime<replayrt::bench::TaskflowGraph>("taskflow");
  benchmark::AddCustomContext(
      "peer_taskflow", std::string(tf::version()) + ", commit " REPLAYRT_BENCH_TASKFLOW_COMMIT);
#else
  std::fputs(
      "contention_bench: Taskflow is not compared; scripts/fetch-taskflow.sh puts it where "
      "the build finds it\n",
      stderr);
#endif
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
