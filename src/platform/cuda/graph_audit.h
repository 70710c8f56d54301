// The audit of a captured graph's device addresses: the pure part, over parameter bytes and an
// allocation table, with no CUDA call in it (the CUDA stream walks the graph's nodes and feeds
// their bytes here). Built in every configuration, so it is tested everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "platform/allocation_table.h"
#include "platform/device.h"

namespace replayrt::cuda {

// One kernel parameter inside a node's parameter bytes: [offset, offset + size).
struct KernelParameter {
  std::size_t offset = 0;
  std::size_t size = 0;
};

struct AuditCounts {
  std::uint64_t words_scanned = 0;
  std::uint64_t tracked = 0;  // words inside a live allocation (recorded)
};

// Scans every 8-byte word of the parameter bytes `blob` that is 8-byte aligned (relative to the
// start of `blob`, the alignment CUDA gives kernel parameters) and lies wholly inside one of
// `parameters`: each one whose value lies inside a live allocation of `table` is appended to
// `found` as a CapturedAddress. This covers pointer parameters and pointers inside by-value
// structs alike. A parameter outside `blob` is scanned only where it overlaps it.
void scan_kernel_parameters(std::span<const std::byte> blob,
                            std::span<const KernelParameter> parameters,
                            const AllocationTable &table, std::vector<CapturedAddress> *found,
                            AuditCounts *counts);

// Appends `address` as a CapturedAddress when it lies inside a live allocation of `table`;
// returns whether it did.
bool record_if_tracked(std::uintptr_t address, const AllocationTable &table,
                       std::vector<CapturedAddress> *found);

// The first audited address whose allocation (base and generation) is not among `declared`'s
// allocations, or audited.size() when every audited address is covered. Both spans may be in
// any order.
std::size_t first_undeclared(std::span<const CapturedAddress> audited,
                             std::span<const CapturedAddress> declared);

// Sorts `addresses` and drops duplicates (same address, base and generation).
void deduplicate(std::vector<CapturedAddress> *addresses);

}  // namespace replayrt::cuda
