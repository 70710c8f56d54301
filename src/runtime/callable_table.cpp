#include "runtime/callable_table.h"

#include "common/format.h"

namespace replayrt {

Status CallableTable::add(const std::function<Status(std::int32_t id, Record *record)> &fill,
                          std::int32_t *out_id) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const std::int32_t id = count_.load(std::memory_order_relaxed);
  if (id >= kCapacity) {
    return Status::error(RRT_ERR_CALLABLE_COUNT_EXCEEDED,
                         format("the context already holds %d callables (the maximum); "
                                "finalize it to start over",
                                kCapacity));
  }
  std::unique_ptr<Chunk> &chunk = chunks_[static_cast<std::size_t>(id / kChunk)];
  if (!chunk) {
    chunk = std::make_unique<Chunk>();
  }
  Record record;
  record.generation = next_generation_;
  RRT_RETURN_IF_ERROR(fill(id, &record));
  ++next_generation_;
  (*chunk)[static_cast<std::size_t>(id % kChunk)] = std::move(record);
  count_.store(id + 1, std::memory_order_release);
  *out_id = id;
  return Status::ok();
}

const CallableTable::Record *CallableTable::find(std::int32_t id) const noexcept {
  if (id < 0 || id >= count_.load(std::memory_order_acquire)) {
    return nullptr;
  }
  return &(*chunks_[static_cast<std::size_t>(id / kChunk)])[static_cast<std::size_t>(id % kChunk)];
}

void CallableTable::clear() noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  count_.store(0, std::memory_order_release);
  for (std::unique_ptr<Chunk> &chunk : chunks_) {
    chunk.reset();
  }
}

BindRequest bind_request(std::int32_t id, const CallableTable::Record &record,
                         const RunArgsView &args) {
  BindRequest request;
  request.callable = record.callable.get();
  request.callable_id = id;
  request.generation = record.generation;
  request.args = args;
  request.resident = record.resident;
  return request;
}

}  // namespace replayrt
