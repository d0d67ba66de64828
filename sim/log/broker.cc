#include "sim/log/broker.h"

#include <algorithm>

#include "sim/hash.h"
#include "impl/ports/assert.h"

namespace fl::sim::log {

int32_t partition_for_key(std::string_view key, int32_t partitions) {
  FL_ASSERT(partitions > 0);
  // A stable hash: the same key lands in the same partition in every process and run
  // (Kafka uses murmur2 of the key bytes for the same reason).
  return static_cast<int32_t>(stable_hash(key) % static_cast<uint64_t>(partitions));
}

Broker::Broker(BrokerConfig config) : config_(config) {}

// ---------------------------------------------------------------- time and crashes

void Broker::tick(int64_t now_us) {
  if (now_us > now_us_) now_us_ = now_us;
  evict_expired();
  expire_transactions();
  apply_retention();
  if (config_.half_check_interval_us > 0 && now_us_ - last_half_scan_us_ >= config_.half_check_interval_us) {
    last_half_scan_us_ = now_us_;
    scan_halves();
  }
  if (config_.broken_ack_before_sync && now_us_ - last_sync_us_ >= config_.sync_interval_us) {
    for (auto& [name, topic] : topics_)
      for (auto& p : topic.partitions) p.synced_end = p.end();
    last_sync_us_ = now_us_;
  }
}

void Broker::restart(int64_t now_us) {
  ++stats_.restarts;
  if (config_.broken_ack_before_sync) {
    // The broken mode acked before syncing: whatever was not synced is gone.
    for (auto& [name, topic] : topics_) {
      for (auto& p : topic.partitions) {
        while (p.end() > std::max(p.synced_end, p.start_offset)) {
          p.bytes -= static_cast<int64_t>(p.records.back().key.size() + p.records.back().value.size());
          p.records.pop_back();
        }
      }
    }
  }
  // Volatile state: membership (members rejoin, the generation counter survives) and open
  // transactions (aborted; a real coordinator would abort them on timeout).
  for (auto& [name, group] : groups_) {
    group.members.clear();
    group.target.clear();
    group.rebalancing = false;
  }
  for (auto& [id, txn] : transactions_) abort_transaction(txn);
  checkers_.clear();  // producers re-register; halves are durable
  due_checks_.clear();
  tick(now_us);
}

// ---------------------------------------------------------------- topics

LogStatus Broker::create_topic(const std::string& name, const TopicConfig& config) {
  if (config.partitions < 1 || name.empty()) return LogStatus::kInvalidArgument;
  auto it = topics_.find(name);
  if (it != topics_.end()) {
    return it->second.config.partitions == config.partitions ? LogStatus::kOk : LogStatus::kInvalidArgument;
  }
  Topic t;
  t.config = config;
  t.partitions.resize(static_cast<size_t>(config.partitions));
  topics_.emplace(name, std::move(t));
  return LogStatus::kOk;
}

int32_t Broker::partition_count(const std::string& topic) const {
  auto it = topics_.find(topic);
  return it == topics_.end() ? -1 : it->second.config.partitions;
}

std::vector<std::string> Broker::topics() const {
  std::vector<std::string> out;
  for (const auto& [name, t] : topics_) out.push_back(name);
  return out;
}

Broker::Partition* Broker::find_partition(const TopicPartition& tp) {
  auto it = topics_.find(tp.topic);
  if (it == topics_.end() || tp.partition < 0 || tp.partition >= it->second.config.partitions) return nullptr;
  return &it->second.partitions[static_cast<size_t>(tp.partition)];
}

const Broker::Partition* Broker::find_partition(const TopicPartition& tp) const {
  return const_cast<Broker*>(this)->find_partition(tp);
}

int64_t Broker::log_start_offset(const TopicPartition& tp) const {
  const Partition* p = find_partition(tp);
  return p ? p->start_offset : -1;
}

int64_t Broker::log_end_offset(const TopicPartition& tp) const {
  const Partition* p = find_partition(tp);
  return p ? p->end() : -1;
}

int64_t Broker::append(const TopicPartition& tp, std::string key, std::string value) {
  Partition* p = find_partition(tp);
  FL_ASSERT(p != nullptr);
  const int64_t offset = p->end();
  p->bytes += static_cast<int64_t>(key.size() + value.size());
  p->records.push_back(StoredRecord{offset, std::move(key), std::move(value), now_us_});
  if (tracking_appends_) appended_.emplace_back(tp, offset);
  // acked = synced: the default broker syncs before it answers.
  if (!config_.broken_ack_before_sync) p->synced_end = p->end();
  ++stats_.produced;
  FL_ASSERT(p->end() == offset + 1);
  return offset;
}

// ---------------------------------------------------------------- half messages

ProduceReply Broker::produce_half(const ProduceRequest& r, const std::string& producer_group, int64_t now_us) {
  tick(now_us);
  ProduceReply reply = route(r);
  if (reply.status != LogStatus::kOk) return reply;
  reply.half_id = next_half_id_++;
  halves_[reply.half_id] = Half{TopicPartition{r.topic, reply.partition}, r.key, r.value, producer_group, now_us_, 0};
  ++stats_.halves;
  return reply;
}

LogStatus Broker::end_half(int64_t half_id, fl::HalfResolution resolution, int64_t now_us) {
  tick(now_us);
  auto it = halves_.find(half_id);
  if (it == halves_.end()) return LogStatus::kNotInTransaction;
  if (resolution == fl::HalfResolution::kUnknown) return LogStatus::kOk;
  if (resolution == fl::HalfResolution::kCommit) {
    append(it->second.tp, std::move(it->second.key), std::move(it->second.value));
    ++stats_.halves_committed;
  } else {
    ++stats_.halves_rolled_back;
  }
  halves_.erase(it);
  return LogStatus::kOk;
}

void Broker::register_checker(const std::string& producer_group, const std::string& service, int64_t now_us) {
  tick(now_us);
  checkers_[producer_group].services[service] = now_us_;
}

std::vector<HalfCheckDue> Broker::take_half_checks() {
  std::vector<HalfCheckDue> out;
  out.swap(due_checks_);
  return out;
}

std::string Broker::pick_checker(const std::string& producer_group) {
  auto it = checkers_.find(producer_group);
  if (it == checkers_.end()) return "";
  std::vector<std::string> live;
  for (const auto& [service, heard_us] : it->second.services) {
    if (now_us_ - heard_us <= config_.checker_expiry_us) live.push_back(service);
  }
  if (live.empty()) return "";
  return live[it->second.cursor++ % live.size()];
}

// RocketMQ's TransactionalMessageCheckService: halves past the timeout are checked back, up to
// half_check_max times, then discarded.
void Broker::scan_halves() {
  for (auto it = halves_.begin(); it != halves_.end();) {
    Half& h = it->second;
    if (now_us_ - h.born_us < config_.half_check_timeout_us) {
      ++it;
      continue;
    }
    if (h.checks >= config_.half_check_max) {
      ++stats_.halves_discarded;
      it = halves_.erase(it);
      continue;
    }
    ++h.checks;
    ++stats_.half_checks;
    const std::string service = pick_checker(h.producer_group);
    if (!service.empty()) {
      due_checks_.push_back(HalfCheckDue{service, fl::HalfCheck{it->first, h.tp.topic, h.key, h.value, h.checks}});
    }
    ++it;
  }
}

// ---------------------------------------------------------------- producing

InitProducerReply Broker::init_producer(const std::string& transactional_id, int64_t now_us) {
  tick(now_us);
  InitProducerReply reply;
  if (transactional_id.empty()) {
    reply.producer_id = next_producer_id_++;
    reply.epoch = 0;
    producers_[reply.producer_id] = ProducerState{};
    return reply;
  }
  auto [it, fresh] = transactions_.try_emplace(transactional_id);
  Transaction& txn = it->second;
  if (fresh) {
    txn.producer_id = next_producer_id_++;
    txn.epoch = 0;
  } else {
    // initTransactions(): completes (here: aborts) what the previous producer left open and
    // fences it by bumping the epoch.
    abort_transaction(txn);
    ++txn.epoch;
  }
  producers_[txn.producer_id] = ProducerState{txn.epoch, {}};
  reply.producer_id = txn.producer_id;
  reply.epoch = txn.epoch;
  return reply;
}

LogStatus Broker::check_sequence(const ProduceRequest& r, const TopicPartition& tp, ProduceReply* reply) {
  auto pit = producers_.find(r.producer_id);
  if (pit == producers_.end()) return LogStatus::kInvalidArgument;  // UNKNOWN_PRODUCER_ID
  ProducerState& ps = pit->second;
  if (r.epoch < ps.epoch && !config_.broken_no_fencing) {
    ++stats_.fenced;
    return LogStatus::kProducerFenced;
  }
  if (config_.broken_no_dedup || r.sequence < 0) return LogStatus::kOk;
  SequenceState& ss = ps.sequences[tp];
  if (r.sequence <= ss.last_sequence) {
    // A retried send: answer with the first outcome ("deduplicates messages using a sequence
    // number", Kafka design.md).
    reply->duplicate = true;
    reply->offset = -1;
    for (const auto& [seq, offset] : ss.recent)
      if (seq == r.sequence) reply->offset = offset;
    ++stats_.duplicates;
    return LogStatus::kOk;
  }
  if (r.sequence != ss.last_sequence + 1) return LogStatus::kOutOfOrderSequence;
  return LogStatus::kOk;
}

void Broker::record_sequence(const ProduceRequest& r, const TopicPartition& tp, int64_t offset) {
  if (r.producer_id < 0 || r.sequence < 0) return;
  SequenceState& ss = producers_[r.producer_id].sequences[tp];
  ss.last_sequence = std::max(ss.last_sequence, r.sequence);
  ss.recent.emplace_back(r.sequence, offset);
  while (ss.recent.size() > kDedupWindow) ss.recent.pop_front();
}

ProduceReply Broker::route(const ProduceRequest& r) const {
  ProduceReply reply;
  const int32_t n = partition_count(r.topic);
  if (n < 0) {
    reply.status = LogStatus::kUnknownTopic;
    return reply;
  }
  reply.partition = r.partition < 0 ? partition_for_key(r.key, n) : r.partition;
  if (reply.partition >= n) reply.status = LogStatus::kInvalidArgument;
  return reply;
}

ProduceReply Broker::produce(const ProduceRequest& r, int64_t now_us) {
  tick(now_us);
  ProduceReply reply = route(r);
  if (reply.status != LogStatus::kOk) return reply;
  const TopicPartition tp{r.topic, reply.partition};
  Transaction* txn = nullptr;
  if (r.transactional) {
    for (auto& [id, t] : transactions_)
      if (t.producer_id == r.producer_id) txn = &t;
    if (txn == nullptr || r.producer_id < 0) {
      reply.status = LogStatus::kInvalidArgument;
      return reply;
    }
  }
  if (r.producer_id >= 0) {
    reply.status = check_sequence(r, tp, &reply);
    if (reply.status != LogStatus::kOk || reply.duplicate) return reply;
  }
  if (txn != nullptr) {
    // AddPartitionsToTxn: the first transactional send opens the transaction.
    if (!txn->open) {
      txn->open = true;
      txn->started_us = now_us_;
      txn->epoch = std::max(txn->epoch, r.epoch);
    }
    txn->pending.push_back(PendingRecord{tp, r.key, r.value});
    record_sequence(r, tp, -1);
    return reply;
  }
  reply.offset = append(tp, r.key, r.value);
  record_sequence(r, tp, reply.offset);
  return reply;
}

void Broker::abort_transaction(Transaction& txn) {
  if (!txn.open) return;
  txn.open = false;
  txn.pending.clear();
  ++stats_.txn_aborted;
}

LogStatus Broker::end_transaction(const std::string& transactional_id, int64_t producer_id, int32_t epoch, bool commit,
                                  const fl::TxnOffsets& offsets, int64_t now_us) {
  tick(now_us);
  auto it = transactions_.find(transactional_id);
  if (it == transactions_.end() || it->second.producer_id != producer_id) return LogStatus::kInvalidArgument;
  Transaction& txn = it->second;
  if (epoch < txn.epoch && !config_.broken_no_fencing) {
    ++stats_.fenced;
    return LogStatus::kProducerFenced;
  }
  if (!commit) {
    abort_transaction(txn);
    return LogStatus::kOk;
  }
  if (!offsets.group.empty()) {
    auto git = groups_.find(offsets.group);
    LogStatus s = commit_offsets(git == groups_.end() ? nullptr : &git->second, offsets.member_id, offsets.generation,
                                 offsets.offsets);
    if (s != LogStatus::kOk) {
      abort_transaction(txn);
      return s;
    }
  }
  for (auto& rec : txn.pending) append(rec.tp, std::move(rec.key), std::move(rec.value));
  txn.pending.clear();
  if (txn.open) ++stats_.txn_committed;
  txn.open = false;
  return LogStatus::kOk;
}

void Broker::expire_transactions() {
  for (auto& [id, txn] : transactions_) {
    if (txn.open && now_us_ - txn.started_us > config_.transaction_timeout_us) {
      // KIP-588: the coordinator aborts and bumps the epoch, fencing a producer that was only
      // paused.
      abort_transaction(txn);
      ++txn.epoch;
      producers_[txn.producer_id].epoch = txn.epoch;
    }
  }
}

// ---------------------------------------------------------------- reading

FetchReply Broker::fetch(const TopicPartition& tp, int64_t offset, size_t max_records) const {
  FetchReply reply;
  const Partition* p = find_partition(tp);
  if (p == nullptr) {
    reply.status = LogStatus::kUnknownTopic;
    return reply;
  }
  reply.start_offset = std::clamp(offset, p->start_offset, p->end());
  for (int64_t o = reply.start_offset; o < p->end() && reply.records.size() < max_records; ++o) {
    const StoredRecord& s = p->records[static_cast<size_t>(o - p->start_offset)];
    FL_ASSERT(s.offset == o);
    reply.records.push_back(LogRecord{tp.topic, tp.partition, o, s.key, s.value, s.timestamp_us});
  }
  if (config_.broken_fetch_reversed) std::reverse(reply.records.begin(), reply.records.end());
  return reply;
}

void Broker::apply_retention() {
  for (auto& [name, topic_ref] : topics_) {
    const TopicConfig& cfg = topic_ref.config;
    for (auto& p : topic_ref.partitions) {
      auto expired = [&] {
        if (p.records.empty()) return false;
        const StoredRecord& head = p.records.front();
        if (cfg.retention_us >= 0 && head.timestamp_us < now_us_ - cfg.retention_us) return true;
        return cfg.retention_bytes >= 0 && p.bytes > cfg.retention_bytes;
      };
      while (expired()) {
        p.bytes -= static_cast<int64_t>(p.records.front().key.size() + p.records.front().value.size());
        p.records.pop_front();
        ++p.start_offset;
        ++stats_.retained_away;
      }
      p.synced_end = std::max(p.synced_end, p.start_offset);
    }
  }
}

// ---------------------------------------------------------------- groups

JoinReply Broker::join(const std::string& group_name, const std::string& client_id,
                       const std::vector<std::string>& topics, RebalanceProtocol protocol, int64_t session_timeout_us,
                       int64_t now_us) {
  tick(now_us);
  JoinReply reply;
  if (group_name.empty() || topics.empty() || session_timeout_us <= 0) {
    reply.status = LogStatus::kInvalidArgument;
    return reply;
  }
  for (const auto& t : topics) {
    if (partition_count(t) < 0) {
      reply.status = LogStatus::kUnknownTopic;
      return reply;
    }
  }
  Group& group = groups_[group_name];
  if (group.members.empty()) group.protocol = protocol;
  Member m;
  m.client_id = client_id;
  m.topics = topics;
  std::sort(m.topics.begin(), m.topics.end());
  m.topics.erase(std::unique(m.topics.begin(), m.topics.end()), m.topics.end());
  m.session_timeout_us = session_timeout_us;
  m.last_seen_us = now_us_;
  reply.member_id = client_id + "-" + std::to_string(group.next_member++);
  group.members.emplace(reply.member_id, std::move(m));
  rebalance(group);
  reply.generation = group.generation;
  return reply;
}

void Broker::rebalance(Group& group) {
  ++group.generation;
  ++stats_.rebalances;
  compute_target(group);
  if (group.protocol == RebalanceProtocol::kEager && !config_.broken_handoff) {
    // EAGER "requires a consumer to always revoke all its owned partitions before participating
    // in a rebalance": nobody owns anything until every member has rejoined.
    for (auto& [id, m] : group.members) {
      m.owned.clear();
      m.rejoined = false;
    }
    group.rebalancing = !group.members.empty();
  }
}

void Broker::compute_target(Group& group) {
  // Sticky round-robin per topic: a partition keeps its previous target owner while that member
  // is still subscribed and under quota; the rest go to the least-loaded member (ties: id).
  std::map<TopicPartition, std::string> previous = std::move(group.target);
  group.target.clear();
  std::set<std::string> topics;
  for (const auto& [id, m] : group.members) topics.insert(m.topics.begin(), m.topics.end());
  for (const std::string& topic : topics) {
    std::vector<std::string> eligible;
    for (const auto& [id, m] : group.members)
      if (std::binary_search(m.topics.begin(), m.topics.end(), topic)) eligible.push_back(id);
    const int32_t n = partition_count(topic);
    const size_t quota = (static_cast<size_t>(n) + eligible.size() - 1) / eligible.size();
    std::map<std::string, size_t> load;
    for (const auto& id : eligible) load[id] = 0;
    std::vector<TopicPartition> unassigned;
    for (int32_t p = 0; p < n; ++p) {
      TopicPartition tp{topic, p};
      auto prev = previous.find(tp);
      if (prev != previous.end() && load.count(prev->second) && load[prev->second] < quota) {
        group.target[tp] = prev->second;
        ++load[prev->second];
      } else {
        unassigned.push_back(tp);
      }
    }
    for (const auto& tp : unassigned) {
      auto best = std::min_element(load.begin(), load.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;  // min_element keeps the first (smallest id) among ties
      });
      group.target[tp] = best->first;
      ++best->second;
    }
  }
}

