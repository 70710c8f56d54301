#include "platform/cuda/graph_audit.h"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace replayrt::cuda {

namespace {
constexpr std::size_t kWord = sizeof(std::uint64_t);

bool same(const CapturedAddress &a, const CapturedAddress &b) {
  return a.address == b.address && a.base == b.base && a.generation == b.generation;
}

bool before(const CapturedAddress &a, const CapturedAddress &b) {
  return std::tie(a.address, a.base, a.generation) < std::tie(b.address, b.base, b.generation);
}
}  // namespace

bool record_if_tracked(std::uintptr_t address, const AllocationTable &table,
                       std::vector<CapturedAddress> *found) {
  const auto owner = table.find(address);
  if (!owner) {
    return false;
  }
  found->push_back(CapturedAddress{address, owner->base, owner->generation});
  return true;
}

void scan_kernel_parameters(std::span<const std::byte> blob,
                            std::span<const KernelParameter> parameters,
                            const AllocationTable &table, std::vector<CapturedAddress> *found,
                            AuditCounts *counts) {
  for (const KernelParameter &parameter : parameters) {
    if (parameter.offset >= blob.size()) {
      continue;
    }
    const std::size_t end =
        parameter.offset + std::min(parameter.size, blob.size() - parameter.offset);
    std::size_t word = (parameter.offset + kWord - 1) / kWord * kWord;
    for (; word + kWord <= end; word += kWord) {
      std::uint64_t value = 0;
      std::memcpy(&value, blob.data() + word, kWord);
      ++counts->words_scanned;
      if (record_if_tracked(static_cast<std::uintptr_t>(value), table, found)) {
        ++counts->tracked;
      }
    }
  }
}

std::size_t first_undeclared(std::span<const CapturedAddress> audited,
                             std::span<const CapturedAddress> declared) {
  for (std::size_t i = 0; i < audited.size(); ++i) {
    const bool covered = std::any_of(declared.begin(), declared.end(), [&](const auto &d) {
      return d.base == audited[i].base && d.generation == audited[i].generation;
    });
    if (!covered) {
      return i;
    }
  }
  return audited.size();
}

void deduplicate(std::vector<CapturedAddress> *addresses) {
  std::sort(addresses->begin(), addresses->end(), before);
  addresses->erase(std::unique(addresses->begin(), addresses->end(), same), addresses->end());
}

}  // namespace replayrt::cuda
