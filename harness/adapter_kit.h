// The adapter kit: what every system adapter (harness/systems/) needs and would otherwise write
// out by hand. An adapter declares its roles, its stores and its params; the kit answers the fault
// injector and fills the service options. (Reading committed SQL rows back: harness/sql_rows.h.)
//
// Contract
// - Roles: the process and node names the fault injector may target, by role ("replica",
//   "worker", "gateway", "client", "redis", "db", "log"), added while the adapter builds its world.
//   of(role) lists them in the order added (the injector draws from that order: it is part of the
//   trace); a role nobody plays has none.
// - StoreNodes / apply_store_fault(): the system fault kinds (system_fault_kinds() of
//   harness/faults.h: "sql-io-error") applied to the run's DB, given its disk. A fault naming
//   another target, or a run without a DB, is not applied (false: the injector notes it ignored).
//   The kit records nothing itself: the DB's VFS records each failing I/O call in the world's fault
//   log as it fails (harness/db_node.h), so judges see every injected fault.
// - KitRun: a SystemRun whose fault_targets() and apply_fault() are its Roles and StoreNodes, and
//   whose redis_command_logs() are those of the simulated Redis servers the adapter lists.
// - BoundParams: a system's params, each declared once (ParamInfo: name, type, unit, range,
//   default, doc) and optionally bound to fields of option structs. infos() is the declaration in
//   order (SystemUnderTest::params()); fill(values, options) copies every param bound to a field of
//   that struct's type, converted to the field's type (integer, int, double, bool: non-zero, text),
//   a millisecond param into a microsecond field (as_us) or a percent into a fraction
//   (as_fraction). Values must be resolved (the loader checked them): an undeclared or mistyped
//   read is an adapter bug (std::logic_error from ParamValues).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <typeindex>
#include <utility>
#include <vector>

#include "harness/params.h"
#include "harness/scenario.h"
#include "harness/system.h"
#include "sim/redis/server.h"
#include "sim/storage/sim_vfs.h"

namespace fl {

// ---- Topology from roles.

class Roles {
 public:
  // `name` plays `role`, after the names already added to it.
  void add(const std::string& role, const std::string& name) { names_[role].push_back(name); }
  // The names playing `role`, in the order added (none: empty).
  const std::vector<std::string>& of(const std::string& role) const;

 private:
  std::map<std::string, std::vector<std::string>> names_;
};

// ---- Store faults.

// Which I/O calls of the DB a "sql-io-error" of value n fails: its next max(n, 1) writes, or
// (kSyncsWhenEven) its next max(n, 1) syncs when n is even and writes when n is odd.
enum class SqlIoErrorCalls { kWrites, kSyncsWhenEven };

struct StoreNodes {
  std::shared_ptr<sim::storage::SimVfs> db_vfs;  // the DB's disk (null: the run has no DB)
  std::string db = "db";                         // the DB's node and process name
  SqlIoErrorCalls sql_io_error_calls = SqlIoErrorCalls::kWrites;
};

// Applies `f` when it is a system fault kind aimed at one of `stores`; false otherwise.
bool apply_store_fault(const FaultSpec& f, const StoreNodes& stores);

// ---- A run declared by roles and stores.

class KitRun : public SystemRun {
 public:
  std::vector<std::string> fault_targets(const std::string& role) const final { return roles.of(role); }
  bool apply_fault(const FaultSpec& f) final { return apply_store_fault(f, stores); }
  std::vector<const sim::redis::CommandLog*> redis_command_logs() const final;

  Roles roles;
  StoreNodes stores;
  std::vector<const sim::redis::Server*> redis_servers;  // owned by the run's shared state
};

// ---- Params bound to option fields.

enum class ParamConversion { kAsIs, kMsToUs, kPercentToFraction };

// A field of option struct T that a param fills.
template <class T, class F>
struct ParamField {
  F T::*member;
  ParamConversion conversion = ParamConversion::kAsIs;
};
// A millisecond param into a microsecond field (value * 1000).
template <class T, class F>
ParamField<T, F> as_us(F T::*member) {
  return {member, ParamConversion::kMsToUs};
}
// A percent param into a fraction field (value / 100.0).
template <class T, class F>
ParamField<T, F> as_fraction(F T::*member) {
  static_assert(std::is_floating_point_v<F>, "a fraction field is a floating-point number");
  return {member, ParamConversion::kPercentToFraction};
}

// The value of declared param `p` as a field of type F wants it.
template <class F>
F param_as(const ParamValues& values, const ParamInfo& p, ParamConversion conversion) {
  if constexpr (std::is_same_v<F, std::string>) {
    return values.text(p.name);
  } else if constexpr (std::is_same_v<F, bool>) {
    return values.i64(p.name) != 0;
  } else {
    if (p.type == ParamType::kNumber) return static_cast<F>(values.num(p.name));
    const int64_t v = values.i64(p.name);
    if (conversion == ParamConversion::kMsToUs) return static_cast<F>(v * 1000);
    if constexpr (std::is_floating_point_v<F>) {
      if (conversion == ParamConversion::kPercentToFraction) return static_cast<F>(static_cast<double>(v) / 100.0);
    }
    return static_cast<F>(v);
  }
}

// One declared param and the fields it fills.
class BoundParam {
 public:
  // Declares `info`, bound to every field in `fields` (none: the adapter reads it by hand).
  template <class... Fields>
  BoundParam(ParamInfo info, Fields... fields) : info_(std::move(info)) {  // NOLINT: implicit from a declaration
    (bind(fields), ...);
  }
  template <class T, class F>
  void bind(F T::*member) {
    bind(ParamField<T, F>{member});
  }
  template <class T, class F>
  void bind(ParamField<T, F> field) {
    fillers_.push_back({std::type_index(typeid(T)), [field, p = info_](const ParamValues& v, void* target) {
                          static_cast<T*>(target)->*field.member = param_as<F>(v, p, field.conversion);
                        }});
  }
  const ParamInfo& info() const { return info_; }
  // Copies this param into `target`'s bound fields (none bound to T: nothing).
  template <class T>
  void fill(const ParamValues& values, T& target) const {
    for (const Filler& f : fillers_) {
      if (f.type == std::type_index(typeid(T))) f.fill(values, &target);
    }
  }

 private:
  struct Filler {
    std::type_index type;
    std::function<void(const ParamValues&, void*)> fill;
  };
  ParamInfo info_;
  std::vector<Filler> fillers_;
};

class BoundParams {
 public:
  BoundParams(std::initializer_list<BoundParam> params) : params_(params) {}
  std::vector<ParamInfo> infos() const;
  // Copies every param bound to a field of T into `target`.
  template <class T>
  void fill(const ParamValues& values, T& target) const {
    for (const BoundParam& p : params_) p.fill(values, target);
  }
  // `target` as a value-initialised T filled from `values`.
  template <class T>
  T filled(const ParamValues& values, T target = T{}) const {
    fill(values, target);
    return target;
  }

 private:
  std::vector<BoundParam> params_;
};

}  // namespace fl
