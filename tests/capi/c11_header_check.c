/*
 * The public header is C11: this file compiles as strict C11 with -Wall -Wextra -Wpedantic
 * -Werror, uses the handle types, structs, enums and inline helpers, and runs one tiny program
 * through the shared library: out = in * 2 on a sim context in program mode with HOST tensors.
 * Exit status 0 when every call succeeded and the output is right, 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>

#include <replayrt/replayrt.h>

enum { kElements = 4 };

static int check(rrt_status_t status, const char *what) {
  if (status == RRT_OK) {
    return 1;
  }
  rrt_error_detail_t detail;
  rrt_last_error(&detail);
  fprintf(stderr, "%s failed: %s (%s)\n", what, rrt_status_name(status), detail.message);
  return 0;
}

static int run_scale(rrt_context_t ctx) {
  int32_t scale = -1;
  if (!check(rrt_kernel_lookup(ctx, "scale", &scale), "rrt_kernel_lookup")) {
    return 0;
  }
  rrt_tensor_desc_t params[2] = {{RRT_DTYPE_F32, 1, {kElements}, RRT_DIR_IN, RRT_PARAM_SPACE_ANY},
                                 {RRT_DTYPE_F32, 1, {kElements}, RRT_DIR_OUT, RRT_PARAM_SPACE_ANY}};
  const rrt_operand_t operands[3] = {{RRT_OPERAND_PARAM, 0},
                                     {RRT_OPERAND_PARAM, 1},
                                     {RRT_OPERAND_IMMEDIATE, (uint32_t)rrt_scalar_from_f32(2.0f)}};
  const rrt_task_desc_t task = {scale, 3, operands};
  rrt_callable_desc_t desc = {0};
  desc.struct_size = sizeof desc;
  desc.bind = RRT_BIND_DEVICE_BUILD;
  desc.num_params = 2;
  desc.params = params;
  desc.num_tasks = 1;
  desc.tasks = &task;
  int32_t callable = -1;
  if (!check(rrt_callable_prepare(ctx, &desc, &callable), "rrt_callable_prepare")) {
    return 0;
  }

  float in[kElements] = {1.0f, -2.0f, 0.5f, 8.0f};
  float out[kElements] = {0.0f, 0.0f, 0.0f, 0.0f};
  const rrt_tensor_arg_t tensors[2] = {{in, sizeof in, RRT_SPACE_HOST},
                                       {out, sizeof out, RRT_SPACE_HOST}};
  rrt_run_args_t args = {0};
  args.struct_size = sizeof args;
  args.num_tensors = 2;
  args.tensors = tensors;
  if (!check(rrt_run(ctx, callable, &args), "rrt_run")) {
    return 0;
  }
  for (int i = 0; i < kElements; ++i) {
    if (out[i] != in[i] * 2.0f) {
      fprintf(stderr, "out[%d] is %g, expected %g\n", i, (double)out[i], (double)(in[i] * 2.0f));
      return 0;
    }
  }
  return 1;
}

/* Every handle type: a stream and an event that work, and null graph and run handles that the
   library rejects. */
static int use_handles(rrt_context_t ctx) {
  rrt_stream_t stream = NULL;
  rrt_event_t event = NULL;
  const rrt_graph_t graph = NULL;
  const rrt_run_t run = NULL;
  int ok = check(rrt_stream_create(ctx, &stream), "rrt_stream_create") &&
           check(rrt_event_create(ctx, &event), "rrt_event_create") &&
           check(rrt_event_record(event, stream), "rrt_event_record") &&
           check(rrt_stream_synchronize(stream), "rrt_stream_synchronize") &&
           check(rrt_event_synchronize(event), "rrt_event_synchronize");
  ok = ok && rrt_graph_destroy(graph) == RRT_ERR_INVALID_ARGUMENT &&
       rrt_run_finalize(run) == RRT_ERR_INVALID_ARGUMENT;
  if (event != NULL) {
    ok = check(rrt_event_destroy(event), "rrt_event_destroy") && ok;
  }
  if (stream != NULL) {
    ok = check(rrt_stream_destroy(stream), "rrt_stream_destroy") && ok;
  }
  return ok;
}

int main(void) {
  if (rrt_scalar_to_f32(rrt_scalar_from_f32(-1.5f)) != -1.5f ||
      rrt_scalar_from_f32(1.0f) != UINT64_C(0x3f800000)) {
    fprintf(stderr, "rrt_scalar_from_f32 / rrt_scalar_to_f32 do not round-trip binary32\n");
    return 1;
  }
  rrt_context_options_t options = {0};
  options.struct_size = sizeof options;
  options.platform = RRT_PLATFORM_SIM;
  options.device_id = 0;
  options.device_workers = 1;
  rrt_context_t ctx = NULL;
  if (!check(rrt_context_create(&options, &ctx), "rrt_context_create")) {
    return 1;
  }
  int ok = check(rrt_program_init(ctx), "rrt_program_init") && run_scale(ctx) && use_handles(ctx);

  rrt_mode_t mode = RRT_MODE_KERNEL;
  int latched = 0;
  ok = ok && check(rrt_context_mode(ctx, &mode, &latched), "rrt_context_mode") && latched == 1 &&
       mode == RRT_MODE_PROGRAM;
  rrt_stats_t stats = {0};
  stats.struct_size = sizeof stats;
  ok = ok && check(rrt_context_stats(ctx, &stats), "rrt_context_stats") && stats.launches == 1 &&
       stats.refusals[RRT_GROWTH_ARENA_GM_HEAP] == 0;
  ok = check(rrt_context_destroy(ctx), "rrt_context_destroy") && ok;
  return ok ? 0 : 1;
}
