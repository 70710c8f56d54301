// A random sequence of C-ABI calls, driven by the input, over up to three contexts (program and
// kernel mode) and their streams, events, graphs, runs and device buffers.
//
// Invariants checked after every call:
//   - a failing call's code is rrt_last_error's code;
//   - a failing call changed no statistic of any context (the refusal counters aside; a call
//     that reports RRT_ERR_KERNEL_FAILED ran its work and is exempt) and wrote none of its
//     out-parameters (they are pre-filled with sentinels);
//   - a call the header says succeeds here succeeds (context destroy with nothing alive, a good
//     replay verified on a stream of its own, ...);
//   - after every capacity refusal, every graph captured before on that context still replays
//     and writes the values it wrote when captured.
// The harness tracks every handle and never passes a destroyed one. Each input runs at most
// kMaxCalls calls and never waits on work that cannot complete, so a hang is a defect (run
// with -timeout).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include <replayrt/replayrt.h>

#include "fuzz_support.h"

namespace {

using replayrt::fuzz::fill_sentinel;
using replayrt::fuzz::same_except_refusals;
using replayrt::fuzz::stats_of;
using replayrt::fuzz::still_sentinel;

constexpr int kMaxCalls = 160;
constexpr int kMaxContexts = 3;
constexpr std::size_t kMaxStreams = 4;
constexpr std::size_t kMaxEvents = 4;
constexpr std::size_t kMaxGraphs = 6;
constexpr std::size_t kMaxRuns = 3;
constexpr std::size_t kMaxScratch = 4;
constexpr std::uint64_t kN = 64;  // floats per tensor
constexpr std::uint64_t kBytes = kN * sizeof(float);

// Call patterns the harness can leave out, each while its constant is true, to narrow a new
// finding down. All are exercised (false): finalize while a stream captures, program-mode
// replays overlapping eager runs of the same slot, rrt_device_free of a buffer queued work
// still uses (true: synchronize first), kernel-mode launches of the failing callable, and
// init after a finalize that followed no init. A second destroy of a handle is never made: the
// header says it is undefined, and the harness forgets a handle once destroyed.
constexpr bool kAvoidFinalizeWhileCapturing = false;
constexpr bool kAvoidProgramReplays = false;
constexpr bool kSynchronizeBeforeFree = false;
constexpr bool kAvoidKernelModeFailures = false;
constexpr bool kAvoidFinalizeBeforeInit = false;

enum class Kind : std::uint8_t { kAxpy = 0, kHostBuild = 1, kFailing = 2 };
constexpr int kKinds = 3;

// Output of callable `kind` for an input pattern element.
float expected(Kind kind, float in) {
  return kind == Kind::kAxpy ? 3.0F * in : 4.0F * in;
}
float input_at(std::uint64_t i) {
  return static_cast<float>(i % 17 + 1);
}

int failing_kernel(const rrt_kernel_args_t *, void *) {
  return 9;
}

// The three fixed callables: kAxpy (scale by 2, add the input: 3x, device build), kHostBuild
// (scale by 3, add: 4x, host build) and kFailing (copy, then a user kernel that fails, then
// copy out).
struct Descs {
  rrt_tensor_desc_t tensors[2]{};
  rrt_tensor_desc_t intermediate{};
  rrt_operand_t scale_ops[2][3]{};
  rrt_operand_t add_ops[3]{};
  rrt_operand_t copy_in[2]{};
  rrt_operand_t fail_ops[1]{};
  rrt_operand_t copy_out[2]{};
  rrt_task_desc_t tasks[kKinds][3]{};
  rrt_callable_desc_t desc[kKinds]{};

  explicit Descs(std::int32_t scale, std::int32_t add, std::int32_t copy, std::int32_t fail) {
    for (int i = 0; i < 2; ++i) {
      tensors[i].dtype = RRT_DTYPE_F32;
      tensors[i].ndim = 1;
      tensors[i].shape[0] = kN;
      tensors[i].direction = i == 0 ? RRT_DIR_IN : RRT_DIR_OUT;
    }
    intermediate = tensors[0];
    for (int k = 0; k < 2; ++k) {
      scale_ops[k][0] = {RRT_OPERAND_PARAM, 0};
      scale_ops[k][1] = {RRT_OPERAND_INTERMEDIATE, 0};
      scale_ops[k][2] = {RRT_OPERAND_IMMEDIATE,
                         static_cast<std::uint32_t>(rrt_scalar_from_f32(k == 0 ? 2.0F : 3.0F))};
    }
    add_ops[0] = {RRT_OPERAND_INTERMEDIATE, 0};
    add_ops[1] = {RRT_OPERAND_PARAM, 0};
    add_ops[2] = {RRT_OPERAND_PARAM, 1};
    copy_in[0] = {RRT_OPERAND_PARAM, 0};
    copy_in[1] = {RRT_OPERAND_INTERMEDIATE, 0};
    fail_ops[0] = {RRT_OPERAND_INTERMEDIATE, 0};
    copy_out[0] = {RRT_OPERAND_INTERMEDIATE, 0};
    copy_out[1] = {RRT_OPERAND_PARAM, 1};
    for (int k = 0; k < 2; ++k) {
      tasks[k][0] = {scale, 3, scale_ops[k]};
      tasks[k][1] = {add, 3, add_ops};
    }
    tasks[2][0] = {copy, 2, copy_in};
    tasks[2][1] = {fail, 1, fail_ops};
    tasks[2][2] = {copy, 2, copy_out};
    for (int k = 0; k < kKinds; ++k) {
      rrt_callable_desc_t &d = desc[k];
      d.struct_size = sizeof d;
      d.bind = k == 1 ? RRT_BIND_HOST_BUILD : RRT_BIND_DEVICE_BUILD;
      d.num_params = 2;
      d.params = tensors;
      d.num_intermediates = 1;
      d.intermediates = &intermediate;
      d.num_tasks = k == 2 ? 3 : 2;
      d.tasks = tasks[k];
    }
  }
};

// A buffer a launch writes, with what it must hold once that launch completed.
struct Output {
  Kind kind = Kind::kAxpy;
  bool host = false;
  void *device = nullptr;                    // device outputs
  std::unique_ptr<std::vector<float>> data;  // host outputs (stable address)
};

struct Graph {
  rrt_graph_t handle = nullptr;
  std::vector<Output> outputs;
  bool fails = false;     // recorded a launch of the failing callable
  bool program = false;   // captured on a program-mode context
  bool unusable = false;  // the context was finalized or a captured buffer freed since
};

struct Stream {
  rrt_stream_t handle = nullptr;
  bool capturing = false;
  Graph capture;  // what the capture records so far
  bool capture_used_run = false;
};

struct Run {
  rrt_run_t handle = nullptr;
  Kind kind = Kind::kAxpy;
  bool launched = false;
  bool on_capture = false;
  Output output;
};

struct Context {
  rrt_context_t handle = nullptr;
  int mode = -1;  // -1 none, RRT_MODE_PROGRAM, RRT_MODE_KERNEL
  bool finalized = false;
  std::int32_t callable[kKinds] = {-1, -1, -1};  // the latest prepared id of each kind
  std::map<std::int32_t, Kind> prepared;         // every prepared id
  std::int32_t scale = -1, add = -1, copy = -1, fail = -1;
  std::unique_ptr<Descs> descs;
  void *device_in = nullptr;
  std::vector<float> host_in;
  rrt_stream_t check_stream = nullptr;
  std::vector<Stream> streams;
  std::vector<rrt_event_t> events;
  std::vector<std::unique_ptr<Graph>> graphs;
  std::vector<std::unique_ptr<Run>> runs;
  std::vector<void *> scratch;
  std::vector<void *> owned;  // device buffers the harness frees at teardown
  std::vector<std::unique_ptr<std::vector<float>>> host_outputs;
};

class Harness {
 public:
  explicit Harness(FuzzedDataProvider &in) : in_(in) {}
  ~Harness() {
    for (auto &ctx : contexts_) {
      teardown(*ctx);
    }
  }

