// A native launcher that hides a device pointer in a by-value kernel parameter struct.
#pragma once

#include <replayrt/replayrt.h>

// Adds the floats at `user` (a device buffer of the tensor's size) into the task's one tensor.
int hidden_pointer_launcher(const rrt_kernel_args_t *args, void *stream, void *user);
