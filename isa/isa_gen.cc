// Build-time generator: writes the SystemVerilog package (and optionally the markdown
// reference) from npu_isa.yaml. Kept apart from the npuforge CLI so that the RTL can be
// generated before the libraries that depend on the RTL are built.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "isa/emit.h"
#include "util/error.h"

static int write_if_changed(const std::filesystem::path& path, const std::string& text) {
  std::ifstream in(path, std::ios::binary);
  std::string old((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in && old == text) return 0;  // unchanged: do not make Verilator rebuild
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  return out ? 0 : 1;
}

int main(int argc, char** argv) {
  try {
    std::string isa_path;
    for (int i = 1; i + 1 < argc; i += 2)
      if (std::string(argv[i]) == "--isa") isa_path = argv[i + 1];
    const auto isa = isa_path.empty() ? npuforge::isa::builtin_isa() : npuforge::isa::Isa::load_file(isa_path);
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      if (flag == "--sv" && write_if_changed(argv[i + 1], npuforge::isa::isa_sv_package(isa))) return 1;
      if (flag == "--markdown" && write_if_changed(argv[i + 1], npuforge::isa::isa_markdown(isa))) return 1;
    }
    return 0;
  } catch (const npuforge::Error& e) {
    std::fprintf(stderr, "isa_gen: error: %s\n", e.what());
    return 1;
  }
}
