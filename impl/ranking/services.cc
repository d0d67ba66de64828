#include "impl/ranking/services.h"

#include <algorithm>
#include <memory>

#include "impl/ranking/control.h"
#include "impl/ranking/merge.h"
#include "impl/ranking/schema.h"
#include "impl/ports/assert.h"

namespace fl::ranking {
namespace {

int64_t uniform(Runtime& rt, int64_t lo, int64_t hi) {
  return hi <= lo ? lo : lo + static_cast<int64_t>(rt.random_u64() % static_cast<uint64_t>(hi - lo + 1));
}
bool percent(Runtime& rt, int p) { return static_cast<int>(rt.random_u64() % 100) < p; }

template <typename T>
T pick(Runtime& rt, const std::vector<T>& v) {
  return v[rt.random_u64() % v.size()];
}

std::string topic_hint(Runtime& rt, const ProducerOptions& o) {
  const int64_t i = percent(rt, o.hot_percent) ? 1 : uniform(rt, 1, o.topics);
  const int r = static_cast<int>(rt.random_u64() % 100);
  if (r < o.unmapped_percent) return "u" + std::to_string(uniform(rt, 1, 1000));
  if (r < o.unmapped_percent + o.lowconf_percent) return "lc-" + std::to_string(i);
  if (r < o.unmapped_percent + o.lowconf_percent + o.alias_percent) {
    return "a" + std::to_string(i) + (percent(rt, 50) ? "x" : "y");
  }
  return "t_" + std::to_string(i);
}

// One §6.1 event (004:L122-139) at the producer's clock; some are deliberately invalid.
Event make_event(Runtime& rt, const ProducerOptions& o, int64_t seq, std::string& last_actor) {
  static const BoardConfig kCfg;
  Event e;
  const int64_t now_ms = rt.clock().now_ms();
  e.fields["eventId"] = std::string(rt.process_name()) + "-" + std::to_string(rt.incarnation()) + "-" +
                        std::to_string(seq) + "-" + std::to_string(rt.random_u64() % 100000);
  e.fields["eventType"] = o.event_type;
  int64_t t = now_ms - uniform(rt, 0, 2000);  // ordinary disorder
  if (percent(rt, o.late_percent)) t = now_ms - uniform(rt, 5'000, 1'200'000);
  if (o.future_percent > 0 && percent(rt, o.future_percent)) t = now_ms + uniform(rt, 1'000, kCfg.max_future_ms);
  e.fields["eventTime"] = std::to_string(t);
  e.fields["receivedAt"] = std::to_string(now_ms);
  if (last_actor.empty() || !percent(rt, o.repeat_actor_percent))
    last_actor = "act" + std::to_string(uniform(rt, 1, o.actors));
  e.fields["actorKey"] = last_actor;
  e.fields["contentOrQueryId"] = "q" + std::to_string(uniform(rt, 1, 200));
  e.fields["topicHints"] = topic_hint(rt, o);
  if (percent(rt, 80)) e.fields["channelId"] = pick(rt, kCfg.channels);
  if (percent(rt, 70)) e.fields["regionId"] = pick(rt, kCfg.regions);
  if (percent(rt, 80)) e.fields["language"] = pick(rt, kCfg.languages);
  e.fields["sourceService"] = o.service;
  e.fields["schemaVersion"] = "3";
  e.fields["mappingVersion"] = "1";
  e.fields["riskContextVersion"] = "1";
  if (!percent(rt, o.invalid_percent)) return e;
  switch (rt.random_u64() % 5) {
    case 0:
      e.fields.erase(pick(rt, required_fields()));
      break;  // missing field
    case 1:
      e.fields["eventTime"] = std::to_string(now_ms + 3'600'000);
      break;  // in the future
    case 2:
      e.fields["eventTime"] = std::to_string(now_ms - 86'400'000);
      break;  // far in the past
    case 3:
      e.fields["sourceService"] = "spoof-service";
      break;  // forged source
    default:
      e.fields["channelId"] = "no-such-channel";
      break;  // invalid scope
  }
  return e;
}

// Business fact and outbox row in one transaction (004:L119); the history says what committed.
Task<void> emit(Runtime& rt, Sql& sql, Recorder& history, const Event& e) {
  const std::string payload = e.encode();
  const uint64_t op = history.invoke(rt.process_name(), "emit", payload);
  std::vector<SqlStatement> tx;
  tx.push_back(sql_statement("INSERT OR IGNORE INTO business_fact (event_id, producer, created_at) VALUES (?, ?, ?)",
                             e.get("eventId"), std::string(rt.process_name()), rt.clock().now_ms()));
  tx.push_back(sql_statement("INSERT INTO outbox (event_id, payload, status, created_at) VALUES (?, ?, 'PENDING', ?)",
                             e.get("eventId"), payload, rt.clock().now_ms()));
  SqlResult r = co_await sql.transaction(std::move(tx));
  history.complete(op, r.ok() ? Outcome::kOk : (r.certainly_not_applied() ? Outcome::kFail : Outcome::kInfo),
                   sql_status_name(r.status));
}

// The relay: PENDING rows go to an ingest replica; an answer (accepted or rejected) marks them SENT.
Task<void> relay(Runtime& rt, Rpc& rpc, Sql& sql, ProducerOptions o) {
  for (;;) {
    co_await rt.clock().sleep_us(o.relay_interval_us);
    const int64_t now = rt.clock().now_us();
    if (now >= o.stall_from_us && now < o.stall_until_us) continue;  // the source has stopped
    SqlResult rows = co_await sql.exec(
        "SELECT id, payload FROM outbox WHERE status = 'PENDING' AND payload LIKE ? ORDER BY id LIMIT 20",
        "%sourceService=" + o.service + "%");
    if (!rows.ok()) continue;
    for (const SqlRow& row : rows.rows()) {
      RpcResult r =
          co_await rpc.call(pick(rt, o.ingest), make_message(IngestRequest{row[1].as_text()}), o.rpc_timeout_us);
      const IngestReply* reply = r.ok() ? message_as<IngestReply>(r.reply) : nullptr;
      if (reply == nullptr || reply->status == "error") continue;  // stays PENDING, retried
      co_await sql.exec("UPDATE outbox SET status = 'SENT' WHERE id = ?", row[0].as_int());
    }
  }
}

}  // namespace

Task<void> run_producer(Runtime& rt, Rpc& rpc, Sql& sql, Recorder& history, ProducerOptions o) {
  rt.spawn("relay", relay(rt, rpc, sql, o));
  std::string last_actor;
  // The replay source (004:L61). Without replays it is only a count: the list grew with every
  // event (about 1.4 kB each) for nothing. The replay draw is made from the first event on either
  // way, so the run's random stream is the same.
  std::vector<Event> sent;
  int64_t sent_count = 0;
  const int64_t gap_us = static_cast<int64_t>(1e6 / std::max(0.01, o.events_per_s));
  for (int64_t seq = 1; rt.clock().now_us() < o.stop_at_us; ++seq) {
    co_await rt.clock().sleep_us(uniform(rt, gap_us / 2, gap_us * 3 / 2));
    if (sent_count > 0 && percent(rt, o.replay_percent)) {
      FL_ASSERT(!sent.empty());                         // percent(rt, 0) is never true
      co_await emit(rt, sql, history, pick(rt, sent));  // the same event again (004:L61)
      continue;
    }
    Event e = make_event(rt, o, seq, last_actor);
    ++sent_count;
    if (o.replay_percent > 0) sent.push_back(e);
    co_await emit(rt, sql, history, e);
  }
  for (;;) co_await rt.clock().sleep_ms(60'000);  // the relay keeps using this frame's clients
}

IngestService::IngestService(Runtime& rt, Sql& sql, Log& log, BoardConfig cfg)
    : rt_(rt), sql_(sql), producer_(log.producer(fl::ProducerOptions{})), cfg_(std::move(cfg)) {}

Task<void> IngestService::run(Rpc& rpc, const std::string& name) {
  rpc.serve(name, [this](MessagePtr m) -> Task<MessagePtr> {
    const IngestRequest* r = message_as<IngestRequest>(m);
    if (r == nullptr) co_return make_message(IngestReply{"error"});
    co_return co_await handle(*r);
  });
  co_return;
}

// 004:L203 first layer: missing fields, impossible times, forged sources, obvious replays; and an
// invalid scope combination (004:L19), which never falls back to the global scope.
std::string IngestService::invalid_reason(const Event& e) const {
  for (const std::string& f : required_fields()) {
    if (!e.has(f) || e.get(f).empty()) return "missing:" + f;
  }
  if (owner_of(e.get("eventType")).empty()) return "unknown-type";
  if (owner_of(e.get("eventType")) != e.get("sourceService")) return "forged-source";
  const int64_t t = std::stoll(e.get("eventTime")), rcv = std::stoll(e.get("receivedAt"));
  if (t > rcv + cfg_.max_future_ms || t < rcv - cfg_.max_age_ms) return "impossible-time";
  if (expand_scopes(cfg_, e).empty()) return "invalid-scope";
  if (seen_.count(e.get("eventId"))) return "replay";
  return "";
}

Task<MessagePtr> IngestService::handle(const IngestRequest& r) {
  const Event e = Event::decode(r.payload);
  const std::string reason = invalid_reason(e);
  if (!reason.empty()) {
    SqlResult w = co_await sql_.exec("INSERT INTO ingest_reject (event_id, reason, payload, at) VALUES (?, ?, ?, ?)",
                                     e.get("eventId"), reason, r.payload, rt_.clock().now_ms());
    co_return make_message(IngestReply{w.ok() ? "rejected" : "error"});
  }
  // 004:L158: before normalization, partitioned by the query or content hash.
  ProduceResult p = co_await producer_->produce(kStableTopic, e.get("contentOrQueryId"), r.payload);
  if (!p.ok()) co_return make_message(IngestReply{"error"});
  seen_.insert(e.get("eventId"));
  co_return make_message(IngestReply{"accepted"});
}

NormalizeReply normalize_hint(const std::string& hint, int topics) {
  auto index = [&](const std::string& digits) -> int {
    if (digits.empty() || digits.size() > 6 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return 0;
    const int i = std::stoi(digits);
    return i >= 1 && i <= topics ? i : 0;
  };
  if (hint.rfind("t_", 0) == 0 && index(hint.substr(2))) return {"mapped", hint};
  if (hint.size() > 2 && hint[0] == 'a' && (hint.back() == 'x' || hint.back() == 'y')) {
    const int i = index(hint.substr(1, hint.size() - 2));
    if (i) return {"mapped", "t_" + std::to_string(i)};
  }
  if (hint.rfind("lc-", 0) == 0) return {"low_confidence", ""};
  return {"unmapped", ""};
}

Task<void> run_topic_service(Runtime& rt, Rpc& rpc, int topics) {
  (void)rt;
  rpc.serve("topics", [topics](MessagePtr m) -> Task<MessagePtr> {
    const NormalizeRequest* r = message_as<NormalizeRequest>(m);
    co_return make_message(normalize_hint(r ? r->hint : std::string(), topics));
  });
  co_return;
}

Event keyed_copy(const Event& e, const std::string& topic, const std::string& mapping, const std::string& epoch,
                 const std::string& scope, int scope_rule_version, const LogRecord& rec) {
  Event k;
  k.fields = {{"eventId", e.get("eventId")},
              {"source", e.get("sourceService")},
              {"eventType", e.get("eventType")},
              {"eventTime", e.get("eventTime")},
              {"actorKey", e.get("actorKey")},
              {"contentOrQueryId", e.get("contentOrQueryId")},
              {"topicId", topic},
              {"mappingVersion", mapping},
              {"mappingEpoch", epoch},
              {"scopeId", scope},
              {"scopeRuleVersion", std::to_string(scope_rule_version)},
              {"sourcePartition", std::to_string(rec.partition)},
              {"sourceOffset", std::to_string(rec.offset)}};
  return k;
}

namespace {

// Normalizes one stable record; false when it must be retried (the topic service timed out, the
// log or the DB did not answer): the record stays unconsumed (004:L485 F04: retryable).
Task<bool> normalize_one(Runtime& rt, Rpc& rpc, Sql& sql, LogProducer& out, const NormalizerOptions& o,
                         const LogRecord& rec) {
  const Event e = Event::decode(rec.value);
  const std::string hint = e.get("topicHints");
  RpcResult r = co_await rpc.call("topics", make_message(NormalizeRequest{hint}), o.rpc_timeout_us);
  const NormalizeReply* n = r.ok() ? message_as<NormalizeReply>(r.reply) : nullptr;
  if (n == nullptr) co_return false;
  if (n->status != "mapped") {
    // 004:L78: low confidence or unmapped terms wait for confirmation, never reach aggregation.
    SqlResult w = co_await sql.exec(
        "INSERT OR IGNORE INTO candidate_term (source_partition, source_offset, term, reason) VALUES (?, ?, ?, ?)",
        rec.partition, rec.offset, hint, n->status);
    co_return w.ok();
  }
  for (const std::string& scope : expand_scopes(o.cfg, e)) {
    std::string mapping = std::to_string(n->mapping_version), epoch = std::to_string(n->mapping_epoch);
    std::string topic = n->topic_id;
    if (o.merges) {
      // 004:L84-87: the scope's context names the mapping and epoch; its cutovers decide by the
      // record's stable coordinates whether a source topic's event is the main topic's, and hold
      // it while its cutover is between the barrier and the CAS (004:L85).
      std::optional<MergeView> view = co_await read_merge_view(sql, scope);
      if (!view) co_return false;  // retried in place
      auto m = view->find(scope);
      mapping = m == view->end() ? std::string(kInitialMapping) : m->second.mapping_version;
      epoch = m == view->end() ? "1" : std::to_string(m->second.epoch);
      bool held = false;
      if (m != view->end()) topic = owner_topic(m->second, topic, rec.partition, rec.offset, &held);
      if (held) co_return false;
    } else if (o.scope_control) {
      // 004:L140: "归一服务仍需按当前有效映射核验"; 004:L142: "归一阶段输出稳定 topic_id + mapping_version +
      // mapping_activation_epoch".
      SqlResult ctx = co_await sql.exec(
          "SELECT mapping_version, mapping_activation_epoch FROM ranking_scope_context "
          "WHERE scope_id = ?",
          scope);
      if (!ctx.ok()) co_return false;  // retried in place
      mapping = ctx.rows().empty() ? std::string(kInitialMapping) : ctx.rows()[0][0].as_text();
      epoch = ctx.rows().empty() ? "1" : std::to_string(ctx.rows()[0][1].as_int());
    }
    const Event k = keyed_copy(e, topic, mapping, epoch, scope, o.cfg.scope_rule_version, rec);
    ProduceResult p = co_await out.produce(kKeyedTopic, topic + "|" + scope, k.encode());
    if (!p.ok()) co_return false;
  }
  (void)rt;
  co_return true;
}

}  // namespace

Task<void> run_normalizer(Runtime& rt, Rpc& rpc, Sql& sql, Log& log, NormalizerOptions o) {
  std::unique_ptr<LogProducer> out = log.producer(fl::ProducerOptions{});
  std::unique_ptr<LogConsumer> in = log.consumer(ConsumerOptions{
      .group = "normalizers", .client_id = std::string(rt.process_name()), .session_timeout_us = 6'000'000});
  while ((co_await in->join({kStableTopic})).status != LogStatus::kOk) co_await rt.clock().sleep_ms(200);
  for (;;) {
    PollResult p = co_await in->poll(50, 200'000);
    if (p.status != LogStatus::kOk) {
      co_await rt.clock().sleep_ms(100);
      continue;
    }
    OffsetMap next;
    for (const LogRecord& rec : p.records) {
      // A record that cannot be normalized now is retried in place (004:L485: the original event
      // stays retryable); the poll is also the heartbeat, so keep the membership alive meanwhile.
      while (!(co_await normalize_one(rt, rpc, sql, *out, o, rec))) {
        co_await rt.clock().sleep_ms(100);
        co_await in->heartbeat();
      }
      next[TopicPartition{rec.topic, rec.partition}] = rec.offset + 1;
    }
    if (!next.empty()) co_await in->commit(next);
  }
}

}  // namespace fl::ranking
