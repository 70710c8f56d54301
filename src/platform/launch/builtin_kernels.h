// The built-in kernels, pre-registered in every context under their names. This header is the
// backend-neutral contract (names, operands, checks, result codes); each backend implements
// it and supplies its launchers through Device::builtin_launchers (the simulator's CPU
// kernels: platform/sim/kernels/; CUDA's kernels: platform/cuda/builtin_launchers.cu).
//
// Every built-in works on float32 tensors, row-major, and receives its operands in the order
// listed (tensors first, then scalars). Integer scalars are plain u64 values; float scalars
// carry the binary32 bit pattern in their low 32 bits (rrt_scalar_from_f32) and their high 32
// bits are ignored. A tensor of B bytes holds B / 4 floats; "size" below counts floats.
//
//   name     tensors          scalars    computes
//   fill     out              value      out[i] = value
//   copy     in, out                     out = in
//   add      a, b, out                   out = a + b                   (elementwise)
//   mul      a, b, out                   out = a * b                   (elementwise)
//   scale    in, out          s          out = in * s
//   matmul   a, b, out        M, K, N    out[M,N] = a[M,K] @ b[K,N]
//   softmax  in, out          cols       per row of `cols`: numerically stable softmax
//   rmsnorm  in, weight, out  cols, eps  per row: out = in / sqrt(mean(in^2) + eps) * weight
//   silu     in, out                     out = in * sigmoid(in)
//   gelu     in, out                     out = 0.5 in (1 + tanh(sqrt(2/pi)(in + 0.044715 in^3)))
//
// Sizes: every tensor holds at least one float. copy, add, mul, scale, silu and gelu take
// tensors of one size. matmul's a, b and out hold exactly M*K, K*N and M*N floats. softmax's
// and rmsnorm's in and out have one size, a whole number of rows of `cols` floats; rmsnorm's
// weight holds exactly `cols` floats and its eps is finite and non-negative.
//
// Numerics: results are deterministic, every reduction runs in a fixed order. matmul
// accumulates in float over k in increasing order. softmax subtracts the row maximum before
// exponentiating. rmsnorm accumulates the mean of squares in double. silu and gelu use a
// sigmoid that never overflows; gelu evaluates the tanh form above as in * sigmoid(2 u), with
// u the tanh argument, so large positive and negative inputs give finite results. Non-finite
// inputs propagate through IEEE arithmetic.
//
// Aliasing: an output either covers exactly the bytes of an input (same address and size),
// which computes in place, or does not overlap that input at all. matmul's out overlaps
// neither a nor b. Inputs may overlap each other freely.
//
// Result codes: 0 on success. Otherwise the kernel writes nothing and returns the code of the
// first failing check, the checks running in this order:
//   1  args is null, the tensor or scalar count differs from the table above, or an operand
//      array the counts need is null
//   2  a tensor byte size is zero or not a multiple of 4
//   5  a tensor address is null or not aligned to alignof(float)
//   4  a dimension (matmul's M, K or N; softmax's or rmsnorm's cols) is zero
//   3  tensor sizes disagree with each other or with the dimensions
//   6  an output overlaps an input other than exactly (any overlap for matmul)
//   7  a float scalar lies outside its domain (rmsnorm's eps)
//
// The decoder built-ins (linear, embedding, rope, kv_store, attention) follow the contract in
// include/replayrt/replayrt.h ("built-in kernels"): their checks run in the order above, with
// these differences. A tensor's element size is that of its dtype (a weight's is given by the
// wdtype scalar, ids and pos are int32), so check 2 asks for a multiple of it and check 5 for
// its alignment; an unknown wdtype, a non-positive or non-finite theta, an odd hd or an H that
// KVH does not divide is code 7 (4 for hd or KVH zero). After those host-visible checks the
// simulator's kernels read their device-resident values (ids, pos) and return
//   8  an id or a position lies outside its range
// before writing anything. CUDA's kernels cannot fail: there the same condition writes NaN to
// the output elements it concerns (kv_store writes nothing).
//
// Kernels are pure functions of their operands, allocate nothing and may run concurrently on
// different operands. `user` is ignored.
#pragma once

#include <span>
#include <string_view>

#include <replayrt/kernel_abi.h>

namespace replayrt {

// The result codes described above.
namespace kernel_result {
inline constexpr int kOk = 0;
inline constexpr int kWrongOperandCount = 1;
inline constexpr int kBadByteSize = 2;
inline constexpr int kSizeMismatch = 3;
inline constexpr int kZeroDimension = 4;
inline constexpr int kUnusableAddress = 5;
inline constexpr int kOverlappingOutput = 6;
inline constexpr int kScalarOutOfDomain = 7;
inline constexpr int kIndexOutOfRange = 8;
}  // namespace kernel_result

// A built-in as every backend knows it: its name, the operand counts a task using it must
// supply, and its host-side check (checks 1 to 7 above, in that order, on the operands alone:
// addresses are compared, never dereferenced; platform/launch/builtin_checks.h).
struct BuiltinKernelSpec {
  const char *name;
  int num_tensors;
  int num_scalars;
  int (*check)(const rrt_kernel_args_t *args);
};

// Every built-in, in a fixed order: their ids in a fresh context follow it, and each backend's
// launchers (Device::builtin_launchers) are listed in it. Defined in
// platform/launch/builtin_checks.cpp.
std::span<const BuiltinKernelSpec> builtin_kernel_specs() noexcept;

// The host-side check of the built-in `name` (its spec's), or null for an unknown name.
int (*builtin_operand_check(std::string_view name) noexcept)(const rrt_kernel_args_t *args);

}  // namespace replayrt
