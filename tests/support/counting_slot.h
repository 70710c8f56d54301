// A SlotView decorator that forwards to a context's slot and counts the bank sizings and the
// synchronous uploads a bind makes, and can fail the next upload.
#pragma once

#include "context/device_context.h"
#include "context/slot_view.h"

namespace replayrt::testing {

class CountingSlot final : public SlotView {
 public:
  CountingSlot(DeviceContext &context, int slot) : inner_(context.slot(slot)) {}

  int bank_sizings = 0;
  int uploads = 0;
  // When set, the next upload fails with RRT_ERR_INTERNAL without reaching the device.
  bool fail_next_upload = false;

  int index() const noexcept override { return inner_.index(); }
  ExecutionMode mode() const noexcept override { return inner_.mode(); }
  Status reserve(const SlotRequest &request, SlotGrant *grant) override {
    bank_sizings += request.size_bank ? 1 : 0;
    return inner_.reserve(request, grant);
  }
  Status upload(void *dst, const void *src, std::size_t bytes) override {
    ++uploads;
    if (fail_next_upload) {
      fail_next_upload = false;
      return Status::error(RRT_ERR_INTERNAL, "injected upload failure");
    }
    return inner_.upload(dst, src, bytes);
  }
  BankBases bank_bases() const override { return inner_.bank_bases(); }
  BankRequest bank_capacities() const override { return inner_.bank_capacities(); }
  bool find_prebuilt(std::uint64_t key, PrebuiltImageCache::Entry *out) const override {
    return inner_.find_prebuilt(key, out);
  }
  void remember_prebuilt(const PrebuiltImageCache::Entry &entry) override {
    inner_.remember_prebuilt(entry);
  }

 private:
  SlotView &inner_;
};

}  // namespace replayrt::testing
