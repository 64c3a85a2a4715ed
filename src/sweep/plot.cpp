#include "sweep/plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

#include "sweep/metrics.hpp"
#include "sweep/run_request.hpp"
#include "util/error.hpp"
#include "util/strings.hpp"
#include "util/svg_chart.hpp"

namespace trnsim::sweep {

namespace {

/// The record objects that name a run's values (docs/sweeps.md, results file).
constexpr std::array<const char*, 5> kNamedSections = {"values", "params", "inputs", "kwargs",
                                                       "set"};

const Record* find_key(const Record& record, const std::string& key) {
  for (const char* section : kNamedSections) {
    if (record.contains(section) && record[section].is_object() && record[section].contains(key)) {
      return &record[section][key];
    }
  }
  if ((key == "kernel" || key == "config" || key == "index") && record.contains(key)) {
    return &record[key];
  }
  return nullptr;
}

const Record* find_metric(const Record& record, const std::string& name) {
  if (!record.contains("metrics") || !record["metrics"].is_object()) return nullptr;
  const Record& metrics = record["metrics"];
  if (metrics.contains(name)) return &metrics[name];
  for (const auto& [key, value] : metrics.items()) {
    if (same_metric(key, name)) return &value;
  }
  return nullptr;
}

std::vector<std::string> known_keys(const std::vector<Record>& records) {
  std::vector<std::string> keys = {"kernel", "config", "index"};
  for (const Record& record : records) {
    for (const char* section : kNamedSections) {
      if (!record.contains(section) || !record[section].is_object()) continue;
      for (const auto& [key, value] : record[section].items()) {
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      }
    }
  }
  return keys;
}

std::vector<std::string> known_metrics(const std::vector<Record>& records) {
  std::vector<std::string> names;
  for (const Record& record : records) {
    if (!record.contains("metrics") || !record["metrics"].is_object()) continue;
    for (const auto& [key, value] : record["metrics"].items()) {
      if (std::find(names.begin(), names.end(), key) == names.end()) names.push_back(key);
    }
  }
  return names;
}

void require_key(const std::vector<Record>& records, const std::string& option,
                 const std::string& key) {
  for (const Record& record : records) {
    if (find_key(record, key) != nullptr) return;
  }
  const auto keys = known_keys(records);
  throw InputError(option, "no result has a value named '" + key + "'; the results have " +
                               util::join(keys, ", ") + util::did_you_mean(key, keys));
}

/// Keys whose values differ between two records (to explain an ambiguous plot).
std::vector<std::string> differing_keys(const Record& a, const Record& b) {
  std::vector<std::string> keys;
  for (const char* section : kNamedSections) {
    if (!a.contains(section) || !a[section].is_object()) continue;
    for (const auto& [key, value] : a[section].items()) {
      const Record* other = find_key(b, key);
      if ((other == nullptr || *other != value) &&
          std::find(keys.begin(), keys.end(), key) == keys.end()) {
        keys.push_back(key);
      }
    }
  }
  for (const char* top : {"kernel", "config"}) {
    if (a.contains(top) && b.contains(top) && a[top] != b[top]) keys.push_back(top);
  }
  return keys;
}

}  // namespace

std::pair<std::string, std::string> parse_where(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw InputError("--where " + text, "expected KEY=VALUE, e.g. --where F=512");
  }
  return {text.substr(0, equals), text.substr(equals + 1)};
}

