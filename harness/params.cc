#include "harness/params.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "harness/scenario.h"
#include "harness/system.h"

namespace fl {
namespace {

const char* type_name(ParamType t) {
  switch (t) {
    case ParamType::kInt:
      return "integer";
    case ParamType::kNumber:
      return "number";
    case ParamType::kText:
      return "text";
  }
  return "?";
}

std::string bound_text(const ParamInfo& p, double v) {
  if (p.type == ParamType::kInt) return absl::StrCat(static_cast<int64_t>(v));
  return absl::StrFormat("%g", v);
}

std::string range_text(const ParamInfo& p) {
  if (p.type == ParamType::kText) return absl::StrJoin(p.choices, ", ");
  return absl::StrCat(bound_text(p, p.min), "..", bound_text(p, p.max));
}

std::string expectation(const ParamInfo& p) {
  std::string out = absl::StrCat("must be an ", type_name(p.type));
  if (p.type == ParamType::kNumber) out = "must be a number";
  if (!p.unit.empty()) absl::StrAppend(&out, " in ", p.unit);
  absl::StrAppend(&out, " between ", bound_text(p, p.min), " and ", bound_text(p, p.max));
  return out;
}

}  // namespace

ParamInfo int_param(std::string name, std::string unit, int64_t min, int64_t max, int64_t fallback, std::string doc) {
  return ParamInfo{std::move(name), std::move(doc),           absl::StrCat(fallback),  ParamType::kInt,
                   std::move(unit), static_cast<double>(min), static_cast<double>(max)};
}

ParamInfo number_param(std::string name, std::string unit, double min, double max, double fallback, std::string doc) {
  return ParamInfo{
      std::move(name), std::move(doc), absl::StrFormat("%g", fallback), ParamType::kNumber, std::move(unit), min, max};
}

ParamInfo text_param(std::string name, std::string fallback, std::string doc) {
  return ParamInfo{std::move(name), std::move(doc), std::move(fallback), ParamType::kText, "", 0, 0};
}

ParamInfo choice_param(std::string name, std::string fallback, std::vector<std::string> choices, std::string doc) {
  ParamInfo p = text_param(std::move(name), std::move(fallback), std::move(doc));
  p.choices = std::move(choices);
  return p;
}

ParamInfo derived_int_param(std::string name, std::string unit, int64_t min, int64_t max, std::string doc) {
  return ParamInfo{std::move(name),          std::move(doc),          "", ParamType::kInt, std::move(unit),
                   static_cast<double>(min), static_cast<double>(max)};
}

absl::StatusOr<ParamValue> parse_param(const ParamInfo& p, const std::string& text) {
  ParamValue v;
  v.type = p.type;
  v.text = text;
  if (p.type == ParamType::kText) {
    if (p.choices.empty() || std::find(p.choices.begin(), p.choices.end(), text) != p.choices.end()) return v;
    return absl::InvalidArgumentError("param '" + p.name + "' must be one of " + absl::StrJoin(p.choices, ", ") +
                                      ", got '" + text + "'");
  }
  bool ok = false;
  double as_double = 0;
  if (p.type == ParamType::kInt) {
    ok = absl::SimpleAtoi(text, &v.i);
    as_double = static_cast<double>(v.i);
  } else {
    ok = absl::SimpleAtod(text, &v.d) && std::isfinite(v.d);
    as_double = v.d;
  }
  if (!ok || as_double < p.min || as_double > p.max) {
    return absl::InvalidArgumentError(absl::StrCat("param '", p.name, "' ", expectation(p), ", got '", text, "'"));
  }
  return v;
}

const ParamValue& ParamValues::at(const std::string& name, ParamType type) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::logic_error("param '" + name + "' is not declared (or has no default)");
  if (it->second.type != type) throw std::logic_error("param '" + name + "' read as " + type_name(type));
  return it->second;
}

int64_t ParamValues::i64(const std::string& name) const { return at(name, ParamType::kInt).i; }
double ParamValues::num(const std::string& name) const { return at(name, ParamType::kNumber).d; }
const std::string& ParamValues::text(const std::string& name) const { return at(name, ParamType::kText).text; }

ParamValues resolve_params(const std::vector<ParamInfo>& declared, const Scenario& s) {
  ParamValues out;
  for (const ParamInfo& p : declared) {
    const std::string* given = nullptr;
    if (auto it = s.params.find(p.name); it != s.params.end()) given = &it->second;
    for (size_t w = 0; given == nullptr && w < s.workload.size(); ++w) {
      if (auto it = s.workload[w].params.find(p.name); it != s.workload[w].params.end()) given = &it->second;
    }
    if (given == nullptr && p.default_value.empty() && p.type != ParamType::kText) continue;  // derived
    absl::StatusOr<ParamValue> v = parse_param(p, given ? *given : p.default_value);
    if (!v.ok()) {
      const std::string why(v.status().message());
      throw std::invalid_argument(given ? why : "the declared default of " + why);
    }
    out.values_[p.name] = *std::move(v);
  }
  out.resolved_ = true;
  return out;
}

Scenario with_config(const Scenario& s) {
  Scenario out = s;
  if (const SystemUnderTest* sys = find_system(s.system); sys != nullptr && !s.config.resolved()) {
    out.config = resolve_params(sys->params(), s);
  }
  return out;
}

std::string params_markdown(const std::vector<const SystemUnderTest*>& systems) {
  std::string out =
      "| system | param | type | unit | range | default | what it sets |\n|---|---|---|---|---|---|---|\n";
  for (const SystemUnderTest* sys : systems) {
    for (const ParamInfo& p : sys->params()) {
      const std::string fallback = !p.default_value.empty()     ? "`" + p.default_value + "`"
                                   : p.type == ParamType::kText ? "(empty)"
                                                                : "(derived)";
      absl::StrAppend(&out, "| ", sys->name(), " | `", p.name, "` | ", type_name(p.type), " | ", p.unit, " | ",
                      range_text(p), " | ", fallback, " | ", p.description, " |\n");
    }
  }
  return out;
}

}  // namespace fl
