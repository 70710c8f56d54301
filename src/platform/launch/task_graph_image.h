// The task-graph image: a callable's tasks, operands and dependency edges laid out in device
// memory for a backend's executor to run. This header is the wire format both sides agree on;
// the runtime writes it (runtime/task_graph_builder.h) and the executors read it. The executor
// reads the image (and the scheduler state) from device memory only, so moving or freeing
// either breaks a captured launch, exactly as on hardware.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace replayrt {

inline constexpr std::uint32_t kTaskGraphMagic = 0x49545252;  // "RRTI"
inline constexpr std::uint32_t kTaskGraphVersion = 2;

// A ready-queue cell that no task was pushed into yet.
inline constexpr std::uint32_t kEmptyReadySlot = ~std::uint32_t{0};

// Operand kinds as stored in an image.
enum class ImageOperandKind : std::uint32_t {
  kParam = 0,        // `index` selects a tensor address and size from the invocation payload
  kBaked = 1,        // `value` is a device address baked in at build time (an intermediate)
  kScalar = 2,       // `index` selects a scalar from the invocation payload
  kImmediate = 3,    // `value` is the scalar itself
  kView = 4,         // a tensor: `index` selects a ViewRecord
  kDeviceValue = 5,  // a scalar: `index` selects a DeviceValueRecord
};

