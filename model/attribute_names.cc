#include "model/attribute_names.h"

#include <onnx/defs/schema.h>

namespace npuforge::model {

std::optional<std::vector<std::string>> onnx_attribute_names(std::string_view domain, std::string_view op_type,
                                                             int64_t opset) {
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(std::string(op_type), static_cast<int>(opset), std::string(domain));
  if (!schema) return std::nullopt;
  std::vector<std::string> names;
  for (const auto& [name, attr] : schema->attributes()) names.push_back(name);  // a std::map: sorted
  return names;
}

}  // namespace npuforge::model
