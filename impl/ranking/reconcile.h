// The third reconciliation layer of seed 004 (004:L392-404): before comparing, a reconciliation
// freezes its context (scope, input watermark, expected and result partition-set digests, input
// manifest set digest, rule version and activation epoch, calculation run) on both sides; it
// compares the DB pointer's PUBLISHED snapshot with what Redis serves only when both contexts are
// identical, and otherwise refuses. Each reconciliation is recorded in `reconciliation_report`.
// Window-configuration, mapping and risk versions are constants in this system, so they are left
// out of the tuple.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impl/ports/redis.h"
#include "impl/ports/runtime.h"
#include "impl/ports/sql.h"
#include "impl/ports/task.h"

namespace fl::ranking {

struct ReconcileOptions {
  std::vector<std::string> scopes = {"GLOBAL|ALL|ALL|ALL", "GLOBAL|ALL|ALL|zh-CN"};
  int64_t interval_us = 700'000;
  // C19 (004:L438): every other round deliberately compares against another scope's served
  // snapshot or an older PUBLISHED snapshot of the same scope (another version).
  bool mix = false;
};

Task<void> run_reconciler(Runtime& rt, Sql& sql, Redis& redis, ReconcileOptions o);

}  // namespace fl::ranking