// Where the tensor of a view or device value lives (ViewRecord, DeviceValueRecord).
enum class ImageTensorSource : std::uint32_t {
  kParam = 0,  // `index` selects a tensor address and size from the invocation payload
  kBaked = 1,  // `address` and `bytes` are baked in at build time (an intermediate)
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
  // Version 2: views and device values, in sections after the successors.
  std::uint32_t num_views;
  std::uint32_t num_device_values;
  std::uint64_t views_offset;
  std::uint64_t device_values_offset;
  std::uint64_t reserved;
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

// A view: `bytes` bytes of its base tensor, starting `byte_offset` bytes in, plus, when
// offset_value is not -1, offset_stride_bytes times the device value offset_value (an index
// into the device-value records) read when the task runs. That value must lie in
// [0, offset_value_max]; the builder guarantees byte_offset + offset_value_max *
// offset_stride_bytes + bytes <= the base's bytes, and resolution checks it again.
struct ViewRecord {
  std::uint32_t source;      // ImageTensorSource
  std::uint32_t index;       // kParam: the payload tensor
  std::uint64_t address;     // kBaked: the base's device address
  std::uint64_t base_bytes;  // kBaked: the base's size
  std::uint64_t byte_offset;
  std::uint64_t bytes;
  std::int32_t offset_value;
  std::uint32_t reserved;
  std::uint64_t offset_stride_bytes;
  std::uint64_t offset_value_max;
};

// A device value: element `element` of a tensor, of dtype `dtype` (an rrt_dtype_t: I32, I64
// or F32), read from device memory when the task that uses it runs.
struct DeviceValueRecord {
  std::uint32_t source;      // ImageTensorSource
  std::uint32_t index;       // kParam: the payload tensor
  std::uint64_t address;     // kBaked: the tensor's device address
  std::uint64_t base_bytes;  // kBaked: the tensor's size
  std::uint64_t element;
  std::uint32_t dtype;
  std::uint32_t reserved;
};

// Why the first failed task of an invocation failed (SchedulerStateHeader::failure). The cause
// travels beside the kernel's result code, so every int a kernel returns stays its own.
enum class TaskFailure : std::uint32_t {
  kNone = 0,                  // no task failed
  kKernelReturned = 1,        // the kernel returned failed_code, which is nonzero
  kKernelThrew = 2,           // the kernel threw; failed_code is 0
  kViewOffsetOutOfRange = 3,  // a view's device-resident offset was out of range; the task did
                              // not run and failed_code is 0
};

// The device scheduler's working state, followed by two arrays of num_tasks 32-bit words:
// remaining predecessor counts, then the ready queue. The executor resets it at the start of
// every invocation (from the image, or by copying a host-built seed of the same layout).
struct SchedulerStateHeader {
  std::uint32_t next_push;
  std::uint32_t next_pop;
  std::uint32_t completed;
  std::uint32_t failure;  // a TaskFailure: set once, by the first task that fails
  std::int32_t failed_task;
  std::int32_t failed_code;
  std::uint64_t generation;  // a seed's callable generation, checked against the image's
};

static_assert(std::is_trivially_copyable_v<TaskGraphHeader>);
static_assert(std::is_standard_layout_v<TaskGraphHeader>);
static_assert(sizeof(TaskGraphHeader) == 128);
static_assert(offsetof(TaskGraphHeader, magic) == 0);
static_assert(offsetof(TaskGraphHeader, version) == 4);
static_assert(offsetof(TaskGraphHeader, callable_id) == 8);
static_assert(offsetof(TaskGraphHeader, num_tasks) == 12);
static_assert(offsetof(TaskGraphHeader, generation) == 16);
static_assert(offsetof(TaskGraphHeader, num_params) == 24);
static_assert(offsetof(TaskGraphHeader, num_scalars) == 28);
static_assert(offsetof(TaskGraphHeader, num_operands) == 32);
static_assert(offsetof(TaskGraphHeader, num_edges) == 36);
static_assert(offsetof(TaskGraphHeader, content_key) == 40);
static_assert(offsetof(TaskGraphHeader, image_bytes) == 48);
static_assert(offsetof(TaskGraphHeader, tasks_offset) == 56);
static_assert(offsetof(TaskGraphHeader, operands_offset) == 64);
static_assert(offsetof(TaskGraphHeader, successors_offset) == 72);
static_assert(offsetof(TaskGraphHeader, scheduler_state) == 80);
static_assert(offsetof(TaskGraphHeader, scheduler_seed) == 88);
static_assert(offsetof(TaskGraphHeader, num_views) == 96);
static_assert(offsetof(TaskGraphHeader, num_device_values) == 100);
static_assert(offsetof(TaskGraphHeader, views_offset) == 104);
static_assert(offsetof(TaskGraphHeader, device_values_offset) == 112);
static_assert(offsetof(TaskGraphHeader, reserved) == 120);

static_assert(std::is_trivially_copyable_v<TaskRecord>);
static_assert(std::is_standard_layout_v<TaskRecord>);
static_assert(sizeof(TaskRecord) == 32);
static_assert(offsetof(TaskRecord, kernel_id) == 0);
static_assert(offsetof(TaskRecord, first_operand) == 4);
static_assert(offsetof(TaskRecord, num_tensors) == 8);
static_assert(offsetof(TaskRecord, num_scalars) == 12);
static_assert(offsetof(TaskRecord, first_successor) == 16);
static_assert(offsetof(TaskRecord, num_successors) == 20);
static_assert(offsetof(TaskRecord, num_predecessors) == 24);
static_assert(offsetof(TaskRecord, reserved) == 28);

static_assert(std::is_trivially_copyable_v<OperandRecord>);
static_assert(std::is_standard_layout_v<OperandRecord>);
static_assert(sizeof(OperandRecord) == 24);
static_assert(offsetof(OperandRecord, kind) == 0);
static_assert(offsetof(OperandRecord, index) == 4);
static_assert(offsetof(OperandRecord, value) == 8);
static_assert(offsetof(OperandRecord, bytes) == 16);

static_assert(std::is_trivially_copyable_v<ViewRecord>);
static_assert(std::is_standard_layout_v<ViewRecord>);
static_assert(sizeof(ViewRecord) == 64);
static_assert(offsetof(ViewRecord, source) == 0);
static_assert(offsetof(ViewRecord, index) == 4);
static_assert(offsetof(ViewRecord, address) == 8);
static_assert(offsetof(ViewRecord, base_bytes) == 16);
static_assert(offsetof(ViewRecord, byte_offset) == 24);
static_assert(offsetof(ViewRecord, bytes) == 32);
static_assert(offsetof(ViewRecord, offset_value) == 40);
static_assert(offsetof(ViewRecord, reserved) == 44);
static_assert(offsetof(ViewRecord, offset_stride_bytes) == 48);
static_assert(offsetof(ViewRecord, offset_value_max) == 56);

static_assert(std::is_trivially_copyable_v<DeviceValueRecord>);
static_assert(std::is_standard_layout_v<DeviceValueRecord>);
static_assert(sizeof(DeviceValueRecord) == 40);
static_assert(offsetof(DeviceValueRecord, source) == 0);
static_assert(offsetof(DeviceValueRecord, index) == 4);
static_assert(offsetof(DeviceValueRecord, address) == 8);
static_assert(offsetof(DeviceValueRecord, base_bytes) == 16);
static_assert(offsetof(DeviceValueRecord, element) == 24);
static_assert(offsetof(DeviceValueRecord, dtype) == 32);
static_assert(offsetof(DeviceValueRecord, reserved) == 36);

static_assert(std::is_trivially_copyable_v<SchedulerStateHeader>);
static_assert(std::is_standard_layout_v<SchedulerStateHeader>);
static_assert(sizeof(SchedulerStateHeader) == 32);
static_assert(offsetof(SchedulerStateHeader, next_push) == 0);
static_assert(offsetof(SchedulerStateHeader, next_pop) == 4);
static_assert(offsetof(SchedulerStateHeader, completed) == 8);
static_assert(offsetof(SchedulerStateHeader, failure) == 12);
static_assert(offsetof(SchedulerStateHeader, failed_task) == 16);
static_assert(offsetof(SchedulerStateHeader, failed_code) == 20);
static_assert(offsetof(SchedulerStateHeader, generation) == 24);

// Where each section of an image with these counts starts, and its total size.
struct TaskGraphLayout {
  std::uint64_t tasks = 0;
  std::uint64_t operands = 0;
  std::uint64_t successors = 0;
  std::uint64_t views = 0;
  std::uint64_t device_values = 0;
  std::uint64_t total = 0;
};

TaskGraphLayout task_graph_layout(std::uint64_t tasks, std::uint64_t operands, std::uint64_t edges,
                                  std::uint64_t views, std::uint64_t device_values) noexcept;
std::uint64_t task_graph_image_bytes(std::uint64_t tasks, std::uint64_t operands,
                                     std::uint64_t edges, std::uint64_t views,
                                     std::uint64_t device_values) noexcept;
// The layout an image's header describes by its counts.
TaskGraphLayout task_graph_layout(const TaskGraphHeader &header) noexcept;
// True when the header's section offsets and size are those its counts give.
bool task_graph_layout_matches(const TaskGraphHeader &header) noexcept;
// Bytes of a scheduler state (header plus both arrays) for `tasks` tasks.
std::uint64_t scheduler_state_bytes(std::uint64_t tasks) noexcept;
// Byte offsets of the two arrays inside a scheduler state for `tasks` tasks.
constexpr std::uint64_t scheduler_remaining_offset() noexcept {
  return sizeof(SchedulerStateHeader);
}
constexpr std::uint64_t scheduler_ready_offset(std::uint64_t tasks) noexcept {
  return sizeof(SchedulerStateHeader) + tasks * sizeof(std::uint32_t);
}

}  // namespace replayrt
