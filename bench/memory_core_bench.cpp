// The memory core in steady state, nanoseconds per call: the calls every run makes once its
// blocks are sized, timed on the objects the runtime uses (white-box), each against its
// limit: the least work that gives the same answer.
//
//   memory/bank_commit_keep/<mode>     ArenaBank::commit of the sizes it already holds (every
//                                      region kept: a transaction that plans three guarded
//                                      blocks through the growth guard, no allocator call)
//   memory/bank_commit_keep_limit      the keep decision alone: three size comparisons
//   memory/retained_begin_fit/<mode>   GuardedBlock::reserve of a retained-staging size that
//                                      fits, plus the run's one slice
//   memory/retained_begin_fit_limit    one comparison, a cursor reset and a slice bump
//   memory/context_bank_commit_keep    the same bank sizing through the DeviceContext's slot
//                                      reservation (mutex, transaction, image-cache check)
//   memory/context_retained_begin_fit  the same staging reservation + slice through the
//                                      DeviceContext's slot reservation
//   memory/image_cache_lookup_hit      PrebuiltImageCache::lookup that hits
//   memory/cache_hit_bind              the device-build bind in program mode with a
//                                      prebuilt-image hit: everything a program-mode run binds
//                                      in steady state (retained staging of two HOST tensors,
//                                      the image probe, the invocation encoding, the
//                                      referenced list)
//   memory/cache_hit_bind_limit        the bind's output copied from a template: the same
//                                      invocation bytes, copies and referenced list
// <mode> is program or kernel (kernel: a launch being encoded, where any allocation would be
// refused).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_support.h"
#include "context/device_context.h"
#include "memory/arena_bank.h"
#include "memory/guarded_block.h"
#include "memory/prebuilt_image_cache.h"
#include "platform/launch/kernel_registry.h"
#include "platform/sim/kernels/builtin_kernels.h"
#include "platform/sim/sim_device.h"
#include "runtime/bind.h"
#include "runtime/callable.h"

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

// The blocks' host for the white-box benchmarks: a simulator device and a growth context the
// benchmark sets, with nothing else on the path.
class BenchHost final : public replayrt::BlockHost {
 public:
  explicit BenchHost(GrowthContext context) : context_(context) {}

  void set_context(GrowthContext context) noexcept { context_ = context; }

  GrowthContext growth_context() const noexcept override { return context_; }
  replayrt::Status allocate(const replayrt::GuardedBlock & /*block*/, std::size_t bytes,
                            void **out) noexcept override {
    void *ptr = nullptr;
    try {
      ptr = device_.allocate(bytes);
    } catch (...) {
      ptr = nullptr;
    }
    if (ptr == nullptr) {
      return replayrt::Status::error(RRT_ERR_OUT_OF_MEMORY, "bench device out of memory");
    }
    *out = ptr;
    return replayrt::Status::ok();
  }
  bool free(void *ptr, std::size_t /*bytes*/) noexcept override {
    return device_.free(ptr).is_ok();
  }
  replayrt::Status zero(void *ptr, std::size_t bytes) noexcept override {
    return device_.memset(ptr, 0, bytes);
  }
  void count_refusal(replayrt::GrowthPoint /*point*/) noexcept override {}

 private:
  replayrt::sim::SimDevice device_;
  GrowthContext context_;
};

std::uint64_t bank_allocations(const replayrt::ArenaBank &bank) {
  std::uint64_t total = 0;
  for (const auto region : {replayrt::BankRegion::kGmHeap, replayrt::BankRegion::kGmSm,
                            replayrt::BankRegion::kRuntimePool}) {
    total += bank.region(region).allocations();
  }
  return total;
}

void bank_commit_keep(benchmark::State &state, ExecutionMode mode) {
  BenchHost host(GrowthContext{mode, false});
  replayrt::ArenaBank bank(host);
  fail_if(state, !bank.commit(kBankSizes).is_ok(), "first commit");
  host.set_context(steady_context(mode));
  for (auto _ : state) {
    replayrt::Status committed = bank.commit(kBankSizes);
    benchmark::DoNotOptimize(committed);
  }
  fail_if(state, bank_allocations(bank) != 3, "a steady commit allocated");
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
  BenchHost host(GrowthContext{mode, false});
  replayrt::GuardedBlock retained(host, replayrt::GrowthPoint::kRetainedStaging);
  const std::uint64_t required = replayrt::staging_slice_bytes(kStagedBytes);
  fail_if(state, !retained.reserve(required).is_ok(), "first reserve");
  host.set_context(steady_context(mode));
  for (auto _ : state) {
    replayrt::Status reserved = retained.reserve(required);
    void *slice = static_cast<std::byte *>(retained.base());
    benchmark::DoNotOptimize(reserved);
    benchmark::DoNotOptimize(slice);
  }
  fail_if(state, retained.allocations() != 1, "a steady reserve allocated");
}

