# Writes the ISA YAML as a C++ raw string (run at build time by isa/CMakeLists.txt).
file(READ ${IN} text)
file(WRITE ${OUT} "// Generated from npu_isa.yaml; do not edit.\n#include <string_view>\n"
  "namespace npuforge::isa { std::string_view builtin_isa_yaml() {\n"
  "  return R\"npuisa(${text})npuisa\";\n} }\n")
