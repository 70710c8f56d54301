// The task-graph image: a callable's tasks, operands and dependency edges laid out in device
// memory for the device half to execute. The device reads it (and the scheduler state) from
// device memory only, so moving or freeing either breaks a captured launch, exactly as on
// hardware.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/status.h"

namespace replayrt {

class Callable;

inline constexpr std::uint32_t kTaskGraphMagic = 0x49545252;  // "RRTI"
inline constexpr std::uint32_t kTaskGraphVersion = 1;

// Operand kinds as stored in an image.
enum class ImageOperandKind : std::uint32_t {
  kParam = 0,      // `index` selects a tensor address and size from the invocation payload
  kBaked = 1,      // `value` is a device address baked in at build time (an intermediate)
  kScalar = 2,     // `index` selects a scalar from the invocation payload
  kImmediate = 3,  // `value` is the scalar itself
};

struct TaskGraphHeader {
  std::uint32_t magic;
  std::uint32_t version;
  std::int32_t callable_id;
  std::uint32_t num_tasks;
  std::uint64_t generation;  // the callable generation the image was built for
  std::uint32_t num_params;
  std::uint32_t num_scalars;
  std::uint32_t num_operands;
  std::uint32_t num_edges;
  std::uint64_t content_key;
  std::uint64_t image_bytes;
  std::uint64_t tasks_offset;  // from the image start
  std::uint64_t operands_offset;
  std::uint64_t successors_offset;
  std::uint64_t scheduler_state;  // device address of the working state
  std::uint64_t scheduler_seed;   // device address of a host-built seed; 0: derive it
};

struct TaskRecord {
  std::int32_t kernel_id;
  std::uint32_t first_operand;
  std::uint32_t num_tensors;
  std::uint32_t num_scalars;
  std::uint32_t first_successor;
  std::uint32_t num_successors;
  std::uint32_t num_predecessors;
  std::uint32_t reserved;
};

struct OperandRecord {
  std::uint32_t kind;  // ImageOperandKind
  std::uint32_t index;
  std::uint64_t value;
  std::uint64_t bytes;  // baked tensors: their size
};

// The device scheduler's working state, followed by two arrays of num_tasks 32-bit words:
// remaining predecessor counts, then the ready queue. The device resets it at the start of
// every invocation (from the image, or by copying a host-built seed of the same layout).
struct SchedulerStateHeader {
  std::uint32_t next_push;
  std::uint32_t next_pop;
  std::uint32_t completed;
  std::uint32_t failed;
  std::int32_t failed_task;
  std::int32_t failed_code;
  std::uint64_t generation;  // a seed's callable generation, checked against the image's
};

std::uint64_t task_graph_image_bytes(std::uint64_t tasks, std::uint64_t operands,
                                     std::uint64_t edges) noexcept;
std::uint64_t scheduler_state_bytes(std::uint64_t tasks) noexcept;

// Where an image's pointers point.
struct ImageBinding {
  std::int32_t callable_id = -1;
  std::uint64_t generation = 0;
  const void *gm_heap = nullptr;          // intermediates are baked relative to it
  const void *scheduler_state = nullptr;  // the working state the device uses
  const void *scheduler_seed = nullptr;   // optional host-built seed (host-build bind)
};

// Writes the image of `callable` into `out` (host memory, exactly
// callable.requirements().image_bytes long). INVALID_ARGUMENT if `out` has the wrong size.
Status build_task_graph_image(const Callable &callable, const ImageBinding &binding,
                              std::span<std::byte> out);

// Writes the initial scheduler state of `callable` (counts and the ready roots, tagged with
// `generation`) into `out`, exactly scheduler_state_bytes(tasks) long: the seed a host-build
// bind uploads.
Status build_scheduler_seed(const Callable &callable, std::uint64_t generation,
                            std::span<std::byte> out);

}  // namespace replayrt
