#include "sim/history_log.h"
#include "impl/ports/assert.h"

namespace fl::sim {

uint64_t HistoryLog::invoke(std::string_view process, std::string_view op, std::string args) {
  Operation o;
  o.id = ops_.size() + 1;
  o.process = std::string(process);
  o.op = std::string(op);
  o.args = std::move(args);
  o.invoke_us = now_();
  ops_.push_back(std::move(o));
  if (on_event_) on_event_(ops_.back(), false);
  return ops_.back().id;
}

void HistoryLog::complete(uint64_t op_id, Outcome outcome, std::string result) {
  FL_ASSERT(op_id >= 1 && op_id <= ops_.size());
  Operation& o = ops_[op_id - 1];
  FL_ASSERT(!o.completed());  // exactly one completion per invocation
  o.complete_us = now_();
  o.outcome = outcome;
  o.result = std::move(result);
  if (on_event_) on_event_(o, true);
}

}  // namespace fl::sim
