#pragma once
// Documents made from the ISA table: the markdown reference and the SystemVerilog package.
#include <string>

#include "isa/isa.h"

namespace npuforge::isa {

std::string isa_markdown(const Isa& isa);
// package npu_isa_pkg: width, one localparam per opcode, and per instruction and field its
// LSB and width (e.g. GEMM_M_LSB, GEMM_M_W), for the RTL decoder in rtl_stubs/.
std::string isa_sv_package(const Isa& isa);

}  // namespace npuforge::isa
