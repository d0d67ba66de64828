// The flags of one `faultline` subcommand, parsed by CLI11.
//
// Why CLI11 and not Abseil flags: faultline is one binary with ten subcommands, each with its own
// flags, positional arguments and repeatable options. absl::flags are process-global (declared at
// namespace scope, one namespace shared by every subcommand, parsed once from argv), so each
// subcommand's flag set, its positionals and its usage would have to be dispatched by hand again.
// CLI11 parses a per-subcommand CLI::App from an argument vector, handles `--flag value`,
// `--flag=value`, repeats and comma lists, converts and range-checks numbers, and reports every
// malformed or unknown flag as an error that we print with the subcommand's usage (exit 2). It is
// header-only (Debian libcli11-dev). The hand-written usage texts stay: they explain more than a
// generated option list would.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/commands.h"

namespace fl {

enum class FlagKind {
  kText,          // --name VALUE
  kOptionalText,  // --name [VALUE]
  kCount,         // --name N, a non-negative 64-bit integer
  kPositive,      // --name X, a number > 0
  kList,          // --name A,B (comma-separated, repeatable)
  kSwitch,        // --name
};

struct FlagDef {
  std::string name;  // "--seeds"
  FlagKind kind;
};

class CliFlags {
 public:
  // Parses `args` (after the subcommand name). `--help`/`-h` prints `usage` to stdout; a bad,
  // malformed or unknown flag prints the error and `usage` to stderr.
  CliFlags(const Args& args, const char* usage, const std::vector<FlagDef>& defs);

  // -1 when parsed; otherwise the exit code to return now (0 after --help, 2 after an error).
  int status() const { return status_; }
  bool has(const std::string& name) const { return present_.count(name) > 0; }
  std::string str(const std::string& name, const std::string& fallback = "") const;
  // Leaves `*out` alone when the flag is absent. Always true: values were checked at parse time.
  bool u64(const std::string& name, uint64_t* out) const;
  bool number(const std::string& name, double* out) const;
  std::vector<std::string> list(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }
  // Prints `message` and the usage to stderr; returns 2.
  int error(const std::string& message) const;

 private:
  const char* usage_;
  int status_ = -1;
  std::set<std::string> present_;
  std::map<std::string, std::string> text_;
  std::map<std::string, uint64_t> counts_;
  std::map<std::string, double> numbers_;
  std::map<std::string, std::vector<std::string>> lists_;
  std::vector<std::string> positional_;
};

}  // namespace fl