PlotOutput plot_results(const std::vector<Record>& records, const PlotRequest& request) {
  require_key(records, "--x", request.x);
  if (!request.by.empty()) require_key(records, "--by", request.by);
  for (const auto& [key, value] : request.where) require_key(records, "--where", key);
  {
    bool found = false;
    for (const Record& record : records) found = found || find_metric(record, request.y) != nullptr;
    if (!found) {
      const auto metrics = known_metrics(records);
      throw InputError("--y", "no result has the metric '" + request.y + "'; the results have " +
                                  (metrics.empty() ? std::string("no metrics (every point failed)")
                                                   : util::join(metrics, ", ")) +
                                  util::did_you_mean(request.y, metrics));
    }
  }

  struct Entry {
    const Record* record;
    Record x;
    std::string series;
    double y;
  };
  PlotOutput output;
  std::vector<Entry> entries;
  for (const Record& record : records) {
    bool keep = true;
    for (const auto& [key, value] : request.where) {
      const Record* found = find_key(record, key);
      keep = keep && found != nullptr && value_text(*found) == value;
    }
    if (!keep) continue;
    const Record* y = find_metric(record, request.y);
    const Record* x = find_key(record, request.x);
    const bool ok = record.contains("status") && record["status"] == "ok";
    if (!ok || y == nullptr || !y->is_number() || x == nullptr) {
      ++output.skipped;
      continue;
    }
    std::string series;
    if (!request.by.empty()) {
      const Record* by = find_key(record, request.by);
      series = by == nullptr ? std::string("(none)") : value_text(*by);
    }
    entries.push_back({&record, *x, series, y->get<double>()});
  }
  if (entries.empty()) {
    throw InputError("", fmt::format("nothing to plot: no successful point has '{}' and '{}'{}",
                                     request.x, request.y,
                                     request.where.empty() ? ""
                                                           : " and matches the --where "
                                                             "filters"));
  }

  // One y per (series, x): otherwise another varied key would be silently mixed in.
  std::map<std::pair<std::string, std::string>, const Entry*> seen;
  for (const Entry& entry : entries) {
    const auto [it, inserted] = seen.try_emplace({entry.series, entry.x.dump()}, &entry);
    if (!inserted) {
      const auto keys = differing_keys(*it->second->record, *entry.record);
      throw InputError(
          "", fmt::format("points {} and {} both have {} = {}{} but differ in {}; plot one series "
                          "per value with --by KEY or keep one value with --where KEY=VALUE",
                          (*it->second->record)["index"].dump(), (*entry.record)["index"].dump(),
                          request.x, value_text(entry.x),
                          request.by.empty() ? "" : ", " + request.by + " = " + entry.series,
                          keys.empty() ? std::string("nothing recorded") : util::join(keys, ", ")));
    }
  }

  std::vector<std::string> series_names;
  for (const Entry& entry : entries) {
    if (std::find(series_names.begin(), series_names.end(), entry.series) == series_names.end()) {
      series_names.push_back(entry.series);
    }
  }
  const auto legend_name = [&](const std::string& series) {
    return request.by.empty() ? std::string() : request.by + " = " + series;
  };
  const std::string title =
      !request.title.empty()
          ? request.title
          : request.y + " vs " + request.x + (request.by.empty() ? "" : " by " + request.by);
  const bool numeric_x = std::all_of(entries.begin(), entries.end(),
                                     [](const Entry& entry) { return entry.x.is_number(); });
  output.plotted = entries.size();
  if (numeric_x && !request.bars) {
    util::LineChart chart{title, request.x, request.y, request.log_x, request.log_y, {}};
    for (const std::string& name : series_names) {
      util::LineSeries series{legend_name(name), {}};
      for (const Entry& entry : entries) {
        if (entry.series == name) series.points.emplace_back(entry.x.get<double>(), entry.y);
      }
      chart.series.push_back(std::move(series));
    }
    output.svg = util::line_chart_svg(chart);
    output.csv = util::line_chart_csv(chart);
    return output;
  }
  util::BarChart chart{title, request.x, request.y, {}, {}};
  for (const Entry& entry : entries) {
    const std::string category = value_text(entry.x);
    if (std::find(chart.categories.begin(), chart.categories.end(), category) ==
        chart.categories.end()) {
      chart.categories.push_back(category);
    }
  }
  for (const std::string& name : series_names) {
    util::BarSeries series{legend_name(name),
                           std::vector<std::optional<double>>(chart.categories.size())};
    for (const Entry& entry : entries) {
      if (entry.series != name) continue;
      const auto at =
          std::find(chart.categories.begin(), chart.categories.end(), value_text(entry.x)) -
          chart.categories.begin();
      series.values[static_cast<std::size_t>(at)] = entry.y;
    }
    chart.series.push_back(std::move(series));
  }
  output.svg = util::bar_chart_svg(chart);
  output.csv = util::bar_chart_csv(chart);
  return output;
}

std::string sweep_report_html(const std::vector<Record>& records, const std::string& title) {
  const auto escape = [](const std::string& text) { return util::xml_escape(text); };
  // What varies: keys of "values" with more than one value over the points, in first-seen order.
  std::vector<std::string> keys;
  std::map<std::string, std::set<std::string>> seen;
  for (const Record& record : records) {
    if (!record.contains("values") || !record["values"].is_object()) continue;
    for (const auto& [key, value] : record["values"].items()) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      seen[key].insert(value_text(value));
    }
  }
  std::erase_if(keys, [&](const std::string& key) { return seen[key].size() < 2; });

  std::string page = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  page += "<title>trnsim sweep: " + escape(title) + "</title><style>";
  page += R"(body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;
