#include "impl/ranking/aggregator.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "impl/ports/stable_hash.h"
#include "impl/ports/text.h"
#include "impl/ranking/schema.h"
#include "impl/ports/assert.h"

namespace fl::ranking {

AggValue KeyState::value(int suspicious_repeats) const {
  AggValue v;
  v.raw_count = static_cast<int64_t>(applied.size());
  v.effective = static_cast<int64_t>(counts_content ? contents.size() : actors.size());
  for (const auto& [actor, n] : actors) {
    if (n > suspicious_repeats) ++v.suspicious;
  }
  v.risk_adjusted = v.effective - v.suspicious;
  return v;
}

void KeyState::mark_flushed() {
  if (dirty) ++version;
  dirty = false;
  fresh_lines.clear();
  for (auto& [salt, sh] : shards) {
    if (sh.dirty) ++sh.version;
    sh.dirty = false;
  }
}

bool PartitionState::apply_record(const std::string& name, KeyState& k, const std::string& record,
                                  const std::string& actor, const std::string& content, bool fresh) {
  if (!k.applied.insert(record).second) return false;
  const int64_t actor_events = ++k.actors[actor];
  const bool new_content = k.contents.insert(content).second;
  if (fresh) {  // decode_into's A, C (the actor's new count) and T lines
    std::string& out = k.fresh_lines;
    ((out += "A\t").append(record) += '\n');
    ((out += "C\t").append(actor) += '\t');
    append_decimal(out, actor_events);
    out += '\n';
    if (new_content) ((out += "T\t").append(content) += '\n');
  }
  set_dirty(name, k);
  return true;
}

void PartitionState::set_dirty(const std::string& name, KeyState& k) {
  FL_ASSERT(keys.count(name) == 1 && &keys.find(name)->second == &k);
  k.dirty = true;
  dirty_keys.insert(name);
}

void PartitionState::mark_flushed() {
  check_dirty_index();
  for (const std::string& name : dirty_keys) {
    auto it = keys.find(name);
    FL_ASSERT(it != keys.end());
    it->second.mark_flushed();
  }
  dirty_keys.clear();
  erased_keys.clear();
  changed_topics.clear();
}

void PartitionState::reindex_dirty() {
  dirty_keys.clear();
  for (const auto& [name, k] : keys) {
    // A shard is only ever dirtied with its key (apply, recover): the key's flag covers both.
    FL_ASSERT(k.dirty || std::none_of(k.shards.begin(), k.shards.end(), [](const auto& s) { return s.second.dirty; }));
    if (k.dirty) dirty_keys.insert(dirty_keys.end(), name);
  }
}

void PartitionState::check_dirty_index() const {
#ifndef NDEBUG
  std::set<std::string> expected;
  for (const auto& [name, k] : keys) {
    if (k.dirty) expected.insert(expected.end(), name);
  }
  FL_ASSERT(expected == dirty_keys && "a key's dirty flag changed without PartitionState::set_dirty");
#endif
}

// Names each shard with the version the flush in progress gives it (a dirty one advances).
MergedShards merge_shards(const KeyState& k, const std::string& aggregate_key, bool named) {
  MergedShards m;
  for (const auto& [salt, sh] : k.shards) {
    m.raw += sh.raw;
    m.sketch.merge(sh.sketch);
    if (!named) continue;
    m.names += (m.names.empty() ? "" : ",") + aggregate_key + "~" + std::to_string(salt) + "@" +
               std::to_string(sh.version + (sh.dirty ? 1 : 0));
  }
  return m;
}

namespace {

void field(std::string& out, std::string_view v) {
  out += '\t';
  out += v;
}
void field(std::string& out, int64_t v) {
  out += '\t';
  append_decimal(out, v);
}

// One line per fact, tab separated; the generators put no tab or newline in ids. `flushed`: as a
// committed flush leaves the key (dirty versions advanced: KeyState::mark_flushed).
void append_key_header(std::string& out, const KeyState& k, bool flushed) {
  out += 'K';
  field(out, k.key.topic_id);
  field(out, k.key.scope_id);
  field(out, k.key.window_type);
  field(out, k.key.window_start_ms);
  field(out, k.key.metric_type);
  field(out, k.generation);
  field(out, k.version + (flushed && k.dirty ? 1 : 0));
  field(out, k.counts_content ? 1 : 0);
  out += '\n';
}

void append_shards(std::string& out, const KeyState& k, bool flushed) {
  for (const auto& [salt, sh] : k.shards) {
    out += 'S';
    field(out, salt);
    field(out, sh.version + (flushed && sh.dirty ? 1 : 0));
    field(out, sh.raw);
    field(out, sh.sketch.encode());
    out += '\n';
  }
}

void append_key(std::string& out, const KeyState& k, bool flushed) {
  append_key_header(out, k, flushed);
  for (const std::string& a : k.applied) (out += "A\t").append(a) += '\n';
  for (const auto& [actor, n] : k.actors) {
    (out += "C\t").append(actor);
    field(out, n);
    out += '\n';
  }
  for (const std::string& c : k.contents) (out += "T\t").append(c) += '\n';
  append_shards(out, k, flushed);
}

void append_header(std::string& out, const PartitionState& s, int64_t next_offset) {
  out += 'N';
  field(out, next_offset);
  field(out, s.max_event_time_ms);
  field(out, s.generation);
  out += '\n';
}

// append_key(k, flushed = true), from the key's kept lines when their stamp still matches.
const std::string& flushed_lines(const KeyState& k) {
  uint64_t shards = 0;
  for (const auto& [salt, sh] : k.shards) {
    shards = mix64(shards ^ static_cast<uint64_t>(salt));
    shards = mix64(shards ^ static_cast<uint64_t>(sh.version + (sh.dirty ? 1 : 0)));
    shards = mix64(shards ^ static_cast<uint64_t>(sh.raw));
  }
  KeyState::FlushedLines& kept = k.flushed_lines;
  const int64_t version = k.version + (k.dirty ? 1 : 0);
  if (kept.generation != k.generation || kept.version != version || kept.applied != k.applied.size() ||
      kept.counts_content != k.counts_content || kept.shards != shards) {
    kept = KeyState::FlushedLines{k.generation, version, k.applied.size(), k.counts_content, shards, {}};
    append_key(kept.text, k, /*flushed=*/true);
  }
#ifndef NDEBUG
  std::string fresh;
  append_key(fresh, k, /*flushed=*/true);
  FL_ASSERT(kept.text == fresh && "a KeyState change that the stamp of its kept lines misses");
#endif
  return kept.text;
}

// With `flushed`, the state as a committed flush up to `*flushed` leaves it (next_offset moved,
// dirty versions advanced: KeyState::mark_flushed), without copying the state to get there;
// `lines` says whether the keys' lines are kept for the next time (KeyState::flushed_lines).
std::string encode_state(const PartitionState& s, std::optional<int64_t> flushed, KeptLines lines) {
  const bool kept = flushed && lines == KeptLines::kKeep;
  std::string out;
  if (flushed) {
    // The key lines are most of the text (hundreds of kB): one allocation instead of a dozen
    // copies as the string doubles. Without kept lines, the last base and its deltas tell the size.
    size_t key_bytes = s.base_bytes + s.delta_bytes;
    if (kept) {
      key_bytes = 0;
      for (const auto& [ak, k] : s.keys) key_bytes += flushed_lines(k).size();
    }
    out.reserve(key_bytes + key_bytes / 4 + 64);
  }
  append_header(out, s, flushed.value_or(s.next_offset));
  for (const auto& [ak, k] : s.keys) {
    if (kept) {
      out += flushed_lines(k);
    } else {
      append_key(out, k, /*flushed=*/flushed.has_value());
    }
  }
  for (const auto& [topic, n] : s.topic_records) {
    (out += "H\t").append(topic);
    field(out, n);
    out += '\n';
  }
  const WatermarkState& wm = s.wm;
  if (wm.watermark != kNoWatermark || !wm.sources.empty() || !wm.windows.empty()) wm.encode(out);
  return out;
}

}  // namespace

std::string PartitionState::encode() const { return encode_state(*this, std::nullopt, KeptLines::kDrop); }

std::string PartitionState::encode_flushed(int64_t next, KeptLines lines) const {
  return encode_state(*this, next, lines);
}

std::string PartitionState::encode_delta(int64_t next) const {
  check_dirty_index();
  std::string out;
  append_header(out, *this, next);
  for (const std::string& name : erased_keys) (out += "D\t").append(name) += '\n';
  for (const std::string& name : dirty_keys) {
    const KeyState& k = keys.find(name)->second;
    append_key_header(out, k, /*flushed=*/true);
    out += k.fresh_lines;
    append_shards(out, k, /*flushed=*/true);
  }
  for (const std::string& topic : changed_topics) {
    auto it = topic_records.find(topic);
    if (it == topic_records.end()) continue;
    (out += "H\t").append(topic);
    field(out, it->second);
    out += '\n';
  }
  if (wm.watermark != kNoWatermark || !wm.sources.empty() || !wm.windows.empty()) wm.encode(out);
  return out;
}

PartitionState PartitionState::decode(const std::string& text) {
  PartitionState s;
  decode_into(s, text);
  return s;
}

void PartitionState::decode_into(PartitionState& s, const std::string& text) {
  // The text is the encoding of a checkpoint whose digest matched: a malformed number throws
  // (std::bad_optional_access), as std::stoll did.
  const auto num = [](std::string_view v) { return parse_decimal(v).value(); };
  KeyState* cur = nullptr;
  std::vector<std::string_view> lines, f;
  split_views(text, '\n', lines);
  for (std::string_view line : lines) {
    split_views(line, '\t', f);
    if (f.empty()) continue;
    if (f[0] == "N" && f.size() == 4) {
      s.next_offset = num(f[1]);
      s.max_event_time_ms = num(f[2]);
      s.generation = num(f[3]);
    } else if (f[0] == "K" && f.size() == 9) {
      AggKey k{std::string(f[1]), std::string(f[2]), std::string(f[3]), num(f[4]), std::string(f[5])};
      cur = &s.keys[k.str()];
      cur->key = std::move(k);
      cur->generation = num(f[6]);
      cur->version = num(f[7]);
      cur->counts_content = f[8] == "1";
    } else if (cur && f[0] == "A" && f.size() == 2) {
      cur->applied.emplace(f[1]);
    } else if (cur && f[0] == "C" && f.size() == 3) {
      cur->actors[std::string(f[1])] = num(f[2]);
    } else if (cur && f[0] == "T" && f.size() == 2) {
      cur->contents.emplace(f[1]);
    } else if (cur && f[0] == "S" && (f.size() == 4 || f.size() == 5)) {
      Shard& sh = cur->shards[static_cast<int>(num(f[1]))];
      sh.version = num(f[2]);
      sh.raw = num(f[3]);
      sh.sketch = Hll::decode(f.size() == 5 ? std::string(f[4]) : std::string()).value_or(Hll());
    } else if (f[0] == "H" && f.size() == 3) {
      s.topic_records[std::string(f[1])] = num(f[2]);
    } else if (f[0] == "D" && f.size() == 2) {
      s.keys.erase(std::string(f[1]));
      cur = nullptr;
    } else {
      s.wm.decode_line(f);
    }
  }
}

namespace {

// 004:L158: "热门话题会形成分区热点，需要在聚合阶段做本地预聚合或话题加盐分片，但盐值只是局部计算维度".
// A topic_id + scope_id is hot once this partition has read more than hot_threshold of its keyed
// records; a hot topic's records go to salt 1..salts by a stable hash of their idempotency record
// (a redelivery lands on the same shard), the others to salt 0.
int salt_of(const SketchOptions& o, PartitionState& ps, const std::string& topic_scope, const std::string& record) {
  if (!o.enabled || o.hot_threshold <= 0) return 0;
  if (++ps.topic_records[topic_scope] <= o.hot_threshold) return 0;
  return 1 + static_cast<int>(hll_hash(record) % static_cast<uint64_t>(std::max(1, o.salts)));
}

// Applies one keyed record to every full key it feeds (004:L143): one per window type and metric.
void apply(const AggregatorOptions& o, PartitionState& ps, const LogRecord& rec, int64_t now_us) {
  const Event e = Event::decode(rec.value);
  const int64_t t = std::stoll(e.get("eventTime"));
  ps.max_event_time_ms = std::max(ps.max_event_time_ms, t);
  const std::string source_key = e.get("source") + "|" + e.get("sourcePartition");
  if (o.wm.enabled) {
    observe_record(ps.wm, o.wm, o.fixes, rec.partition, rec.offset, e.get("source"), e.get("sourcePartition"),
                   std::stoll(e.get("sourceOffset")), t, now_us);
  }
  const std::string record = idempotency_record(e, o.fixes.has(RankFix::kDedupByEventId));
  const std::string topic_scope = e.get("topicId") + "|" + e.get("scopeId");
  const int salt = salt_of(o.sketch, ps, topic_scope, record);
  if (o.incremental_checkpoints && o.sketch.enabled && o.sketch.hot_threshold > 0)
    ps.changed_topics.insert(topic_scope);
  for (const auto& [window_type, size] : o.cfg.windows) {
    const int64_t start = window_start_of(t, size);
    if (o.wm.enabled) {
      // 004:L154: OPEN and CLOSED windows take the event (a CLOSED one as a correction, a new
      // version for later snapshots); FINAL and PURGED ones send it to the late side output.
      const std::string id = window_id(e.get("scopeId"), window_type, start, start + size);
      const std::string state = window_state_for(ps.wm, o.wm, rec.partition, id);
      if (state == "FINAL" || state == "PURGED") {
        side_output(ps.wm, rec.partition, rec.offset, window_type, e.get("eventId"), source_key, id, state);
        continue;
      }
    }
    for (const auto& [metric, distinct_of] : metrics_of(e.get("eventType"))) {
      AggKey key{e.get("topicId"), e.get("scopeId"), window_type, start, metric};
      auto [it, fresh] = ps.keys.try_emplace(key.str());
      KeyState& k = it->second;
      if (fresh) k.generation = ps.generation;
      k.key = key;
      k.counts_content = distinct_of == "content";
      if (!ps.apply_record(it->first, k, record, e.get("actorKey"), e.get("contentOrQueryId"),
                           o.incremental_checkpoints)) {
        continue;  // already applied: idempotent
      }
      if (o.sketch.enabled) {
        Shard& sh = k.shards[salt];
        ++sh.raw;
        sh.sketch.add(k.counts_content ? e.get("contentOrQueryId") : e.get("actorKey"));
        sh.dirty = true;
      }
    }
  }
}

// 004:L179: with every version of a key, its sketch row (the same version triple, never updated),
// and with salting each shard that changed as an immutable row of its own carrying the five fields;
// the version's sketch and raw count are those of its shards merged on the full key.
void sketch_statements(const AggregatorOptions& o, const std::string& ak, const KeyState& k,
                       std::vector<SqlStatement>& tx) {
  const bool salted = o.sketch.hot_threshold > 0;
  for (const auto& [salt, sh] : k.shards) {
    if (!salted || !sh.dirty) continue;
    tx.push_back(sql_statement(
        "INSERT INTO topic_window_metric_shard (shard_key, aggregate_key, salt, aggregation_generation, shard_version, "
        "topic_id, scope_id, window_type, window_start, metric_type, raw_count, sketch, distinct_estimate) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ak + "~" + std::to_string(salt), ak, int64_t{salt}, k.generation, sh.version + 1, k.key.topic_id,
        k.key.scope_id, k.key.window_type, k.key.window_start_ms, k.key.metric_type, sh.raw, sh.sketch.encode(),
        sh.sketch.estimate()));
  }
  const MergedShards m = merge_shards(k, ak, salted);
  tx.push_back(sql_statement(
      "INSERT INTO topic_window_metric_sketch (aggregate_key, aggregation_generation, aggregate_version, raw_count, "
      "sketch, distinct_estimate, merged_shards) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ak, k.generation, k.version + 1, m.raw, m.sketch.encode(), m.sketch.estimate(), m.names));
}

// What a flush wrote as the checkpoint: the row's new digest, and whether it was a base (the whole
// state) or a delta, of `bytes`.
struct CheckpointWrite {
  std::string digest;
  bool base = true;
  size_t bytes = 0;
};

// Deltas since a base may add up to this much before the next base, however small the base.
constexpr size_t kMinBaseBytes = 64 * 1024;

// With incremental checkpoints, the delta of a flush and the row's CAS over it; nullopt when the
// flush must write a base instead (a first checkpoint, a recovery, or deltas outgrowing the base).
std::optional<std::vector<SqlStatement>> delta_statements(const AggregatorOptions& o, int32_t partition,
                                                          int64_t consumed_to, const PartitionState& ps,
                                                          CheckpointWrite& out) {
  if (!o.incremental_checkpoints || !ps.persisted) return std::nullopt;
  std::string delta = ps.encode_delta(consumed_to);
  if (ps.delta_bytes + delta.size() > std::max(ps.base_bytes, kMinBaseBytes)) return std::nullopt;
  // The row's digest chains over every delta since its base: a load recomputes the chain, so a
  // lost, replaced or foreign delta shows as a corrupted checkpoint (004:L320).
  out = CheckpointWrite{fnv_hex(ps.stored_digest + delta), false, delta.size()};
  const bool cas = o.fixes.has(RankFix::kCheckpointCas);
  std::vector<SqlStatement> tx;
  tx.push_back(
      sql_statement(cas ? "INSERT INTO agg_checkpoint_delta (keyed_partition, seq, next_offset, delta, digest) "
                          "VALUES (?, ?, ?, ?, ?)"
                        : "INSERT OR REPLACE INTO agg_checkpoint_delta (keyed_partition, seq, next_offset, "
                          "delta, digest) VALUES (?, ?, ?, ?, ?)",
                    partition, static_cast<int64_t>(ps.delta_count + 1), consumed_to, std::move(delta), out.digest));
  if (!cas) {
    // Spec: the checkpoint of 004:L319 is simply the latest state written.
    tx.push_back(
        sql_statement("UPDATE agg_checkpoint SET generation = ?, next_offset = ?, digest = ? WHERE "
                      "keyed_partition = ?",
                      ps.generation, consumed_to, out.digest, partition));
    return tx;
  }
  // RK-CHECKPOINT-CAS: only over the checkpoint this state came from (its digest names the chain).
  SqlStatement row = sql_statement(
      "UPDATE agg_checkpoint SET generation = ?, next_offset = ?, digest = ? WHERE "
      "keyed_partition = ? AND next_offset = ? AND generation = ? AND digest = ?",
      ps.generation, consumed_to, out.digest, partition, ps.stored_next_offset, ps.stored_generation, ps.stored_digest);
  row.expect = SqlExpect::kChanged;
  tx.push_back(std::move(row));
  return tx;
}

std::vector<SqlStatement> flush_statements(const AggregatorOptions& o, int32_t partition, int64_t consumed_to,
                                           const PartitionState& ps, CheckpointWrite* written = nullptr,
                                           bool force_base = false) {
  std::vector<SqlStatement> tx;
  const int64_t gen = ps.generation;
  const std::string cut =
      "k" + std::to_string(partition) + "@" + std::to_string(consumed_to) + "/g" + std::to_string(gen);
  tx.push_back(
      sql_statement("INSERT OR IGNORE INTO source_offset_cut (cut_id, keyed_partition, next_offset, generation) "
                    "VALUES (?, ?, ?, ?)",
                    cut, partition, consumed_to, gen));
  const int64_t watermark = o.wm.enabled ? ps.wm.watermark : ps.max_event_time_ms - o.out_of_orderness_ms;  // 004:L148
  ps.check_dirty_index();
  for (const std::string& ak : ps.dirty_keys) {
    const KeyState& k = ps.keys.find(ak)->second;
    const AggValue v = k.value(o.cfg.suspicious_repeats);
    tx.push_back(sql_statement(
        "INSERT OR IGNORE INTO topic_window_metric (aggregate_key, topic_id, scope_id, window_type, window_start, "
        "metric_type, active_generation, current_aggregate_version) VALUES (?, ?, ?, ?, ?, ?, ?, 0)",
        ak, k.key.topic_id, k.key.scope_id, k.key.window_type, k.key.window_start_ms, k.key.metric_type, k.generation));
    // 004:L98: first the immutable version row, then the head by the double CAS.
    tx.push_back(sql_statement(
        "INSERT INTO topic_window_metric_version (aggregate_key, aggregation_generation, aggregate_version, raw_count, "
        "effective_value, suspicious_count, risk_adjusted_value, input_watermark, source_offset_cut_ref, value_digest) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ak, k.generation, k.version + 1, v.raw_count, v.effective, v.suspicious, v.risk_adjusted, watermark, cut,
        v.digest()));
    SqlStatement cas = sql_statement(
        "UPDATE topic_window_metric SET current_aggregate_version = ? WHERE aggregate_key = ? AND "
        "active_generation = ? AND current_aggregate_version = ?",
        k.version + 1, ak, k.generation, k.version);
    cas.expect = SqlExpect::kChanged;
    tx.push_back(std::move(cas));
    if (o.sketch.enabled) sketch_statements(o, ak, k, tx);
  }
  CheckpointWrite write;
  if (std::optional<std::vector<SqlStatement>> delta;
      !force_base && (delta = delta_statements(o, partition, consumed_to, ps, write))) {
    for (SqlStatement& st : *delta) tx.push_back(std::move(st));
    tx.insert(tx.end(), ps.wm.pending.begin(), ps.wm.pending.end());
    if (written) *written = std::move(write);
    return tx;
  }
  // With incremental checkpoints a base is rare (when the deltas outgrow the last one), so the
  // keys' lines are not kept between bases: kept, they were a second copy of the state as text.
  std::string state = ps.encode_flushed(  // moved into its last statement below
      consumed_to, o.incremental_checkpoints ? KeptLines::kDrop : KeptLines::kKeep);
  const std::string digest = fnv_hex(state);
  if (written) *written = CheckpointWrite{digest, true, state.size()};
  // With incremental checkpoints the row stays small, as every delta rewrites it (SQLite rewrites
  // a whole record, overflow pages and all): the base goes to agg_checkpoint_base.
  static const std::string kNoState;
  const std::string& row_state = o.incremental_checkpoints ? kNoState : state;
  if (o.incremental_checkpoints) {
    tx.push_back(sql_statement("INSERT OR REPLACE INTO agg_checkpoint_base (keyed_partition, state) VALUES (?, ?)",
                               partition, state));
  }
  if (!o.fixes.has(RankFix::kCheckpointCas)) {
    // Spec: the checkpoint of 004:L319 is simply the latest state written.
    tx.push_back(
        sql_statement("INSERT OR REPLACE INTO agg_checkpoint (keyed_partition, generation, next_offset, "
                      "state, digest) VALUES (?, ?, ?, ?, ?)",
                      partition, gen, consumed_to, row_state, digest));
  } else if (ps.persisted) {
    // RK-CHECKPOINT-CAS: only over the checkpoint this state came from. With watermarks, idle
    // marks and purges flush without moving next_offset, so (offset, generation) no longer tells
    // one checkpoint from the next: the CAS also names the digest of the one it replaces.
    SqlStatement cas =
        o.wm.enabled || o.incremental_checkpoints
            ? sql_statement(
                  "UPDATE agg_checkpoint SET generation = ?, next_offset = ?, state = ?, digest = ? WHERE "
                  "keyed_partition = ? AND next_offset = ? AND generation = ? AND digest = ?",
                  gen, consumed_to, row_state, digest, partition, ps.stored_next_offset, ps.stored_generation,
                  ps.stored_digest)
            : sql_statement(
                  "UPDATE agg_checkpoint SET generation = ?, next_offset = ?, state = ?, digest = ? WHERE "
                  "keyed_partition = ? AND next_offset = ? AND generation = ?",
                  gen, consumed_to, row_state, digest, partition, ps.stored_next_offset, ps.stored_generation);
    cas.expect = SqlExpect::kChanged;
    tx.push_back(std::move(cas));
  } else {
    tx.push_back(
        sql_statement("INSERT INTO agg_checkpoint (keyed_partition, generation, next_offset, state, digest) "
                      "VALUES (?, ?, ?, ?, ?)",
                      partition, gen, consumed_to, row_state, digest));
  }
  // Keep this checkpoint and the one before it as the consistent fall-backs of a recovery. With
  // watermarks an idle mark or a purge flushes at the same offset, and what it committed with the
  // state (the source flagged incomplete, the window PURGED) is part of it: the history row of
  // that offset is replaced, or a recovery would bring back the state from before it.
  tx.push_back(sql_statement(o.wm.enabled
                                 ? "INSERT OR REPLACE INTO agg_checkpoint_history (keyed_partition, next_offset, "
                                   "generation, state, digest) VALUES (?, ?, ?, ?, ?)"
                                 : "INSERT OR IGNORE INTO agg_checkpoint_history (keyed_partition, next_offset, "
                                   "generation, state, digest) VALUES (?, ?, ?, ?, ?)",
                             partition, consumed_to, gen, std::move(state), digest));
  // With incremental checkpoints the history holds bases only: this one and the one before it.
  tx.push_back(sql_statement("DELETE FROM agg_checkpoint_history WHERE keyed_partition = ? AND next_offset < ?",
                             partition, o.incremental_checkpoints ? ps.base_offset : ps.next_offset));
  if (o.incremental_checkpoints) {
    tx.push_back(sql_statement("DELETE FROM agg_checkpoint_delta WHERE keyed_partition = ?", partition));
  }
  tx.insert(tx.end(), ps.wm.pending.begin(), ps.wm.pending.end());
  return tx;
}

struct Partition {
  PartitionState state;
  int64_t consumed_to = 0;  // next offset after what the state holds
};

// Replays keyed partition `partition` from `from` (its offset `from.next_offset`) up to `cut` with a
// consumer group of its own (the online group's offsets are past the checkpoint).
Task<bool> replay(Runtime& rt, Log& log, const AggregatorOptions& o, int32_t partition, int64_t cut,
                  PartitionState& state) {
  std::unique_ptr<LogConsumer> in = log.consumer(
      ConsumerOptions{.group = "recovery-" + std::string(rt.process_name()) + "-" + std::to_string(rt.incarnation()) +
                               "-" + std::to_string(partition) + "-g" + std::to_string(state.generation) + "-" +
                               std::to_string(rt.random_u64() % 1000000),
                      .client_id = std::string(rt.process_name()),
                      .session_timeout_us = o.session_timeout_us});
  if ((co_await in->join({kKeyedTopic})).status != LogStatus::kOk) co_return false;
  for (int idle = 0; state.next_offset < cut && idle < 50;) {
    PollResult p = co_await in->poll(200, 200'000);
    if (p.status != LogStatus::kOk) co_return false;
    idle = p.records.empty() ? idle + 1 : 0;
    for (const LogRecord& rec : p.records) {
      if (rec.partition != partition || rec.offset < state.next_offset || rec.offset >= cut) continue;
      apply(o, state, rec, rt.clock().now_us());
      state.next_offset = rec.offset + 1;
    }
  }
  co_await in->leave();
  co_return state.next_offset >= cut;
}

// Whether the window of key `k` is FINAL (or PURGED) in `s`'s watermark state.
bool final_window(const AggregatorOptions& o, const PartitionState& s, const KeyState& k) {
  if (!o.wm.enabled) return false;
  auto size = o.cfg.windows.find(k.key.window_type);
  if (size == o.cfg.windows.end()) return false;
  auto w = s.wm.windows.find(
      window_id(k.key.scope_id, k.key.window_type, k.key.window_start_ms, k.key.window_start_ms + size->second));
  return w != s.wm.windows.end() && (w->second == "FINAL" || w->second == "PURGED");
}

// How many of `deltas` (rows: delta, digest), in order, continue the chain from `chain`: each
// delta's digest must be fnv(chain + delta). `chain` ends at the last one that does.
size_t chained_deltas(std::string& chain, const std::vector<SqlRow>& deltas) {
  size_t n = 0;
  for (const SqlRow& d : deltas) {
    std::string next = fnv_hex(chain + d[0].as_text());
    if (next != d[1].as_text()) break;
    chain = std::move(next);
    ++n;
  }
  return n;
}

// Applies the first `n` of `deltas` (verified by chained_deltas) on top of `s`.
void apply_deltas(PartitionState& s, const std::vector<SqlRow>& deltas, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    PartitionState::decode_into(s, deltas[i][0].as_text());
    ++s.delta_count;
    s.delta_bytes += deltas[i][0].as_text().size();
  }
}

// 004:L320: a corrupted checkpoint is recovered in a new aggregation generation from the last
// consistent checkpoint, replayed to the fixed cut the corrupted one claimed, appended as new
// immutable versions, and switched onto the heads with the same double fence, all at once.
// `cut`, `cut_generation` and `cut_digest` are the corrupted row's: the switch replaces that row.
Task<std::optional<PartitionState>> recover(Runtime& rt, Sql& sql, Log& log, const AggregatorOptions& o,
                                            int32_t partition, int64_t cut, int64_t cut_generation,
                                            std::string cut_digest) {
  const char* kHistory =
      "SELECT state, digest FROM agg_checkpoint_history WHERE keyed_partition = ? ORDER BY next_offset DESC";
  SqlResult hist;
  if (o.incremental_checkpoints) {  // the bases and the deltas after the newest, in one view
    hist = co_await sql.transaction(
        {sql_statement(kHistory, partition), sql_statement("SELECT delta, digest FROM agg_checkpoint_delta WHERE "
                                                           "keyed_partition = ? ORDER BY seq",
                                                           partition)});
  } else {
    hist = co_await sql.exec(kHistory, partition);
  }
  SqlResult gens = co_await sql.exec("SELECT MAX(active_generation) FROM topic_window_metric");
  SqlResult heads = co_await sql.exec(
      "SELECT aggregate_key, active_generation, current_aggregate_version "
      "FROM topic_window_metric");
  if (!hist.ok() || !gens.ok() || !heads.ok()) co_return std::nullopt;
  PartitionState s;
  for (const SqlRow& r : (o.incremental_checkpoints ? hist.sets[0] : hist.last()).rows) {
    if (fnv_hex(r[0].as_text()) == r[1].as_text()) {
      s = PartitionState::decode(r[0].as_text());
      // With incremental checkpoints the deltas are the newer checkpoints: each one whose own
      // digest continues the chain from this base is consistent (only the row's digest was
      // corrupted, or a delta), as the history's newest state is without them.
      if (o.incremental_checkpoints) {
        std::string chain = r[1].as_text();
        apply_deltas(s, hist.sets[1].rows, chained_deltas(chain, hist.sets[1].rows));
      }
      break;
    }
  }
  const int64_t max_gen = gens.rows().empty() || gens.rows()[0][0].is_null() ? 1 : gens.rows()[0][0].as_int();
  s.generation = std::max(max_gen, s.generation) + 1;
  for (auto& [ak, k] : s.keys) k.generation = s.generation;
  if (!(co_await replay(rt, log, o, partition, cut, s))) co_return std::nullopt;
  std::map<std::string, std::pair<int64_t, int64_t>> current;
  for (const SqlRow& r : heads.rows()) current[r[0].as_text()] = {r[1].as_int(), r[2].as_int()};
  for (auto& [ak, k] : s.keys) {
    auto head = current.find(ak);
    if (head != current.end() && final_window(o, s, k)) {
      // 004:L154: "FINAL的正式聚合不可再写": a FINAL window's keys keep their head where it is.
      k.generation = head->second.first;
      k.version = head->second.second;
      k.dirty = false;
      k.fresh_lines.clear();  // the recovery writes a base
      for (auto& [salt, sh] : k.shards) sh.dirty = false;
      continue;
    }
    k.generation = s.generation;
    k.version = 0;
    k.dirty = true;
    for (auto& [salt, sh] : k.shards) {  // the new generation's shards start over too
      sh.version = 0;
      sh.dirty = true;
    }
  }
  s.reindex_dirty();
  s.persisted = true;  // the corrupted row is the one the recovery replaces
  s.stored_next_offset = cut;
  s.stored_generation = cut_generation;
  s.stored_digest = std::move(cut_digest);  // with watermarks RK-CHECKPOINT-CAS also names the digest
  CheckpointWrite written;
  std::vector<SqlStatement> tx = flush_statements(o, partition, cut, s, &written, /*force_base=*/true);
  for (SqlStatement& st : tx) {
    // The head switch: the same double fence, from the head's current (generation, version).
    if (st.sql.rfind("UPDATE topic_window_metric SET", 0) != 0) continue;
    const std::string ak = st.params[1].as_text();
    auto it = current.find(ak);
    if (it == current.end()) continue;  // a new key: created in this generation
    st = sql_statement(
        "UPDATE topic_window_metric SET active_generation = ?, current_aggregate_version = ? WHERE "
        "aggregate_key = ? AND active_generation = ? AND current_aggregate_version = ?",
        s.generation, int64_t{1}, ak, it->second.first, it->second.second);
    st.expect = SqlExpect::kChanged;
  }
  SqlResult r = co_await sql.transaction(std::move(tx));
  if (!r.ok()) co_return std::nullopt;  // the switch failed: the recovery generation is abandoned
  s.mark_flushed();
  s.next_offset = cut;
  s.stored_generation = s.generation;
  s.stored_digest = written.digest;
  s.base_offset = cut;
  s.base_bytes = written.bytes;
  s.delta_count = s.delta_bytes = 0;
  co_return std::move(s);
}

// The checkpoint of `row` (state, digest, next_offset, generation) from its whole state `base`
// and, under incremental checkpoints, the `deltas` after it in order (delta, digest), if every
// delta continues the chain and the row's digest is where it ends; nullopt: corrupted.
std::optional<PartitionState> consistent_checkpoint(const SqlRow& row, const std::string& base,
                                                    const std::vector<SqlRow>* deltas) {
  std::string chain = fnv_hex(base);
  const size_t n = deltas ? chained_deltas(chain, *deltas) : 0;
  if (chain != row[1].as_text() || (deltas && n != deltas->size())) return std::nullopt;
  PartitionState s = PartitionState::decode(base);
  s.base_offset = s.next_offset;
  s.base_bytes = base.size();
  if (deltas) apply_deltas(s, *deltas, n);
  s.persisted = true;
  s.stored_next_offset = row[2].as_int();
  s.stored_generation = row[3].as_int();
  s.stored_digest = row[1].as_text();
  return s;
}

// Loads a partition's checkpoint (004:L319), recovering a corrupted one; retried until it works.
// Incremental checkpoints are read with their deltas in one transaction (one consistent view).
Task<Partition> load(Runtime& rt, Sql& sql, Log& log, const AggregatorOptions& o, int32_t partition) {
  const char* kRow = "SELECT state, digest, next_offset, generation FROM agg_checkpoint WHERE keyed_partition = ?";
  for (;;) {
    SqlResult r;
    if (o.incremental_checkpoints) {
      r = co_await sql.transaction(
          {sql_statement(kRow, partition),
           sql_statement("SELECT state FROM agg_checkpoint_base WHERE keyed_partition = ?", partition),
           sql_statement("SELECT delta, digest FROM agg_checkpoint_delta WHERE "
                         "keyed_partition = ? ORDER BY seq",
                         partition)});
    } else {
      r = co_await sql.exec(kRow, partition);
    }
    if (r.ok()) {
      const std::vector<SqlRow>& rows = o.incremental_checkpoints ? r.sets[0].rows : r.rows();
      Partition p;
      if (!rows.empty()) {
        const SqlRow& row = rows[0];
        std::optional<PartitionState> s =
            o.incremental_checkpoints
                ? consistent_checkpoint(row, r.sets[1].rows.empty() ? std::string() : r.sets[1].rows[0][0].as_text(),
                                        &r.sets[2].rows)
                : consistent_checkpoint(row, row[0].as_text(), nullptr);
        if (!s) s = co_await recover(rt, sql, log, o, partition, row[2].as_int(), row[3].as_int(), row[1].as_text());
        if (!s) {
          co_await rt.clock().sleep_ms(200);
          continue;
        }
        p.state = std::move(*s);
      }
      p.consumed_to = p.state.next_offset;
      // The silence of a partition is measured by this worker's clock from when it took it over.
      for (auto& [key, sp] : p.state.wm.sources) sp.last_event_us = std::max(sp.last_event_us, rt.clock().now_us());
      co_return std::move(p);
    }
    co_await rt.clock().sleep_ms(100);
  }
}

// The state after a committed flush of `part` up to its consumed offset.
void committed(Partition& part, CheckpointWrite written) {
  PartitionState& s = part.state;
  if (written.base) {
    s.base_offset = part.consumed_to;
    s.base_bytes = written.bytes;
    s.delta_count = s.delta_bytes = 0;
  } else {
    ++s.delta_count;
    s.delta_bytes += written.bytes;
  }
  part.state.stored_digest = std::move(written.digest);
  part.state.next_offset = part.consumed_to;
  part.state.persisted = true;
  part.state.stored_next_offset = part.consumed_to;
  part.state.stored_generation = part.state.generation;
  part.state.wm.pending.clear();
  part.state.mark_flushed();
}

std::string cut_of(int32_t partition, const PartitionState& s) {
  return "k" + std::to_string(partition) + "@" + std::to_string(s.stored_next_offset) + "/g" +
         std::to_string(s.stored_generation);
}

// 004:L154-155: the evidence of a FINAL window before its state may go: the input watermark, a
// digest of the source offsets, its final versions, the checkpoint that holds it, and the
// reconciliation of the state against the DB's heads ("ok", or what differs).
struct Evidence {
  std::string id, offsets, versions, reconciliation;
};

Task<std::optional<Evidence>> reconcile(Sql& sql, const AggregatorOptions& o, const PartitionState& s,
                                        const std::string& id) {
  const std::vector<std::string> f = split(id, '#');
  SqlResult r = co_await sql.exec(
      "SELECT h.aggregate_key, h.active_generation, h.current_aggregate_version, v.value_digest FROM "
      "topic_window_metric h JOIN topic_window_metric_version v ON v.aggregate_key = h.aggregate_key AND "
      "v.aggregation_generation = h.active_generation AND v.aggregate_version = h.current_aggregate_version "
      "WHERE h.scope_id = ? AND h.window_type = ? AND h.window_start = ?",
      f[0], f[1], std::stoll(f[2]));
  if (!r.ok()) co_return std::nullopt;
  std::map<std::string, std::string> db;
  for (const SqlRow& row : r.rows()) {
    db[row[0].as_text()] =
        "g" + std::to_string(row[1].as_int()) + "/v" + std::to_string(row[2].as_int()) + "/" + row[3].as_text();
  }
  Evidence ev{id, "", "", "ok"};
  for (const auto& [ak, k] : s.keys) {
    if (k.key.scope_id != f[0] || k.key.window_type != f[1] || k.key.window_start_ms != std::stoll(f[2])) continue;
    const std::string mine = "g" + std::to_string(k.generation) + "/v" + std::to_string(k.version) + "/" +
                             k.value(o.cfg.suspicious_repeats).digest();
    ev.versions +=
        (ev.versions.empty() ? "" : ",") + ak + "/g" + std::to_string(k.generation) + "/v" + std::to_string(k.version);
    if (db[ak] != mine) ev.reconciliation = "mismatch " + ak;
  }
  for (const auto& [key, sp] : s.wm.sources) ev.offsets += key + "@" + std::to_string(sp.max_source_offset) + ";";
  ev.offsets = fnv_hex(ev.offsets);
  co_return std::move(ev);
}

// 004:L155, in the seed's order: the window is FINAL (committed), its checkpoint and archive
// evidence are saved, source offsets and aggregates are reconciled, and only then its dedup and
// window state go (the checkpoint without them, the window PURGED). False if a write failed.
Task<bool> purge(Sql& sql, const AggregatorOptions& o, int32_t partition, Partition& part) {
  std::vector<Evidence> ok;
  for (const std::string& id : purgeable(part.state.wm, o.wm)) {
    std::optional<Evidence> ev = co_await reconcile(sql, o, part.state, id);
    if (!ev) co_return true;  // unknown: try again after the next flush
    if (ev->reconciliation == "ok") ok.push_back(*ev);
  }
  if (ok.empty()) co_return true;
  const std::string checkpoint = cut_of(partition, part.state);
  std::vector<SqlStatement> archive;
  for (const Evidence& ev : ok) {
    archive.push_back(sql_statement(
        "INSERT OR REPLACE INTO window_archive (keyed_partition, window_id, input_watermark, "
        "offset_digest, final_versions, checkpoint_ref, reconciliation) VALUES (?, ?, ?, ?, ?, ?, ?)",
        partition, ev.id, part.state.wm.watermark, ev.offsets, ev.versions, checkpoint, ev.reconciliation));
  }
  if (!(co_await sql.transaction(std::move(archive))).ok()) co_return false;
  PartitionState next = part.state;
  for (const Evidence& ev : ok) {
    next.wm.windows[ev.id] = "PURGED";
    next.wm.pending.push_back(
        purged_row(partition, ev.id, next.wm.watermark, ev.offsets, ev.versions, checkpoint, ev.reconciliation));
    const int64_t end = window_end(ev.id);
    std::erase_if(next.keys, [&](const auto& kv) {
      const AggKey& k = kv.second.key;
      const bool gone = window_id(k.scope_id, k.window_type, k.window_start_ms, end) == ev.id;
      if (gone && o.incremental_checkpoints) next.erased_keys.insert(kv.first);
      return gone;
    });
  }
  next.reindex_dirty();  // purges follow a committed flush: normally no key is dirty
  CheckpointWrite written;
  if (!(co_await sql.transaction(flush_statements(o, partition, part.consumed_to, next, &written))).ok())
    co_return false;
  part.state = std::move(next);
  committed(part, std::move(written));
  co_return true;
}

// 004:L87: a copy stamped with an older mapping_activation_epoch than its scope's context is not
// accepted; the original event goes again, by its stable coordinates, into the current mapping's
// chain (the copy to send), or nullopt when the copy is current.
std::optional<Event> rerouted(const MergeView& view, const LogRecord& rec) {
  Event e = Event::decode(rec.value);
  auto m = view.find(e.get("scopeId"));
  const std::string epoch = e.get("mappingEpoch");
  if (m == view.end() || epoch.empty() || epoch.size() > 18 || std::stoll(epoch) >= m->second.epoch)
    return std::nullopt;
  const std::string p = e.get("sourcePartition"), o = e.get("sourceOffset");
  e.fields["topicId"] = owner_topic(m->second, e.get("topicId"), std::stoi("0" + p), std::stoll("0" + o), nullptr);
  e.fields["mappingVersion"] = m->second.mapping_version;
  e.fields["mappingEpoch"] = std::to_string(m->second.epoch);
  return e;
}

// Consumes until a flush fails; the caller then starts over from the checkpoints.
Task<void> consume(Runtime& rt, Sql& sql, Log& log, LogConsumer& in, const AggregatorOptions& o) {
  std::map<int32_t, Partition> parts;
  std::unique_ptr<LogProducer> reroute = o.merges ? log.producer(fl::ProducerOptions{}) : nullptr;
  for (;;) {
    PollResult p = co_await in.poll(100, 200'000);
    if (p.status != LogStatus::kOk) {
      co_await rt.clock().sleep_ms(100);
      continue;
    }
    for (const TopicPartition& tp : p.revoked) parts.erase(tp.partition);
    std::optional<MergeView> view;
    if (o.merges && !p.records.empty()) {
      view = co_await read_merge_view(sql);
      if (!view) co_return;
    }
    std::set<int32_t> touched;
    for (const LogRecord& rec : p.records) {
      if (!parts.count(rec.partition)) parts[rec.partition] = co_await load(rt, sql, log, o, rec.partition);
      Partition& part = parts[rec.partition];
      if (rec.offset < part.consumed_to) continue;  // already in the checkpoint
      if (std::optional<Event> again = view ? rerouted(*view, rec) : std::nullopt) {
        ProduceResult r = co_await reroute->produce(kKeyedTopic, again->get("topicId") + "|" + again->get("scopeId"),
                                                    again->encode());
        if (!r.ok()) co_return;  // the copy stays unconsumed: rebind from the checkpoints
        part.consumed_to = rec.offset + 1;
        touched.insert(rec.partition);
        continue;
      }
      apply(o, part.state, rec, rt.clock().now_us());
      part.consumed_to = rec.offset + 1;
      touched.insert(rec.partition);
    }
    if (o.wm.enabled) {
      for (auto& [partition, part] : parts) {
        if (mark_idle(part.state.wm, o.wm, partition, rt.clock().now_us())) touched.insert(partition);
      }
    }
    OffsetMap next;
    for (int32_t partition : touched) {
      Partition& part = parts[partition];
      CheckpointWrite written;
      SqlResult r = co_await sql.transaction(flush_statements(o, partition, part.consumed_to, part.state, &written));
      if (!r.ok()) co_return;  // fenced, refused or unknown: rebind from the checkpoints
      committed(part, std::move(written));
      if (o.wm.enabled && !(co_await purge(sql, o, partition, part))) co_return;
      next[TopicPartition{kKeyedTopic, partition}] = part.consumed_to;
    }
    if (!next.empty()) co_await in.commit(next);  // after the DB: at least once, and the state knows
  }
}

}  // namespace

Task<void> run_aggregator(Runtime& rt, Sql& sql, Log& log, AggregatorOptions o) {
  for (;;) {
    std::unique_ptr<LogConsumer> in = log.consumer(ConsumerOptions{.group = "aggregators",
                                                                   .client_id = std::string(rt.process_name()),
                                                                   .session_timeout_us = o.session_timeout_us});
    while ((co_await in->join({kKeyedTopic})).status != LogStatus::kOk) co_await rt.clock().sleep_ms(200);
    co_await consume(rt, sql, log, *in, o);
    co_await in->leave();
    co_await rt.clock().sleep_ms(100);
  }
}

}  // namespace fl::ranking
