// The memory core in steady state, nanoseconds per call: the calls every run makes once its
// buffers are sized, timed on the objects the runtime uses (white-box), each against its
// limit: the least work that gives the same answer.
//
//   memory/bank_commit_keep/<mode>     ArenaBank::commit of the sizes it already holds (every
//                                      region kept: preflight through the growth guard, no
//                                      allocator call)
//   memory/bank_commit_keep_limit      the keep decision alone: three size comparisons
//   memory/retained_begin_fit/<mode>   RetainedBuffer::begin of a size that fits, plus the
//                                      run's one slice (acquire)
//   memory/retained_begin_fit_limit    one comparison, a cursor reset and a slice bump
//   memory/context_bank_commit_keep    the same commit through DeviceContext (mutex, cache
//                                      invalidation check, refusal accounting)
//   memory/context_retained_begin_fit  the same begin + acquire through DeviceContext
//   memory/image_cache_lookup_hit      PrebuiltImageCache::lookup that hits
//   memory/cache_hit_bind              bind_device_build in program mode with a prebuilt-image
//                                      hit: everything a program-mode run binds in steady state
//                                      (retained staging of two HOST tensors, the image probe,
//                                      the invocation encoding, the referenced list)
//   memory/cache_hit_bind_limit        the bind's output copied from a template: the same
//                                      invocation bytes, copies and referenced list
// <mode> is program or kernel (kernel: a launch being encoded, where any allocation would be
// refused).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_support.h"
#include "context/device_context.h"
#include "memory/arena_bank.h"
#include "memory/device_allocator.h"
#include "memory/prebuilt_image_cache.h"
#include "memory/retained_buffer.h"
#include "platform/launch/kernel_registry.h"
#include "platform/sim/sim_device.h"
#include "runtime/bind.h"
#include "runtime/callable.h"
#include "runtime/device_build_bind.h"

namespace {

using replayrt::BankRequest;
using replayrt::ExecutionMode;
using replayrt::GrowthContext;

constexpr BankRequest kBankSizes{std::uint64_t{1} << 20, std::uint64_t{64} << 10,
                                 std::uint64_t{256} << 10};
constexpr std::uint64_t kStagedBytes = 4096;

GrowthContext steady_context(ExecutionMode mode) {
  return GrowthContext{mode, mode == ExecutionMode::kKernel};
}

void fail_if(benchmark::State &state, bool failed, const char *what) {
  if (failed) {
    state.SkipWithError(what);
  }
}

void bank_commit_keep(benchmark::State &state, ExecutionMode mode) {
  replayrt::sim::SimDevice device;
  replayrt::ArenaBank bank(replayrt::device_allocator(device));
  fail_if(state, !bank.commit(kBankSizes, GrowthContext{mode, false}).status.is_ok(),
          "first commit");
  const GrowthContext context = steady_context(mode);
  for (auto _ : state) {
    replayrt::BankCommitOutcome outcome = bank.commit(kBankSizes, context);
    benchmark::DoNotOptimize(outcome);
  }
  fail_if(state, bank.alloc_count() != 3, "a steady commit allocated");
}

void bank_commit_keep_limit(benchmark::State &state) {
  BankRequest held = kBankSizes;
  BankRequest request = kBankSizes;
  for (auto _ : state) {
    benchmark::DoNotOptimize(held);
    benchmark::DoNotOptimize(request);
    const bool keep = request.gm_heap <= held.gm_heap && request.gm_sm <= held.gm_sm &&
                      request.runtime_pool <= held.runtime_pool;
    benchmark::DoNotOptimize(keep);
  }
}

void retained_begin_fit(benchmark::State &state, ExecutionMode mode) {
  replayrt::sim::SimDevice device;
  replayrt::RetainedBuffer buffer(replayrt::device_allocator(device));
  const std::uint64_t required = replayrt::RetainedBuffer::slice_bytes(kStagedBytes);
  fail_if(state, !buffer.begin(required, GrowthContext{mode, false}).is_ok(), "first begin");
  const GrowthContext context = steady_context(mode);
  for (auto _ : state) {
    replayrt::Status begun = buffer.begin(required, context);
    void *slice = buffer.acquire(kStagedBytes);
    benchmark::DoNotOptimize(begun);
    benchmark::DoNotOptimize(slice);
  }
  fail_if(state, buffer.alloc_count() != 1, "a steady begin allocated");
}

void retained_begin_fit_limit(benchmark::State &state) {
  std::uint64_t capacity = replayrt::RetainedBuffer::slice_bytes(kStagedBytes);
  std::uint64_t cursor = 0;
  std::vector<std::byte> storage(capacity);
  std::byte *base = storage.data();
  for (auto _ : state) {
    benchmark::DoNotOptimize(capacity);
    std::uint64_t required = replayrt::RetainedBuffer::slice_bytes(kStagedBytes);
    benchmark::DoNotOptimize(required);
    const bool fits = required <= capacity;
    cursor = 0;
    void *slice = fits ? base + cursor : nullptr;
    cursor += required;
    benchmark::DoNotOptimize(slice);
    benchmark::DoNotOptimize(cursor);
  }
}

// A DeviceContext on a simulator device, latched in `mode`, with slot 0's bank committed to
// kBankSizes and its retained buffer sized for one staged tensor.
class ContextSetup {
 public:
  explicit ContextSetup(ExecutionMode mode) : context_(device_) {
    ok_ = context_.latch().latch(mode).is_ok() &&
          context_.setup_static_arena(GrowthContext{mode, false}, 0, kBankSizes).is_ok() &&
          context_
              .retained_begin(GrowthContext{mode, false}, 0,
                              replayrt::RetainedBuffer::slice_bytes(kStagedBytes))
              .is_ok();
  }