void retained_begin_fit_limit(benchmark::State &state) {
  std::uint64_t capacity = replayrt::staging_slice_bytes(kStagedBytes);
  std::uint64_t cursor = 0;
  std::vector<std::byte> storage(capacity);
  std::byte *base = storage.data();
  for (auto _ : state) {
    benchmark::DoNotOptimize(capacity);
    std::uint64_t required = replayrt::staging_slice_bytes(kStagedBytes);
    benchmark::DoNotOptimize(required);
    const bool fits = required <= capacity;
    cursor = 0;
    void *slice = fits ? base + cursor : nullptr;
    cursor += required;
    benchmark::DoNotOptimize(slice);
    benchmark::DoNotOptimize(cursor);
  }
}

// A program-mode DeviceContext on a simulator device with slot 0's bank sized to kBankSizes
// and its retained staging sized for one staged tensor, through the slot reservation every
// run makes.
class ContextSetup {
 public:
  ContextSetup() : context_(device_) {
    replayrt::SlotGrant grant;
    ok_ = context_.latch().latch(ExecutionMode::kProgram).is_ok() &&
          context_.slot(0).reserve(bank_request(), &grant).is_ok() &&
          context_.slot(0).reserve(staging_request(), &grant).is_ok();
  }

  static replayrt::SlotRequest bank_request() {
    replayrt::SlotRequest request;
    request.size_bank = true;
    request.bank = kBankSizes;
    return request;
  }
  static replayrt::SlotRequest staging_request() {
    replayrt::SlotRequest request;
    request.staging_kind = replayrt::StagingKind::kRetained;
    request.staging_bytes = replayrt::staging_slice_bytes(kStagedBytes);
    return request;
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
  ContextSetup setup;
  fail_if(state, !setup.ok(), "context setup");
  const std::uint64_t allocations = setup.device().memory_counters().allocation_calls;
  const replayrt::SlotRequest request = ContextSetup::bank_request();
  replayrt::SlotGrant grant;
  for (auto _ : state) {
    replayrt::Status committed = setup.context().slot(0).reserve(request, &grant);
    benchmark::DoNotOptimize(committed);
    benchmark::DoNotOptimize(grant);
  }
  fail_if(state, setup.device().memory_counters().allocation_calls != allocations,
          "a steady bank reservation allocated");
}

void context_retained_begin_fit(benchmark::State &state) {
  ContextSetup setup;
  fail_if(state, !setup.ok(), "context setup");
  const std::uint64_t allocations = setup.device().memory_counters().allocation_calls;
  const replayrt::SlotRequest request = ContextSetup::staging_request();
  replayrt::SlotGrant grant;
  for (auto _ : state) {
    replayrt::Status reserved = setup.context().slot(0).reserve(request, &grant);
    void *slice = grant.staging;
    benchmark::DoNotOptimize(reserved);
    benchmark::DoNotOptimize(slice);
  }
  fail_if(state, setup.device().memory_counters().allocation_calls != allocations,
          "a steady staging reservation allocated");
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
  BindSetup() : host_x_(kElements), host_y_(kElements) {
    std::int32_t scale = -1;
    std::int32_t add = -1;
    ok_ =
        setup_.ok() && kernels_.find("scale", &scale).is_ok() && kernels_.find("add", &add).is_ok();
    builder_ = replayrt::bench::axpy_desc(scale, add, kElements);
    ok_ = ok_ && replayrt::testing::create_callable(builder_.desc(), kernels_, &callable_).is_ok();
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
    return replayrt::bind_strategy(RRT_BIND_DEVICE_BUILD)
        .bind(setup_.context().slot(0), request_, &bound_)
        .is_ok();
  }
  const replayrt::BoundRun &bound() const { return bound_; }
  std::uint64_t allocations() { return setup_.device().memory_counters().allocation_calls; }

 private:
  static constexpr std::uint64_t kElements = kStagedBytes / sizeof(float);

  ContextSetup setup_;
  replayrt::KernelRegistry kernels_{replayrt::sim::builtin_launchers()};
  replayrt::bench::DescBuilder builder_;
  std::unique_ptr<const replayrt::Callable> callable_;
  std::vector<float> host_x_;
  std::vector<float> host_y_;
  replayrt::TensorArg tensors_[2]{};
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
