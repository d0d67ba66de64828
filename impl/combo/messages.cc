#include "impl/combo/messages.h"

namespace fl::combo {

std::string PurchaseRequest::describe() const {
  std::string s = std::string(batch ? "batch" : "purchase") + " ref=" + client_ref +
                  " a=" + std::to_string(activity_id) + " u=" + std::to_string(user_id) + " items=";
  for (size_t i = 0; i < lines.size(); ++i) {
    s += (i ? "," : "") + lines[i].item_type + ":" + std::to_string(lines[i].quantity);
  }
  return s;
}

std::string PurchaseReply::describe() const {
  std::string s = ok ? "ok pids=" : "error " + error + " pids=";
  for (size_t i = 0; i < pids.size(); ++i) s += (i ? "," : "") + std::to_string(pids[i]);
  if (alerted) s += " alerted";
  return s;
}

std::string LatestReply::describe() const {
  std::string s = ok ? "records=[" : "error " + error + " [";
  for (size_t i = 0; i < records.size(); ++i) {
    if (i) s += "; ";
    if (records[i]) {
      records[i]->append_description(s);
    } else {
      s += "null";
    }
  }
  s += ']';
  return s;
}

std::string RankingReply::describe() const {
  std::string s = ok ? "ranking" : "error";
  for (const auto& [user, total] : totals) s += " " + std::to_string(user) + ":" + std::to_string(total);
  return s;
}

}  // namespace fl::combo