  void step();

 private:
  // Runs one call: snapshots statistics, then checks the failure invariants on the result.
  template <typename Call>
  rrt_status_t call(const char *name, Call &&fn) {
    std::vector<rrt_stats_t> before;
    for (auto &ctx : contexts_) {
      before.push_back(stats_of(ctx->handle));
    }
    const rrt_status_t status = fn();
    RRT_FUZZ_RECORDED(status, name);
    // A call that reports a kernel's failure (rrt_run, a wait, a synchronize) ran that kernel:
    // its launch is counted like any other.
    if (status != RRT_OK && status != RRT_ERR_KERNEL_FAILED) {
      for (std::size_t i = 0; i < contexts_.size() && i < before.size(); ++i) {
        if (!same_except_refusals(before[i], stats_of(contexts_[i]->handle))) {
          char what[160];
          std::snprintf(what, sizeof what, "a failing %s changed the statistics", name);
          replayrt::fuzz::violation(__FILE__, __LINE__, what);
        }
      }
      rrt_error_detail_t detail{};
      (void)rrt_last_error(&detail);
      if (detail.growth_point != RRT_GROWTH_NONE) {
        for (auto &ctx : contexts_) {
          verify_graphs(*ctx);
        }
      }
    }
    return status;
  }

  Context *pick_context() {
    if (contexts_.empty()) {
      return nullptr;
    }
    return contexts_[in_.ConsumeIntegralInRange<std::size_t>(0, contexts_.size() - 1)].get();
  }
  template <typename T>
  std::size_t pick_index(const std::vector<T> &items) {
    return in_.ConsumeIntegralInRange<std::size_t>(0, items.size() - 1);
  }
  bool coin() { return in_.ConsumeBool(); }
  Kind pick_kind() { return static_cast<Kind>(in_.ConsumeIntegralInRange<int>(0, kKinds - 1)); }

  // The stream a call uses: NULL (the context's own) or one of the harness's.
  Stream *pick_stream(Context &ctx, bool allow_null) {
    if (ctx.streams.empty() || (allow_null && in_.ConsumeIntegralInRange<int>(0, 3) == 0)) {
      return nullptr;
    }
    return &ctx.streams[pick_index(ctx.streams)];
  }

  void create_context();
  void destroy_context();
  void init_program(Context &ctx);
  void init_kernel(Context &ctx);
  void finalize(Context &ctx);
  void prepare(Context &ctx);
  void stream_op(Context &ctx);
  void event_op(Context &ctx);
  void capture_op(Context &ctx);
  void replay(Context &ctx);
  void launch(Context &ctx);
  void run_op(Context &ctx);
  void memory_op(Context &ctx);
  void query_op(Context &ctx);

  bool setup_buffers(Context &ctx);
  Output make_output(Context &ctx, Kind kind, bool host);
  void fill_args(Context &ctx, bool host_in, Output &out, rrt_tensor_arg_t tensors[2],
                 rrt_run_args_t *args);
  bool output_correct(Context &ctx, const Output &out);
  void clear_output(Context &ctx, const Output &out);
  void verify_graphs(Context &ctx);
  void verify_graph(Context &ctx, Graph &graph);
  void synchronize_all(Context &ctx);
  void teardown(Context &ctx);

