# Writes a YAML file as a C++ raw string returned by npuforge::isa::${FUNC}() (run at build
# time by isa/CMakeLists.txt). FUNC defaults to builtin_isa_yaml.
if(NOT DEFINED FUNC)
  set(FUNC builtin_isa_yaml)
endif()
file(READ ${IN} text)
get_filename_component(name ${IN} NAME)
file(WRITE ${OUT} "// Generated from ${name}; do not edit.\n#include <string_view>\n"
  "namespace npuforge::isa { std::string_view ${FUNC}() {\n"
  "  return R\"npuyaml(${text})npuyaml\";\n} }\n")