max-width:1100px;color:#222;padding:0 16px}h2{font-size:1.2em;margin-top:32px;
border-bottom:1px solid #ddd}table{border-collapse:collapse;font-size:12.5px}
th,td{border:1px solid #ddd;padding:3px 6px}th{background:#f0f2f4}td.n{text-align:right}
.note{color:#555;font-size:13px}.chart{margin:8px 0})";
  page += "</style></head><body>\n<h1>" + escape(title) + "</h1>\n";
  std::size_t failed = 0;
  std::map<std::string, std::size_t> verdicts;
  for (const Record& record : records) {
    if (record.value("status", "") != "ok") {
      ++failed;
      continue;
    }
    if (record.contains("/metrics/bottleneck"_json_pointer)) {
      const std::string verdict = value_text(record["metrics"]["bottleneck"]);
      ++verdicts[verdict.substr(0, verdict.find(':'))];
    }
  }
  page += fmt::format("<p class=\"note\">{} points, {} failed; varied: {}.</p>\n", records.size(),
                      failed, keys.empty() ? "nothing" : escape(util::join(keys, ", ")));

  page += "<h2 id=\"charts\">Metrics across the points</h2>\n";
  if (keys.empty()) {
    page += "<p class=\"note\">Nothing varies: no chart.</p>\n";
  } else {
    PlotRequest request;
    request.x = keys[0];
    if (keys.size() > 1) request.by = keys[1];
    std::string held;
    for (std::size_t i = 2; i < keys.size(); ++i) {
      const Record* first = records.empty() ? nullptr : &records.front();
      if (first == nullptr || !(*first)["values"].contains(keys[i])) continue;
      const std::string value = value_text((*first)["values"][keys[i]]);
      request.where.emplace_back(keys[i], value);
      held += (held.empty() ? "" : ", ") + keys[i] + " = " + value;
    }
    if (!held.empty()) {
      page += "<p class=\"note\">Held at the first point's values: " + escape(held) + ".</p>\n";
    }
    for (const char* metric : {"time_us", "mfu_pct", "hbm_gbps", "dma_active_pct"}) {
      const bool all_zero = std::all_of(records.begin(), records.end(), [&](const Record& record) {
        const Record* value = record.contains("metrics") && record["metrics"].contains(metric)
                                  ? &record["metrics"][metric]
                                  : nullptr;
        return value == nullptr || !value->is_number() || value->get<double>() == 0;
      });
      if (all_zero) {
        page += "<p class=\"note\">" + escape(metric) + " is 0 or absent at every point.</p>\n";
        continue;
      }
      request.y = metric;
      try {
        const PlotOutput output = plot_results(records, request);
        if (output.plotted > 0) page += "<div class=\"chart\">" + output.svg + "</div>\n";
      } catch (const InputError& error) {
        page += "<p class=\"note\">" + escape(metric) + ": " + escape(error.what()) + "</p>\n";
      }
    }
  }

  page +=
      "<h2 id=\"bottlenecks\">Bottlenecks</h2>\n<table><tr><th>verdict</th><th>points</th>"
      "</tr>\n";
  for (const auto& [verdict, count] : verdicts) {
    page += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td></tr>\n", escape(verdict), count);
  }
  page += "</table>\n";

  page += "<h2 id=\"points\">Points</h2>\n<table><tr><th>index</th>";
  for (const std::string& key : keys) page += "<th>" + escape(key) + "</th>";
  page +=
      "<th>status</th><th>time (us)</th><th>MFU %</th><th>HBM GB/s</th><th>bottleneck</th>"
      "</tr>\n";
  constexpr std::size_t kRowsShown = 1000;
  for (std::size_t i = 0; i < records.size() && i < kRowsShown; ++i) {
    const Record& record = records[i];
    page += "<tr><td class=\"n\">" + escape(value_text(record.value("index", Record()))) + "</td>";
    for (const std::string& key : keys) {
      const Record* value = record.contains("values") && record["values"].contains(key)
                                ? &record["values"][key]
                                : nullptr;
      page += "<td>" + (value == nullptr ? std::string() : escape(value_text(*value))) + "</td>";
    }
    const Record metrics = record.value("metrics", Record::object());
    const auto metric = [&](const char* name) {
      return metrics.contains(name) && metrics[name].is_number()
                 ? fmt::format("{:.3f}", metrics[name].get<double>())
                 : std::string();
    };
    page += "<td>" + escape(record.value("status", "")) + "</td><td class=\"n\">" +
            metric("time_us") + "</td><td class=\"n\">" + metric("mfu_pct") +
            "</td><td class=\"n\">" + metric("hbm_gbps") + "</td><td>" +
            escape(metrics.contains("bottleneck") ? value_text(metrics["bottleneck"]) : "") +
            "</td></tr>\n";
  }
  page += "</table>\n";
  if (records.size() > kRowsShown) {
    page += fmt::format("<p class=\"note\">The first {} of {} points.</p>\n", kRowsShown,
                        records.size());
  }
  page += "</body></html>\n";
  return page;
}

}  // namespace trnsim::sweep
