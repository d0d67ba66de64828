#include "impl/ranking/merge.h"

#include <algorithm>
#include <memory>
#include <set>

#include "impl/ports/digest.h"
#include "impl/ranking/schema.h"
#include "impl/ranking/services.h"

namespace fl::ranking {

std::string encode_vector(const HandoverVector& v) {
  std::string out;
  for (const auto& [p, o] : v) out += (out.empty() ? "" : ",") + std::to_string(p) + ":" + std::to_string(o);
  return out;
}

HandoverVector decode_vector(const std::string& text) {
  HandoverVector v;
  for (const std::string& item : split(text, ',')) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size()) return {};
    const std::string p = item.substr(0, colon), o = item.substr(colon + 1);
    if (p.size() > 9 || o.size() > 18 || !std::all_of(p.begin(), p.end(), ::isdigit) ||
        !std::all_of(o.begin(), o.end(), ::isdigit)) {
      return {};
    }
    v[std::stoi(p)] = std::stoll(o);
  }
  return v;
}

bool owned_by_new_chain(const HandoverVector& v, int32_t partition, int64_t offset) {
  auto it = v.find(partition);
  return offset >= (it == v.end() ? 0 : it->second);
}

std::string owner_topic(const ScopeMapping& m, const std::string& topic, int32_t partition, int64_t offset,
                        bool* held) {
  for (const Cutover& c : m.cutovers) {
    if (c.source_topic != topic || !owned_by_new_chain(c.next_offset, partition, offset)) continue;
    if (c.state == "ACTIVE") return c.main_topic;
    if (held) *held = true;  // BARRIER or SHADOW_READY: the pause at the barrier (004:L85)
  }
  return topic;
}

Task<std::optional<MergeView>> read_merge_view(Sql& sql, const std::string& scope) {
  // One statement: the context row and its pending or active cutovers as of one DB snapshot.
  static const std::string kSelect =
      "SELECT c.scope_id, c.mapping_version, c.mapping_activation_epoch, x.merge_run_id, x.state, "
      "x.cutover_vector, x.activation_epoch, m.source_topic, m.main_topic FROM ranking_scope_context c "
      "LEFT JOIN merge_scope_cutover x ON x.scope_id = c.scope_id AND x.state IN ('BARRIER', "
      "'SHADOW_READY', 'ACTIVE') LEFT JOIN merge_run m ON m.merge_run_id = x.merge_run_id";
  SqlResult r = scope.empty() ? co_await sql.exec(kSelect + " ORDER BY c.scope_id, x.merge_run_id")
                              : co_await sql.exec(kSelect + " WHERE c.scope_id = ? ORDER BY x.merge_run_id", scope);
  if (!r.ok()) co_return std::nullopt;
  MergeView view;
  for (const SqlRow& row : r.rows()) {
    ScopeMapping& m = view[row[0].as_text()];
    m.mapping_version = row[1].as_text();
    m.epoch = row[2].as_int();
    if (row[3].is_null() || row[7].is_null()) continue;
    m.cutovers.push_back(Cutover{.merge_run_id = row[3].as_text(),
                                 .source_topic = row[7].as_text(),
                                 .main_topic = row[8].as_text(),
                                 .state = row[4].as_text(),
                                 .next_offset = decode_vector(row[5].as_text()),
                                 .epoch = row[6].as_int()});
  }
  co_return view;
}

