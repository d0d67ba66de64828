// HistoryLog: the world's Recorder — client operations as plain data (Jepsen's history).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "impl/ports/history.h"

namespace fl::sim {

struct Operation {
  uint64_t id = 0;
  std::string process;
  std::string op;
  std::string args;
  int64_t invoke_us = 0;
  int64_t complete_us = -1;  // -1 while open
  Outcome outcome = Outcome::kInfo;
  std::string result;
  bool completed() const { return complete_us >= 0; }
};

class HistoryLog final : public Recorder {
 public:
  // `now` reads world time; `on_event` is told about each invocation/completion (for the trace).
  HistoryLog(std::function<int64_t()> now, std::function<void(const Operation&, bool)> on_event)
      : now_(std::move(now)), on_event_(std::move(on_event)) {}

  uint64_t invoke(std::string_view process, std::string_view op, std::string args) override;
  void complete(uint64_t op_id, Outcome outcome, std::string result) override;

  // Every operation in invocation order; open ones have complete_us == -1 (read them as kInfo).
  const std::vector<Operation>& operations() const { return ops_; }

 private:
  std::function<int64_t()> now_;
  std::function<void(const Operation&, bool)> on_event_;
  std::vector<Operation> ops_;
};

}  // namespace fl::sim
