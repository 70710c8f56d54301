// CallableTable: the prepared callables of a context, by id.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "common/status.h"
#include "platform/device.h"
#include "runtime/bind.h"
#include "runtime/callable.h"

namespace replayrt {

// Ids are minted in order from 0 and never reused until clear(). Each id gets a generation
// that is unique for the table's life (it travels in invocations and images, so a launch can
// tell its callable from a later one). In kernel mode a record also holds where the callable
// lives in the frozen capacity.
//
// Thread safety: add() serializes on a mutex and may run concurrently with find(); find() is
// lock-free (a launch looks its callable up on every call). clear() must not race with
// anything.
class CallableTable {
 public:
  static constexpr std::int32_t kCapacity = 4096;

  struct Record {
    std::shared_ptr<const Callable> callable;
    std::uint64_t generation = 0;
    ResidentPlacement resident;  // kernel mode only; null in program mode
    // What the device's executor prepared for the callable (Executor::prepare).
    std::shared_ptr<const PreparedExecutable> executable;
  };

  // Mints the next id and generation and calls fill(id, &record) (under the table's lock).
  // The record is published only when fill returns OK, and then fill's id is written to
  // *out_id. RRT_ERR_CALLABLE_COUNT_EXCEEDED when kCapacity ids are in use.
  Status add(const std::function<Status(std::int32_t id, Record *record)> &fill,
             std::int32_t *out_id);
  // The record of `id`, or null when `id` is not prepared.
  const Record *find(std::int32_t id) const noexcept;
  std::int32_t size() const noexcept { return count_.load(std::memory_order_acquire); }
  void clear() noexcept;

 private:
  static constexpr std::int32_t kChunk = 64;
  using Chunk = std::array<Record, kChunk>;

  std::mutex mutex_;
  std::array<std::unique_ptr<Chunk>, kCapacity / kChunk> chunks_;
  std::atomic<std::int32_t> count_{0};
  std::uint64_t next_generation_ = 1;
};

// The bind request of one run of the callable `record` holds under `id`.
BindRequest bind_request(std::int32_t id, const CallableTable::Record &record,
                         const RunArgsView &args);

}  // namespace replayrt
