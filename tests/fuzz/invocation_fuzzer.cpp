// The device half's two decoders: the invocation header (decode_invocation) and the task-graph
// image (read by DeviceRuntime::entry).
//
// The first input byte picks the target:
//   even: the rest of the input is an invocation, decoded as it stands (at an aligned or a
//         misaligned address). A success must describe a payload that lies inside the bytes;
//         a failure is RRT_ERR_KERNEL_FAILED.
//   odd:  a valid image, scheduler state and invocation are built for a small callable on a
//         SimDevice, then fields of the image and the invocation are mutated as the input says
//         and the device half executes it. It must return (RRT_OK or RRT_ERR_KERNEL_FAILED)
//         without a crash or a hang, and the unmutated invocation must then run correctly.
// Device addresses (the scheduler state and seed, baked intermediates, the payload's tensor
// addresses and sizes) are never mutated: the device half dereferences them by contract, as
// hardware would.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "capi/callable_spec_codec.h"
#include "fuzz_support.h"
#include "platform/launch/invocation_header.h"
#include "platform/launch/kernel_registry.h"
#include "platform/launch/task_graph_image.h"
#include "platform/sim/executor/device_runtime.h"
#include "platform/sim/kernels/builtin_kernels.h"
#include "platform/sim/sim_device.h"
#include "runtime/callable.h"
#include "runtime/task_graph_builder.h"

namespace {

using namespace replayrt;
using sim::DeviceRuntime;

// Mutation classes the harness can leave out, each while its constant is false, to narrow a
// new finding down. All are on: the image layout (counts against image_bytes, the section
// offsets), the graph's shape (predecessor counts, successor lists), and operand kinds at any
// position with changed task operand counts. The device half checks each of them.
constexpr bool kMutateImageLayout = true;
constexpr bool kMutateGraphShape = true;
constexpr bool kDeviceChecksOperandPositions = true;

constexpr int kMaxMutations = 6;
constexpr std::uint64_t kN = 16;
constexpr std::int32_t kCallableId = 5;
constexpr std::uint64_t kGeneration = 77;

void decode_target(FuzzedDataProvider &in) {
  const auto misalign = in.ConsumeIntegralInRange<std::size_t>(0, 8);
  const std::vector<std::uint8_t> bytes = in.ConsumeRemainingBytes<std::uint8_t>();
  std::vector<std::uint64_t> storage((bytes.size() + misalign + 7) / 8 + 1);
  auto *base = reinterpret_cast<std::byte *>(storage.data()) + misalign;
  if (!bytes.empty()) {
    std::memcpy(base, bytes.data(), bytes.size());
  }
  InvocationHeader header;
  InvocationPayloadView payload;
  const Status status =
      decode_invocation(bytes.empty() ? nullptr : base, bytes.size(), &header, &payload);
  if (!status.is_ok()) {
    RRT_FUZZ_CHECK(status.code() == RRT_ERR_KERNEL_FAILED,
                   "decode_invocation failed with another code than KERNEL_FAILED");
    return;
  }
  const auto *begin = reinterpret_cast<const std::uint64_t *>(base);
  const auto *end = reinterpret_cast<const std::uint64_t *>(base + bytes.size());
  RRT_FUZZ_CHECK(misalign % 8 == 0, "decode_invocation accepted misaligned bytes");
  RRT_FUZZ_CHECK(header.reserved == 0 && header.host_copy_tensor_count == 0,
                 "decode_invocation accepted a nonzero reserved field");
  RRT_FUZZ_CHECK(
      invocation_bytes(payload.tensor_addresses.size(), payload.scalars.size()) == bytes.size(),
      "decode_invocation's payload disagrees with the size");
  for (const auto &span : {payload.tensor_addresses, payload.tensor_bytes, payload.scalars}) {
    RRT_FUZZ_CHECK(span.empty() || (span.data() >= begin && span.data() + span.size() <= end),
                   "decode_invocation's payload lies outside the bytes");
  }
}

// out = in * (scalar + 1): scale(in, tmp, scalar); add(tmp, in, out); then a copy of out into
// a second intermediate and back when `longer` is set, so the graph has a chain of four.
struct Program {
  KernelRegistry kernels{sim::builtin_launchers()};
  rrt_tensor_desc_t tensors[2]{};
  rrt_tensor_desc_t inter[2]{};
  rrt_operand_t ops[4][3]{};
  rrt_task_desc_t tasks[4]{};
  rrt_callable_desc_t desc{};
  std::unique_ptr<const Callable> callable;

