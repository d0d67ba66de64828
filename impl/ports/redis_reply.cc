#include "impl/ports/redis_reply.h"

namespace fl {

std::string RedisReply::describe() const {
  switch (kind) {
    case Kind::kNil:
      return "(nil)";
    case Kind::kNilArray:
      return "(nil-array)";
    case Kind::kStatus:
      return "+" + str;
    case Kind::kError:
      return "(error) " + str;
    case Kind::kInteger:
      return "(integer) " + std::to_string(integer);
    case Kind::kBulk:
      return "\"" + str + "\"";
    case Kind::kTransportError:
      return std::string("(transport-error") + (indeterminate ? ", indeterminate) " : ") ") + str;
    case Kind::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < elements.size(); ++i) {
        if (i) out += ", ";
        out += elements[i].describe();
      }
      return out + "]";
    }
  }
  return "?";
}

}  // namespace fl