  FuzzedDataProvider &in_;
  std::vector<std::unique_ptr<Context>> contexts_;
  bool verifying_ = false;
};

void Harness::create_context() {
  if (contexts_.size() >= kMaxContexts) {
    return;
  }
  rrt_context_options_t options{};
  options.struct_size = coin() ? sizeof options : in_.ConsumeIntegralInRange<std::uint32_t>(0, 64);
  options.platform = RRT_PLATFORM_SIM;
  options.device_workers = in_.ConsumeIntegralInRange<std::uint32_t>(0, 3);
  rrt_context_t handle;
  fill_sentinel(&handle);
  const rrt_status_t status =
      call("rrt_context_create", [&] { return rrt_context_create(&options, &handle); });
  if (status != RRT_OK) {
    RRT_FUZZ_CHECK(still_sentinel(handle), "a failing rrt_context_create wrote its handle");
    return;
  }
  auto ctx = std::make_unique<Context>();
  ctx->handle = handle;
  RRT_FUZZ_CHECK(rrt_kernel_lookup(handle, "scale", &ctx->scale) == RRT_OK &&
                     rrt_kernel_lookup(handle, "add", &ctx->add) == RRT_OK &&
                     rrt_kernel_lookup(handle, "copy", &ctx->copy) == RRT_OK,
                 "a built-in kernel is missing");
  RRT_FUZZ_CHECK(
      rrt_kernel_register(handle, "fuzz_fail", &failing_kernel, nullptr, &ctx->fail) == RRT_OK,
      "rrt_kernel_register failed on a fresh context");
  ctx->descs = std::make_unique<Descs>(ctx->scale, ctx->add, ctx->copy, ctx->fail);
  contexts_.push_back(std::move(ctx));
}

void Harness::destroy_context() {
  if (contexts_.empty()) {
    return;
  }
  const std::size_t index = pick_index(contexts_);
  Context &ctx = *contexts_[index];
  bool alive =
      !ctx.graphs.empty() || !ctx.runs.empty() || !ctx.streams.empty() || !ctx.events.empty();
  if (!alive && ctx.check_stream != nullptr && coin()) {
    // Keep the check stream alive sometimes: the destroy is then refused.
    alive = true;
  } else if (ctx.check_stream != nullptr && !alive) {
    RRT_FUZZ_CHECK(rrt_stream_destroy(ctx.check_stream) == RRT_OK, "rrt_stream_destroy failed");
    ctx.check_stream = nullptr;
  }
  if (kAvoidFinalizeWhileCapturing) {
    for (const Stream &s : ctx.streams) {
      if (s.capturing) {
        return;
      }
    }
  }
  const rrt_status_t status =
      call("rrt_context_destroy", [&] { return rrt_context_destroy(ctx.handle); });
  if (alive) {
    RRT_FUZZ_CHECK(status == RRT_ERR_INVALID_STATE,
                   "rrt_context_destroy did not refuse a context with live handles");
    return;
  }
  RRT_FUZZ_CHECK(status == RRT_OK, "rrt_context_destroy failed with nothing alive");
  contexts_.erase(contexts_.begin() + static_cast<std::ptrdiff_t>(index));
}

void Harness::init_program(Context &ctx) {
  const rrt_status_t status =
      call("rrt_program_init", [&] { return rrt_program_init(ctx.handle); });
  if (ctx.mode == RRT_MODE_KERNEL) {
    RRT_FUZZ_CHECK(status == RRT_ERR_INVALID_STATE, "rrt_program_init on a kernel context");
    return;
  }
  RRT_FUZZ_CHECK(status == RRT_OK, "rrt_program_init failed on a program or mode-less context");
  ctx.mode = RRT_MODE_PROGRAM;
  ctx.finalized = false;
}

void Harness::init_kernel(Context &ctx) {
  rrt_kernel_config_t config{};
  config.struct_size = sizeof config;
  config.context_generation = 0;  // the runtime picks a process-unique one
  // The plan: all three callables, only the first (later prepares are refused), or a
  // shrunken runtime pool or heap.
  const auto variant = in_.ConsumeIntegralInRange<int>(0, 3);
  const rrt_callable_desc_t *all[kKinds] = {&ctx.descs->desc[0], &ctx.descs->desc[1],
                                            &ctx.descs->desc[2]};
  RRT_FUZZ_CHECK(
      rrt_capacity_plan_fit_all(all, variant == 1 ? 1 : kKinds, &config.capacity) == RRT_OK,
      "rrt_capacity_plan_fit_all failed on the fixed callables");
  if (variant == 2) {
    config.capacity.runtime_pool_bytes /= 2;
  } else if (variant == 3) {
    config.capacity.retained_staging_bytes /= 2;
  }
  const rrt_status_t status =
      call("rrt_kernel_init", [&] { return rrt_kernel_init(ctx.handle, &config); });
  if (ctx.mode != -1 || ctx.finalized) {
    RRT_FUZZ_CHECK(status != RRT_OK, "rrt_kernel_init succeeded on an initialized context");
    return;
  }
  RRT_FUZZ_CHECK(status == RRT_OK, "rrt_kernel_init failed on a fresh context");
  ctx.mode = RRT_MODE_KERNEL;
}

void Harness::synchronize_all(Context &ctx) {
  for (const Stream &s : ctx.streams) {
    if (!s.capturing) {
      (void)rrt_stream_synchronize(s.handle);
    }
  }
  if (ctx.check_stream != nullptr) {
    (void)rrt_stream_synchronize(ctx.check_stream);
  }
}

void Harness::finalize(Context &ctx) {
  bool capturing = false;
  for (const Stream &s : ctx.streams) {
    capturing = capturing || s.capturing;
  }
  if ((capturing && kAvoidFinalizeWhileCapturing) || (ctx.mode == -1 && kAvoidFinalizeBeforeInit)) {
    return;
  }
  const rrt_status_t status =
      call("rrt_context_finalize", [&] { return rrt_context_finalize(ctx.handle); });
  // A pending stream failure is reported here; the context is finalized all the same.
  RRT_FUZZ_CHECK(status == RRT_OK || status == RRT_ERR_KERNEL_FAILED || ctx.mode == -1,
                 "rrt_context_finalize failed");
  if (status != RRT_OK && status != RRT_ERR_KERNEL_FAILED) {
    return;
  }
  if (ctx.mode != -1) {
    ctx.finalized = true;
  }
  for (std::int32_t &id : ctx.callable) {
    id = -1;
  }
  ctx.prepared.clear();
  for (auto &graph : ctx.graphs) {
    graph->unusable = true;
  }
  for (Stream &s : ctx.streams) {
    s.capture.unusable = true;
  }
  // Pending runs are released by finalize; their handles still need rrt_run_finalize.
  for (auto &run : ctx.runs) {
    run->launched = false;
  }
}

void Harness::prepare(Context &ctx) {
  const Kind kind = pick_kind();
  std::int32_t id;
  fill_sentinel(&id);
  const rrt_status_t status = call("rrt_callable_prepare", [&] {
    return rrt_callable_prepare(ctx.handle, &ctx.descs->desc[static_cast<int>(kind)], &id);
  });
  if (status != RRT_OK) {
    RRT_FUZZ_CHECK(still_sentinel(id), "a failing rrt_callable_prepare wrote its id");
    RRT_FUZZ_CHECK(ctx.mode == -1 || ctx.finalized || ctx.mode == RRT_MODE_KERNEL,
                   "rrt_callable_prepare failed on a program context");
    return;
  }
  RRT_FUZZ_CHECK(ctx.mode != -1 && !ctx.finalized, "rrt_callable_prepare before init succeeded");
  ctx.callable[static_cast<int>(kind)] = id;
  ctx.prepared[id] = kind;
}

bool Harness::setup_buffers(Context &ctx) {
  if (ctx.mode == -1 || ctx.finalized) {
    return false;
  }
  if (ctx.device_in == nullptr) {
    ctx.host_in.resize(kN);
    for (std::uint64_t i = 0; i < kN; ++i) {
      ctx.host_in[i] = input_at(i);
    }
    RRT_FUZZ_CHECK(rrt_device_alloc(ctx.handle, kBytes, &ctx.device_in) == RRT_OK,
                   "rrt_device_alloc failed");
    ctx.owned.push_back(ctx.device_in);
    RRT_FUZZ_CHECK(
        rrt_memcpy_h2d(ctx.handle, ctx.device_in, ctx.host_in.data(), kBytes, nullptr) == RRT_OK,
        "a synchronous rrt_memcpy_h2d failed");
  }
  if (ctx.check_stream == nullptr) {
    RRT_FUZZ_CHECK(rrt_stream_create(ctx.handle, &ctx.check_stream) == RRT_OK,
                   "rrt_stream_create failed");
  }
  return true;
}

Output Harness::make_output(Context &ctx, Kind kind, bool host) {
  Output out;
  out.kind = kind;
  out.host = host;
  if (host) {
    out.data = std::make_unique<std::vector<float>>(kN, -1.0F);
  } else {
    RRT_FUZZ_CHECK(rrt_device_alloc(ctx.handle, kBytes, &out.device) == RRT_OK,
                   "rrt_device_alloc failed");
    ctx.owned.push_back(out.device);
  }
  return out;
}

void Harness::fill_args(Context &ctx, bool host_in, Output &out, rrt_tensor_arg_t tensors[2],
                        rrt_run_args_t *args) {
  tensors[0] = host_in ? rrt_tensor_arg_t{ctx.host_in.data(), kBytes, RRT_SPACE_HOST}
                       : rrt_tensor_arg_t{ctx.device_in, kBytes, RRT_SPACE_DEVICE};
  tensors[1] = out.host ? rrt_tensor_arg_t{out.data->data(), kBytes, RRT_SPACE_HOST}
                        : rrt_tensor_arg_t{out.device, kBytes, RRT_SPACE_DEVICE};
  *args = rrt_run_args_t{};
  args->struct_size = sizeof *args;
  args->num_tensors = 2;
  args->tensors = tensors;
}

void Harness::clear_output(Context &ctx, const Output &out) {
  std::vector<float> poison(kN, std::nanf(""));
  if (out.host) {
    *out.data = poison;
  } else {
    RRT_FUZZ_CHECK(rrt_memcpy_h2d(ctx.handle, out.device, poison.data(), kBytes, nullptr) == RRT_OK,
                   "a synchronous rrt_memcpy_h2d failed");
  }
}

bool Harness::output_correct(Context &ctx, const Output &out) {
  std::vector<float> got(kN);
  if (out.host) {
    got = *out.data;
  } else {
    RRT_FUZZ_CHECK(rrt_memcpy_d2h(ctx.handle, got.data(), out.device, kBytes, nullptr) == RRT_OK,
                   "a synchronous rrt_memcpy_d2h failed");
  }
  for (std::uint64_t i = 0; i < kN; ++i) {
    if (got[i] != expected(out.kind, input_at(i))) {
      return false;
    }
  }
  return true;
}

// Replays `graph` on the context's check stream, which nothing else uses, and checks that it
// reports exactly its own failure and writes what it wrote at capture.
void Harness::verify_graph(Context &ctx, Graph &graph) {
  if (graph.unusable || (graph.program && kAvoidProgramReplays) || ctx.check_stream == nullptr) {
    return;
  }
  RRT_FUZZ_CHECK(rrt_stream_synchronize(ctx.check_stream) == RRT_OK,
                 "the check stream reports a failure it never ran");
  for (const Output &out : graph.outputs) {
    clear_output(ctx, out);
  }
  const rrt_status_t replayed = rrt_graph_replay(graph.handle, ctx.check_stream);
  RRT_FUZZ_RECORDED(replayed, "rrt_graph_replay");
  RRT_FUZZ_CHECK(replayed == RRT_OK, "a graph captured before no longer replays");
  const rrt_status_t done = rrt_stream_synchronize(ctx.check_stream);
  RRT_FUZZ_RECORDED(done, "rrt_stream_synchronize");
  if (graph.fails) {
    RRT_FUZZ_CHECK(done == RRT_ERR_KERNEL_FAILED,
                   "a replay of a failing launch did not report KERNEL_FAILED");
    return;
  }
  RRT_FUZZ_CHECK(done == RRT_OK, "a good replay on its own stream reported a failure");
  for (const Output &out : graph.outputs) {
    RRT_FUZZ_CHECK(output_correct(ctx, out), "a replay wrote other values than at capture");
  }
}

void Harness::verify_graphs(Context &ctx) {
  if (verifying_) {
    return;
  }
  verifying_ = true;
  for (auto &graph : ctx.graphs) {
    verify_graph(ctx, *graph);
  }
  verifying_ = false;
}

void Harness::stream_op(Context &ctx) {
  switch (in_.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: {
      if (ctx.streams.size() >= kMaxStreams) {
        return;
      }
      rrt_stream_t handle;
      fill_sentinel(&handle);
      const rrt_status_t status =
          call("rrt_stream_create", [&] { return rrt_stream_create(ctx.handle, &handle); });
      if (status != RRT_OK) {
        RRT_FUZZ_CHECK(still_sentinel(handle), "a failing rrt_stream_create wrote its handle");
        return;
      }
      Stream stream;
      stream.handle = handle;
      ctx.streams.push_back(std::move(stream));
      return;
    }
    case 1: {
      if (ctx.streams.empty()) {
        return;
      }
      const std::size_t index = pick_index(ctx.streams);
      const rrt_status_t status =
          call("rrt_stream_destroy", [&] { return rrt_stream_destroy(ctx.streams[index].handle); });
      if (ctx.streams[index].capturing) {
        RRT_FUZZ_CHECK(status == RRT_ERR_INVALID_STATE,
                       "rrt_stream_destroy of a capturing stream did not refuse");
        return;
      }
      RRT_FUZZ_CHECK(status == RRT_OK || status == RRT_ERR_KERNEL_FAILED,
                     "rrt_stream_destroy failed");
      // A pending failure is reported, and the stream is destroyed all the same.
      ctx.streams.erase(ctx.streams.begin() + static_cast<std::ptrdiff_t>(index));
      return;
    }
    default: {
      Stream *s = pick_stream(ctx, false);
      if (s == nullptr) {
        return;
      }
      const rrt_status_t status =
          call("rrt_stream_synchronize", [&] { return rrt_stream_synchronize(s->handle); });
      RRT_FUZZ_CHECK(!s->capturing || status == RRT_ERR_INVALID_STATE,
                     "rrt_stream_synchronize of a capturing stream did not refuse");
      return;
    }
  }
}

void Harness::event_op(Context &ctx) {
  const auto op = in_.ConsumeIntegralInRange<int>(0, 4);
  if (op == 0) {
    if (ctx.events.size() >= kMaxEvents) {
      return;
    }
    rrt_event_t handle;
    fill_sentinel(&handle);
    const rrt_status_t status =
        call("rrt_event_create", [&] { return rrt_event_create(ctx.handle, &handle); });
    if (status != RRT_OK) {
      RRT_FUZZ_CHECK(still_sentinel(handle), "a failing rrt_event_create wrote its handle");
      return;
    }
    ctx.events.push_back(handle);
    return;
  }
  if (ctx.events.empty()) {
    return;
  }
  const std::size_t index = pick_index(ctx.events);
  rrt_event_t event = ctx.events[index];
  Stream *s = pick_stream(ctx, false);
  switch (op) {
    case 1:
      if (s != nullptr) {
        (void)call("rrt_event_record", [&] { return rrt_event_record(event, s->handle); });
      }
      return;
    case 2:
      if (s != nullptr) {
        (void)call("rrt_stream_wait_event",
                   [&] { return rrt_stream_wait_event(s->handle, event); });
      }
      return;
    case 3:
      (void)call("rrt_event_synchronize", [&] { return rrt_event_synchronize(event); });
      return;
    default: {
      const rrt_status_t status =
          call("rrt_event_destroy", [&] { return rrt_event_destroy(event); });
      // A graph or a capture that records or waits on the event keeps it: INVALID_STATE.
      if (status == RRT_ERR_INVALID_STATE) {
        return;
      }
      RRT_FUZZ_CHECK(status == RRT_OK, "rrt_event_destroy failed");
      ctx.events.erase(ctx.events.begin() + static_cast<std::ptrdiff_t>(index));
      return;
    }
  }
}

void Harness::capture_op(Context &ctx) {
  Stream *s = pick_stream(ctx, false);
  if (s == nullptr) {
    return;
  }
  if (!s->capturing) {
    const rrt_status_t status =
        call("rrt_stream_begin_capture", [&] { return rrt_stream_begin_capture(s->handle); });
    if (status == RRT_OK) {
      s->capturing = true;
      s->capture = Graph{};
      s->capture.program = ctx.mode != RRT_MODE_KERNEL;
      s->capture_used_run = false;
    }
    return;
  }
  if (ctx.graphs.size() >= kMaxGraphs) {
    return;
  }
  rrt_graph_t handle;
  fill_sentinel(&handle);
  const rrt_status_t status =
      call("rrt_stream_end_capture", [&] { return rrt_stream_end_capture(s->handle, &handle); });
  if (status != RRT_OK) {
    RRT_FUZZ_CHECK(still_sentinel(handle), "a failing rrt_stream_end_capture wrote its handle");
    return;
  }
  s->capturing = false;
  auto graph = std::make_unique<Graph>(std::move(s->capture));
  graph->handle = handle;
  graph->program = graph->program || s->capture_used_run;
  s->capture = Graph{};
  ctx.graphs.push_back(std::move(graph));
  if (coin()) {
    verify_graph(ctx, *ctx.graphs.back());
  }
}

void Harness::replay(Context &ctx) {
  if (ctx.graphs.empty()) {
    return;
  }
  const std::size_t index = pick_index(ctx.graphs);
  Graph &graph = *ctx.graphs[index];
  const auto op = in_.ConsumeIntegralInRange<int>(0, 3);
  if (op == 0) {
    const rrt_status_t status =
        call("rrt_graph_destroy", [&] { return rrt_graph_destroy(graph.handle); });
    RRT_FUZZ_CHECK(status == RRT_OK, "rrt_graph_destroy failed");
    // A replay still queued may write its host outputs: they live as long as the context.
    for (Output &out : graph.outputs) {
      if (out.host) {
        ctx.host_outputs.push_back(std::move(out.data));
      }
    }
    ctx.graphs.erase(ctx.graphs.begin() + static_cast<std::ptrdiff_t>(index));
    return;
  }
  if (op == 1) {
    verify_graph(ctx, graph);
    return;
  }
  if (graph.unusable || (graph.program && kAvoidProgramReplays)) {
    return;
  }
  Stream *s = pick_stream(ctx, false);
  if (s == nullptr) {
    return;
  }
  (void)call("rrt_graph_replay", [&] { return rrt_graph_replay(graph.handle, s->handle); });
}

void Harness::launch(Context &ctx) {
  if (!setup_buffers(ctx)) {
    // Launch with nothing initialized: refused.
    if (ctx.mode == -1) {
      rrt_run_args_t args{};
      args.struct_size = sizeof args;
      const rrt_status_t status = call(
          "rrt_kernel_launch", [&] { return rrt_kernel_launch(ctx.handle, 0, &args, nullptr); });
      RRT_FUZZ_CHECK(status != RRT_OK, "rrt_kernel_launch on a mode-less context succeeded");
    }
    return;
  }
  Kind kind = pick_kind();
  const std::int32_t id = coin() || ctx.callable[static_cast<int>(kind)] >= 0
                              ? ctx.callable[static_cast<int>(kind)]
                              : in_.ConsumeIntegralInRange<std::int32_t>(-1, 40);
  const bool host_in = coin();
  Stream *s = pick_stream(ctx, false);
  const bool checked = !(s != nullptr && s->capturing) && coin();
  Output out = make_output(ctx, kind, coin());
  rrt_tensor_arg_t tensors[2];
  rrt_run_args_t args;
  fill_args(ctx, host_in, out, tensors, &args);
  if (in_.ConsumeIntegralInRange<int>(0, 15) == 0) {
    args.num_tensors = 1;  // refused: one tensor per parameter
  }
  rrt_stream_t stream = checked ? ctx.check_stream : (s != nullptr ? s->handle : nullptr);
  if (checked) {
    RRT_FUZZ_CHECK(rrt_stream_synchronize(ctx.check_stream) == RRT_OK,
                   "the check stream reports a failure it never ran");
  }
  if (kAvoidKernelModeFailures && ctx.mode == RRT_MODE_KERNEL) {
    const auto target = ctx.prepared.find(id);
    if (target != ctx.prepared.end() && target->second == Kind::kFailing) {
      return;
    }
  }
  const rrt_status_t status =
      call("rrt_kernel_launch", [&] { return rrt_kernel_launch(ctx.handle, id, &args, stream); });
  if (ctx.mode != RRT_MODE_KERNEL) {
    RRT_FUZZ_CHECK(status != RRT_OK, "rrt_kernel_launch on a program context succeeded");
  }
  if (status != RRT_OK) {
    return;
  }
  const auto prepared = ctx.prepared.find(id);
  RRT_FUZZ_CHECK(prepared != ctx.prepared.end(),
                 "rrt_kernel_launch of an id that is not prepared succeeded");
  kind = prepared->second;
  out.kind = kind;
  if (s != nullptr && s->capturing && !checked) {
    s->capture.fails = s->capture.fails || kind == Kind::kFailing;
    if (kind != Kind::kFailing) {
      s->capture.outputs.push_back(std::move(out));
    } else if (out.host) {
      ctx.host_outputs.push_back(std::move(out.data));
    }
    return;
  }
  if (checked) {
    const rrt_status_t done = rrt_stream_synchronize(ctx.check_stream);
    RRT_FUZZ_RECORDED(done, "rrt_stream_synchronize");
    if (kind == Kind::kFailing) {
      RRT_FUZZ_CHECK(done == RRT_ERR_KERNEL_FAILED, "a failing launch did not report");
    } else {
      RRT_FUZZ_CHECK(done == RRT_OK, "a good launch on its own stream reported a failure");
      RRT_FUZZ_CHECK(output_correct(ctx, out), "a launch wrote wrong values");
    }
  } else if (out.host && stream == nullptr) {
    (void)rrt_stream_synchronize(stream);
  }
  if (out.host) {
    // A launch still queued may write it: keep it alive with the context.
    ctx.host_outputs.push_back(std::move(out.data));
  }
}

void Harness::run_op(Context &ctx) {
  const auto op = in_.ConsumeIntegralInRange<int>(0, 4);
  if (op == 0 || op == 1) {
    if (!setup_buffers(ctx)) {
      return;
    }
    const Kind kind = pick_kind();
    const std::int32_t id = ctx.callable[static_cast<int>(kind)];
    Output out = make_output(ctx, kind, coin());
    rrt_tensor_arg_t tensors[2];
    rrt_run_args_t args;
    fill_args(ctx, coin(), out, tensors, &args);
    if (op == 0) {
      clear_output(ctx, out);
      const rrt_status_t status = call("rrt_run", [&] { return rrt_run(ctx.handle, id, &args); });
      if (ctx.mode == RRT_MODE_PROGRAM && id >= 0) {
        if (kind == Kind::kFailing) {
          RRT_FUZZ_CHECK(status != RRT_OK, "a failing rrt_run did not report");
        } else if (status == RRT_OK) {
          RRT_FUZZ_CHECK(output_correct(ctx, out), "rrt_run wrote wrong values");
        }
      } else {
        RRT_FUZZ_CHECK(status != RRT_OK, "rrt_run without a prepared program callable");
      }
      if (out.host) {
        ctx.host_outputs.push_back(std::move(out.data));
      }
      return;
    }
    if (ctx.runs.size() >= kMaxRuns) {
      return;
    }
    rrt_run_t handle;
    fill_sentinel(&handle);
    const rrt_status_t status =
        call("rrt_run_prepare", [&] { return rrt_run_prepare(ctx.handle, id, &args, &handle); });
    if (status != RRT_OK) {
      RRT_FUZZ_CHECK(still_sentinel(handle), "a failing rrt_run_prepare wrote its handle");
      if (out.host) {
        ctx.host_outputs.push_back(std::move(out.data));
      }
      return;
    }
    auto run = std::make_unique<Run>();
    run->handle = handle;
    run->kind = kind;
    run->output = std::move(out);
    ctx.runs.push_back(std::move(run));
    return;
  }
  if (ctx.runs.empty()) {
    return;
  }
  const std::size_t index = pick_index(ctx.runs);
  Run &run = *ctx.runs[index];
  if (op == 2) {
    Stream *s = pick_stream(ctx, true);
    if (s != nullptr && s->capturing && kAvoidProgramReplays) {
      return;
    }
    const rrt_status_t status = call("rrt_run_launch", [&] {
      return rrt_run_launch(run.handle, s != nullptr ? s->handle : nullptr);
    });
    if (status == RRT_OK) {
      RRT_FUZZ_CHECK(!run.launched, "a second rrt_run_launch of one run succeeded");
      run.launched = true;
      run.on_capture = s != nullptr && s->capturing;
      if (run.on_capture) {
        s->capture_used_run = true;
      }
    }
    return;
  }
  if (op == 3) {
    if (!run.launched || run.on_capture) {
      return;  // a wait for a run that never runs is not asked for
    }
    const rrt_status_t status = call("rrt_run_wait", [&] { return rrt_run_wait(run.handle); });
    if (status == RRT_OK) {
      RRT_FUZZ_CHECK(run.kind != Kind::kFailing, "a failing run waited OK");
      RRT_FUZZ_CHECK(output_correct(ctx, run.output), "a program-mode run wrote wrong values");
    }
    return;
  }
  (void)call("rrt_run_finalize", [&] { return rrt_run_finalize(run.handle); });
  if (run.output.host) {
    ctx.host_outputs.push_back(std::move(run.output.data));
  }
  ctx.runs.erase(ctx.runs.begin() + static_cast<std::ptrdiff_t>(index));
}

void Harness::memory_op(Context &ctx) {
  const auto op = in_.ConsumeIntegralInRange<int>(0, 4);
  if (op == 0) {
    if (ctx.scratch.size() >= kMaxScratch) {
      return;
    }
    const auto bytes = in_.ConsumeIntegralInRange<std::size_t>(0, 4096);
    void *ptr;
    fill_sentinel(&ptr);
    const rrt_status_t status =
        call("rrt_device_alloc", [&] { return rrt_device_alloc(ctx.handle, bytes, &ptr); });
    if (status != RRT_OK) {
      RRT_FUZZ_CHECK(still_sentinel(ptr), "a failing rrt_device_alloc wrote its pointer");
      return;
    }
    RRT_FUZZ_CHECK(reinterpret_cast<std::uintptr_t>(ptr) % 1024 == 0,
                   "rrt_device_alloc returned an address that is not 1024-byte aligned");
    ctx.scratch.push_back(ptr);
    return;
  }
  if (op == 1) {
    // Free a scratch buffer, or a device output some graph captured (its replays then become
    // stale), or a pointer that was never allocated.
    void *victim = nullptr;
    bool captured = false;
    if (!ctx.scratch.empty() && coin()) {
      victim = ctx.scratch[pick_index(ctx.scratch)];
    } else if (!ctx.graphs.empty() && coin()) {
      Graph &g = *ctx.graphs[pick_index(ctx.graphs)];
      for (const Output &out : g.outputs) {
        if (!out.host) {
          victim = out.device;
          captured = true;
          break;
        }
      }
    }
    if (victim == nullptr) {
      static int not_allocated;
      const rrt_status_t status =
          call("rrt_device_free", [&] { return rrt_device_free(ctx.handle, &not_allocated); });
      RRT_FUZZ_CHECK(status == RRT_ERR_INVALID_ARGUMENT, "rrt_device_free of a host address");
      return;
    }
    if (kSynchronizeBeforeFree) {
      synchronize_all(ctx);
    }
    const rrt_status_t status =
        call("rrt_device_free", [&] { return rrt_device_free(ctx.handle, victim); });
    RRT_FUZZ_CHECK(status == RRT_OK, "rrt_device_free of a live allocation failed");
    std::erase(ctx.scratch, victim);
    std::erase(ctx.owned, victim);
    if (captured) {
      for (auto &g : ctx.graphs) {
        for (const Output &out : g->outputs) {
          if (out.device == victim) {
            g->unusable = true;
            // A replay now checks every captured address first and enqueues nothing.
            if (ctx.check_stream != nullptr && !(g->program && kAvoidProgramReplays)) {
              const rrt_status_t replayed = call("rrt_graph_replay", [&] {
                return rrt_graph_replay(g->handle, ctx.check_stream);
              });
              RRT_FUZZ_CHECK(replayed == RRT_ERR_STALE_ADDRESS,
                             "a replay of a graph whose buffer was freed was not refused as "
                             "stale");
            }
          }
        }
      }
    }
    return;
  }
  if (ctx.scratch.empty()) {
    return;
  }
  void *buffer = ctx.scratch[pick_index(ctx.scratch)];
  std::array<std::uint8_t, 512> host{};
  const auto bytes = in_.ConsumeIntegralInRange<std::size_t>(0, 600);
  Stream *s = pick_stream(ctx, true);
  if (s != nullptr && s->capturing) {
    return;  // a recorded copy would need its host buffer for every replay
  }
  const rrt_status_t status = call(op == 2 ? "rrt_memcpy_h2d" : "rrt_memcpy_d2h", [&] {
    const std::size_t n = std::min(bytes, host.size());
    return op == 2 ? rrt_memcpy_h2d(ctx.handle, buffer, host.data(), n, nullptr)
                   : rrt_memcpy_d2h(ctx.handle, host.data(), buffer, n, nullptr);
  });
  (void)status;
}

void Harness::query_op(Context &ctx) {
  switch (in_.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: {
      rrt_stats_t stats;
      fill_sentinel(&stats);
      stats.struct_size = coin() ? sizeof stats : in_.ConsumeIntegralInRange<std::uint32_t>(0, 64);
      const rrt_stats_t before = stats;
      const rrt_status_t status =
          call("rrt_context_stats", [&] { return rrt_context_stats(ctx.handle, &stats); });
      if (status != RRT_OK) {
        // Byte-wise on purpose: the sentinel fills the padding too.
        // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
        RRT_FUZZ_CHECK(std::memcmp(&stats, &before, sizeof stats) == 0,
                       "a failing rrt_context_stats wrote its output");
      }
      return;
    }
    case 1: {
      std::array<rrt_task_timing_t, 4> timings;
      fill_sentinel(&timings);
      std::uint32_t count;
      fill_sentinel(&count);
      const rrt_status_t status = call("rrt_context_profile", [&] {
        return rrt_context_profile(ctx.handle, timings.data(), 4, &count);
      });
      if (status != RRT_OK) {
        RRT_FUZZ_CHECK(still_sentinel(count) && still_sentinel(timings),
                       "a failing rrt_context_profile wrote its output");
      }
      return;
    }
    case 2: {
      rrt_mode_t mode;
      int latched;
      fill_sentinel(&mode);
      fill_sentinel(&latched);
      const rrt_status_t status =
          call("rrt_context_mode", [&] { return rrt_context_mode(ctx.handle, &mode, &latched); });
      RRT_FUZZ_CHECK(status == RRT_OK, "rrt_context_mode failed");
      RRT_FUZZ_CHECK((latched != 0) == (ctx.mode != -1), "rrt_context_mode latched flag is wrong");
      RRT_FUZZ_CHECK(latched == 0 || mode == ctx.mode, "rrt_context_mode reports another mode");
      return;
    }
    default: {
      rrt_error_detail_t before{};
      const rrt_status_t code = rrt_last_error(&before);
      RRT_FUZZ_CHECK(rrt_last_error(nullptr) == RRT_ERR_INVALID_ARGUMENT,
                     "rrt_last_error(NULL) did not refuse");
      rrt_error_detail_t after{};
      RRT_FUZZ_CHECK(rrt_last_error(&after) == code && after.code == before.code &&
                         std::strcmp(after.message, before.message) == 0,
                     "rrt_last_error(NULL) overwrote the recorded detail");
      return;
    }
  }
}

void Harness::step() {
  const auto op = in_.ConsumeIntegralInRange<int>(0, 15);
  if (op == 0) {
    create_context();
    return;
  }
  if (op == 1) {
    destroy_context();
    return;
  }
  Context *ctx = pick_context();
  if (ctx == nullptr) {
    create_context();
    return;
  }
  switch (op) {
    case 2:
      init_program(*ctx);
      return;
    case 3:
      init_kernel(*ctx);
      return;
    case 4:
      finalize(*ctx);
      return;
    case 5:
      prepare(*ctx);
      return;
    case 6:
      stream_op(*ctx);
      return;
    case 7:
      event_op(*ctx);
      return;
    case 8:
      capture_op(*ctx);
      return;
    case 9:
    case 10:
      replay(*ctx);
      return;
    case 11:
    case 12:
      launch(*ctx);
      return;
    case 13:
      run_op(*ctx);
      return;
    case 14:
      memory_op(*ctx);
      return;
    default:
      query_op(*ctx);
      return;
  }
}

// Releases everything in dependency order; each call must succeed.
void Harness::teardown(Context &ctx) {
  for (Stream &s : ctx.streams) {
    if (s.capturing) {
      rrt_graph_t graph = nullptr;
      RRT_FUZZ_CHECK(rrt_stream_end_capture(s.handle, &graph) == RRT_OK,
                     "rrt_stream_end_capture failed at teardown");
      RRT_FUZZ_CHECK(rrt_graph_destroy(graph) == RRT_OK, "rrt_graph_destroy failed at teardown");
    }
  }
  for (auto &run : ctx.runs) {
    (void)rrt_run_finalize(run->handle);
  }
  for (auto &graph : ctx.graphs) {
    RRT_FUZZ_CHECK(rrt_graph_destroy(graph->handle) == RRT_OK,
                   "rrt_graph_destroy failed at teardown");
  }
  for (Stream &s : ctx.streams) {
    const rrt_status_t status = rrt_stream_destroy(s.handle);
    RRT_FUZZ_CHECK(status == RRT_OK || status == RRT_ERR_KERNEL_FAILED,
                   "rrt_stream_destroy failed at teardown");
  }
  if (ctx.check_stream != nullptr) {
    const rrt_status_t status = rrt_stream_destroy(ctx.check_stream);
    RRT_FUZZ_CHECK(status == RRT_OK || status == RRT_ERR_KERNEL_FAILED,
                   "rrt_stream_destroy failed at teardown");
  }
  for (rrt_event_t event : ctx.events) {
    RRT_FUZZ_CHECK(rrt_event_destroy(event) == RRT_OK, "rrt_event_destroy failed at teardown");
  }
  RRT_FUZZ_CHECK(rrt_context_destroy(ctx.handle) == RRT_OK, "rrt_context_destroy failed");
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the name libFuzzer calls
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  Harness harness(in);
  for (int i = 0; i < kMaxCalls && in.remaining_bytes() > 0; ++i) {
    harness.step();
  }
  return 0;
}