  bool ok() const { return ok_; }
  replayrt::sim::SimDevice &device() { return device_; }
  replayrt::DeviceContext &context() { return context_; }

 private:
  replayrt::sim::SimDevice device_;
  replayrt::DeviceContext context_;
  bool ok_ = false;
};

void context_bank_commit_keep(benchmark::State &state) {
  ContextSetup setup(ExecutionMode::kProgram);
  fail_if(state, !setup.ok(), "context setup");
  const GrowthContext context = steady_context(ExecutionMode::kProgram);
  for (auto _ : state) {
    replayrt::Status committed = setup.context().setup_static_arena(context, 0, kBankSizes);
    benchmark::DoNotOptimize(committed);
  }
}

void context_retained_begin_fit(benchmark::State &state) {
  ContextSetup setup(ExecutionMode::kProgram);
  fail_if(state, !setup.ok(), "context setup");
  const GrowthContext context = steady_context(ExecutionMode::kProgram);
  const std::uint64_t required = replayrt::RetainedBuffer::slice_bytes(kStagedBytes);
  for (auto _ : state) {
    replayrt::Status begun = setup.context().retained_begin(context, 0, required);
    void *slice = setup.context().retained_acquire(0, kStagedBytes);
    benchmark::DoNotOptimize(begun);
    benchmark::DoNotOptimize(slice);
  }
}

void image_cache_lookup_hit(benchmark::State &state) {
  replayrt::PrebuiltImageCache cache;
  int dummy[3] = {};
  const replayrt::BankBases bases{&dummy[0], &dummy[1], &dummy[2]};
  cache.store(replayrt::PrebuiltImageCache::Entry{0, bases, 42, 0, 1024});
  replayrt::PrebuiltImageCache::Entry hit;
  for (auto _ : state) {
    const bool found = cache.lookup(0, 42, bases, &hit);
    benchmark::DoNotOptimize(found);
    benchmark::DoNotOptimize(hit);
  }
}

// The axpy callable (y = 2x + x over kStagedBytes / 4 floats) bound in program mode with both
// tensors HOST, after a first bind that built and cached the image.
class BindSetup {
 public:
  BindSetup() : setup_(ExecutionMode::kProgram), host_x_(kElements), host_y_(kElements) {
    std::int32_t scale = -1;
    std::int32_t add = -1;
    ok_ =
        setup_.ok() && kernels_.find("scale", &scale).is_ok() && kernels_.find("add", &add).is_ok();
    builder_ = replayrt::bench::axpy_desc(scale, add, kElements);
    ok_ = ok_ && replayrt::Callable::create(builder_.desc(), kernels_, &callable_).is_ok();
    tensors_[0] = {host_x_.data(), kStagedBytes, RRT_SPACE_HOST};
    tensors_[1] = {host_y_.data(), kStagedBytes, RRT_SPACE_HOST};
    if (ok_) {
      request_.callable = callable_.get();
      request_.callable_id = 0;
      request_.generation = 1;
      request_.args.tensors = {tensors_, 2};
      ok_ = bind() && !bound_.copies_in.empty();
    }
  }

