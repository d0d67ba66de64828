// How Redis 7.0 answers a client that chose RESP3 (HELLO 3), given the RESP2 reply the engine
// computed for the same command. Redis writes one reply for both protocols and lets the protocol
// pick the type (addReplyMapLen, addReplySetLen, addReplyDouble, addReplyVerbatim) and, for a few
// commands, the nesting (`c->resp > 2`): this file is that table, in one place, so that command
// code stays protocol-free.
//
// Contract
// - shape_for_resp3(argv, reply) sets RedisReply::resp3 on the reply and its elements, and
//   re-nests the replies whose RESP3 shape differs: WITHSCORES / WITHVALUES results become pairs
//   (`[[member, score], ...]`, scores as doubles), XREAD/XREADGROUP a map of stream -> entries.
//   Errors and nils are left alone (the encoder writes nil as `_`).
// - Pure: it reads nothing but its arguments. RESP2 clients never see its result.
// - EXEC's elements are shaped by the engine, each with its queued argv; a script's reply is not
//   shaped (Lua tables convert to arrays whatever the caller's protocol).
#pragma once

#include <string>
#include <vector>

#include "impl/ports/redis_reply.h"

namespace fl::sim::redis {

void shape_for_resp3(const std::vector<std::string>& argv, RedisReply* reply);

}  // namespace fl::sim::redis
