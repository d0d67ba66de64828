// What the COMBO checkers share (internal to properties/combo; callers include combo_checks.h):
// the Judge that builds a Verdict, the wording of times and records in evidence, the Redis and DB
// losses that excuse a finding, each key's view of the run and its fit to the windows of the
// definition (000:L39), and the memo check_combo shares them through (ComboRun::memo).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "properties/combo/combo_run.h"
#include "properties/common/judge.h"
#include "properties/verdict.h"

namespace fl::combo::detail {

using model::combo::Fit;
using model::combo::FitOptions;
using model::combo::Key;
using model::combo::ObservedRecord;
using model::combo::Purchase;

using fl::props::Judge;

// `us` as milliseconds since the run began ("1234ms"), for evidence.
std::string t(int64_t us);
// A record as evidence names it (ContributionRecord::describe).
std::string rec(const ContributionRecord& r);
// pid -> its purchase in `ps` (the last one, where a pid was handed out twice).
std::map<int64_t, const Purchase*> purchase_by_pid(const std::vector<Purchase>& ps);

// The earliest invocation of a purchase of `key` with `pid`: a DB power loss may hand a pid out
// again, to this key or another, so a pid alone does not name the purchase that opened a window.
std::optional<int64_t> earliest_lo(const std::vector<Purchase>& ps, const Key& key, int64_t pid);

// The Redis restart that may have lost this interval's writes, described (nullopt: none).
// `while_down`: whether the interval may also fall inside the outage (a record published after the
// restart from restored state); a purchase made while Redis was down lost nothing, it failed.
// `key`: the windows at stake (an eviction touches its own key's windows only; nullptr: any).
std::optional<std::string> redis_loss(const ComboRun& run, int64_t from_us, int64_t to_us, bool while_down = true,
                                      const Key* key = nullptr);

// An eviction of a key of `key`'s windows within [from_us, to_us], described (nullopt: none).
std::optional<std::string> eviction_in(const ComboRun& run, const Key& key, int64_t from_us, int64_t to_us);

// The Redis loss that may have left a record of `key` (its id's purchase at `first_us`, published
// at `to_us`) built on partial or re-made state, described (nullopt: none): a restart within reach,
// or an eviction of its key from one window before `first_us` on, since a hash re-made after an
// eviction names a later member as its first (seed 259 of explore-hardened-eviction).
std::optional<std::string> record_state_loss(const ComboRun& run, const Key& key, int64_t first_us, int64_t to_us);

// A DB file left damaged by a power loss its storage settings do not protect against (SQLite
// keeps no integrity promise with synchronous=OFF, no journal, or a disk that lies about fsync):
// what the DB held is unknowable, and the service cannot finish what needs the DB (bind, flush).
std::optional<std::string> db_corruption(const ComboRun& run);

// Everything the window judges need for one key: its purchases (time intervals from the
// history) and the records observed for it. A purchase or record within reach of a Redis data
// loss is made optional / left out (COMBO-2's precondition), and counted as exempt.
struct KeyView {
  std::vector<Purchase> purchases;
  std::vector<ObservedRecord> records;  // published (with PUBLISH times)
  std::vector<const PublishObs*> publishes;
  // How far a clock fault within reach widened each purchase's interval each way (parallel to
  // `purchases`; 0: not widened), and one reason per widened purchase or record (a record's own
  // widening is its slack_us). A widening excuses something only where a fit needed it
  // (judge_view_fit), so these are counted there, not with the view's other exemptions.
  std::vector<int64_t> purchase_widen_us;
  std::vector<std::string> widened;
  // The key's totals before the pid-clash rule (unjudge_pid_clashes in judge_support.cc): a pid the
  // DB handed out twice makes a window's id ambiguous, never how much the key bought or how much
  // was published for it, so COMBO-2 judges these. Redis losses and clock faults are applied.
  struct Totals {
    int64_t bought_all = 0, bought_certain = 0;   // Σ qty of every purchase / of the non-optional ones
    int64_t published = 0, published_strict = 0;  // Σ quantity of every record / of the judged ones
  };
  Totals totals;
};

// The views of every key of a run, with what they left out or made optional (reason, count).
struct Views {
  using Counts = std::vector<std::pair<std::string, int64_t>>;  // (reason, count)
  std::map<Key, KeyView> keys;
  Counts exempt;
  Counts clash_exempt;  // what the pid-clash rule made optional or left out (not in KeyView::totals)
  static void count(Counts& c, const std::string& why) {
    for (auto& [r, n] : c) {
      if (r == why) {
        ++n;
        return;
      }
    }
    c.emplace_back(why, 1);
  }
  void exempt_one(const std::string& why) { count(exempt, why); }
  void clash_exempt_one(const std::string& why) { count(clash_exempt, why); }
};
// The views' exemptions (reason, count), added to `j`'s verdict; the clock widenings are not among
// them (judge_view_fit counts those). `with_clashes`: also the pid-clash rule's (false for a judge
// of KeyView::totals, which that rule does not touch).
void add_exemptions(Judge& j, const Views& v, bool with_clashes = true);

// fit_windows for one key, with an evidence line when it fails.
struct KeyFit {
  Fit fit;
  std::string why;
  std::vector<std::string> jumps;  // the forward clock jumps of FitOptions::jumps, described
};
// fit_windows of `records` against `key`'s purchases in `k` (window and Redis lock cuts filled in
// from the run); `why` says what failed when no assignment fits.
KeyFit fit_key(const ComboRun& run, const Key& key, const KeyView& k, const std::vector<ObservedRecord>& records,
               FitOptions o);
// `f` judged into `j`: an inconclusive search exempt, a failed one evidence (`f.why`), the windows
// a Redis restart or a forward clock jump cut short exempt.
void judge_fit(Judge& j, const KeyFit& f);
// `k` as it was before the clock widenings: purchases at their observed intervals, records with
// no slack (`records` stand for k.records: a check may add polled or displayed ones).
KeyView unwidened(const KeyView& k);
std::vector<ObservedRecord> unwidened(std::vector<ObservedRecord> records);
// judge_fit of `f`, the fit of `records` against `k` with options `o`, and `k`'s clock widenings
// (each distinct reason once) counted as exempt when the verdict needed them: `f` found windows
// and the same fit on the unwidened times finds none (a widening that changed nothing excuses
// nothing). A key's widenings count at most once per property: `counted` holds the keys done.
void judge_view_fit(Judge& j, const ComboRun& run, const Key& key, const KeyView& k,
                    const std::vector<ObservedRecord>& records, const FitOptions& o, const KeyFit& f,
                    std::set<Key>& counted);
// The run's views: the memo's while check_combo runs, else derived for this checker alone.
std::shared_ptr<const Views> shared_views(const ComboRun& run);
// fit_key of `key`'s own published records with no options; `k` is its view in shared_views().
KeyFit base_fit(const ComboRun& run, const Key& key, const KeyView& k);

}  // namespace fl::combo::detail

namespace fl::combo {

// What the checkers share while check_combo runs them (ComboRun::memo): the views of the run's
// keys, and each key's fit of its published records with no options (COMBO-3's fit, which
// COMBO-4, -10, -11 and -13 also take as their gate).
struct ComboMemo {
  std::shared_ptr<const detail::Views> views;
  std::map<detail::Key, detail::KeyFit> base_fits;
};

}  // namespace fl::combo