bool Broker::owned_by_other(const Group& group, const std::string& member_id, const TopicPartition& tp) const {
  for (const auto& [id, m] : group.members)
    if (id != member_id && m.owned.count(tp)) return true;
  return false;
}

void Broker::sync_member(Group& group, const std::string& member_id, Member& member) {
  // Release what moved away (the cooperative first step), then take what is ours and free.
  for (auto it = member.owned.begin(); it != member.owned.end();) {
    auto t = group.target.find(*it);
    if (t == group.target.end() || t->second != member_id) {
      it = member.owned.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [tp, owner] : group.target) {
    if (owner != member_id || member.owned.count(tp)) continue;
    if (owned_by_other(group, member_id, tp) && !config_.broken_handoff) continue;
    member.owned.insert(tp);
  }
}

std::vector<LogRecord> Broker::read_owned(Group& group, Member& member, const OffsetMap& positions, size_t max_records,
                                          OffsetMap* next_positions) {
  std::vector<TopicPartition> owned(member.owned.begin(), member.owned.end());
  for (const auto& tp : owned) {
    auto pos = positions.find(tp);
    int64_t start;
    if (pos != positions.end()) {
      start = pos->second;
    } else if (config_.broken_resume_at_end) {
      start = log_end_offset(tp);
    } else {
      auto c = group.committed.find(tp);
      start = c != group.committed.end() ? c->second : log_start_offset(tp);
    }
    (*next_positions)[tp] = std::clamp(start, log_start_offset(tp), log_end_offset(tp));
  }
  std::vector<LogRecord> out;
  if (owned.empty()) return out;
  // Round-robin over partitions so one busy partition cannot starve the others.
  for (size_t i = 0; i < owned.size() && out.size() < max_records; ++i) {
    const TopicPartition& tp = owned[(member.cursor + i) % owned.size()];
    FetchReply f = fetch(tp, (*next_positions)[tp], max_records - out.size());
    for (auto& r : f.records) out.push_back(std::move(r));
    (*next_positions)[tp] = f.start_offset + static_cast<int64_t>(f.records.size());
  }
  member.cursor = (member.cursor + 1) % owned.size();
  stats_.fetched += out.size();
  return out;
}

PollReply Broker::poll(const std::string& group_name, const std::string& member_id, const OffsetMap& positions,
                       size_t max_records, int64_t now_us) {
  tick(now_us);
  PollReply reply;
  auto git = groups_.find(group_name);
  if (git == groups_.end() || !git->second.members.count(member_id)) {
    reply.status = LogStatus::kUnknownMember;
    return reply;
  }
  Group& group = git->second;
  Member& member = group.members.at(member_id);
  member.last_seen_us = now_us_;
  reply.generation = group.generation;
  if (group.rebalancing) {
    member.rejoined = true;
    bool all = true;
    for (const auto& [id, m] : group.members) all = all && m.rejoined;
    if (!all) {
      reply.status = LogStatus::kRebalanceInProgress;
      return reply;
    }
    group.rebalancing = false;
  }
  sync_member(group, member_id, member);
  reply.records = read_owned(group, member, positions, max_records, &reply.positions);
  reply.assignment.assign(member.owned.begin(), member.owned.end());
  return reply;
}

LogStatus Broker::heartbeat(const std::string& group_name, const std::string& member_id, int64_t now_us) {
  tick(now_us);
  auto git = groups_.find(group_name);
  if (git == groups_.end() || !git->second.members.count(member_id)) return LogStatus::kUnknownMember;
  git->second.members.at(member_id).last_seen_us = now_us_;
  return git->second.rebalancing ? LogStatus::kRebalanceInProgress : LogStatus::kOk;
}

LogStatus Broker::leave(const std::string& group_name, const std::string& member_id, int64_t now_us) {
  tick(now_us);
  auto git = groups_.find(group_name);
  if (git == groups_.end() || git->second.members.erase(member_id) == 0) return LogStatus::kUnknownMember;
  rebalance(git->second);
  return LogStatus::kOk;
}

void Broker::evict_expired() {
  for (auto& [name, group] : groups_) {
    bool changed = false;
    for (auto it = group.members.begin(); it != group.members.end();) {
      if (now_us_ - it->second.last_seen_us > it->second.session_timeout_us) {
        // "the broker will remove this consumer from the group and initiate a rebalance"; the
        // evicted process itself is not told and keeps running (a zombie).
        it = group.members.erase(it);
        ++stats_.evictions;
        changed = true;
      } else {
        ++it;
      }
    }
    if (changed) rebalance(group);
  }
}

LogStatus Broker::commit_offsets(Group* group, const std::string& member_id, int64_t generation,
                                 const OffsetMap& next_offsets) {
  ++stats_.commits;
  const bool valid = group != nullptr && group->members.count(member_id) && generation == group->generation;
  if (!valid && !config_.broken_no_generation_check) {
    // CommitFailedException: "group has already rebalanced and assigned the partitions to
    // another member".
    ++stats_.commits_rejected;
    return LogStatus::kCommitFailed;
  }
  if (group == nullptr) return LogStatus::kCommitFailed;
  for (const auto& [tp, offset] : next_offsets) {
    if (find_partition(tp) == nullptr || offset < 0) return LogStatus::kInvalidArgument;
  }
  for (const auto& [tp, offset] : next_offsets) group->committed[tp] = offset;
  return LogStatus::kOk;
}

LogStatus Broker::commit(const std::string& group_name, const std::string& member_id, int64_t generation,
                         const OffsetMap& next_offsets, int64_t now_us) {
  tick(now_us);
  auto git = groups_.find(group_name);
  Group* group = git == groups_.end() ? nullptr : &git->second;
  if (group != nullptr && group->members.count(member_id)) group->members.at(member_id).last_seen_us = now_us_;
  return commit_offsets(group, member_id, generation, next_offsets);
}

// ---------------------------------------------------------------- introspection

std::optional<int64_t> Broker::committed(const std::string& group, const TopicPartition& tp) const {
  auto git = groups_.find(group);
  if (git == groups_.end()) return std::nullopt;
  auto it = git->second.committed.find(tp);
  if (it == git->second.committed.end()) return std::nullopt;
  return it->second;
}

int64_t Broker::generation(const std::string& group) const {
  auto git = groups_.find(group);
  return git == groups_.end() ? -1 : git->second.generation;
}

std::vector<std::string> Broker::members(const std::string& group) const {
  std::vector<std::string> out;
  auto git = groups_.find(group);
  if (git != groups_.end())
    for (const auto& [id, m] : git->second.members) out.push_back(id);
  return out;
}

std::map<std::string, std::vector<TopicPartition>> Broker::owners(const std::string& group) const {
  std::map<std::string, std::vector<TopicPartition>> out;
  auto git = groups_.find(group);
  if (git == groups_.end()) return out;
  for (const auto& [id, m] : git->second.members)
    if (!m.owned.empty()) out[id].assign(m.owned.begin(), m.owned.end());
  return out;
}

std::vector<TopicPartition> Broker::group_partitions(const std::string& group) const {
  std::set<std::string> topics;
  auto git = groups_.find(group);
  if (git != groups_.end())
    for (const auto& [id, m] : git->second.members) topics.insert(m.topics.begin(), m.topics.end());
  std::vector<TopicPartition> out;
  for (const auto& t : topics)
    for (int32_t p = 0; p < partition_count(t); ++p) out.push_back({t, p});
  return out;
}

bool Broker::rebalancing(const std::string& group) const {
  auto git = groups_.find(group);
  return git != groups_.end() && git->second.rebalancing;
}

int32_t Broker::transactional_epoch(const std::string& transactional_id) const {
  auto it = transactions_.find(transactional_id);
  return it == transactions_.end() ? -1 : it->second.epoch;
}

}  // namespace fl::sim::log
