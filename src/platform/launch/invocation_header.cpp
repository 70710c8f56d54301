#include "platform/launch/invocation_header.h"

#include <cstring>

#include "common/format.h"

namespace replayrt {

namespace {
Status malformed(const char *what) {
  return Status::error(RRT_ERR_KERNEL_FAILED, std::string("malformed invocation: ") + what);
}
}  // namespace

Status decode_invocation(const std::byte *bytes, std::size_t size, InvocationHeader *header,
                         InvocationPayloadView *payload) {
  if (bytes == nullptr || size < sizeof(InvocationHeader)) {
    return malformed("shorter than its 40-byte header");
  }
  std::memcpy(header, bytes, sizeof(InvocationHeader));
  if (header->mode > 1) {
    return malformed("unknown execution mode");
  }
  if (header->reserved != 0) {
    return malformed("reserved header field is not zero");
  }
  if (header->host_copy_tensor_count != 0) {
    return malformed("host_copy_tensor_count must be 0 (no host-only copy contract exists)");
  }
  if (header->tensor_count < 0 || header->scalar_count < 0) {
    return malformed("negative tensor or scalar count");
  }
  const auto tensors = static_cast<std::size_t>(header->tensor_count);
  const auto scalars = static_cast<std::size_t>(header->scalar_count);
  if (header->payload_bytes != size - sizeof(InvocationHeader) ||
      invocation_bytes(tensors, scalars) != size) {
    return Status::error(
        RRT_ERR_KERNEL_FAILED,
        format("malformed invocation: payload of %llu bytes does not match %zu tensors and %zu "
               "scalars in %zu bytes",
               static_cast<unsigned long long>(header->payload_bytes), tensors, scalars, size));
  }
  if (reinterpret_cast<std::uintptr_t>(bytes) % alignof(std::uint64_t) != 0) {
    return malformed("invocation bytes are not 8-byte aligned");
  }
  const auto *words = reinterpret_cast<const std::uint64_t *>(bytes + sizeof(InvocationHeader));
  payload->image_address = words[0];
  payload->timings_address = words[1];
  payload->wall_address = words[2];
  payload->tensor_addresses = {words + kPayloadFixedWords, tensors};
  payload->tensor_bytes = {words + kPayloadFixedWords + tensors, tensors};
  payload->scalars = {words + kPayloadFixedWords + 2 * tensors, scalars};
  return Status::ok();
}

}  // namespace replayrt
