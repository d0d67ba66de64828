// The gifts checkers, one per invariant family (GIFT-1..GIFT-11 of docs/invariants.md).
#pragma once

#include <string>
#include <vector>

#include "properties/gifts/run.h"
#include "properties/verdict.h"

namespace fl::gifts::props {

std::vector<PropertyInfo> gifts_properties();
std::vector<Verdict> check_gifts(const GiftsRun& run, const std::vector<std::string>& properties);

Verdict check_charge_once(const GiftsRun& run);         // GIFT-1
Verdict check_intent_once(const GiftsRun& run);         // GIFT-2
Verdict check_outcome(const GiftsRun& run);             // GIFT-3
Verdict check_outbox(const GiftsRun& run);              // GIFT-4
Verdict check_delivery(const GiftsRun& run);            // GIFT-5
Verdict check_batch_conservation(const GiftsRun& run);  // GIFT-6
Verdict check_lock(const GiftsRun& run);                // GIFT-7
Verdict check_play_once(const GiftsRun& run);           // GIFT-8
Verdict check_play_order(const GiftsRun& run);          // GIFT-9
Verdict check_expiry(const GiftsRun& run);              // GIFT-10
Verdict check_reconnect(const GiftsRun& run);           // GIFT-11

}  // namespace fl::gifts::props
