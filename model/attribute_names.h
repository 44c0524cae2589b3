#pragma once
// The attribute names ONNX defines for an operator (its schema in Debian's libonnx), so that
// a hand-written graph's misspelt attribute is an error naming it, not a silently ignored key.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npuforge::model {

// The attributes of `op_type` in `domain` ("" for the default one) at `opset`, sorted; nullopt
// when ONNX has no schema for it (another domain's op, an unknown op: judged elsewhere).
std::optional<std::vector<std::string>> onnx_attribute_names(std::string_view domain, std::string_view op_type,
                                                             int64_t opset);

}  // namespace npuforge::model
