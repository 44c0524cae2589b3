#pragma once
// The verdict as JSON, written and read here only: `npuforge sim --json` writes it, the
// regression worker's --isolate-seeds path and scripts read it. Finding kinds are written as
// their names (sim::to_string) and read back into the enum by exact name; every kept finding
// is written field by field, so a verdict read back formats (sim::format) and reports
// (verify::report) exactly as the one written.
//
//   {"program": "p", "pass": false, "completed": true, "backend": "systemc-tlm",
//    "program_instructions": 12, "instructions": 12, "cycles": 345,
//    "busy_cycles": {"load": 1, "compute": 2, "store": 3}, "findings": 2,
//    "by_kind": {"hazard": 2}, "first_finding": "[hazard/hazard] #3 gemm ...",
//    "kept": [{"kind": "hazard", "instr": 3, "mnemonic": "gemm", "symbol": "a", "space": "sram",
//              "addr": 1024, "bytes": 64, "other_instr": 1, "other_mnemonic": "load",
//              "other_symbol": "", "detail": "..."}, ...],
//    "rtl": {"decoded_words": 12, ..., "decoder_messages": ["..."]}}    (SystemC runs only)
// `first_finding` repeats kept[0] formatted, for a reader that wants only the line.
#include <string>
#include <string_view>

#include "sim/verify/verify.h"

namespace npuforge::sim::verify {

// One line, ending in a newline.
std::string to_json(const Verdict& v);
// Throws npuforge::Error naming `source`, the line and the field on malformed input.
Verdict parse_json(std::string_view text, std::string_view source);

}  // namespace npuforge::sim::verify
