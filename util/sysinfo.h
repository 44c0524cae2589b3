// What the machine has, for limits checked before work starts (never for results: outputs
// must not depend on the machine).
#pragma once
#include <unistd.h>

#include "util/types.h"

namespace npuforge::util {

inline Bytes physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return Bytes{pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0};
}

// The default memory budget of one command: three quarters of physical memory (0 if unknown:
// no limit).
inline Bytes default_memory_limit() { return Bytes{physical_memory().value / 4 * 3}; }

}  // namespace npuforge::util
