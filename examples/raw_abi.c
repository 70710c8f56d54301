/* raw-abi-example: the C ABI alone, in C. A one-task callable (y = 2 * x) in a kernel-mode
   context: plan, freeze, prepare, capture one launch, replay it over new inputs in the same
   buffers, and a larger request refused without changing anything. Every status is checked.
   The demo (replayrt_demo.cpp) does the same through the C++ API.

     raw-abi-example

   Exit status: 0 when every replay computed y = 2 * x and the larger request was refused. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <replayrt/replayrt.h>

enum { kN = 256 };

static void check(rrt_status_t status, const char *what) {
  if (status != RRT_OK) {
    rrt_error_detail_t detail;
    rrt_last_error(&detail);
    fprintf(stderr, "raw-abi-example: %s: %s\n  %s\n", what, rrt_status_name(status),
            detail.message);
    exit(1);
  }
}

/* y = 2 * x over n floats: one task of the built-in kernel "scale". */
static rrt_callable_desc_t scale_by_two(rrt_context_t ctx, uint64_t n, rrt_tensor_desc_t params[2],
                                        rrt_operand_t operands[3], rrt_task_desc_t *task) {
  for (int i = 0; i < 2; ++i) {
    params[i] = (rrt_tensor_desc_t){.dtype = RRT_DTYPE_F32, .ndim = 1, .shape = {n}};
    params[i].direction = i == 0 ? RRT_DIR_IN : RRT_DIR_OUT;
  }
  operands[0] = (rrt_operand_t){RRT_OPERAND_PARAM, 0};
  operands[1] = (rrt_operand_t){RRT_OPERAND_PARAM, 1};
  operands[2] = (rrt_operand_t){RRT_OPERAND_IMMEDIATE, (uint32_t)rrt_scalar_from_f32(2.0F)};
  check(rrt_kernel_lookup(ctx, "scale", &task->kernel_id), "rrt_kernel_lookup");
  task->num_operands = 3;
  task->operands = operands;
  return (rrt_callable_desc_t){.struct_size = sizeof(rrt_callable_desc_t),
                               .bind = RRT_BIND_DEVICE_BUILD,
                               .num_params = 2,
                               .params = params,
                               .num_tasks = 1,
                               .tasks = task};
}

int main(void) {
  rrt_context_options_t options = {.struct_size = sizeof options, .platform = RRT_PLATFORM_SIM};
  rrt_context_t ctx = NULL;
  check(rrt_context_create(&options, &ctx), "rrt_context_create");

  rrt_tensor_desc_t params[2];
  rrt_operand_t operands[3];
  rrt_task_desc_t task;
  const rrt_callable_desc_t step = scale_by_two(ctx, kN, params, operands, &task);
  rrt_kernel_config_t config = {.struct_size = sizeof config};
  check(rrt_capacity_plan_fit(&step, &config.capacity), "rrt_capacity_plan_fit");
  check(rrt_kernel_init(ctx, &config), "rrt_kernel_init");
  int32_t id = -1;
  check(rrt_callable_prepare(ctx, &step, &id), "rrt_callable_prepare");

  void *x = NULL;
  void *y = NULL;
  check(rrt_device_alloc(ctx, kN * sizeof(float), &x), "rrt_device_alloc");
  check(rrt_device_alloc(ctx, kN * sizeof(float), &y), "rrt_device_alloc");
  const rrt_tensor_arg_t tensors[2] = {{x, kN * sizeof(float), RRT_SPACE_DEVICE},
                                       {y, kN * sizeof(float), RRT_SPACE_DEVICE}};
  const rrt_run_args_t args = {.struct_size = sizeof args, .num_tensors = 2, .tensors = tensors};

  rrt_stream_t stream = NULL;
  rrt_graph_t graph = NULL;
  check(rrt_stream_create(ctx, &stream), "rrt_stream_create");
  check(rrt_stream_begin_capture(stream), "rrt_stream_begin_capture");
  check(rrt_kernel_launch(ctx, id, &args, stream), "rrt_kernel_launch");
  check(rrt_stream_end_capture(stream, &graph), "rrt_stream_end_capture");

  int wrong = 0;
  float in[kN];
  float out[kN];
  for (int replay = 0; replay < 3; ++replay) {
    for (int i = 0; i < kN; ++i) {
      in[i] = (float)(replay * kN + i);
    }
    check(rrt_memcpy_h2d(ctx, x, in, sizeof in, NULL), "rrt_memcpy_h2d");
    check(rrt_graph_replay(graph, stream), "rrt_graph_replay");
    check(rrt_stream_synchronize(stream), "rrt_stream_synchronize");
    check(rrt_memcpy_d2h(ctx, out, y, sizeof out, NULL), "rrt_memcpy_d2h");
    for (int i = 0; i < kN; ++i) {
      wrong += out[i] != 2.0F * in[i];
    }
  }
  printf("3 replays of one captured launch: %d wrong elements\n", wrong);

  /* Eight times the elements: more than the frozen plan holds. */
  rrt_tensor_desc_t large_params[2];
  rrt_operand_t large_operands[3];
  rrt_task_desc_t large_task;
  const rrt_callable_desc_t large =
      scale_by_two(ctx, 8 * kN, large_params, large_operands, &large_task);
  int32_t large_id = -1;
  const rrt_status_t refused = rrt_callable_prepare(ctx, &large, &large_id);
  rrt_error_detail_t detail;
  rrt_last_error(&detail);
  printf("a larger callable: %s\n  %s\n", rrt_status_name(refused), detail.message);

  check(rrt_graph_destroy(graph), "rrt_graph_destroy");
  check(rrt_stream_destroy(stream), "rrt_stream_destroy");
  check(rrt_device_free(ctx, x), "rrt_device_free");
  check(rrt_device_free(ctx, y), "rrt_device_free");
  check(rrt_context_destroy(ctx), "rrt_context_destroy");
  return wrong == 0 && refused != RRT_OK ? 0 : 1;
}