  explicit Program(bool longer) {
    std::int32_t scale = -1;
    std::int32_t add = -1;
    std::int32_t copy = -1;
    RRT_FUZZ_CHECK(kernels.find("scale", &scale).is_ok() && kernels.find("add", &add).is_ok() &&
                       kernels.find("copy", &copy).is_ok(),
                   "a built-in kernel is missing");
    for (int i = 0; i < 2; ++i) {
      tensors[i].dtype = RRT_DTYPE_F32;
      tensors[i].ndim = 1;
      tensors[i].shape[0] = kN;
      tensors[i].direction = i == 0 ? RRT_DIR_IN : RRT_DIR_OUT;
      inter[i] = tensors[0];
    }
    ops[0][0] = {RRT_OPERAND_PARAM, 0};
    ops[0][1] = {RRT_OPERAND_INTERMEDIATE, 0};
    ops[0][2] = {RRT_OPERAND_SCALAR, 0};
    ops[1][0] = {RRT_OPERAND_INTERMEDIATE, 0};
    ops[1][1] = {RRT_OPERAND_PARAM, 0};
    ops[1][2] = {RRT_OPERAND_PARAM, 1};
    ops[2][0] = {RRT_OPERAND_PARAM, 1};
    ops[2][1] = {RRT_OPERAND_INTERMEDIATE, 1};
    ops[3][0] = {RRT_OPERAND_INTERMEDIATE, 1};
    ops[3][1] = {RRT_OPERAND_PARAM, 1};
    tasks[0] = {scale, 3, ops[0]};
    tasks[1] = {add, 3, ops[1]};
    tasks[2] = {copy, 2, ops[2]};
    tasks[3] = {copy, 2, ops[3]};
    desc.struct_size = sizeof desc;
    desc.bind = RRT_BIND_DEVICE_BUILD;
    desc.num_params = 2;
    desc.params = tensors;
    desc.num_intermediates = longer ? 2 : 1;
    desc.intermediates = inter;
    desc.num_scalars = 1;
    desc.num_tasks = longer ? 4 : 2;
    desc.tasks = tasks;
    CallableSpec spec;
    RRT_FUZZ_CHECK(capi::decode_callable_desc(&desc, &spec).is_ok() &&
                       Callable::create(spec, kernels, &callable).is_ok(),
                   "the fixed callable does not validate");
  }
};

// Device memory for one callable: heap, state, optional seed, image, in and out tensors.
struct Placement {
  sim::SimDevice device;
  std::vector<void *> allocations;
  void *heap = nullptr;
  void *state = nullptr;
  void *seed = nullptr;
  void *image = nullptr;
  void *in = nullptr;
  void *out = nullptr;

  void *alloc(std::size_t bytes) {
    void *ptr = device.allocate(bytes);
    RRT_FUZZ_CHECK(ptr != nullptr, "SimDevice::allocate failed");
    allocations.push_back(ptr);
    return ptr;
  }
  ~Placement() {
    for (void *ptr : allocations) {
      (void)device.free(ptr);
    }
  }
};

// Applies one mutation to a 32- or 64-bit field at `offset` of `bytes`.
void mutate_field(FuzzedDataProvider &in, std::byte *bytes, std::size_t offset, std::size_t width) {
  std::uint64_t value = 0;
  std::memcpy(&value, bytes + offset, width);
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      value ^=
          std::uint64_t{1} << in.ConsumeIntegralInRange<int>(0, static_cast<int>(width * 8 - 1));
      break;
    case 1:
      value += static_cast<std::uint64_t>(in.ConsumeIntegralInRange<std::int64_t>(-3, 3));
      break;
    case 2:
      value = in.ConsumeIntegralInRange<std::uint64_t>(0, 40);
      break;
    default:
      value = in.ConsumeIntegral<std::uint64_t>();
      break;
  }
  std::memcpy(bytes + offset, &value, width);
}

