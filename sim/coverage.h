// Coverage: what a fault schedule reached, as a set of features (stable 64-bit hashes), for
// coverage-guided exploration (`faultline explore`). Off unless WorldOptions::coverage is set; when
// off every call is a no-op, so a judged run pays nothing.
//
// Features
// - Interruptions: a fault that hit a process at one of its effect boundaries, by what it hit:
//   (fault kind, the role of the process it hit, the service and command of the message, call or
//   statement, the role of the other end). A role is a process name without its trailing number
//   ("replica-2" -> "replica"), so the same boundary in another replica is the same feature.
// - Orderings: for each shared Redis key (its digits abstracted: "agg:17:3" -> "agg:#:#") and SQL
//   table, two consecutive accesses by different processes: (store, key pattern, role and command
//   of the first, role and command of the second). An ordering a schedule made happen for the first
//   time is new coverage.
// Deterministic: features depend only on the run; the set is ordered.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace fl::sim {

class Coverage {
 public:
  explicit Coverage(bool enabled) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }

  // A fault of `kind` hit `process` at the boundary of `what` ("service: command ...") with `peer`.
  void interruption(std::string_view kind, std::string_view process, std::string_view what, std::string_view peer);
  // `process` ran `command` on `key` of `store` ("redis", "sql"): an ordering feature when the
  // previous access to the same key was another process's.
  void access(std::string_view store, std::string_view key, std::string_view process, std::string_view command);

  const std::set<uint64_t>& features() const { return features_; }
  size_t interruptions() const { return interruptions_; }
  size_t orderings() const { return orderings_; }

  // "replica-12" -> "replica"; "redis" -> "redis".
  static std::string_view role_of(std::string_view process);
  // Digits abstracted: "act:7:user:31" -> "act:#:user:#".
  static std::string pattern_of(std::string_view key);

 private:
  bool enabled_;
  std::set<uint64_t> features_;
  size_t interruptions_ = 0, orderings_ = 0;  // distinct features of each kind
  struct Last {
    std::string process, command;
  };
  std::map<std::string, Last, std::less<>> last_;  // store + key -> its last access
};

}  // namespace fl::sim
