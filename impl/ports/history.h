// Recorder: the history of client operations, as Jepsen keeps it.
//
// Every client-visible operation is recorded as an invocation and, later, exactly one completion:
//   kOk    it happened, with its result;
//   kFail  it certainly did not happen (the server said so before doing anything);
//   kInfo  indeterminate: it may or may not have happened (timeout, reset, crash of the caller).
// Checkers (properties/) read the history as plain data; a missing completion at the end of a run
// is read as kInfo.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fl {

enum class Outcome : uint8_t { kOk, kFail, kInfo };
const char* outcome_name(Outcome o);

class Recorder {
 public:
  virtual ~Recorder() = default;
  // Returns the operation id. `op` names the operation (`like`, `purchase`), `args` renders its
  // arguments deterministically (e.g. `asset=3 user=7`).
  virtual uint64_t invoke(std::string_view process, std::string_view op, std::string args) = 0;
  virtual void complete(uint64_t op_id, Outcome outcome, std::string result) = 0;
};

}  // namespace fl
