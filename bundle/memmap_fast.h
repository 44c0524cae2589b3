#pragma once
// A reader for exactly the memory maps npuforge writes for generated programs (MemMap::to_yaml
// without ddr_buffers): a profile of small `npuforge sim` runs put yaml-cpp's parsing of the
// map first. Anything outside that subset (hand-written maps, ddr_buffers, quoted symbols,
// values out of range, ...) returns nullopt and is read by yaml-cpp, whose errors name the
// file and line; so the fast path never decides that a file is bad and both paths give the
// same MemMap for every file the fast one accepts (tests/bundle/memmap_fast_test.cc).
#include <optional>
#include <string_view>

#include "bundle/memmap.h"

namespace npuforge::bundle {

std::optional<MemMap> parse_generated_memmap(std::string_view text);

// True when `symbol` is one the generator makes (letters, digits, then optionally @digits),
// which YAML writes as a plain scalar; such symbols are written without the YAML emitter.
bool is_plain_symbol(std::string_view symbol);

}  // namespace npuforge::bundle
