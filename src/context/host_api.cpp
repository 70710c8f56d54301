#include "context/host_api.h"

#include <string>

namespace replayrt {

namespace {
Status missing(const char *op) {
  return Status::error(RRT_ERR_UNSUPPORTED,
                       std::string("host api operation '") + op + "' is not provided");
}
}  // namespace

Status HostApi::device_malloc(std::size_t bytes, void **out) const {
  if (ops_->device_malloc == nullptr) {
    return missing("device_malloc");
  }
  return ops_->device_malloc(runner_, growth_context(), bytes, out);
}

Status HostApi::device_free(void *ptr) const {
  if (ops_->device_free == nullptr) {
    return missing("device_free");
  }
  return ops_->device_free(runner_, ptr);
}

Status HostApi::copy_to_device(void *dst, const void *src, std::size_t bytes) const {
  if (ops_->copy_to_device == nullptr) {
    return missing("copy_to_device");
  }
  return ops_->copy_to_device(runner_, dst, src, bytes);
}

Status HostApi::copy_from_device(void *dst, const void *src, std::size_t bytes) const {
  if (ops_->copy_from_device == nullptr) {
    return missing("copy_from_device");
  }
  return ops_->copy_from_device(runner_, dst, src, bytes);
}

Status HostApi::retained_begin(std::uint64_t required) const {
  if (ops_->retained_begin == nullptr) {
    return missing("retained_begin");
  }
  return ops_->retained_begin(runner_, growth_context(), slot_, required);
}

void *HostApi::retained_acquire(std::uint64_t bytes) const {
  return ops_->retained_acquire == nullptr ? nullptr
                                           : ops_->retained_acquire(runner_, slot_, bytes);
}

Status HostApi::setup_static_arena(const BankRequest &request) const {
  if (ops_->setup_static_arena == nullptr) {
    return missing("setup_static_arena");
  }
  return ops_->setup_static_arena(runner_, growth_context(), bank_, request);
}

BankBases HostApi::pooled_bases() const {
  return ops_->pooled_bases == nullptr ? BankBases{} : ops_->pooled_bases(runner_, bank_);
}

BankRequest HostApi::pooled_sizes() const {
  return ops_->pooled_sizes == nullptr ? BankRequest{} : ops_->pooled_sizes(runner_, bank_);
}

bool HostApi::lookup_prebuilt_image(std::uint64_t key, PrebuiltImageCache::Entry *out) const {
  return ops_->lookup_prebuilt_image != nullptr &&
         ops_->lookup_prebuilt_image(runner_, bank_, key, out);
}

void HostApi::store_prebuilt_image(const PrebuiltImageCache::Entry &entry) const {
  if (ops_->store_prebuilt_image != nullptr) {
    ops_->store_prebuilt_image(runner_, entry);
  }
}

Status HostApi::acquire_graph_definition(std::uint64_t key, std::uint64_t bytes,
                                         GraphDefinitionStore::Placement *out) const {
  if (ops_->acquire_graph_definition == nullptr) {
    return missing("acquire_graph_definition");
  }
  return ops_->acquire_graph_definition(runner_, growth_context(), slot_, key, bytes, out);
}

Status HostApi::host_staging_begin(std::uint64_t required) const {
  if (ops_->host_staging_begin == nullptr) {
    return missing("host_staging_begin");
  }
  return ops_->host_staging_begin(runner_, growth_context(), slot_, required);
}

Status HostApi::host_staging_stage(std::uint64_t bytes, void **out) const {
  if (ops_->host_staging_stage == nullptr) {
    return missing("host_staging_stage");
  }
  return ops_->host_staging_stage(runner_, growth_context(), slot_, bytes, out);
}

Status HostApi::profile_area(std::uint32_t tasks, TaskTiming **timings, LaunchRecord **wall) const {
  *timings = nullptr;
  *wall = nullptr;
  if (ops_->profile_area == nullptr) {
    return Status::ok();
  }
  return ops_->profile_area(runner_, growth_context(), slot_, tasks, timings, wall);
}

}  // namespace replayrt