namespace {

// Every record of `topic` a fresh reader gets until a poll returns less than it asked for (it has
// caught up with the log's end as of then); nullopt when the log did not answer.
Task<std::optional<std::vector<LogRecord>>> read_log(Runtime& rt, Log& log, const MergeOptions& o, const char* topic) {
  std::unique_ptr<LogConsumer> in = log.consumer(
      ConsumerOptions{.group = "merge-read-" + std::string(rt.process_name()) + "-" + std::to_string(rt.incarnation()) +
                               "-" + std::to_string(rt.random_u64() % 1000000),
                      .client_id = std::string(rt.process_name()),
                      .session_timeout_us = o.session_timeout_us});
  if ((co_await in->join({topic})).status != LogStatus::kOk) co_return std::nullopt;
  std::vector<LogRecord> out;
  for (int polls = 0; polls < 10'000; ++polls) {
    constexpr size_t kBatch = 500;
    PollResult p = co_await in->poll(kBatch, 200'000);
    if (p.status != LogStatus::kOk) co_return std::nullopt;
    const bool caught_up = !p.rebalanced && p.records.size() < kBatch;
    for (LogRecord& rec : p.records) out.push_back(std::move(rec));
    if (caught_up) break;
  }
  co_await in->leave();
  co_return out;
}

struct ScopeRow {
  std::string scope, state, vector, source, main, mapping;
  int64_t expected_version = 0, epoch = 0;
  bool delivered = false;
};

// The keyed copy a scope's shadow hands to the main topic: the event's identity, actor, content
// and source coordinates, under the run's mapping and the cutover's epoch (004:L85, L87).
Event shadow_copy(Event copy, const ScopeRow& s) {
  copy.fields["topicId"] = s.main;
  copy.fields["mappingVersion"] = s.mapping;
  copy.fields["mappingEpoch"] = std::to_string(s.epoch);
  return copy;
}

// Spec (004:L85: "从一致检查点构建影子状态并持续追增量…暂停期间只补最后一小段"): the source topic's
// keyed copies in the scope as far as the keyed log holds them when the merger pauses.
// RK-MERGE-SHADOW-FROM-SOURCE: the stable log's records below the vector whose hint is the source
// topic and which derive the scope, whatever the keyed log holds by then.
Task<std::optional<std::vector<std::string>>> build_shadow(Runtime& rt, Log& log, const MergeOptions& o,
                                                           const ScopeRow& s) {
  const bool from_source = o.fixes.has(RankFix::kMergeShadowFromSource);
  auto records = co_await read_log(rt, log, o, from_source ? kStableTopic : kKeyedTopic);
  if (!records) co_return std::nullopt;
  const HandoverVector vector = decode_vector(s.vector);
  std::vector<std::string> out;
  for (const LogRecord& rec : *records) {
    const Event e = Event::decode(rec.value);
    if (!from_source) {
      if (e.get("topicId") == s.source && e.get("scopeId") == s.scope) out.push_back(shadow_copy(e, s).encode());
      continue;
    }
    if (owned_by_new_chain(vector, rec.partition, rec.offset)) continue;
    const NormalizeReply n = normalize_hint(e.get("topicHints"), o.topics);
    if (n.status != "mapped" || n.topic_id != s.source) continue;
    const std::vector<std::string> scopes = expand_scopes(o.cfg, e);
    if (std::find(scopes.begin(), scopes.end(), s.scope) == scopes.end()) continue;
    out.push_back(
        shadow_copy(keyed_copy(e, s.source, s.mapping, std::to_string(s.epoch), s.scope, o.cfg.scope_rule_version, rec),
                    s)
            .encode());
  }
  co_return out;
}

// The vector a hold-first barrier has not fixed yet: no offset is below it, so normalizers hold
// every source-topic record of the scope (owned_by_new_chain of an empty vector).
constexpr const char* kVectorPending = "pending";

// Spec: the vector is the stable log's ends as the merger reads them, committed with BARRIER (the
// pause starts with it). RK-MERGE-HOLD-BEFORE-VECTOR: BARRIER is committed first with the vector
// pending (every source-topic record of the scope held), and the ends are read after it.
Task<bool> barrier(Runtime& rt, Sql& sql, Log& log, const MergeOptions& o, const std::string& run, ScopeRow& s) {
  if (o.fixes.has(RankFix::kMergeHoldBeforeVector) && s.state == "PREPARED") {
    SqlResult r = co_await sql.exec(
        "UPDATE merge_scope_cutover SET cutover_vector = ?, state = 'BARRIER' WHERE merge_run_id = ? AND "
        "scope_id = ? AND state = 'PREPARED'",
        std::string(kVectorPending), run, s.scope);
    co_return r.ok();
  }
  auto records = co_await read_log(rt, log, o, kStableTopic);
  if (!records) co_return false;
  HandoverVector ends;
  for (const LogRecord& rec : *records) ends[rec.partition] = std::max(ends[rec.partition], rec.offset + 1);
  SqlResult r = s.state == "PREPARED"
                    ? co_await sql.exec(
                          "UPDATE merge_scope_cutover SET cutover_vector = ?, state = 'BARRIER' WHERE merge_run_id = "
                          "? AND scope_id = ? AND state = 'PREPARED'",
                          encode_vector(ends), run, s.scope)
                    : co_await sql.exec(
                          "UPDATE merge_scope_cutover SET cutover_vector = ? WHERE merge_run_id = ? AND scope_id = ? "
                          "AND state = 'BARRIER' AND cutover_vector = ?",
                          encode_vector(ends), run, s.scope, std::string(kVectorPending));
  co_return r.ok();
}

Task<bool> shadow(Runtime& rt, Sql& sql, Log& log, const MergeOptions& o, const std::string& run, ScopeRow& s) {
  auto copies = co_await build_shadow(rt, log, o, s);
  if (!copies) co_return false;
  std::string text;
  for (const std::string& c : *copies) text += c + "\n";
  const std::string digest = fnv_hex(text);
  // 004:L89: the shadow's idempotency key names the run, the scope, the topic and the compensation
  // version; the handover is by event (each copy carries its windows' inputs), not by window.
  std::vector<SqlStatement> tx;
  tx.push_back(sql_statement(
      "INSERT OR REPLACE INTO merge_shadow (merge_run_id, scope_id, topic_id, compensation_version, records, "
      "record_count, digest) VALUES (?, ?, ?, 1, ?, ?, ?)",
      run, s.scope, s.main, text, static_cast<int64_t>(copies->size()), digest));
  tx.push_back(expecting(sql_statement("UPDATE merge_scope_cutover SET shadow_ref = ?, state = 'SHADOW_READY' "
                                       "WHERE merge_run_id = ? AND scope_id = ? AND state = 'BARRIER'",
                                       run + "/" + s.scope + "/1@" + digest, run, s.scope),
                         SqlExpect::kChanged));
  SqlResult r = co_await sql.transaction(std::move(tx));
  co_return r.ok();
}

// 004:L86: the scope's only linearization point.
Task<bool> cas(Sql& sql, const std::string& run, ScopeRow& s) {
  std::vector<SqlStatement> tx;
  tx.push_back(expecting(sql_statement("UPDATE ranking_scope_context SET mapping_version = ?, "
                                       "mapping_activation_epoch = ?, version = version + 1 WHERE scope_id = ? AND "
                                       "version = ?",
                                       s.mapping, s.epoch, s.scope, s.expected_version),
                         SqlExpect::kChanged));
  tx.push_back(expecting(sql_statement("UPDATE merge_scope_cutover SET state = 'ACTIVE' WHERE merge_run_id = ? AND "
                                       "scope_id = ? AND state = 'SHADOW_READY' AND cutover_vector = ? AND "
                                       "activation_epoch = ?",
                                       run, s.scope, s.vector, s.epoch),
                         SqlExpect::kChanged));
  SqlResult r = co_await sql.transaction(std::move(tx));
  if (r.ok() || r.status != SqlStatus::kConditionFailed || r.failed_index != 0) co_return r.ok();
  // The context moved under the run: the scope stays on its mapping ("CAS 之前失败，该 scope 仍认旧映射").
  SqlResult a = co_await sql.exec(
      "UPDATE merge_scope_cutover SET state = 'ABORTED' WHERE merge_run_id = ? AND scope_id = ? AND state = "
      "'SHADOW_READY'",
      run, s.scope);
  co_return a.ok();
}

// After the CAS: the shadow reaches the main topic's aggregator as keyed copies (idempotent by
// their source coordinates, 004:L87), then the cutover is marked delivered.
Task<bool> deliver(Sql& sql, LogProducer& out, const std::string& run, ScopeRow& s) {
  SqlResult r = co_await sql.exec(
      "SELECT records FROM merge_shadow WHERE merge_run_id = ? AND scope_id = ? AND compensation_version = 1", run,
      s.scope);
  if (!r.ok() || r.rows().empty()) co_return false;
  for (const std::string& copy : split(r.rows()[0][0].as_text(), '\n')) {
    if (copy.empty()) continue;
    ProduceResult p = co_await out.produce(kKeyedTopic, s.main + "|" + s.scope, copy);
    if (!p.ok()) co_return false;
  }
  SqlResult d = co_await sql.exec(
      "UPDATE merge_scope_cutover SET shadow_delivered = 1 WHERE merge_run_id = ? AND scope_id = ? AND state = "
      "'ACTIVE'",
      run, s.scope);
  co_return d.ok();
}

// One step of a scope's cutover; false when it could not be taken now (retried next round).
Task<bool> step(Runtime& rt, Sql& sql, Log& log, LogProducer& out, const MergeOptions& o, const std::string& run,
                ScopeRow& s) {
  if (s.state == "PREPARED" || (s.state == "BARRIER" && s.vector == kVectorPending)) {
    co_return co_await barrier(rt, sql, log, o, run, s);
  }
  if (s.state == "BARRIER") co_return co_await shadow(rt, sql, log, o, run, s);
  if (s.state == "SHADOW_READY") co_return co_await cas(sql, run, s);
  if (s.state == "ACTIVE" && !s.delivered) co_return co_await deliver(sql, out, run, s);
  co_return true;
}

Task<std::optional<std::vector<ScopeRow>>> scope_rows(Sql& sql, const std::string& run) {
  SqlResult r = co_await sql.exec(
      "SELECT x.scope_id, x.state, x.cutover_vector, x.expected_ctx_version, x.activation_epoch, "
      "x.shadow_delivered, m.source_topic, m.main_topic, m.mapping_version FROM merge_scope_cutover x JOIN "
      "merge_run m ON m.merge_run_id = x.merge_run_id WHERE x.merge_run_id = ? ORDER BY x.scope_id",
      run);
  if (!r.ok()) co_return std::nullopt;
  std::vector<ScopeRow> out;
  for (const SqlRow& row : r.rows()) {
    out.push_back(ScopeRow{.scope = row[0].as_text(),
                           .state = row[1].as_text(),
                           .vector = row[2].as_text(),
                           .source = row[6].as_text(),
                           .main = row[7].as_text(),
                           .mapping = row[8].as_text(),
                           .expected_version = row[3].as_int(),
                           .epoch = row[4].as_int(),
                           .delivered = row[5].as_int() != 0});
  }
  co_return out;
}

bool terminal(const ScopeRow& s) { return s.state == "ABORTED" || (s.state == "ACTIVE" && s.delivered); }

// Drives one RUNNING run's scopes one after the other, each to its end, then completes the run.
Task<void> drive(Runtime& rt, Sql& sql, Log& log, LogProducer& out, const MergeOptions& o, const std::string& run) {
  for (int round = 0; round < 8; ++round) {
    auto rows = co_await scope_rows(sql, run);
    if (!rows) co_return;
    auto open = std::find_if(rows->begin(), rows->end(), [](const ScopeRow& s) { return !terminal(s); });
    if (open == rows->end()) {
      // 004:L86: "父 merge run 只有在所有 scope cutover 都进入终态后才能结束".
      co_await sql.exec(
          "UPDATE merge_run SET state = 'COMPLETED' WHERE merge_run_id = ? AND state = 'RUNNING' AND NOT EXISTS "
          "(SELECT 1 FROM merge_scope_cutover WHERE merge_run_id = ? AND NOT (state = 'ABORTED' OR (state = "
          "'ACTIVE' AND shadow_delivered = 1)))",
          run, run);
      co_return;
    }
    if (!(co_await step(rt, sql, log, out, o, run, *open))) co_return;
  }
}

// Starts the next merge run: a source topic never merged nor a main, a main topic never merged,
// 1..max_scopes random scopes, each with its PREPARED cutover, in one transaction.
Task<void> start_run(Runtime& rt, Sql& sql, const MergeOptions& o) {
  SqlResult r = co_await sql.exec("SELECT source_topic, main_topic FROM merge_run ORDER BY merge_run_id");
  if (!r.ok() || static_cast<int>(r.rows().size()) >= o.max_merges || o.scopes.empty()) co_return;
  std::set<std::string> sources, mains;
  for (const SqlRow& row : r.rows()) sources.insert(row[0].as_text()), mains.insert(row[1].as_text());
  std::vector<std::string> free_sources, free_mains;
  for (int i = 1; i <= o.topics; ++i) {
    const std::string t = "t_" + std::to_string(i);
    if (!sources.count(t)) free_mains.push_back(t);
    if (!sources.count(t) && !mains.count(t)) free_sources.push_back(t);
  }
  if (free_sources.empty()) co_return;
  const std::string source = free_sources[rt.random_u64() % free_sources.size()];
  free_mains.erase(std::find(free_mains.begin(), free_mains.end(), source));
  if (free_mains.empty()) co_return;
  const std::string main = free_mains[rt.random_u64() % free_mains.size()];
  std::vector<std::string> scopes = o.scopes;
  for (size_t i = scopes.size(); i > 1; --i) std::swap(scopes[i - 1], scopes[rt.random_u64() % i]);
  scopes.resize(1 + rt.random_u64() % std::min<size_t>(scopes.size(), std::max(1, o.max_scopes)));
  std::sort(scopes.begin(), scopes.end());
  const std::string run = "merge-" + std::to_string(r.rows().size() + 1);
  std::string scope_list;
  for (const std::string& s : scopes) scope_list += (scope_list.empty() ? "" : ",") + s;
  std::vector<SqlStatement> tx;
  tx.push_back(sql_statement(
      "INSERT INTO merge_run (merge_run_id, source_topic, main_topic, mapping_version, scopes, state) VALUES (?, "
      "?, ?, ?, ?, 'RUNNING')",
      run, source, main, "map-" + run, scope_list));
  for (const std::string& s : scopes) {
    tx.push_back(sql_statement(
        "INSERT OR IGNORE INTO ranking_scope_context (scope_id, version, rule_version, rule_activation_epoch) "
        "VALUES (?, 1, 'rule-v1', 1)",
        s));
    tx.push_back(sql_statement(
        "INSERT INTO merge_scope_cutover (merge_run_id, scope_id, expected_ctx_version, activation_epoch, "
        "effective_watermark, cutover_vector, shadow_ref, shadow_delivered, state) SELECT ?, scope_id, version, "
        "mapping_activation_epoch + 1, 0, '', '', 0, 'PREPARED' FROM ranking_scope_context WHERE scope_id = ?",
        run, s));
  }
  co_await sql.transaction(std::move(tx));
}

}  // namespace

Task<void> run_merger(Runtime& rt, Sql& sql, Log& log, MergeOptions o) {
  std::unique_ptr<LogProducer> out = log.producer(fl::ProducerOptions{});
  auto gap_us = [&] {
    return o.interval_us / 2 + static_cast<int64_t>(rt.random_u64() % static_cast<uint64_t>(o.interval_us));
  };
  int64_t next_us = o.interval_us > 0 ? rt.clock().now_us() + gap_us() : INT64_MAX;
  for (;;) {
    co_await rt.clock().sleep_ms(200);
    SqlResult running = co_await sql.exec(
        "SELECT merge_run_id FROM merge_run WHERE state = 'RUNNING' ORDER BY "
        "merge_run_id");
    if (!running.ok()) continue;
    if (!running.rows().empty()) {
      for (const SqlRow& row : running.rows()) co_await drive(rt, sql, log, *out, o, row[0].as_text());
      continue;
    }
    if (rt.clock().now_us() >= next_us && rt.clock().now_us() < o.stop_at_us) {
      co_await start_run(rt, sql, o);
      next_us = rt.clock().now_us() + gap_us();
    }
  }
}

}  // namespace fl::ranking
