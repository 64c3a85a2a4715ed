// The statistics tree (include/trnsim/stats.hpp).
#include "trnsim/stats.hpp"

#include <array>
#include <charconv>
#include <stdexcept>
#include <utility>

namespace trnsim::stats {

namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

/// Whether `name` carries `suffix` ("_ns"): it ends with it, or is the bare unit ("ns").
bool carries(std::string_view name, std::string_view suffix) {
  return suffix.empty() || ends_with(name, suffix) || name == suffix.substr(1);
}

/// By Unit: the suffix of a name of that unit and the symbol a reader writes.
struct UnitText {
  std::string_view suffix;
  std::string_view symbol;
};
constexpr std::array<UnitText, static_cast<std::size_t>(Unit::kCycles) + 1> kUnits{{
    {"", ""},                // kCount
    {"", ""},                // kIndex
    {"", ""},                // kText
    {"_ns", "ns"},           // kNs
    {"_us", "us"},           // kUs
    {"_bytes", "B"},         // kBytes
    {"_pct", "%"},           // kPercent
    {"_gbps", "GB/s"},       // kGbps
    {"_tflops", "TFLOP/s"},  // kTflops
    {"_ghz", "GHz"},         // kGhz
    {"_cycles", "cycles"},   // kCycles
}};

}  // namespace

std::string_view unit_suffix(Unit unit) {
  return kUnits[static_cast<std::size_t>(unit)].suffix;
}

std::string_view unit_symbol(Unit unit) {
  return kUnits[static_cast<std::size_t>(unit)].symbol;
}

Group::Group(std::string name) : name_(std::move(name)) {}

Group::Child* Group::child(std::string_view name) {
  for (Child& c : children_) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const Group::Child* Group::child(std::string_view name) const {
  for (const Child& c : children_) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

void Group::add_value(std::string_view name, Value value, Unit unit) {
  const std::string_view suffix = unit_suffix(unit);
  if (!carries(name, suffix) && !carries(name_, suffix)) {
    throw std::logic_error("statistic '" + name_ + "." + std::string(name) +
                           "': neither it nor its group is named for its unit '" +
                           std::string(suffix) + "'");
  }
  Child* existing = child(name);
  if (existing == nullptr) {
    existing = &children_.emplace_back();
    existing->name = std::string(name);
  }
  existing->kind = Child::Kind::kStatistic;
  existing->statistic = Statistic{std::move(value), unit};
  existing->group.reset();
  existing->list.reset();
}

Group& Group::group(std::string_view name) {
  Child* existing = child(name);
  if (existing == nullptr || existing->kind != Child::Kind::kGroup) {
    if (existing == nullptr) existing = &children_.emplace_back();
    existing->kind = Child::Kind::kGroup;
    existing->name = std::string(name);
    existing->group = std::make_unique<Group>(std::string(name));
    existing->list.reset();
  }
  return *existing->group;
}

std::deque<Group>& Group::list(std::string_view name) {
  Child* existing = child(name);
  if (existing == nullptr || existing->kind != Child::Kind::kList) {
    if (existing == nullptr) existing = &children_.emplace_back();
    existing->kind = Child::Kind::kList;
    existing->name = std::string(name);
    existing->list = std::make_unique<std::deque<Group>>();
    existing->group.reset();
  }
  return *existing->list;
}

const Statistic* Group::find(std::string_view path) const {
  const std::size_t dot = path.find('.');
  const std::string_view head = path.substr(0, dot);
  const Child* found = child(head);
  if (found == nullptr) return nullptr;
  if (dot == std::string_view::npos) {
    return found->kind == Child::Kind::kStatistic ? &found->statistic : nullptr;
  }
  std::string_view rest = path.substr(dot + 1);
  if (found->kind == Child::Kind::kGroup) return found->group->find(rest);
  if (found->kind != Child::Kind::kList) return nullptr;
  const std::size_t next = rest.find('.');
  const std::string_view position = rest.substr(0, next);
  std::size_t index = 0;
  const auto [end, error] =
      std::from_chars(position.data(), position.data() + position.size(), index);
  if (error != std::errc() || end != position.data() + position.size() ||
      index >= found->list->size() || next == std::string_view::npos) {
    return nullptr;
  }
  return (*found->list)[index].find(rest.substr(next + 1));
}

void Group::for_each(
    const std::function<void(const std::string& path, const Statistic&)>& visit) const {
  for_each("", visit);
}

void Group::for_each(const std::string& prefix,
                     const std::function<void(const std::string&, const Statistic&)>& visit) const {
  for (const Child& c : children_) {
    const std::string path = prefix + c.name;
    switch (c.kind) {
      case Child::Kind::kStatistic:
        visit(path, c.statistic);
        break;
      case Child::Kind::kGroup:
        c.group->for_each(path + ".", visit);
        break;
      case Child::Kind::kList:
        for (std::size_t i = 0; i < c.list->size(); ++i) {
          (*c.list)[i].for_each(path + "." + std::to_string(i) + ".", visit);
        }
        break;
    }
  }
}

nlohmann::json Group::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const Child& c : children_) {
    switch (c.kind) {
      case Child::Kind::kStatistic:
        out[c.name] =
            std::visit([](const auto& value) { return nlohmann::json(value); }, c.statistic.value);
        break;
      case Child::Kind::kGroup:
        out[c.name] = c.group->to_json();
        break;
      case Child::Kind::kList: {
        nlohmann::json elements = nlohmann::json::array();
        for (const Group& element : *c.list) elements.push_back(element.to_json());
        out[c.name] = std::move(elements);
        break;
      }
    }
  }
  return out;
}

}  // namespace trnsim::stats