  bool ok() const { return ok_; }
  bool bind() {
    const replayrt::HostApi api = setup_.context().host_api(0, 0, false);
    return replayrt::bind_device_build(api, request_, &bound_).is_ok();
  }
  const replayrt::BoundRun &bound() const { return bound_; }
  std::uint64_t allocations() { return setup_.device().memory_counters().allocation_calls; }

 private:
  static constexpr std::uint64_t kElements = kStagedBytes / sizeof(float);

  ContextSetup setup_;
  replayrt::KernelRegistry kernels_;
  replayrt::bench::DescBuilder builder_;
  std::unique_ptr<const replayrt::Callable> callable_;
  std::vector<float> host_x_;
  std::vector<float> host_y_;
  rrt_tensor_arg_t tensors_[2]{};
  replayrt::BindRequest request_;
  replayrt::BoundRun bound_;
  bool ok_ = false;
};

void cache_hit_bind(benchmark::State &state) {
  BindSetup setup;
  fail_if(state, !setup.ok(), "bind setup");
  const std::uint64_t allocations = setup.allocations();
  for (auto _ : state) {
    if (!setup.bind()) {
      state.SkipWithError("bind failed");
      break;
    }
    benchmark::DoNotOptimize(setup.bound());
  }
  fail_if(state, setup.allocations() != allocations, "a cache-hit bind allocated");
}

void cache_hit_bind_limit(benchmark::State &state) {
  BindSetup setup;
  fail_if(state, !setup.ok(), "bind setup");
  const replayrt::BoundRun &bound_template = setup.bound();
  replayrt::BoundRun out = bound_template;
  for (auto _ : state) {
    out.clear();
    out.invocation.assign(bound_template.invocation.begin(), bound_template.invocation.end());
    out.invocation_bytes = bound_template.invocation_bytes;
    out.copies_in.assign(bound_template.copies_in.begin(), bound_template.copies_in.end());
    out.copies_out.assign(bound_template.copies_out.begin(), bound_template.copies_out.end());
    out.referenced.assign(bound_template.referenced.begin(), bound_template.referenced.end());
    benchmark::DoNotOptimize(out);
  }
}

void register_all() {
  const struct {
    const char *name;
    ExecutionMode mode;
  } modes[] = {{"program", ExecutionMode::kProgram}, {"kernel", ExecutionMode::kKernel}};
  for (const auto &mode : modes) {
    benchmark::RegisterBenchmark((std::string("memory/bank_commit_keep/") + mode.name).c_str(),
                                 bank_commit_keep, mode.mode);
  }
  benchmark::RegisterBenchmark("memory/bank_commit_keep_limit", bank_commit_keep_limit);
  for (const auto &mode : modes) {
    benchmark::RegisterBenchmark((std::string("memory/retained_begin_fit/") + mode.name).c_str(),
                                 retained_begin_fit, mode.mode);
  }
  benchmark::RegisterBenchmark("memory/retained_begin_fit_limit", retained_begin_fit_limit);
  benchmark::RegisterBenchmark("memory/context_bank_commit_keep", context_bank_commit_keep);
  benchmark::RegisterBenchmark("memory/context_retained_begin_fit", context_retained_begin_fit);
  benchmark::RegisterBenchmark("memory/image_cache_lookup_hit", image_cache_lookup_hit);
  benchmark::RegisterBenchmark("memory/cache_hit_bind", cache_hit_bind);
  benchmark::RegisterBenchmark("memory/cache_hit_bind_limit", cache_hit_bind_limit);
}

}  // namespace

int main(int argc, char **argv) {
  return replayrt::bench::bench_main(argc, argv, &register_all);
}