struct Field {
  std::size_t offset;
  std::size_t width;
};

// The image fields a mutation may target.
std::vector<Field> mutable_image_fields(const TaskGraphHeader &h) {
  std::vector<Field> fields = {
      {offsetof(TaskGraphHeader, magic), 4},       {offsetof(TaskGraphHeader, version), 4},
      {offsetof(TaskGraphHeader, callable_id), 4}, {offsetof(TaskGraphHeader, generation), 8},
      {offsetof(TaskGraphHeader, num_params), 4},  {offsetof(TaskGraphHeader, num_scalars), 4},
      {offsetof(TaskGraphHeader, content_key), 8},
  };
  if (kMutateImageLayout) {
    for (const Field f : {Field{offsetof(TaskGraphHeader, num_tasks), 4},
                          Field{offsetof(TaskGraphHeader, num_operands), 4},
                          Field{offsetof(TaskGraphHeader, num_edges), 4},
                          Field{offsetof(TaskGraphHeader, image_bytes), 8},
                          Field{offsetof(TaskGraphHeader, tasks_offset), 8},
                          Field{offsetof(TaskGraphHeader, operands_offset), 8},
                          Field{offsetof(TaskGraphHeader, successors_offset), 8}}) {
      fields.push_back(f);
    }
  }
  for (std::uint32_t t = 0; t < h.num_tasks; ++t) {
    const std::size_t base = h.tasks_offset + t * sizeof(TaskRecord);
    for (const std::size_t member :
         {offsetof(TaskRecord, kernel_id), offsetof(TaskRecord, reserved)}) {
      fields.push_back({base + member, 4});
    }
    if (kDeviceChecksOperandPositions) {
      fields.push_back({base + offsetof(TaskRecord, first_operand), 4});
      fields.push_back({base + offsetof(TaskRecord, num_tensors), 4});
      fields.push_back({base + offsetof(TaskRecord, num_scalars), 4});
    }
    if (kMutateGraphShape) {
      for (const std::size_t member :
           {offsetof(TaskRecord, first_successor), offsetof(TaskRecord, num_successors),
            offsetof(TaskRecord, num_predecessors)}) {
        fields.push_back({base + member, 4});
      }
    }
  }
  if (kMutateGraphShape) {
    for (std::uint32_t e = 0; e < h.num_edges; ++e) {
      fields.push_back({h.successors_offset + e * sizeof(std::uint32_t), 4});
    }
  }
  return fields;
}

// Operand mutations: the index of any operand, the value of an immediate, and the kind, except
// into kBaked (whose value is a device address).
void mutate_operand(FuzzedDataProvider &in, std::byte *image, const std::byte *pristine,
                    const TaskGraphHeader &h) {
  if (h.num_operands == 0) {
    return;
  }
  const auto o = in.ConsumeIntegralInRange<std::uint32_t>(0, h.num_operands - 1);
  auto *record = reinterpret_cast<OperandRecord *>(image + h.operands_offset) + o;
  const auto *original = reinterpret_cast<const OperandRecord *>(pristine + h.operands_offset) + o;
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0:
      mutate_field(in, reinterpret_cast<std::byte *>(&record->index), 0, 4);
      return;
    case 1:
      if (record->kind == static_cast<std::uint32_t>(ImageOperandKind::kImmediate)) {
        mutate_field(in, reinterpret_cast<std::byte *>(&record->value), 0, 8);
      }
      return;
    default: {
      auto kind = in.ConsumeIntegralInRange<std::uint32_t>(0, 5);
      if (kind == static_cast<std::uint32_t>(ImageOperandKind::kBaked)) {
        kind = static_cast<std::uint32_t>(ImageOperandKind::kScalar);
      }
      const auto is_tensor = [](std::uint32_t k) {
        return k == static_cast<std::uint32_t>(ImageOperandKind::kParam) ||
               k == static_cast<std::uint32_t>(ImageOperandKind::kBaked);
      };
      const auto is_scalar = [](std::uint32_t k) {
        return k == static_cast<std::uint32_t>(ImageOperandKind::kScalar) ||
               k == static_cast<std::uint32_t>(ImageOperandKind::kImmediate);
      };
      if (!kDeviceChecksOperandPositions && ((is_tensor(original->kind) && is_scalar(kind)) ||
                                             (is_scalar(original->kind) && is_tensor(kind)))) {
        return;
      }
      if (record->kind == static_cast<std::uint32_t>(ImageOperandKind::kBaked)) {
        record->value = 0;  // no longer an address: an immediate or index reads it as 0
      }
      record->kind = kind;
      return;
    }
  }
}

