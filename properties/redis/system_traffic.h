// Sequences of a seed system's own Redis traffic for the differential suite: the commands the
// system's services sent in a simulated run, replayed on both servers in new interleavings, with
// another client's interference on the same keys between them. So every script a system deploys
// runs, with the arguments and in the states the system gives it, on the simulated Redis and on a
// real redis-server, and every reply is compared (redis_diff.h).
//
// Contract
// - recorded_calls(log) keeps, in execution order, the commands clients sent (depth 0) that a
//   sequence can replay on a plain connection: (P|S)SUBSCRIBE and (P|S)UNSUBSCRIBE (a subscriber
//   connection runs nothing else) and connection-state commands (HELLO, AUTH, SELECT, CLIENT,
//   RESET, QUIT, MONITOR) are dropped; a read's BLOCK <ms> is removed (a step never parks a
//   connection; the generic suite's kBlockedRead covers blocked reads).
// - gen_traffic_sequence(pool, scripts, max_steps): SCRIPT LOAD of every script of `scripts` on
//   connection 0, then a window of consecutive calls of `pool` (consecutive, so that they share
//   the keys and states one run gave them; half the windows lead up to a call of a script drawn
//   uniformly from those the pool calls) re-interleaved: each recorded client keeps its own
//   order and its MULTI..EXEC (or DISCARD) blocks whole, and which client goes next is drawn.
//   Recorded clients share the kClients connections in order of first appearance. Between turns,
//   now and then, another client (connection kClients-1) interferes on a key the window's calls
//   name: DEL, PEXPIRE 1 then a 3 ms wait (the key expires), SET (the key changes type), or SCRIPT
//   FLUSH. Shrinking drops turns and interferences. REQUIRES: `pool` is not empty.
// - script_name(scripts, argv): which script an EVAL/EVALSHA runs.
// - keys_of(argv): the keys a command names (EVAL/EVALSHA's numkeys keys, MGET/DEL/EXISTS/... all
//   arguments, XREADGROUP's streams, else argv[1]); empty for commands without keys.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "impl/ports/redis_script.h"
#include "properties/redis/redis_diff.h"
#include "sim/redis/server.h"

namespace fl::redis_diff {

struct RecordedCall {
  std::string client;  // the calling process
  std::vector<std::string> argv;
};

std::vector<RecordedCall> recorded_calls(const sim::redis::CommandLog& log);

std::vector<std::string> keys_of(const std::vector<std::string>& argv);

// The name of the `scripts` script an EVAL/EVALSHA (or _RO) runs; empty for other commands and
// for scripts `scripts` does not hold.
std::string script_name(const ScriptRegistry& scripts, const std::vector<std::string>& argv);

rc::Gen<std::vector<Step>> gen_traffic_sequence(std::shared_ptr<const std::vector<RecordedCall>> pool,
                                                std::shared_ptr<const ScriptRegistry> scripts, int max_steps);

}  // namespace fl::redis_diff
