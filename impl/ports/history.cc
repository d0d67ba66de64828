#include "impl/ports/history.h"

namespace fl {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kFail:
      return "fail";
    case Outcome::kInfo:
      return "info";
  }
  return "?";
}

}  // namespace fl
