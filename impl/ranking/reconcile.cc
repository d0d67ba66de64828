#include "impl/ranking/reconcile.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "impl/ranking/publisher.h"
#include "impl/ranking/runs.h"
#include "impl/ranking/schema.h"
#include "impl/ports/assert.h"

namespace fl::ranking {
namespace {

// 004:L392-399: the frozen comparison context of a snapshot, from its run.
Task<std::optional<std::string>> context_of(Sql& sql, const std::string& snapshot_id) {
  SqlResult r = co_await sql.exec(
      "SELECT s.scope_id, r.input_watermark, r.expected_partition_set_digest, r.partition_result_set_digest, "
      "r.input_manifest_set_digest, r.rule_version, r.rule_activation_epoch, r.run_id FROM ranking_snapshot s JOIN "
      "calculation_run r ON r.run_id = s.run_id WHERE s.snapshot_id = ?",
      snapshot_id);
  if (!r.ok() || r.rows().empty()) co_return std::nullopt;
  const SqlRow& row = r.rows()[0];
  co_return row[0].as_text() + "|" + std::to_string(row[1].as_int()) + "|" + row[2].as_text() + "|" + row[3].as_text() +
      "|" + row[4].as_text() + "|" + row[5].as_text() + "|" + std::to_string(row[6].as_int()) + "|" + row[7].as_text();
}

// Side B: what Redis serves for `scope` (its pointer's snapshot id and the cached items), or in a
// mixed round another scope's served snapshot or an older PUBLISHED snapshot of this scope.
struct Served {
  std::string scope, snapshot_id, items;
};

Task<std::optional<Served>> served(Sql& sql, Redis& redis, const std::string& scope) {
  RedisReply p = co_await redis.command({"GET", pointer_key(scope)});
  if (p.kind != RedisReply::Kind::kBulk) co_return std::nullopt;
  const std::string id = p.str.substr(p.str.find('|') + 1);
  RedisReply items = co_await redis.command({"GET", snapshot_key(scope, id)});
  if (items.kind != RedisReply::Kind::kBulk) co_return std::nullopt;
  (void)sql;
  co_return Served{scope, id, items.str};
}

Task<std::optional<Served>> older_published(Sql& sql, const std::string& scope, const std::string& current) {
  SqlResult r = co_await sql.exec(
      "SELECT snapshot_id FROM ranking_snapshot WHERE scope_id = ? AND status = 'PUBLISHED' "
      "AND snapshot_id <> ? ORDER BY publication_epoch DESC LIMIT 1",
      scope, current);
  if (!r.ok() || r.rows().empty()) co_return std::nullopt;
  SqlResult items = co_await sql.exec(
      "SELECT rank_no, topic_id, score FROM ranking_snapshot_item WHERE snapshot_id = ? "
      "ORDER BY rank_no",
      r.rows()[0][0].as_text());
  if (!items.ok()) co_return std::nullopt;
  std::string text;
  for (const SqlRow& i : items.rows()) {
    text += (text.empty() ? "" : ";") + std::to_string(i[0].as_int()) + ":" + i[1].as_text() + ":" +
            std::to_string(i[2].as_int());
  }
  co_return Served{scope, r.rows()[0][0].as_text(), text};
}

Task<void> reconcile_scope(Sql& sql, Redis& redis, const ReconcileOptions& o, const std::string& scope, int64_t round,
                           int64_t now_us) {
  SqlResult ptr = co_await sql.exec("SELECT snapshot_id FROM ranking_publish_pointer WHERE scope_id = ?", scope);
  if (!ptr.ok() || ptr.rows().empty() || ptr.rows()[0][0].as_text().empty()) co_return;
  const std::string a = ptr.rows()[0][0].as_text();
  std::string other = scope;
  for (const std::string& s : o.scopes) {
    if (s != scope) other = s;
  }
  std::optional<Served> b;
  if (o.mix && round % 4 == 1)
    b = co_await served(sql, redis, other);
  else if (o.mix && round % 4 == 3)
    b = co_await older_published(sql, scope, a);
  else
    b = co_await served(sql, redis, scope);
  if (!b) co_return;
  std::optional<std::string> ctx_a = co_await context_of(sql, a), ctx_b = co_await context_of(sql, b->snapshot_id);
  if (!ctx_a || !ctx_b) co_return;
  std::string status = "REFUSED", detail;
  // 004:L404: "不固定上述上下文时，数量差异可能只是比较了不同水位或规则，不能据此判断数据损坏".
  if (*ctx_a == *ctx_b) {
    SqlResult items = co_await sql.exec(
        "SELECT rank_no, topic_id, score FROM ranking_snapshot_item WHERE snapshot_id = ? "
        "ORDER BY rank_no",
        a);
    if (!items.ok()) co_return;
    std::string text;
    for (const SqlRow& i : items.rows()) {
      text += (text.empty() ? "" : ";") + std::to_string(i[0].as_int()) + ":" + i[1].as_text() + ":" +
              std::to_string(i[2].as_int());
    }
    status = text == b->items ? "MATCH" : "DIFF";
    if (status == "DIFF") detail = text + " vs " + b->items;
  }
  co_await sql.exec(
      "INSERT INTO reconciliation_report (scope_id, snapshot_a, snapshot_b, context_a, context_b, status, "
      "detail, at_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      scope, a, b->snapshot_id, *ctx_a, *ctx_b, status, detail, now_us);
}

// ---- Layers 1 and 2 (004:L393-403).

// The logs as one read from their start: the keyed log by partition and offset, the
// pre-normalization log (the original archive) by (partition, offset).
struct LogView {
  std::map<int32_t, std::map<int64_t, Event>> keyed;
  std::map<std::pair<int32_t, int64_t>, Event> stable;
  // What was read, as "k<partition>:<end>,...;s<partition>:<end>,..." (end: the offset after the
  // last record read; a partition with none read is absent). A consumer reads each partition in
  // order, so the view is a prefix of each: the judge rebuilds it from these ends.
  std::string ends() const;
  int64_t keyed_end(int32_t partition) const;
};

int64_t LogView::keyed_end(int32_t partition) const {
  auto it = keyed.find(partition);
  return it == keyed.end() || it->second.empty() ? 0 : it->second.rbegin()->first + 1;
}

std::string LogView::ends() const {
  std::string out;
  for (const auto& [p, records] : keyed) {
    if (!records.empty()) out += (out.empty() ? "k" : ",k") + std::to_string(p) + ":" + std::to_string(keyed_end(p));
  }
  std::map<int32_t, int64_t> stable_end;
  for (const auto& [at, e] : stable) stable_end[at.first] = at.second + 1;
  std::string s;
  for (const auto& [p, end] : stable_end) s += (s.empty() ? "s" : ",s") + std::to_string(p) + ":" + std::to_string(end);
  return out + ";" + s;
}

// Reads both logs from their start with a consumer group of its own, until three polls in a row
// bring nothing; nullopt if the log does not answer.
Task<std::optional<LogView>> read_logs(Runtime& rt, Log& log, int64_t round) {
  std::unique_ptr<LogConsumer> in =
      log.consumer(ConsumerOptions{.group = "recon-" + std::to_string(rt.incarnation()) + "-" + std::to_string(round),
                                   .client_id = std::string(rt.process_name()),
                                   .session_timeout_us = 6'000'000});
  if ((co_await in->join({kKeyedTopic, kStableTopic})).status != LogStatus::kOk) co_return std::nullopt;
  LogView v;
  for (int idle = 0; idle < 3;) {
    PollResult p = co_await in->poll(1000, 50'000);
    if (p.status != LogStatus::kOk) {
      co_await in->leave();
      co_return std::nullopt;
    }
    idle = p.records.empty() ? idle + 1 : 0;
    for (const LogRecord& rec : p.records) {
      if (rec.topic == kKeyedTopic) {
        v.keyed[rec.partition].emplace(rec.offset, Event::decode(rec.value));
      } else {
        v.stable.emplace(std::make_pair(rec.partition, rec.offset), Event::decode(rec.value));
      }
    }
  }
  co_await in->leave();
  co_return std::move(v);
}

struct Cut {
  int32_t partition = 0;
  int64_t next_offset = 0;
};

std::vector<Cut> parse_vector(const std::string& vector) {
  std::vector<Cut> out;
  for (const std::string& ref : split(vector, ',')) {
    Cut c;
    int64_t gen = 0;
    if (parse_cut_ref(ref, &c.partition, &c.next_offset, &gen)) out.push_back(c);
  }
  return out;
}

// The live end of the keyed log as a vector of the same form (generation 0: not a checkpoint's).
std::string live_vector(const LogView& v, const std::vector<Cut>& frozen) {
  std::string out;
  for (const Cut& c : frozen) out += (out.empty() ? "" : ",") + cut_ref(c.partition, v.keyed_end(c.partition), 0);
  return out;
}

struct RunContext {
  std::string snapshot_id, run_id, frozen, vector;  // frozen: context_of(snapshot)
  std::string of(const std::string& v) const { return frozen + "|" + v; }
};

struct LayerReport {
  int layer = 0;
  std::string ctx_b, status, sample, offsets, detail;
};

Task<void> record_layer(Sql& sql, const std::string& scope, const RunContext& run, const LogView& v,
                        const LayerReport& r, int64_t now_us) {
  co_await sql.exec(
      "INSERT INTO reconciliation_layer_report (layer, scope_id, snapshot_id, run_id, context_a, "
      "context_b, status, sample, read_ends, offset_digest, detail, at_us) VALUES (?, ?, ?, ?, ?, ?, ?, "
      "?, ?, ?, ?, ?)",
      int64_t{r.layer}, scope, run.snapshot_id, run.run_id, run.of(run.vector), r.ctx_b, r.status, r.sample, v.ends(),
      r.offsets, r.detail, now_us);
}

// Whether the read reached every cut of `vector`: a conclusion needs all the records below them.
bool read_reaches(const LogView& v, const std::vector<Cut>& cuts) {
  for (const Cut& c : cuts) {
    if (v.keyed_end(c.partition) < c.next_offset) return false;
  }
  return true;
}

// Layer 1 under the run's frozen cut.
Task<void> layer_sources(Sql& sql, const ReconcileOptions& o, const std::string& scope, const RunContext& run,
                         const LogView& v, int64_t now_us) {
  SqlResult terms = co_await sql.exec("SELECT source_partition, source_offset FROM candidate_term");
  std::optional<SqlResult> idle;
  if (o.watermarks) idle = co_await sql.exec("SELECT keyed_partition, source, source_partition FROM partition_idle");
  if (!terms.ok() || (idle && !idle->ok())) co_return;
  std::set<std::pair<int32_t, int64_t>> waiting;
  for (const SqlRow& r : terms.rows()) waiting.insert({static_cast<int32_t>(r[0].as_int()), r[1].as_int()});
  std::string gaps, offsets;
  std::map<int32_t, int64_t> reached;            // source partition -> highest offset inside the cut
  std::set<std::pair<int32_t, int64_t>> copied;  // (source partition, offset) with a copy of `scope`
  std::set<int32_t> cut_partitions;
  const std::vector<Cut> cuts = parse_vector(run.vector);
  if (!read_reaches(v, cuts)) co_return;  // the log was read short of the cut: no conclusion this round
  for (const Cut& c : cuts) {
    cut_partitions.insert(c.partition);
    offsets += std::to_string(c.partition) + "@" + std::to_string(c.next_offset) + ";";
    auto part = v.keyed.find(c.partition);
    for (int64_t off = 0; off < c.next_offset; ++off) {
      const Event* e = nullptr;
      if (part != v.keyed.end()) {
        auto it = part->second.find(off);
        if (it != part->second.end()) e = &it->second;
      }
      if (e == nullptr) {
        gaps += " keyed " + std::to_string(c.partition) + "@" + std::to_string(off) + " missing;";
        continue;
      }
      const int32_t sp = static_cast<int32_t>(std::stoll(e->get("sourcePartition")));
      const int64_t so = std::stoll(e->get("sourceOffset"));
      reached[sp] = std::max(reached.count(sp) ? reached[sp] : -1, so);
      if (e->get("scopeId") != scope) continue;
      auto orig = v.stable.find({sp, so});
      if (orig == v.stable.end() || orig->second.get("eventId") != e->get("eventId")) {
        gaps += " copy " + std::to_string(c.partition) + "@" + std::to_string(off) + " has no original;";
      }
    }
  }
  for (const auto& [part, records] : v.keyed) {
    for (const auto& [off, e] : records) {
      if (e.get("scopeId") == scope) {
        copied.insert({static_cast<int32_t>(std::stoll(e.get("sourcePartition"))), std::stoll(e.get("sourceOffset"))});
      }
    }
  }
  // Below the last original the cut reached in each source partition (that one may be half
  // copied), every original that derives the scope is copied or waits for confirmation.
  std::string sample;
  for (const auto& [sp, last] : reached) {
    sample += (sample.empty() ? "" : ";") + std::to_string(sp) + ":0-" + std::to_string(last);
    for (auto it = v.stable.lower_bound({sp, 0});
         it != v.stable.end() && it->first.first == sp && it->first.second < last; ++it) {
      if (copied.count(it->first) || waiting.count(it->first)) continue;
      const std::vector<std::string> derived = expand_scopes(o.cfg, it->second);
      if (std::find(derived.begin(), derived.end(), scope) == derived.end()) continue;
      gaps += " original " + std::to_string(sp) + "@" + std::to_string(it->first.second) + " not copied;";
    }
  }
  int idle_periods = 0;
  if (idle) {
    for (const SqlRow& r : idle->rows())
      idle_periods += cut_partitions.count(static_cast<int32_t>(r[0].as_int())) ? 1 : 0;
  }
  co_await record_layer(
      sql, scope, run, v,
      LayerReport{1, run.of(run.vector), gaps.empty() ? "CONTINUOUS" : "GAP", sample, fnv_hex(offsets),
                  "idle periods " + std::to_string(idle_periods) + (gaps.empty() ? "" : ";" + gaps)},
      now_us);
}

// One manifest item "aggregate_key,generation,version,value_digest,cut_ref".
struct Item {
  std::string ak, cut;
  int64_t generation = 0, version = 0;
};

// The value of `key` from the keyed records of `partition` below `next_offset` (all of them when
// `next_offset` < 0), as the aggregators fold them (004:L87, L98, L167-177, L154).
AggValue recompute(const ReconcileOptions& o, const LogView& v, const std::set<std::pair<int64_t, std::string>>& late,
                   const AggKey& key, int32_t partition, int64_t next_offset) {
  std::set<std::string> applied, contents;
  std::map<std::string, int64_t> actors;
  bool by_content = false;
  auto part = v.keyed.find(partition);
  if (part == v.keyed.end()) return AggValue{};
  for (const auto& [off, e] : part->second) {
    if (next_offset >= 0 && off >= next_offset) break;
    if (e.get("topicId") != key.topic_id || e.get("scopeId") != key.scope_id) continue;
    auto size = o.cfg.windows.find(key.window_type);
    if (size == o.cfg.windows.end()) continue;
    const int64_t t = std::stoll(e.get("eventTime"));
    if (window_start_of(t, size->second) != key.window_start_ms || late.count({off, key.window_type})) continue;
    for (const auto& [metric, distinct_of] : metrics_of(e.get("eventType"))) {
      if (metric != key.metric_type) continue;
      by_content = distinct_of == "content";
      if (!applied.insert(idempotency_record(e, o.fixes.has(RankFix::kDedupByEventId))).second) continue;
      ++actors[e.get("actorKey")];
      contents.insert(e.get("contentOrQueryId"));
    }
  }
  AggValue out;
  out.raw_count = static_cast<int64_t>(applied.size());
  out.effective = static_cast<int64_t>(by_content ? contents.size() : actors.size());
  for (const auto& [actor, n] : actors) out.suspicious += n > o.cfg.suspicious_repeats ? 1 : 0;
  out.risk_adjusted = out.effective - out.suspicious;
  return out;
}

std::string describe(const AggValue& x) {
  return std::to_string(x.raw_count) + "/" + std::to_string(x.effective) + "/" + std::to_string(x.suspicious) + "/" +
         std::to_string(x.risk_adjusted);
}

// Layer 2: sampled manifest entries recomputed under the frozen cut (`live`: the live log end).
Task<void> layer_aggregates(Runtime& rt, Sql& sql, const ReconcileOptions& o, const std::string& scope,
                            const RunContext& run, const LogView& v, bool live, int64_t now_us) {
  SqlResult entries = co_await sql.exec(
      "SELECT topic_id, items FROM run_input_manifest WHERE run_id = ? ORDER BY topic_id", run.run_id);
  std::optional<SqlResult> side;
  if (o.watermarks) side = co_await sql.exec("SELECT keyed_partition, keyed_offset, window_type FROM late_side_output");
  if (!entries.ok() || entries.rows().empty() || (side && !side->ok())) co_return;
  std::map<int32_t, std::set<std::pair<int64_t, std::string>>> late;
  if (side) {
    for (const SqlRow& r : side->rows())
      late[static_cast<int32_t>(r[0].as_int())].insert({r[1].as_int(), r[2].as_text()});
  }
  // A sample of up to sample_topics entries, drawn without replacement.
  std::vector<size_t> order(entries.rows().size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rt.random_u64() % i]);
  order.resize(std::min(order.size(), static_cast<size_t>(std::max(1, o.sample_topics))));
  std::sort(order.begin(), order.end());
  const std::string ctx_b = run.of(live ? live_vector(v, parse_vector(run.vector)) : run.vector);
  std::string sample, detail, offsets;
  std::vector<Item> items;
  for (size_t i : order) {
    for (const std::string& it : split(entries.rows()[i][1].as_text(), ';')) {
      const std::vector<std::string> f = split(it, ',');
      if (f.size() != 5) continue;
      items.push_back(Item{f[0], f[4], std::stoll(f[1]), std::stoll(f[2])});
      sample += (sample.empty() ? "" : ";") + f[0] + "," + f[1] + "," + f[2] + "," + f[4];
    }
  }
  if (ctx_b != run.of(run.vector)) {  // 004:L404: never compare across contexts
    co_await record_layer(sql, scope, run, v, LayerReport{2, ctx_b, "REFUSED", sample, "", ""}, now_us);
    co_return;
  }
  std::vector<Cut> item_cuts;
  for (const Item& item : items) {
    Cut c;
    int64_t gen = 0;
    if (parse_cut_ref(item.cut, &c.partition, &c.next_offset, &gen)) item_cuts.push_back(c);
  }
  if (!read_reaches(v, item_cuts)) co_return;  // read short of a sampled version's cut
  for (const Item& item : items) {
    SqlResult row = co_await sql.exec(
        "SELECT raw_count, effective_value, suspicious_count, risk_adjusted_value FROM topic_window_metric_version "
        "WHERE aggregate_key = ? AND aggregation_generation = ? AND aggregate_version = ?",
        item.ak, item.generation, item.version);
    if (!row.ok()) co_return;
    const std::vector<std::string> k = split(item.ak, '#');
    int32_t p = 0;
    int64_t next = 0, gen = 0;
    if (k.size() != 5 || !parse_cut_ref(item.cut, &p, &next, &gen)) continue;
    offsets += item.cut + ";";
    const AggValue want = recompute(o, v, late[p], AggKey{k[0], k[1], k[2], std::stoll(k[3]), k[4]}, p, next);
    if (row.rows().empty()) {
      detail +=
          " " + item.ak + " g" + std::to_string(item.generation) + "/v" + std::to_string(item.version) + " missing;";
      continue;
    }
    const SqlRow& r = row.rows()[0];
    const AggValue got{r[0].as_int(), r[1].as_int(), r[2].as_int(), r[3].as_int()};
    if (!(got == want)) {
      detail += " " + item.ak + " g" + std::to_string(item.generation) + "/v" + std::to_string(item.version) +
                " stored " + describe(got) + " recomputed " + describe(want) + ";";
    }
  }
  co_await record_layer(sql, scope, run, v,
                        LayerReport{2, ctx_b, detail.empty() ? "MATCH" : "DIFF", sample, fnv_hex(offsets), detail},
                        now_us);
}

// The run of the snapshot the DB pointer of `scope` names, with its frozen context.
Task<std::optional<RunContext>> pointer_run(Sql& sql, const std::string& scope) {
  SqlResult r = co_await sql.exec(
      "SELECT p.snapshot_id, s.run_id, r.source_offset_vector FROM ranking_publish_pointer p "
      "JOIN ranking_snapshot s ON s.snapshot_id = p.snapshot_id JOIN calculation_run r ON "
      "r.run_id = s.run_id WHERE p.scope_id = ?",
      scope);
  if (!r.ok() || r.rows().empty()) co_return std::nullopt;
  RunContext run{r.rows()[0][0].as_text(), r.rows()[0][1].as_text(), "", r.rows()[0][2].as_text()};
  std::optional<std::string> frozen = co_await context_of(sql, run.snapshot_id);
  if (!frozen) co_return std::nullopt;
  run.frozen = *frozen;
  co_return std::move(run);
}

Task<void> reconcile_layers(Runtime& rt, Sql& sql, Log& log, const ReconcileOptions& o, int64_t round) {
  std::map<std::string, RunContext> runs;
  for (const std::string& scope : o.scopes) {
    std::optional<RunContext> run = co_await pointer_run(sql, scope);
    if (run) runs.emplace(scope, std::move(*run));
  }
  if (runs.empty()) co_return;
  std::optional<LogView> v = co_await read_logs(rt, log, round);
  if (!v) co_return;
  for (const auto& [scope, run] : runs) {
    co_await layer_sources(sql, o, scope, run, *v, rt.clock().now_us());
    // C19: a mixed round compares with the live log first (refused), then under the fixed context.
    if (o.mix && round % 2 == 1) co_await layer_aggregates(rt, sql, o, scope, run, *v, true, rt.clock().now_us());
    co_await layer_aggregates(rt, sql, o, scope, run, *v, false, rt.clock().now_us());
  }
}

}  // namespace

Task<void> run_reconciler(Runtime& rt, Sql& sql, Redis& redis, Log* log, ReconcileOptions o) {
  FL_ASSERT(!o.layers || log != nullptr);
  for (int64_t round = 0;; ++round) {
    co_await rt.clock().sleep_us(o.interval_us);
    for (const std::string& scope : o.scopes)
      co_await reconcile_scope(sql, redis, o, scope, round, rt.clock().now_us());
    if (o.layers) co_await reconcile_layers(rt, sql, *log, o, round);
  }
}

}  // namespace fl::ranking
