// The statistics of a run as one tree that the model's blocks fill. Each block adds named,
// unit-carrying statistics to its own group: a NeuronCore to an element of `cores`
// (cores.0.engines.tensor.active_ns), the memory system to `memory_system`, each HBM target to
// its element of `memory_system.hbm.stacks` (memory_system.hbm.stacks.2.read_bytes), the
// collective model to `collectives`. One renderer, to_json(), turns the tree into the JSON
// document `trnsim run --json` prints (docs/outputs.md), so a new block's statistics appear
// there without changes to the reporting code.
//
// A statistic's name carries its unit as a suffix (`active_ns`, `read_bytes`, `row_hit_pct`),
// or the bare unit is the name (`bytes`), or its group's name carries it (the values of
// `dependency_wait_by_producer_ns`): add() checks it, so the key names of the JSON document
// always say the unit. Counts, identifiers and text have no suffix.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace trnsim::stats {

enum class Unit : std::uint8_t {
  kCount,    ///< a number of things: instructions, requests, FLOP, transfers
  kIndex,    ///< an identifier or a list of them: a core's pid, a queue, the cores of a stack
  kText,     ///< a name or a sentence
  kNs,       ///< nanoseconds, suffix _ns
  kUs,       ///< microseconds, suffix _us
  kBytes,    ///< bytes, suffix _bytes
  kPercent,  ///< percent (0..100, or more for an over-subscribed resource), suffix _pct
  kGbps,     ///< GB/s = bytes per ns, suffix _gbps
  kTflops,   ///< 10^12 floating-point operations per second, suffix _tflops
  kGhz,      ///< GHz, suffix _ghz
  kCycles,   ///< clock cycles, suffix _cycles (keep it last: stats.cpp sizes its table by it)
};

/// The suffix a name of `unit` ends with ("_ns"); empty for counts, identifiers and text.
std::string_view unit_suffix(Unit unit);
/// The unit as a reader writes it after a number ("ns", "B", "%", "GB/s"); empty for counts,
/// identifiers and text.
std::string_view unit_symbol(Unit unit);

/// A value: whole numbers stay whole in the JSON document, fractions are doubles.
using Value =
    std::variant<std::uint64_t, std::int64_t, double, std::string, std::vector<std::uint64_t>>;

struct Statistic {
  Value value;
  Unit unit = Unit::kCount;
};

/// A group of statistics: named statistics, named child groups and named lists of groups, in
/// the order they were first added. References to children stay valid while the group lives.
class Group {
 public:
  /// `name`: the key this group has in its parent (list elements: the list's name), which may
  /// carry the unit of its statistics.
  explicit Group(std::string name = {});

  /// Sets the statistic `name` (replacing a value it had). Throws std::logic_error when neither
  /// the name nor this group's name carries the unit's suffix (a programming error).
  /// `value`: any number (whole numbers stay whole), text, or a list of identifiers.
  template <typename T>
  void add(std::string_view name, T value, Unit unit) {
    add_value(name, value_of(std::move(value)), unit);
  }
  void add_value(std::string_view name, Value value, Unit unit);
  /// The child group `name`, created empty if it does not exist.
  Group& group(std::string_view name);
  /// The list of groups `name` (rendered as a JSON array, empty or not), created if new.
  std::deque<Group>& list(std::string_view name);
  /// A new last element of the list `name`.
  Group& append(std::string_view name) { return list(name).emplace_back(std::string(name)); }

  const std::string& name() const { return name_; }
  bool empty() const { return children_.empty(); }
  /// The statistic at a dotted path below this group ("engines.tensor.active_ns"); list
  /// elements by their position ("cores.0.pid"). Null if there is none.
  const Statistic* find(std::string_view path) const;
  /// Calls `visit` with the dotted path and the statistic of every statistic below this group,
  /// depth first in the order they were added.
  void for_each(const std::function<void(const std::string& path, const Statistic&)>& visit) const;

  /// The group as a JSON object: statistics as values, groups as objects, lists as arrays.
  nlohmann::json to_json() const;

 private:
  template <typename T>
  static Value value_of(T value) {
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<double>(value);
    } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
      return static_cast<std::uint64_t>(value);
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<std::int64_t>(value);
    } else if constexpr (std::is_convertible_v<T, std::string_view>) {
      return std::string(std::string_view(value));
    } else {
      return Value(std::move(value));
    }
  }

  struct Child {
    enum class Kind : std::uint8_t { kStatistic, kGroup, kList } kind;
    std::string name;
    Statistic statistic;
    std::unique_ptr<Group> group;
    std::unique_ptr<std::deque<Group>> list;
  };
  Child* child(std::string_view name);
  const Child* child(std::string_view name) const;
  void for_each(const std::string& prefix,
                const std::function<void(const std::string&, const Statistic&)>& visit) const;

  std::string name_;
  std::deque<Child> children_;
};

/// The renderer: the tree as the JSON document (Group::to_json()).
inline nlohmann::json to_json(const Group& group) {
  return group.to_json();
}

}  // namespace trnsim::stats
