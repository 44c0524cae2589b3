#pragma once
// Running the npuforge binary from a test, a scratch directory, and a well-formedness check
// for the SVG it draws.
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace npuforge::cli_testing {

namespace fs = std::filesystem;

struct CliRun {
  int code = -1;
  std::string out;  // stdout and stderr together
};

// Runs `npuforge <args>` through the shell (arguments are test-made paths and options).
inline CliRun run_cli(const std::string& args) {
  const std::string cmd = std::string(NPUFORGE_CLI) + " " + args + " 2>&1";
  CliRun r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// A fresh directory per test, removed afterwards.
struct ScratchDir {
  explicit ScratchDir(const std::string& tag)
      : dir(fs::temp_directory_path() / ("npuforge_" + tag + "_" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~ScratchDir() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
    return path(name);
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
  fs::path dir;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Occurrences of `needle` in `text`.
inline size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// A small XML well-formedness check: tags nest and close in order, exactly one root element
// named `root`, attribute values quoted, '&' only as an entity, no stray '<' or '>' in text.
// Returns an empty string when well formed, else what is wrong and where.
inline std::string xml_problem(const std::string& xml, const std::string& root) {
  std::vector<std::string> open;
  int roots = 0;
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.'; };
  auto entity_ok = [&](size_t at) {  // xml[at] == '&'
    for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
      if (xml.compare(at, std::char_traits<char>::length(e), e) == 0) return true;
    if (xml.compare(at, 2, "&#") != 0) return false;
    const size_t semi = xml.find(';', at);
    return semi != std::string::npos && semi > at + 2 && semi < at + 10;
  };
  auto where = [&](size_t at) { return " at byte " + std::to_string(at); };
  size_t i = 0;
  while (i < xml.size()) {
    if (xml[i] != '<') {
      if (xml[i] == '>') return "stray '>'" + where(i);
      if (xml[i] == '&' && !entity_ok(i)) return "bare '&'" + where(i);
      if (open.empty() && !std::isspace(static_cast<unsigned char>(xml[i]))) return "text outside the root" + where(i);
      ++i;
      continue;
    }
    if (xml.compare(i, 2, "<?") == 0 || xml.compare(i, 4, "<!--") == 0) {
      const size_t end = xml.find(xml[i + 1] == '?' ? "?>" : "-->", i);
      if (end == std::string::npos) return "unterminated declaration or comment" + where(i);
      i = end + 2;
      continue;
    }
    const bool closing = xml.compare(i, 2, "</") == 0;
    size_t j = i + (closing ? 2 : 1);
    const size_t name_start = j;
    while (j < xml.size() && name_char(xml[j])) ++j;
    const std::string name = xml.substr(name_start, j - name_start);
    if (name.empty()) return "tag without a name" + where(i);
    if (closing) {
      while (j < xml.size() && std::isspace(static_cast<unsigned char>(xml[j]))) ++j;
      if (j >= xml.size() || xml[j] != '>') return "bad closing tag </" + name + where(i);
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes " + (open.empty() ? std::string("nothing") : "<" + open.back() + ">") + where(i);
      open.pop_back();
      i = j + 1;
      continue;
    }
    // Attributes: name = 'value' or "value", then '>' or '/>'.
    bool self_closing = false;
    for (;;) {
      while (j < xml.size() && std::isspace(static_cast<unsigned char>(xml[j]))) ++j;
      if (j >= xml.size()) return "unterminated <" + name + where(i);
      if (xml[j] == '>') break;
      if (xml.compare(j, 2, "/>") == 0) {
        self_closing = true;
        ++j;
        break;
      }
      const size_t attr = j;
      while (j < xml.size() && name_char(xml[j])) ++j;
      if (j == attr || j >= xml.size() || xml[j] != '=') return "bad attribute in <" + name + where(attr);
      ++j;
      if (j >= xml.size() || (xml[j] != '\'' && xml[j] != '"')) return "unquoted attribute in <" + name + where(attr);
      const char quote = xml[j];
      const size_t end = xml.find(quote, j + 1);
      if (end == std::string::npos) return "unterminated attribute in <" + name + where(attr);
      for (size_t k = j + 1; k < end; ++k) {
        if (xml[k] == '<') return "'<' in an attribute of <" + name + where(k);
        if (xml[k] == '&' && !entity_ok(k)) return "bare '&' in an attribute of <" + name + where(k);
      }
      j = end + 1;
    }
    if (open.empty()) {
      if (++roots > 1) return "a second root element <" + name + ">" + where(i);
      if (name != root) return "root is <" + name + ">, expected <" + root + ">";
    }
    if (!self_closing) open.push_back(name);
    i = j + 1;
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (roots == 0) return "no root element";
  return {};
}

}  // namespace npuforge::cli_testing
