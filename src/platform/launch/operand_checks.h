// The operand checks every built-in kernel shares (platform/launch/builtin_kernels.h): operand
// counts, byte sizes, alignment, matrix shapes and output aliasing. They compare sizes and
// addresses and never dereference a tensor. The per-kernel checks
// (platform/launch/builtin_checks.h) combine them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <replayrt/kernel_abi.h>

namespace replayrt::operand_checks {

// Checks 1, 2 and 5 of the contract over tensors whose element sizes are `element_bytes` (one
// entry per tensor, so the tensor count must be element_bytes.size()) and `num_scalars`
// scalars: code 1 when args is null, a count differs, or an operand array the counts need is
// null; code 2 when a byte size is zero or not a multiple of its element size; code 5 when an
// address is null or not a multiple of its element size. kernel_result::kOk otherwise.
int check_shared(const rrt_kernel_args_t *args, std::uint32_t num_scalars,
                 std::span<const std::uint64_t> element_bytes);

// check_shared over `num_tensors` (at most 5) float32 tensors.
int check_shared_f32(const rrt_kernel_args_t *args, std::uint32_t num_tensors,
                     std::uint32_t num_scalars);

// Check 4 over the dimensions held in the first dims.size() scalars, which the operands hold
// (check_shared passed): copies them into `dims` and returns kernel_result::kZeroDimension
// when one of them is zero, kOk otherwise.
int read_dimensions(const rrt_kernel_args_t &args, std::span<std::uint64_t> dims);

// The number of elements of `element_bytes` that tensor `index` holds.
std::uint64_t elements(const rrt_kernel_args_t &args, std::size_t index,
                       std::uint64_t element_bytes);

// The number of floats tensor `index` holds.
std::uint64_t floats(const rrt_kernel_args_t &args, std::size_t index);

// True when `count` elements form exactly `rows` rows of `cols`; rows is nonzero.
bool holds_matrix(std::uint64_t count, std::uint64_t rows, std::uint64_t cols);

// True when tensor `index` holds exactly rows x cols elements of `element_bytes`; rows is
// nonzero.
bool holds(const rrt_kernel_args_t &args, std::size_t index, std::uint64_t element_bytes,
           std::uint64_t rows, std::uint64_t cols);

// True when tensors `first` and `second` share at least one byte.
bool overlaps(const rrt_kernel_args_t &args, std::size_t first, std::size_t second);

// True when the two tensors cover exactly the same bytes or none in common.
bool identical_or_disjoint(const rrt_kernel_args_t &args, std::size_t first, std::size_t second);

}  // namespace replayrt::operand_checks
