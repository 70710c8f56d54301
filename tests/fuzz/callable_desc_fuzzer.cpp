// Callable descriptors from fuzz bytes, through rrt_capacity_plan_fit, rrt_capacity_plan_fit_all
// and rrt_callable_prepare on a program-mode context and on a kernel-mode context planned from
// the descriptors.
//
// Invariants: no crash, leak or undefined behaviour; a failing call's code is rrt_last_error's;
// a failing call writes no out-parameter (plans and ids are pre-filled with sentinels) and
// changes no statistic; a descriptor the program context prepares also prepares on a kernel
// context whose plan rrt_capacity_plan_fit_all sized for it.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include <replayrt/replayrt.h>

#include "fuzz_support.h"

namespace {

using replayrt::fuzz::fill_sentinel;
using replayrt::fuzz::same_except_refusals;
using replayrt::fuzz::stats_of;
using replayrt::fuzz::still_sentinel;

// Bounds that keep one input fast: descriptors stay small, and a kernel context is created
// only when the plan it would freeze is modest.
constexpr std::uint32_t kMaxDescs = 3;
constexpr std::uint32_t kMaxTensors = 6;
constexpr std::uint32_t kMaxTasks = 8;
// Picks 250..255 give 250..255 operands, past the runtime's per-task limit of 128.
constexpr std::uint32_t kMaxOperands = 256;
constexpr std::uint64_t kMaxPlanBytes = std::uint64_t{64} << 20;

int user_kernel(const rrt_kernel_args_t *, void *) {
  return 0;
}

// One descriptor and the arrays it points into.
struct FuzzedDesc {
  std::vector<rrt_tensor_desc_t> params;
  std::vector<rrt_tensor_desc_t> intermediates;
  std::vector<std::vector<rrt_operand_t>> operands;
  std::vector<rrt_task_desc_t> tasks;
  rrt_callable_desc_t desc{};
};

rrt_tensor_desc_t fuzz_tensor(FuzzedDataProvider &in) {
  rrt_tensor_desc_t t{};
  t.dtype = static_cast<rrt_dtype_t>(in.ConsumeIntegralInRange<int>(-1, 6));
  t.ndim = in.ConsumeIntegralInRange<std::uint32_t>(0, RRT_MAX_DIMS + 1);
  for (std::uint64_t &dim : t.shape) {
    const auto pick = in.ConsumeIntegral<std::uint8_t>();
    dim = pick < 240 ? pick % 17 : in.ConsumeIntegral<std::uint64_t>();
  }
  t.direction = static_cast<rrt_direction_t>(in.ConsumeIntegralInRange<int>(0, 3));
  return t;
}

void fuzz_desc(FuzzedDataProvider &in, FuzzedDesc *out) {
  FuzzedDesc &f = *out;
  const auto num_params = in.ConsumeIntegralInRange<std::uint32_t>(0, kMaxTensors);
  const auto num_intermediates = in.ConsumeIntegralInRange<std::uint32_t>(0, kMaxTensors);
  for (std::uint32_t i = 0; i < num_params; ++i) {
    f.params.push_back(fuzz_tensor(in));
  }
  for (std::uint32_t i = 0; i < num_intermediates; ++i) {
    f.intermediates.push_back(fuzz_tensor(in));
  }
  const auto num_tasks = in.ConsumeIntegralInRange<std::uint32_t>(0, kMaxTasks);
  f.operands.resize(num_tasks);
  for (std::uint32_t t = 0; t < num_tasks; ++t) {
    const auto count_pick = in.ConsumeIntegral<std::uint8_t>();
    const std::uint32_t count = count_pick < 250 ? count_pick % 5 : count_pick % kMaxOperands;
    for (std::uint32_t o = 0; o < count; ++o) {
      rrt_operand_t op{};
      op.kind = static_cast<rrt_operand_kind_t>(in.ConsumeIntegralInRange<int>(0, 4));
      const auto index_pick = in.ConsumeIntegral<std::uint8_t>();
      op.index = index_pick < 250 ? index_pick % 8 : in.ConsumeIntegral<std::uint32_t>();
      f.operands[t].push_back(op);
    }
  }
  for (std::uint32_t t = 0; t < num_tasks; ++t) {
    rrt_task_desc_t task{};
    // 0..14 built-ins, 15 the user kernel every context here registers, 16 unknown.
    task.kernel_id = in.ConsumeIntegralInRange<std::int32_t>(-1, 16);
    task.num_operands = static_cast<std::uint32_t>(f.operands[t].size());
    task.operands = f.operands[t].empty() ? nullptr : f.operands[t].data();
    f.tasks.push_back(task);
  }
  rrt_callable_desc_t &d = f.desc;
  const auto size_pick = in.ConsumeIntegral<std::uint8_t>();
  d.struct_size = size_pick < 250 ? sizeof d : size_pick;
  d.bind = static_cast<rrt_bind_strategy_t>(in.ConsumeIntegralInRange<int>(0, 2));
  d.num_params = num_params;
  d.params = f.params.empty() ? nullptr : f.params.data();
  d.num_intermediates = num_intermediates;
  d.intermediates = f.intermediates.empty() ? nullptr : f.intermediates.data();
  d.num_scalars = in.ConsumeIntegralInRange<std::uint32_t>(0, 4);
  d.num_tasks = num_tasks;
  d.tasks = f.tasks.empty() ? nullptr : f.tasks.data();
  // Occasionally claim elements behind a null array: validation must refuse it.
  if (in.ConsumeIntegralInRange<int>(0, 31) == 0) {
    d.num_params = d.params == nullptr ? 1 : d.num_params;
  }
}

bool plan_grew_from(const rrt_capacity_plan_t &before, const rrt_capacity_plan_t &after) {
  return after.gm_heap_bytes >= before.gm_heap_bytes && after.gm_sm_bytes >= before.gm_sm_bytes &&
         after.runtime_pool_bytes >= before.runtime_pool_bytes &&
         after.retained_staging_bytes >= before.retained_staging_bytes &&
         after.graph_definition_bytes >= before.graph_definition_bytes &&
         after.host_staging_bytes >= before.host_staging_bytes;
}

std::uint64_t plan_total(const rrt_capacity_plan_t &p) {
  const std::uint64_t parts[] = {p.gm_heap_bytes,          p.gm_sm_bytes,
                                 p.runtime_pool_bytes,     p.retained_staging_bytes,
                                 p.graph_definition_bytes, p.host_staging_bytes};
  std::uint64_t total = 0;
  for (const std::uint64_t part : parts) {
    if (part > kMaxPlanBytes) {
      return kMaxPlanBytes + 1;
    }
    total += part;
  }
  return total;
}

rrt_context_t make_context() {
  rrt_context_options_t options{};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_SIM;
  rrt_context_t ctx = nullptr;
  RRT_FUZZ_CHECK(rrt_context_create(&options, &ctx) == RRT_OK, "rrt_context_create failed");
  std::int32_t id = -1;
  RRT_FUZZ_CHECK(
      rrt_kernel_register(ctx, "fuzz_user", &user_kernel, nullptr, &id) == RRT_OK && id == 15,
      "the user kernel did not get id 15");
  return ctx;
}

// Prepares `desc`; returns whether it succeeded after checking the failure invariants.
bool prepare_checked(rrt_context_t ctx, const rrt_callable_desc_t &desc) {
  const rrt_stats_t before = stats_of(ctx);
  std::int32_t id;
  fill_sentinel(&id);
  const rrt_status_t status = rrt_callable_prepare(ctx, &desc, &id);
  RRT_FUZZ_RECORDED(status, "rrt_callable_prepare");
  if (status == RRT_OK) {
    RRT_FUZZ_CHECK(id >= 0, "rrt_callable_prepare succeeded with a negative id");
    return true;
  }
  RRT_FUZZ_CHECK(still_sentinel(id), "a failing rrt_callable_prepare wrote its id");
  RRT_FUZZ_CHECK(same_except_refusals(before, stats_of(ctx)),
                 "a failing rrt_callable_prepare changed the statistics");
  return false;
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the name libFuzzer calls
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const auto count = in.ConsumeIntegralInRange<std::uint32_t>(1, kMaxDescs);
  std::vector<FuzzedDesc> descs(count);
  std::vector<const rrt_callable_desc_t *> pointers;
  for (FuzzedDesc &d : descs) {
    fuzz_desc(in, &d);
    pointers.push_back(&d.desc);
  }

  // Plan fit: a failure leaves the plan as it was; a success only grows it.
  std::vector<bool> fits;
  for (const FuzzedDesc &d : descs) {
    rrt_capacity_plan_t plan;
    fill_sentinel(&plan);
    const rrt_capacity_plan_t before = plan;
    const rrt_status_t status = rrt_capacity_plan_fit(&d.desc, &plan);
    RRT_FUZZ_RECORDED(status, "rrt_capacity_plan_fit");
    fits.push_back(status == RRT_OK);
    if (status != RRT_OK) {
      RRT_FUZZ_CHECK(still_sentinel(plan), "a failing rrt_capacity_plan_fit wrote the plan");
    } else {
      RRT_FUZZ_CHECK(plan_grew_from(before, plan), "rrt_capacity_plan_fit shrank the plan");
    }
  }
  rrt_capacity_plan_t plan{};
  const rrt_status_t fit_all = rrt_capacity_plan_fit_all(pointers.data(), count, &plan);
  RRT_FUZZ_RECORDED(fit_all, "rrt_capacity_plan_fit_all");
  bool all_fit = true;
  for (const bool fit : fits) {
    all_fit = all_fit && fit;
  }
  RRT_FUZZ_CHECK((fit_all == RRT_OK) == all_fit,
                 "rrt_capacity_plan_fit_all disagrees with rrt_capacity_plan_fit");
  if (fit_all != RRT_OK) {
    rrt_capacity_plan_t untouched;
    fill_sentinel(&untouched);
    RRT_FUZZ_CHECK(rrt_capacity_plan_fit_all(pointers.data(), count, &untouched) == fit_all,
                   "rrt_capacity_plan_fit_all is not deterministic");
    RRT_FUZZ_CHECK(still_sentinel(untouched), "a failing rrt_capacity_plan_fit_all wrote the plan");
  }

  // Program mode grows on demand.
  rrt_context_t program = make_context();
  RRT_FUZZ_CHECK(rrt_program_init(program) == RRT_OK, "rrt_program_init failed");
  std::vector<bool> prepared;
  for (const FuzzedDesc &d : descs) {
    prepared.push_back(prepare_checked(program, d.desc));
  }
  RRT_FUZZ_CHECK(rrt_context_destroy(program) == RRT_OK, "rrt_context_destroy failed");

  // Kernel mode, frozen at the plan fit_all computed: whatever program mode prepared fits.
  if (fit_all == RRT_OK && plan_total(plan) <= kMaxPlanBytes) {
    rrt_context_t kernel = make_context();
    rrt_kernel_config_t config{};
    config.struct_size = sizeof config;
    config.context_generation = 0;  // the runtime picks a process-unique one
    config.capacity = plan;
    const rrt_status_t init = rrt_kernel_init(kernel, &config);
    RRT_FUZZ_RECORDED(init, "rrt_kernel_init");
    RRT_FUZZ_CHECK(init == RRT_OK, "rrt_kernel_init refused a plan that fit_all computed");
    for (std::uint32_t i = 0; i < count; ++i) {
      const bool ok = prepare_checked(kernel, descs[i].desc);
      RRT_FUZZ_CHECK(ok || !prepared[i],
                     "a callable program mode prepared was refused by a kernel context planned "
                     "for it with rrt_capacity_plan_fit_all");
    }
    const rrt_stats_t stats = stats_of(kernel);
    for (const rrt_region_stats_t &region : stats.regions) {
      RRT_FUZZ_CHECK(region.base_changes == 0, "a kernel-mode context moved a buffer");
    }
    RRT_FUZZ_CHECK(rrt_context_destroy(kernel) == RRT_OK, "rrt_context_destroy failed");
  }
  return 0;
}
