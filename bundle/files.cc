#include "bundle/files.h"

#include <system_error>

#include <fmt/core.h>

#include "bundle/ddr_image.h"
#include "bundle/listing.h"
#include "bundle/words.h"
#include "util/error.h"
#include "util/file_io.h"

namespace npuforge::bundle {
namespace {

struct FileKind {
  std::string_view suffix, what;
};
// In BundleFile's order, which is the order they are created (so the first that cannot be is
// the one reported) and renamed into place.
constexpr std::array<FileKind, kBundleFiles> kFiles = {{{".s", "assembly"},
                                                        {".bin", "program binary"},
                                                        {".hex", "$readmemh image"},
                                                        {".memmap.yaml", "memory map"},
                                                        {".ddr.bin", "DDR image"}}};

std::string with_suffix(const std::filesystem::path& prefix, size_t file) {
  return prefix.string() + std::string(kFiles[file].suffix);
}

}  // namespace

BundlePaths BundlePaths::at(const std::filesystem::path& prefix) {
  return {with_suffix(prefix, 0), with_suffix(prefix, 1), with_suffix(prefix, 2), with_suffix(prefix, 3),
          with_suffix(prefix, 4)};
}

BundleWriter::BundleWriter(const std::filesystem::path& prefix) {
  for (size_t i = 0; i < kBundleFiles; ++i) {
    path_[i] = with_suffix(prefix, i);
    temp_[i] = path_[i] + ".tmp";
  }
  try {
    for (; created_ < kBundleFiles; ++created_)
      files_[created_] = std::make_unique<util::BufferedWriter>(temp_[created_], kFiles[created_].what);
  } catch (...) {
    remove_temporaries();
    throw;
  }
}

BundleWriter::~BundleWriter() {
  if (!committed_) remove_temporaries();
}

void BundleWriter::remove_temporaries() {
  std::error_code ignored;  // the error being reported is the one that matters
  for (size_t i = 0; i < created_; ++i) {
    files_[i].reset();
    std::filesystem::remove(temp_[i], ignored);
  }
}

void BundleWriter::restart(BundleFile f) {
  const size_t i = index(f);
  files_[i].reset();
  files_[i] = std::make_unique<util::BufferedWriter>(temp_[i], kFiles[i].what);
}

void BundleWriter::commit() {
  for (auto& f : files_) f->close();
  for (size_t i = 0; i < kBundleFiles; ++i) {
    std::error_code ec;
    std::filesystem::rename(temp_[i], path_[i], ec);
    if (!ec) continue;
    const std::string why = ec.message();
    for (size_t j = 0; j < i; ++j) std::filesystem::remove(path_[j], ec);
    throw Error(fmt::format("{}: cannot write {}: {}", path_[i], kFiles[i].what, why));
  }
  committed_ = true;
}

void write_bundle(const isa::Isa& isa, const std::filesystem::path& prefix, std::span<const isa::Instruction> instrs,
                  const MemMap& memmap, std::span<const uint8_t> ddr_image, const Listing& listing) {
  BundleWriter files(prefix);
  util::BufferedWriter& s = files.file(BundleFile::kAssembly);
  put_listing_head(s, listing.header, instrs.size(), listing.note);
  const isa::SymbolRef* op = listing.operands.data();
  const isa::SymbolRef* const last_op = op + listing.operands.size();
  for (size_t i = 0; i < instrs.size(); ++i) {
    ListingLine line(s, instrs[i]);
    for (; op != last_op && op->instr == i; ++op) line.operand(op->field, op->symbol, op->offset);
    line.end();
  }
  WordsEmitter words(isa);
  words.header(listing.header, instrs.size(), files.file(BundleFile::kReadmemh));
  words.emit(instrs, files.file(BundleFile::kBinary), files.file(BundleFile::kReadmemh));
  files.file(BundleFile::kMemmap).put(memmap.to_yaml());
  files.file(BundleFile::kDdr).put(ddr_image);
  files.commit();
}

void write_bundle(const std::filesystem::path& prefix, const Program& p, const Listing& listing) {
  if (!p.isa || !p.memmap)
    throw Error(fmt::format("internal: program '{}' has no ISA or no memory map to write", p.name));
  write_bundle(*p.isa, prefix, p.instrs, *p.memmap, p.ddr_init, listing);
}

namespace {

// The program and its memory map, without a DDR image yet.
Program read_code(const isa::Isa& isa, const BundlePaths& paths, const isa::NpuConfig& config) {
  Program p;
  p.name = paths.binary.stem().string();
  p.isa = &isa;
  p.config = config;
  const auto bytes = util::read_binary_file(paths.binary, "program binary");
  p.instrs = isa::decode_program(isa, bytes, paths.binary.string());
  if (!paths.memmap.empty()) p.memmap = MemMap::load_file(paths.memmap);
  return p;
}

// Gives `p` its DDR image and checks the whole; `image_name` names the image in messages,
// empty when none was given.
Program with_image(Program p, const BundlePaths& paths, std::vector<uint8_t> ddr_image, const std::string& image_name) {
  p.ddr_init = std::move(ddr_image);
  if (const std::optional<DdrNeed> need = p.memmap ? ddr_image_need(*p.memmap) : std::nullopt;
      need && need->bytes > p.ddr_init.size()) {
    if (image_name.empty())
      throw Error(fmt::format("{}: no DDR image given, but the memory map {} needs {} bytes of one: {}",
                              paths.binary.string(), paths.memmap.string(), need->bytes, describe(*need)));
    throw Error(fmt::format("{}: DDR image of {} bytes is shorter than the memory map {} needs: {}", image_name,
                            p.ddr_init.size(), paths.memmap.string(), describe(*need)));
  }
  if (const std::string err = p.validate(); !err.empty()) throw Error(err);
  return p;
}

}  // namespace

Program read_program(const isa::Isa& isa, const BundlePaths& paths, const isa::NpuConfig& config) {
  Program p = read_code(isa, paths, config);
  if (paths.ddr.empty()) return with_image(std::move(p), paths, {}, "");
  return with_image(std::move(p), paths, read_ddr_image(paths.ddr), paths.ddr.string());
}

Program read_program(const isa::Isa& isa, const BundlePaths& paths, const isa::NpuConfig& config,
                     std::vector<uint8_t> ddr_image, const std::string& image_name) {
  return with_image(read_code(isa, paths, config), paths, std::move(ddr_image), image_name);
}

}  // namespace npuforge::bundle