// The invocation words for the placement: header, fixed words, tensor addresses and sizes,
// the scalar.
std::vector<std::uint64_t> encode(const Placement &p, float scalar) {
  std::vector<std::uint64_t> words(invocation_bytes(2, 1) / 8);
  InvocationHeader header{};
  header.mode = 1;
  header.callable_id = kCallableId;
  header.generation = kGeneration;
  header.payload_bytes = invocation_bytes(2, 1) - sizeof(InvocationHeader);
  header.tensor_count = 2;
  header.scalar_count = 1;
  std::memcpy(words.data(), &header, sizeof header);
  std::uint64_t *payload = words.data() + sizeof header / 8;
  payload[0] = reinterpret_cast<std::uint64_t>(p.image);
  payload[1] = 0;
  payload[2] = 0;
  payload[3] = reinterpret_cast<std::uint64_t>(p.in);
  payload[4] = reinterpret_cast<std::uint64_t>(p.out);
  payload[5] = kN * sizeof(float);
  payload[6] = kN * sizeof(float);
  payload[7] = rrt_scalar_from_f32(scalar);
  return words;
}

Status execute(DeviceRuntime &runtime, const std::vector<std::uint64_t> &words, std::size_t bytes) {
  return DeviceRuntime::entry(&runtime, reinterpret_cast<const std::byte *>(words.data()), bytes);
}

