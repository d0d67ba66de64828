// The gifts clients, the world's edge: what they do and what they see is the history.
//
// Viewer (003:L78-86, L173-189, L206): joins a room through a gateway, pings it every second,
// reconnects (to the next gateway, reporting lastSeq) when the ping fails or at random, and plays
// pushed messages through a Player; it may switch rooms (leave, join another, Player reset; a
// message of a room it left is completed `dropped:left-room`). History: op `connect` (args `user= room= gw= lastSeq=`,
// result `seq=C`), op `deliver` per received message (args `msg= room= sender= gift= count= seq=
// ts=`), invoked on receipt and completed `played` (ok) or `dropped:<reason>` (fail) when the
// Player decides; a message still buffered at the end stays open.
// Sender (003:L41-45, L49, L105): single clicks, bursts of 10 clicks in 3 s, double taps; a fresh
// requestId per click (GF-TAP-SAME-REQUEST: a tap within 200 ms of the last on the same room and
// gift reuses its id); a timed-out attempt is retried with the same id after a delay (some > 10 s).
// History: op `send` (args `user= room= gift= count= req= intent=`), result `order=N` (ok),
// `duplicate` / `insufficient` (fail), or info (timeout, error).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "impl/gifts/fixes.h"
#include "impl/gifts/player.h"
#include "impl/ports/history.h"
#include "impl/ports/rpc.h"
#include "impl/ports/runtime.h"

namespace fl::gifts {

struct ViewerOptions {
  int64_t user = 0;
  std::string room;
  std::vector<std::string> gateways;  // service prefixes
  size_t first_gateway = 0;
  PlayerOptions player;
  int64_t ping_interval_us = 1'000'000;
  int64_t rpc_timeout_us = 500'000;
  double reconnects_per_min = 0;  // voluntary reconnects
  int64_t start_delay_us = 0;
  int64_t stop_reconnects_at_us = 0;  // no voluntary reconnects after (local time)
  // Room switching (003:L193): leave the room, join another of `rooms` (same gateway); the
  // Player starts over. Also stops at stop_reconnects_at_us.
  std::vector<std::string> rooms;
  double switches_per_min = 0;
};

Task<void> run_viewer(Runtime& rt, Rpc& rpc, Recorder& history, ViewerOptions options);

struct SenderOptions {
  int64_t user = 0;
  std::vector<std::string> rooms;
  std::vector<std::string> gifts;
  GiftFixes fixes = GiftFixes::spec();
  double actions_per_s = 0.5;
  int burst_percent = 30;
  int burst_min_clicks = 10;  // a burst is burst_min_clicks..10 clicks
  int double_tap_percent = 20;
  int max_retries = 2;
  int64_t timeout_us = 1'000'000;
  int64_t retry_delay_min_ms = 200;
  int64_t retry_delay_max_ms = 2000;
  int long_retry_percent = 0;  // retries delayed 10.5-13 s (past the dedup TTL)
  int64_t start_delay_us = 1'000'000;
  int64_t stop_at_us = 0;  // local time after which no new action starts
};

Task<void> run_sender(Runtime& rt, Rpc& rpc, Recorder& history, SenderOptions options);

}  // namespace fl::gifts
