#include "harness/cli.h"

#include <cmath>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "absl/strings/numbers.h"

namespace fl {
namespace {

// CLI11 converts "-5" to an unsigned value by wrapping it; a count takes digits only.
CLI::Validator non_negative_integer() {
  return CLI::Validator(
      [](std::string& v) {
        const bool digits = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
        return digits ? std::string() : "takes a non-negative integer, got '" + v + "'";
      },
      "N");
}

// CLI::PositiveNumber's message prints the whole double range; this one says what is wanted.
CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& v) {
        double x = 0;
        const bool ok = absl::SimpleAtod(v, &x) && std::isfinite(x) && x > 0;
        return ok ? std::string() : "takes a number greater than 0, got '" + v + "'";
      },
      "X");
}

}  // namespace

CliFlags::CliFlags(const Args& args, const char* usage, const std::vector<FlagDef>& defs) : usage_(usage) {
  CLI::App app;
  app.set_help_flag();  // the subcommand's own usage text instead of CLI11's generated one
  bool help = false;
  app.add_flag("-h,--help", help);
  // Unmatched arguments are the positionals; an unmatched one that looks like a flag is an error
  // (checked below, so the message names it the way every other faultline error does).
  app.allow_extras();
  for (const FlagDef& d : defs) {
    switch (d.kind) {
      case FlagKind::kText:
        app.add_option(d.name, text_[d.name]);
        break;
      case FlagKind::kOptionalText:
        app.add_option(d.name, text_[d.name])->expected(0, 1);
        break;
      case FlagKind::kCount:
        app.add_option(d.name, counts_[d.name])->check(non_negative_integer());
        break;
      case FlagKind::kPositive:
        app.add_option(d.name, numbers_[d.name])->check(positive_number());
        break;
      case FlagKind::kList:
        app.add_option(d.name, lists_[d.name])->delimiter(',')->allow_extra_args(false);
        break;
      case FlagKind::kSwitch:
        app.add_flag(d.name);
        break;
    }
  }
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));  // CLI11 takes them reversed
  } catch (const CLI::ParseError& e) {
    status_ = error(e.what());
    return;
  }
  if (help) {
    std::fputs(usage_, stdout);
    status_ = 0;
    return;
  }
  for (const FlagDef& d : defs) {
    if (app.count(d.name) > 0) present_.insert(d.name);
  }
  for (const std::string& a : app.remaining()) {
    if (a.size() > 1 && a[0] == '-') {
      status_ = error("unknown flag '" + a + "'");
      return;
    }
    positional_.push_back(a);
  }
}

std::string CliFlags::str(const std::string& name, const std::string& fallback) const {
  auto it = text_.find(name);
  return has(name) && it != text_.end() ? it->second : fallback;
}

bool CliFlags::u64(const std::string& name, uint64_t* out) const {
  if (has(name)) *out = counts_.at(name);
  return true;
}

bool CliFlags::number(const std::string& name, double* out) const {
  if (has(name)) *out = numbers_.at(name);
  return true;
}

std::vector<std::string> CliFlags::list(const std::string& name) const {
  std::vector<std::string> out;
  auto it = lists_.find(name);
  if (it == lists_.end()) return out;
  for (const std::string& s : it->second) {
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

int CliFlags::error(const std::string& message) const {
  std::fprintf(stderr, "faultline: %s\n%s", message.c_str(), usage_);
  return 2;
}

}  // namespace fl