void image_target(FuzzedDataProvider &in) {
  Program program(in.ConsumeBool());
  const bool host_seed = in.ConsumeBool();
  const auto workers = in.ConsumeIntegralInRange<unsigned>(1, 3);
  const auto scalar = static_cast<float>(in.ConsumeIntegralInRange<int>(0, 5));
  const CallableRequirements &needs = program.callable->requirements();

  Placement p;
  p.heap = needs.gm_heap != 0 ? p.alloc(needs.gm_heap) : nullptr;
  p.state = p.alloc(needs.scheduler_state);
  if (host_seed) {
    std::vector<std::byte> seed(needs.scheduler_state);
    RRT_FUZZ_CHECK(build_scheduler_seed(*program.callable, kGeneration, seed).is_ok(),
                   "build_scheduler_seed failed");
    p.seed = p.alloc(seed.size());
    RRT_FUZZ_CHECK(p.device.copy_host_to_device(p.seed, seed.data(), seed.size()).is_ok(),
                   "seed upload failed");
  }
  p.image = p.alloc(needs.image);
  std::vector<std::byte> pristine(needs.image);
  RRT_FUZZ_CHECK(build_task_graph_image(
                     *program.callable,
                     ImageBinding{kCallableId, kGeneration, p.heap, p.state, p.seed}, pristine)
                     .is_ok(),
                 "build_task_graph_image failed");
  p.in = p.alloc(kN * sizeof(float));
  p.out = p.alloc(kN * sizeof(float));
  std::vector<float> input(kN);
  for (std::uint64_t i = 0; i < kN; ++i) {
    input[i] = static_cast<float>(i + 1);
  }
  RRT_FUZZ_CHECK(p.device.copy_host_to_device(p.in, input.data(), kN * sizeof(float)).is_ok(),
                 "input upload failed");

  TaskGraphHeader header;
  std::memcpy(&header, pristine.data(), sizeof header);
  std::vector<std::byte> image = pristine;
  const std::vector<std::uint64_t> good = encode(p, scalar);
  std::vector<std::uint64_t> words = good;
  std::size_t bytes = words.size() * 8;
  const std::vector<Field> image_fields = mutable_image_fields(header);
  const auto mutations = in.ConsumeIntegralInRange<int>(0, kMaxMutations);
  for (int m = 0; m < mutations; ++m) {
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: {
        const Field f =
            image_fields[in.ConsumeIntegralInRange<std::size_t>(0, image_fields.size() - 1)];
        mutate_field(in, image.data(), f.offset, f.width);
        break;
      }
      case 1:
        mutate_operand(in, image.data(), pristine.data(), header);
        break;
      case 2: {
        // The invocation header's fields (the payload's addresses and sizes stay).
        static constexpr Field kHeaderFields[] = {
            {offsetof(InvocationHeader, mode), 4},
            {offsetof(InvocationHeader, callable_id), 4},
            {offsetof(InvocationHeader, generation), 8},
            {offsetof(InvocationHeader, payload_bytes), 8},
            {offsetof(InvocationHeader, tensor_count), 4},
            {offsetof(InvocationHeader, scalar_count), 4},
            {offsetof(InvocationHeader, host_copy_tensor_count), 4},
            {offsetof(InvocationHeader, reserved), 4},
        };
        const Field f = kHeaderFields[in.ConsumeIntegralInRange<std::size_t>(0, 7)];
        mutate_field(in, reinterpret_cast<std::byte *>(words.data()), f.offset, f.width);
        break;
      }
      default:
        // A shorter invocation than the header says, or the scalar word changed.
        if (in.ConsumeBool()) {
          bytes = in.ConsumeIntegralInRange<std::size_t>(0, bytes);
        } else {
          mutate_field(in, reinterpret_cast<std::byte *>(words.data()), words.size() * 8 - 8, 8);
        }
        break;
    }
  }

  DeviceRuntime runtime(program.kernels, workers);
  RRT_FUZZ_CHECK(p.device.copy_host_to_device(p.image, image.data(), image.size()).is_ok(),
                 "image upload failed");
  const Status mutated = execute(runtime, words, bytes);
  RRT_FUZZ_CHECK(mutated.is_ok() || mutated.code() == RRT_ERR_KERNEL_FAILED,
                 "the device half failed with another code than KERNEL_FAILED");

  // The unmutated invocation of the unmutated image runs correctly afterwards. (A mutated
  // operand index may have made a task write the input.)
  RRT_FUZZ_CHECK(p.device.copy_host_to_device(p.in, input.data(), kN * sizeof(float)).is_ok(),
                 "input upload failed");
  RRT_FUZZ_CHECK(p.device.copy_host_to_device(p.image, pristine.data(), pristine.size()).is_ok(),
                 "image upload failed");
  const Status clean = execute(runtime, good, good.size() * 8);
  RRT_FUZZ_CHECK(clean.is_ok(), "the unmutated invocation failed after a mutated one");
  std::vector<float> output(kN);
  RRT_FUZZ_CHECK(p.device.copy_device_to_host(output.data(), p.out, kN * sizeof(float)).is_ok(),
                 "output download failed");
  for (std::uint64_t i = 0; i < kN; ++i) {
    RRT_FUZZ_CHECK(output[i] == input[i] * (scalar + 1.0F),
                   "the unmutated invocation computed wrong values");
  }
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): the name libFuzzer calls
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  FuzzedDataProvider in(data + 1, size - 1);
  if (data[0] % 2 == 0) {
    decode_target(in);
  } else {
    image_target(in);
  }
  return 0;
}
