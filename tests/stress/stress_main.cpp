// Multi-threaded stress through the C ABI only: 2-16 threads share one kernel-mode and one
// program-mode context and do launches, replays, copies and stream create/destroy, with failing
// kernels mixed in. Every output is verified; at the end the contexts' launch and replay
// counters must equal what the threads counted. A watchdog turns a hang into a failure.
//
//   replayrt-stress [--threads N] [--seconds S] [--watchdog S] [--no-failures]
//
// Exit status: 0 when every check held, 1 on a wrong result or statistic, 2 on a hang (no
// thread made progress for the watchdog's seconds), 64 on a usage error.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <replayrt/replayrt.h>

namespace {

constexpr std::uint64_t kN = 256;
constexpr std::uint64_t kBytes = kN * sizeof(float);

struct Options {
  unsigned threads = 4;
  double seconds = 20.0;
  double watchdog = 30.0;
  bool failures = true;
};

std::atomic<std::uint64_t> progress{0};
std::atomic<bool> failed{false};
std::mutex report_mutex;

void fail(const char *what, rrt_status_t status) {
  rrt_error_detail_t detail{};
  (void)rrt_last_error(&detail);
  std::lock_guard<std::mutex> lock(report_mutex);
  std::fprintf(stderr, "stress: %s: %s (%s)\n", what, rrt_status_name(status), detail.message);
  failed.store(true);
}

#define EXPECT_STATUS(expected, call)    \
  do {                                   \
    const rrt_status_t status_ = (call); \
    if (status_ != (expected)) {         \
      fail(#call, status_);              \
      return;                            \
    }                                    \
  } while (0)

rrt_context_t make_context() {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_SIM;
  options.device_workers = 2;
  rrt_context_t ctx = nullptr;
  if (rrt_context_create(&options, &ctx) != RRT_OK) {
    std::fprintf(stderr, "stress: rrt_context_create failed\n");
    std::exit(1);
  }
  return ctx;
}

int failing_kernel(const rrt_kernel_args_t *, void *) {
  return 5;
}

// out = 2 * in + in (two tasks through an intermediate), and a callable whose second task fails.
struct Callables {
  rrt_tensor_desc_t tensors[2]{};
  rrt_tensor_desc_t intermediate{};
  rrt_operand_t scale_ops[3]{};
  rrt_operand_t add_ops[3]{};
  rrt_operand_t copy_ops[2]{};
  rrt_operand_t fail_ops[1]{};
  rrt_task_desc_t good_tasks[2]{};
  rrt_task_desc_t bad_tasks[2]{};
  rrt_callable_desc_t good{};
  rrt_callable_desc_t bad{};

  explicit Callables(rrt_context_t ctx) {
    std::int32_t scale = -1;
    std::int32_t add = -1;
    std::int32_t copy = -1;
    std::int32_t explode = -1;
    if (rrt_kernel_lookup(ctx, "scale", &scale) != RRT_OK ||
        rrt_kernel_lookup(ctx, "add", &add) != RRT_OK ||
        rrt_kernel_lookup(ctx, "copy", &copy) != RRT_OK ||
        rrt_kernel_register(ctx, "stress_fail", &failing_kernel, nullptr, &explode) != RRT_OK) {
      std::fprintf(stderr, "stress: kernel setup failed\n");
      std::exit(1);
    }
    for (int i = 0; i < 2; ++i) {
      tensors[i].dtype = RRT_DTYPE_F32;
      tensors[i].ndim = 1;
      tensors[i].shape[0] = kN;
      tensors[i].direction = i == 0 ? RRT_DIR_IN : RRT_DIR_OUT;
    }
    intermediate = tensors[0];
    scale_ops[0] = {RRT_OPERAND_PARAM, 0};
    scale_ops[1] = {RRT_OPERAND_INTERMEDIATE, 0};
    scale_ops[2] = {RRT_OPERAND_IMMEDIATE, static_cast<std::uint32_t>(rrt_scalar_from_f32(2.0F))};
    add_ops[0] = {RRT_OPERAND_INTERMEDIATE, 0};
    add_ops[1] = {RRT_OPERAND_PARAM, 0};
    add_ops[2] = {RRT_OPERAND_PARAM, 1};
    copy_ops[0] = {RRT_OPERAND_PARAM, 0};
    copy_ops[1] = {RRT_OPERAND_PARAM, 1};
    fail_ops[0] = {RRT_OPERAND_PARAM, 1};
    good_tasks[0] = {scale, 3, scale_ops};
    good_tasks[1] = {add, 3, add_ops};
    bad_tasks[0] = {copy, 2, copy_ops};
    bad_tasks[1] = {explode, 1, fail_ops};
    for (rrt_callable_desc_t *d : {&good, &bad}) {
      d->struct_size = sizeof *d;
      d->bind = RRT_BIND_DEVICE_BUILD;
      d->num_params = 2;
      d->params = tensors;
    }
    good.num_intermediates = 1;
    good.intermediates = &intermediate;
    good.num_tasks = 2;
    good.tasks = good_tasks;
    bad.num_tasks = 2;
    bad.tasks = bad_tasks;
  }
};

struct Shared {
  rrt_context_t kernel = nullptr;
  rrt_context_t program = nullptr;
  std::int32_t kernel_good = -1, kernel_bad = -1;
  std::int32_t program_good = -1, program_bad = -1;
  std::atomic<std::uint64_t> kernel_launches{0};
  std::atomic<std::uint64_t> kernel_replays{0};
  std::atomic<std::uint64_t> program_launches{0};
  std::atomic<std::uint64_t> checks{0};
};

rrt_run_args_t args_of(const rrt_tensor_arg_t *tensors) {
  rrt_run_args_t args{};
  args.struct_size = sizeof args;
  args.num_tensors = 2;
  args.tensors = tensors;
  return args;
}

bool tripled(const std::vector<float> &in, const std::vector<float> &out) {
  for (std::uint64_t i = 0; i < kN; ++i) {
    if (out[i] != 3.0F * in[i]) {
      return false;
    }
  }
  return true;
}

// One thread's loop until `deadline`.
void worker(Shared &shared, const Options &options, unsigned index,
            std::chrono::steady_clock::time_point deadline) {
  std::mt19937 rng(index * 7919 + 1);
  rrt_context_t kctx = shared.kernel;
  rrt_stream_t stream = nullptr;
  rrt_stream_t fail_stream = nullptr;
  void *in = nullptr;
  void *out = nullptr;
  void *graph_out = nullptr;
  EXPECT_STATUS(RRT_OK, rrt_stream_create(kctx, &stream));
  EXPECT_STATUS(RRT_OK, rrt_stream_create(kctx, &fail_stream));
  EXPECT_STATUS(RRT_OK, rrt_device_alloc(kctx, kBytes, &in));
  EXPECT_STATUS(RRT_OK, rrt_device_alloc(kctx, kBytes, &out));
  EXPECT_STATUS(RRT_OK, rrt_device_alloc(kctx, kBytes, &graph_out));
  std::vector<float> host_in(kN);
  std::vector<float> host_out(kN);
  const auto set_input = [&](std::uint64_t seed) {
    for (std::uint64_t i = 0; i < kN; ++i) {
      host_in[i] = static_cast<float>((seed + i) % 1000);
    }
  };
  set_input(index);
  EXPECT_STATUS(RRT_OK, rrt_memcpy_h2d(kctx, in, host_in.data(), kBytes, nullptr));

  // This thread's graph: one launch of the good callable into graph_out.
  const rrt_tensor_arg_t graph_tensors[2] = {{in, kBytes, RRT_SPACE_DEVICE},
                                             {graph_out, kBytes, RRT_SPACE_DEVICE}};
  const rrt_run_args_t graph_args = args_of(graph_tensors);
  rrt_graph_t graph = nullptr;
  EXPECT_STATUS(RRT_OK, rrt_stream_begin_capture(stream));
  EXPECT_STATUS(RRT_OK, rrt_kernel_launch(kctx, shared.kernel_good, &graph_args, stream));
  EXPECT_STATUS(RRT_OK, rrt_stream_end_capture(stream, &graph));
  // The context counts a launch recorded into a capture as a launch.
  shared.kernel_launches.fetch_add(1);

  const rrt_tensor_arg_t tensors[2] = {{in, kBytes, RRT_SPACE_DEVICE},
                                       {out, kBytes, RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = args_of(tensors);
  std::uint64_t iteration = 0;
  while (std::chrono::steady_clock::now() < deadline && !failed.load()) {
    ++iteration;
    const unsigned op = rng() % 8;
    switch (op) {
      case 0: {  // new input values through a synchronous copy, then a launch
        set_input(std::uint64_t{index} * 1000 + iteration);
        EXPECT_STATUS(RRT_OK, rrt_memcpy_h2d(kctx, in, host_in.data(), kBytes, nullptr));
        [[fallthrough]];
      }
      case 1: {  // kernel-mode launch, verified
        EXPECT_STATUS(RRT_OK, rrt_kernel_launch(kctx, shared.kernel_good, &args, stream));
        shared.kernel_launches.fetch_add(1);
        EXPECT_STATUS(RRT_OK, rrt_memcpy_d2h(kctx, host_out.data(), out, kBytes, stream));
        EXPECT_STATUS(RRT_OK, rrt_stream_synchronize(stream));
        if (!tripled(host_in, host_out)) {
          fail("a kernel-mode launch wrote wrong values", RRT_OK);
          return;
        }
        break;
      }
      case 2:
      case 3: {  // replay, verified
        EXPECT_STATUS(RRT_OK, rrt_graph_replay(graph, stream));
        shared.kernel_replays.fetch_add(1);
        EXPECT_STATUS(RRT_OK, rrt_memcpy_d2h(kctx, host_out.data(), graph_out, kBytes, stream));
        EXPECT_STATUS(RRT_OK, rrt_stream_synchronize(stream));
        if (!tripled(host_in, host_out)) {
          fail("a replay wrote wrong values", RRT_OK);
          return;
        }
        break;
      }
      case 4: {  // a failing launch on its own stream: reported there, and only there
        if (!options.failures) {
          break;
        }
        EXPECT_STATUS(RRT_OK, rrt_kernel_launch(kctx, shared.kernel_bad, &args, fail_stream));
        shared.kernel_launches.fetch_add(1);
        EXPECT_STATUS(RRT_ERR_KERNEL_FAILED, rrt_stream_synchronize(fail_stream));
        EXPECT_STATUS(RRT_OK, rrt_stream_synchronize(fail_stream));
        break;
      }
      case 5: {  // a short-lived stream: create, launch, destroy (which waits)
        rrt_stream_t temporary = nullptr;
        void *temporary_out = nullptr;
        EXPECT_STATUS(RRT_OK, rrt_stream_create(kctx, &temporary));
        EXPECT_STATUS(RRT_OK, rrt_device_alloc(kctx, kBytes, &temporary_out));
        const rrt_tensor_arg_t t[2] = {{in, kBytes, RRT_SPACE_DEVICE},
                                       {temporary_out, kBytes, RRT_SPACE_DEVICE}};
        const rrt_run_args_t a = args_of(t);
        EXPECT_STATUS(RRT_OK, rrt_kernel_launch(kctx, shared.kernel_good, &a, temporary));
        shared.kernel_launches.fetch_add(1);
        EXPECT_STATUS(RRT_OK, rrt_stream_destroy(temporary));
        EXPECT_STATUS(RRT_OK,
                      rrt_memcpy_d2h(kctx, host_out.data(), temporary_out, kBytes, nullptr));
        EXPECT_STATUS(RRT_OK, rrt_device_free(kctx, temporary_out));
        if (!tripled(host_in, host_out)) {
          fail("a launch on a short-lived stream wrote wrong values", RRT_OK);
          return;
        }
        break;
      }
      default: {  // program mode: rrt_run with HOST tensors (good, or failing)
        const bool bad = options.failures && op == 7 && rng() % 2 == 0;
        std::vector<float> program_out(kN, -1.0F);
        const rrt_tensor_arg_t t[2] = {{host_in.data(), kBytes, RRT_SPACE_HOST},
                                       {program_out.data(), kBytes, RRT_SPACE_HOST}};
        const rrt_run_args_t a = args_of(t);
        rrt_status_t status;
        // Both pipeline slots busy is RRT_ERR_INVALID_STATE: another thread holds them.
        while ((status = rrt_run(shared.program, bad ? shared.program_bad : shared.program_good,
                                 &a)) == RRT_ERR_INVALID_STATE) {
          std::this_thread::yield();
        }
        if (status != (bad ? RRT_ERR_KERNEL_FAILED : RRT_OK)) {
          fail(bad ? "a failing rrt_run" : "a good rrt_run", status);
          return;
        }
        shared.program_launches.fetch_add(1);
        if (!bad && !tripled(host_in, program_out)) {
          fail("rrt_run wrote wrong values", RRT_OK);
          return;
        }
        break;
      }
    }
    shared.checks.fetch_add(1);
    progress.fetch_add(1, std::memory_order_relaxed);
  }
  EXPECT_STATUS(RRT_OK, rrt_graph_destroy(graph));
  EXPECT_STATUS(RRT_OK, rrt_stream_destroy(stream));
  EXPECT_STATUS(RRT_OK, rrt_stream_destroy(fail_stream));
  for (void *buffer : {in, out, graph_out}) {
    EXPECT_STATUS(RRT_OK, rrt_device_free(kctx, buffer));
  }
}

bool parse(int argc, char **argv, Options *options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--threads" && has_value) {
      options->threads = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    } else if (arg == "--seconds" && has_value) {
      options->seconds = std::strtod(argv[++i], nullptr);
    } else if (arg == "--watchdog" && has_value) {
      options->watchdog = std::strtod(argv[++i], nullptr);
    } else if (arg == "--no-failures") {
      options->failures = false;
    } else {
      return false;
    }
  }
  return options->threads >= 2 && options->threads <= 16 && options->seconds > 0 &&
         options->watchdog > 0;
}

}  // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parse(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: %s [--threads 2..16] [--seconds S] [--watchdog S] [--no-failures]\n",
                 argv[0]);
    return 64;
  }
  Shared shared;
  shared.kernel = make_context();
  shared.program = make_context();
  {
    Callables kc(shared.kernel);
    const rrt_callable_desc_t *descs[2] = {&kc.good, &kc.bad};
    rrt_kernel_config_t config{};
    config.struct_size = sizeof config;
    config.context_generation = 0x5eed0001;
    if (rrt_capacity_plan_fit_all(descs, 2, &config.capacity) != RRT_OK ||
        rrt_kernel_init(shared.kernel, &config) != RRT_OK ||
        rrt_callable_prepare(shared.kernel, &kc.good, &shared.kernel_good) != RRT_OK ||
        rrt_callable_prepare(shared.kernel, &kc.bad, &shared.kernel_bad) != RRT_OK) {
      fail("kernel-mode setup", RRT_OK);
      return 1;
    }
    Callables pc(shared.program);
    if (rrt_program_init(shared.program) != RRT_OK ||
        rrt_callable_prepare(shared.program, &pc.good, &shared.program_good) != RRT_OK ||
        rrt_callable_prepare(shared.program, &pc.bad, &shared.program_bad) != RRT_OK) {
      fail("program-mode setup", RRT_OK);
      return 1;
    }
  }

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(options.seconds));
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    std::uint64_t last = progress.load();
    auto last_change = std::chrono::steady_clock::now();
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const std::uint64_t now_progress = progress.load();
      const auto now = std::chrono::steady_clock::now();
      if (now_progress != last) {
        last = now_progress;
        last_change = now;
      } else if (std::chrono::duration<double>(now - last_change).count() > options.watchdog) {
        std::fprintf(stderr, "stress: no progress for %.0f s: a hang\n", options.watchdog);
        std::fflush(stderr);
        std::_Exit(2);
      }
    }
  });
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < options.threads; ++t) {
    threads.emplace_back(worker, std::ref(shared), std::cref(options), t, deadline);
  }
  for (std::thread &t : threads) {
    t.join();
  }
  done.store(true);
  watchdog.join();

  rrt_stats_t kstats{};
  kstats.struct_size = sizeof kstats;
  rrt_stats_t pstats{};
  pstats.struct_size = sizeof pstats;
  // After a failure the threads stopped between a launch and its count: compare only a clean
  // run's counters.
  const bool clean = !failed.load();
  if (clean && (rrt_context_stats(shared.kernel, &kstats) != RRT_OK ||
                rrt_context_stats(shared.program, &pstats) != RRT_OK)) {
    fail("rrt_context_stats", RRT_OK);
  } else if (clean) {
    if (kstats.launches != shared.kernel_launches.load() ||
        kstats.replays != shared.kernel_replays.load()) {
      std::fprintf(stderr,
                   "stress: kernel context counted %llu launches and %llu replays, the threads "
                   "%llu and %llu\n",
                   static_cast<unsigned long long>(kstats.launches),
                   static_cast<unsigned long long>(kstats.replays),
                   static_cast<unsigned long long>(shared.kernel_launches.load()),
                   static_cast<unsigned long long>(shared.kernel_replays.load()));
      failed.store(true);
    }
    if (pstats.launches != shared.program_launches.load()) {
      std::fprintf(stderr, "stress: program context counted %llu launches, the threads %llu\n",
                   static_cast<unsigned long long>(pstats.launches),
                   static_cast<unsigned long long>(shared.program_launches.load()));
      failed.store(true);
    }
    for (const rrt_region_stats_t &region : kstats.regions) {
      if (region.base_changes != 0) {
        std::fprintf(stderr, "stress: the kernel-mode context moved a buffer\n");
        failed.store(true);
      }
    }
  }
  if (!failed.load() && (rrt_context_destroy(shared.kernel) != RRT_OK ||
                         rrt_context_destroy(shared.program) != RRT_OK)) {
    fail("rrt_context_destroy", RRT_OK);
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "stress: %u threads, %.1f s: %llu verified operations (%llu kernel-mode launches, %llu "
      "replays, %llu program-mode runs)%s\n",
      options.threads, elapsed, static_cast<unsigned long long>(shared.checks.load()),
      static_cast<unsigned long long>(shared.kernel_launches.load()),
      static_cast<unsigned long long>(shared.kernel_replays.load()),
      static_cast<unsigned long long>(shared.program_launches.load()),
      failed.load() ? ": FAILED" : "");
  return failed.load() ? 1 : 0;
}
