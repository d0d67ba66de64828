#include "properties/gifts/run.h"

#include <algorithm>

namespace fl::gifts::props {
namespace {

bool has(const std::vector<std::string>& params, const std::string& value) {
  return std::find(params.begin(), params.end(), value) != params.end();
}

// The commit that wrote the order of (user, request): a committed request whose gift_order
// statement carries both. Else a request that answered an error but whose gift_order statement
// carries the order's own msgId (stamped per attempt): the order row shows it persisted (an I/O
// error at its commit, explore-hardened seed 4629: its retry met the row and answered it).
const SqlCommit* commit_of(const GiftsRun& run, const model::Order& o) {
  const std::string user = std::to_string(o.user);
  for (const bool ok : {true, false}) {
    for (const SqlCommit& c : run.commits) {
      if (c.ok != ok) continue;
      for (const SqlStatementObs& s : c.statements) {
        if (s.sql.find("gift_order") == std::string::npos || s.sql.rfind("INSERT", 0) != 0) continue;
        if (has(s.params, user) && has(s.params, o.request_id) && (ok || has(s.params, o.msg_id))) return &c;
      }
    }
  }
  return nullptr;
}

}  // namespace

std::vector<model::ChargedGift> charged_gifts(const GiftsRun& run) {
  std::map<std::string, int64_t> first_append;
  for (const LogRecordObs& r : run.log) {
    const std::string id = r.value.substr(0, r.value.find('|'));
    auto [it, inserted] = first_append.try_emplace(id, r.time_us);
    if (!inserted) it->second = std::min(it->second, r.time_us);
  }
  std::map<std::pair<int64_t, std::string>, int64_t> first_sent;  // (user, request) -> first invoke
  std::map<uint64_t, int64_t> invoked;                            // history id -> invoke
  for (const HistoryOp& h : run.history) {
    invoked[h.id] = h.invoke_us;
    if (h.op != "send") continue;
    const auto a = model::parse_args(h.args);
    auto [it, inserted] =
        first_sent.try_emplace({model::arg_int(a, "user"), a.count("req") ? a.at("req") : ""}, h.invoke_us);
    if (!inserted) it->second = std::min(it->second, h.invoke_us);
  }
  std::vector<model::ChargedGift> out;
  for (const model::Order& o : run.orders) {
    model::ChargedGift g;
    g.order = o;
    const SqlCommit* c = commit_of(run, o);
    g.commit_us = c ? c->time_us : -1;
    g.creator = c ? c->client : "";
    auto sent = first_sent.find({o.user, o.request_id});
    g.sent_us = sent == first_sent.end() ? -1 : sent->second;
    auto attempt = c == nullptr ? invoked.end() : invoked.find(c->cause);
    g.attempt_us = attempt == invoked.end() ? g.sent_us : attempt->second;
    auto it = first_append.find(o.msg_id);
    g.first_append_us = it == first_append.end() ? -1 : it->second;
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace fl::gifts::props
