#include "sim/log/server.h"

#include "impl/ports/text.h"
#include "impl/ports/assert.h"

namespace fl::sim::log {

namespace {

// "{topic/partition:offset,...}", appended (TopicPartition::describe() for each key).
template <typename Out>
void append_offsets(Out& out, const OffsetMap& offsets) {
  out += '{';
  bool first = true;
  for (const auto& [tp, o] : offsets) {
    if (!first) out += ',';
    first = false;
    out += tp.topic;
    out += '/';
    append_decimal(out, tp.partition);
    out += ':';
    append_decimal(out, o);
  }
  out += '}';
}

const char* kind_name(LogRequest::Kind k) {
  switch (k) {
    case LogRequest::Kind::kMetadata:
      return "metadata";
    case LogRequest::Kind::kInitProducer:
      return "init_producer";
    case LogRequest::Kind::kProduce:
      return "produce";
    case LogRequest::Kind::kEndTxn:
      return "end_txn";
    case LogRequest::Kind::kJoin:
      return "join";
    case LogRequest::Kind::kPoll:
      return "poll";
    case LogRequest::Kind::kHeartbeat:
      return "heartbeat";
    case LogRequest::Kind::kLeave:
      return "leave";
    case LogRequest::Kind::kCommit:
      return "commit";
    case LogRequest::Kind::kProduceHalf:
      return "produce_half";
    case LogRequest::Kind::kEndHalf:
      return "end_half";
    case LogRequest::Kind::kRegisterChecker:
      return "register_checker";
  }
  return "?";
}

}  // namespace

namespace {

// Appends each piece (a char or a string) to `out`.
template <typename Out, typename... Pieces>
void put(Out& out, const Pieces&... pieces) {
  ((out += pieces), ...);
}

// The one renderer of a request's description, for text and for its digest (every poll and
// produce crosses the network, which digests it).
template <typename Out>
void append_request(Out& out, const LogRequest& r) {
  using Kind = LogRequest::Kind;
  out += kind_name(r.kind);
  switch (r.kind) {
    case Kind::kMetadata:
      put(out, ' ', r.topic);
      return;
    case Kind::kInitProducer:
      put(out, " txn=", r.transactional_id);
      return;
    case Kind::kProduce:
      put(out, ' ', r.produce.topic, " key=", r.produce.key, " pid=");
      append_decimal(out, r.produce.producer_id);
      out += " epoch=";
      append_decimal(out, r.produce.epoch);
      out += " seq=";
      append_decimal(out, r.produce.sequence);
      if (r.produce.transactional) out += " txn";
      return;
    case Kind::kEndTxn:
      put(out, ' ', r.transactional_id, " epoch=");
      append_decimal(out, r.epoch);
      put(out, r.commit ? " commit" : " abort", " offsets=");
      append_offsets(out, r.txn_offsets.offsets);
      return;
    case Kind::kJoin:
      put(out, ' ', r.group, " client=", r.client_id);
      return;
    case Kind::kPoll:
      put(out, ' ', r.group, ' ', r.member_id, " at=");
      append_offsets(out, r.offsets);
      return;
    case Kind::kCommit:
      put(out, ' ', r.group, ' ', r.member_id, " gen=");
      append_decimal(out, r.generation);
      out += ' ';
      append_offsets(out, r.offsets);
      return;
    case Kind::kProduceHalf:
      put(out, ' ', r.produce.topic, " key=", r.produce.key, " group=", r.producer_group);
      return;
    case Kind::kEndHalf:
      out += " id=";
      append_decimal(out, r.half_id);
      put(out, ' ', fl::half_resolution_name(r.resolution));
      return;
    case Kind::kRegisterChecker:
      put(out, ' ', r.producer_group, ' ', r.check_service);
      return;
    default:
      put(out, ' ', r.group, ' ', r.member_id);
      return;
  }
}

}  // namespace

std::string LogRequest::describe() const {
  std::string out;
  append_request(out, *this);
  return out;
}

void LogRequest::describe_to(StableHasher& out) const { append_request(out, *this); }

std::string LogReply::describe() const {
  std::string out = log_status_name(status);
  if (produce.half_id >= 0) out += " half=" + std::to_string(produce.half_id);
  if (produce.offset >= 0) out += " offset=" + std::to_string(produce.partition) + "@" + std::to_string(produce.offset);
  if (join.generation >= 0) out += " member=" + join.member_id + " gen=" + std::to_string(join.generation);
  if (poll.generation >= 0)
    out += " gen=" + std::to_string(poll.generation) + " records=" + std::to_string(poll.records.size());
  return out;
}

LogReply handle_log_request(Broker& b, const LogRequest& r, int64_t now_us) {
  LogReply reply;
  switch (r.kind) {
    case LogRequest::Kind::kMetadata:
      b.tick(now_us);
      reply.partitions = b.partition_count(r.topic);
      reply.status = reply.partitions < 0 ? LogStatus::kUnknownTopic : LogStatus::kOk;
      break;
    case LogRequest::Kind::kInitProducer:
      reply.init = b.init_producer(r.transactional_id, now_us);
      reply.status = reply.init.status;
      break;
    case LogRequest::Kind::kProduce:
      reply.produce = b.produce(r.produce, now_us);
      reply.status = reply.produce.status;
      break;
    case LogRequest::Kind::kEndTxn:
      reply.status = b.end_transaction(r.transactional_id, r.producer_id, r.epoch, r.commit, r.txn_offsets, now_us);
      break;
    case LogRequest::Kind::kJoin:
      reply.join = b.join(r.group, r.client_id, r.topics, r.protocol, r.session_timeout_us, now_us);
      reply.status = reply.join.status;
      break;
    case LogRequest::Kind::kPoll:
      reply.poll = b.poll(r.group, r.member_id, r.offsets, r.max_records, now_us);
      reply.status = reply.poll.status;
      break;
    case LogRequest::Kind::kHeartbeat:
      reply.status = b.heartbeat(r.group, r.member_id, now_us);
      break;
    case LogRequest::Kind::kLeave:
      reply.status = b.leave(r.group, r.member_id, now_us);
      break;
    case LogRequest::Kind::kCommit:
      reply.status = b.commit(r.group, r.member_id, r.generation, r.offsets, now_us);
      break;
    case LogRequest::Kind::kProduceHalf:
      reply.produce = b.produce_half(r.produce, r.producer_group, now_us);
      reply.status = reply.produce.status;
      break;
    case LogRequest::Kind::kEndHalf:
      reply.status = b.end_half(r.half_id, r.resolution, now_us);
      break;
    case LogRequest::Kind::kRegisterChecker:
      b.register_checker(r.producer_group, r.check_service, now_us);
      break;
  }
  return reply;
}

BrokerServer::BrokerServer(BrokerConfig config, std::string service, int64_t tick_interval_us)
    : broker_(config), service_(std::move(service)), tick_interval_us_(tick_interval_us) {
  FL_ASSERT(tick_interval_us_ > 0);
  broker_.track_appends();  // for append_times()
}

void BrokerServer::note_read(const LogRequest& request, const PollReply& reply, int64_t now_us) {
  ServedRead read{now_us, request.caller, request.group, {}};
  for (const LogRecord& rec : reply.records) {
    ServedRead::Range* last = nullptr;
    for (ServedRead::Range& r : read.ranges) {
      if (r.topic == rec.topic && r.partition == rec.partition && r.to == rec.offset) last = &r;
    }
    if (last != nullptr) {
      ++last->to;
    } else {
      read.ranges.push_back(ServedRead::Range{rec.topic, rec.partition, rec.offset, rec.offset + 1});
    }
  }
  served_reads_.push_back(std::move(read));
}

BootFn BrokerServer::boot_fn() {
  return [this](Process& p) { return boot(p); };
}

Task<MessagePtr> BrokerServer::serve_one(BrokerServer* self, Process* p, MessagePtr request) {
  const LogRequest* r = message_as<LogRequest>(request);
  LogReply reply;
  if (r == nullptr) {
    reply.status = LogStatus::kInvalidArgument;
  } else {
    // Only what this request appends is timed here; Broker::append is reached only from requests.
    self->broker_.take_appended();
    reply = handle_log_request(self->broker_, *r, p->clock().now_us());
    for (const auto& [tp, offset] : self->broker_.take_appended()) {
      self->append_times_[AppendKey{tp.topic, tp.partition, offset}] = p->world().now_us();
    }
    if (self->tracking_reads_ && r->kind == LogRequest::Kind::kPoll && !reply.poll.records.empty()) {
      self->note_read(*r, reply.poll, p->world().now_us());
    }
  }
  co_return make_message(std::move(reply));
}

Task<void> BrokerServer::boot(Process& p) {
  // A restart: the broker recovers from its "disk" (acked = synced), membership is gone.
  if (p.incarnation() > 1) broker_.restart(p.clock().now_us());
  BrokerServer* self = this;
  Process* proc = &p;
  p.rpc().serve(service_, [self, proc](MessagePtr request) { return serve_one(self, proc, std::move(request)); });
  for (;;) {
    co_await p.clock().sleep_us(tick_interval_us_);
    broker_.tick(p.clock().now_us());
    for (HalfCheckDue& due : broker_.take_half_checks()) p.rpc().send(due.service, make_message(std::move(due.check)));
  }
}

}  // namespace fl::sim::log
