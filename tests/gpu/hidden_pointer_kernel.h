// A native launcher that hides a device pointer in a by-value kernel parameter struct.
#pragma once

#include <replayrt/replayrt.h>

// Adds the floats at `user` (a device buffer of the tensor's size) into the task's one tensor.
int hidden_pointer_launcher(const rrt_kernel_args_t *args, void *stream, void *user);

// Loads the launcher's kernel (cudaFuncGetAttributes): with lazy module loading a kernel's
// first launch loads its module, which must not happen inside a capture. 0 on success.
int warm_hidden_pointer_kernel();
