#include "compiler/npu_limits.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string_view>
#include <utility>

namespace npuforge::compiler {
namespace {

// The smallest maximum over `fields` ({instruction, field} pairs) of `isa`.
int64_t least_max(const isa::Isa& isa, std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
  int64_t least = std::numeric_limits<int64_t>::max();
  for (const auto& [mnemonic, field] : fields) least = std::min(least, isa.max_value(mnemonic, field));
  return least;
}

}  // namespace

NpuLimits::NpuLimits(const isa::Isa& isa)
    : max_kernel(least_max(isa, {{"im2col", "kh"}, {"im2col", "kw"}})),
      max_stride(least_max(isa, {{"im2col", "stride_h"}, {"im2col", "stride_w"}, {"pool", "stride_h"},
                                 {"pool", "stride_w"}})),
      max_dilation(least_max(isa, {{"im2col", "dil_h"}, {"im2col", "dil_w"}})),
      max_pad(least_max(isa, {{"im2col", "pad_top"}, {"im2col", "pad_left"}, {"im2col", "pad_bottom"},
                              {"im2col", "pad_right"}, {"pool", "pad_top"}, {"pool", "pad_left"},
                              {"pool", "pad_bottom"}, {"pool", "pad_right"}})),
      max_pool_window(least_max(isa, {{"pool", "window_h"}, {"pool", "window_w"}})),
      max_gemm_dim(least_max(isa, {{"gemm", "n"}, {"gemm", "k"}})),
      max_im2col_channels(isa.max_value("im2col", "c")),
      max_image_width(least_max(isa, {{"im2col", "w"}, {"pool", "w"}})) {}

NpuLimits NpuLimits::unbounded() {
  NpuLimits l;
  for (int64_t* v : {&l.max_kernel, &l.max_stride, &l.max_dilation, &l.max_pad, &l.max_pool_window, &l.max_gemm_dim,
                     &l.max_im2col_channels, &l.max_image_width})
    *v = std::numeric_limits<int32_t>::max();
  return l;
}

}  // namespace npuforge::compiler
