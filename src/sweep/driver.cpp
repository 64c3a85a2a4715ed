#include "sweep/driver.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <optional>

#include "config/load.hpp"
#include "nki/kernel_reference.hpp"
#include "util/error.hpp"

namespace trnsim::sweep {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

/// The worker's stderr as one message, without the "trnsim: error: " prefix.
std::string worker_message(const std::string& err) {
  std::string text = trim(err);
  for (const std::string_view prefix : {"trnsim: error: ", "trnsim: internal error: "}) {
    if (text.rfind(prefix, 0) == 0) return text.substr(prefix.size());
  }
  return text;
}

/// Identity hashes of a point, computed in this process (no worker needed).
struct PointIdentity {
  std::string kernel_hash;
  std::string config_hash;
  std::string error;  ///< the kernel file cannot be read or the config does not load
};

class IdentityCache {
 public:
  PointIdentity identify(const RunRequest& request) {
    PointIdentity identity;
    try {
      identity.kernel_hash =
          kernel_hash(files_.text(nki::kernel_file(request.kernel_path)), request);
    } catch (const InputError& e) {
      identity.error = e.what();
      return identity;
    }
    std::string key = request.config_path;
    std::vector<std::string> overrides;
    for (const auto& [name, value] : request.sets) {
      overrides.push_back(name + "=" + value);
      key += "\n" + overrides.back();
    }
    auto it = configs_.find(key);
    if (it == configs_.end()) {
      std::pair<std::string, std::string> entry;  // hash, error
      try {
        entry.first = config_hash(config::load_config(request.config_path, overrides).effective);
      } catch (const InputError& e) {
        entry.second = e.what();
      }
      it = configs_.emplace(std::move(key), std::move(entry)).first;
    }
    identity.config_hash = it->second.first;
    if (identity.error.empty()) identity.error = it->second.second;
    return identity;
  }

 private:
  FileCache files_;
  std::map<std::string, std::pair<std::string, std::string>> configs_;
};

Record point_record(const SweepPoint& point, const PointIdentity& identity) {
  Record record;
  record["index"] = point.index;
  record["kernel"] = point.request.kernel;
  record["config"] = point.request.config;
  if (point.request.is_nki()) {
    record["inputs"] = assignments_json(point.request.inputs);
    record["kwargs"] = kwargs_json(point.request.kwargs);
    if (!point.request.grid.empty()) record["grid"] = point.request.grid;
  } else {
    record["params"] = assignments_json(point.request.params);
  }
  record["set"] = assignments_json(point.request.sets);
  record["values"] = point.values;
  record["kernel_hash"] = identity.kernel_hash;
  record["config_hash"] = identity.config_hash;
  return record;
}

void finish_record(Record& record, const std::vector<Metric>& metrics, const RunResult& run) {
  Record values = Record::object();
  std::string error = run.error;
  if (run.ok) {
    for (const Metric& metric : metrics) {
      std::string problem;
      if (auto value = extract_metric(run.statistics, metric, problem)) {
        values[metric.name] = Record(*value);
      } else if (error.empty()) {
        error = problem;
      }
    }
  }
  record["status"] = error.empty() ? "ok" : "error";
  record["metrics"] = std::move(values);
  if (!error.empty()) record["error"] = error;
}

bool is_failure(const Record& record) {
  return !record.contains("status") || record["status"] != "ok";
}

/// A resumed record must describe the same run the spec now gives for its index.
void check_resumed(const Record& record, const SweepPoint& point, const PointIdentity& identity,
                   const std::vector<Metric>& metrics, const std::string& path) {
  const std::string where = fmt::format("{}: point {}", path, point.index);
  const auto mismatch = [&](const std::string& what, const Record& found, const Record& now) {
    throw InputError(where, fmt::format("{} was {} when recorded and the spec now gives {}; "
                                        "resume only with the spec that started the file, or "
                                        "write to a new results file",
                                        what, found.dump(), now.dump()));
  };
  const Record null_value;
  const auto get = [&](const char* key) -> const Record& {
    return record.contains(key) ? record[key] : null_value;
  };
  if (get("kernel") != Record(point.request.kernel)) {
    mismatch("the kernel", get("kernel"), point.request.kernel);
  }
  if (get("config") != Record(point.request.config)) {
    mismatch("the config", get("config"), point.request.config);
  }
  if (point.request.is_nki()) {
    if (get("inputs") != assignments_json(point.request.inputs)) {
      mismatch("the inputs", get("inputs"), assignments_json(point.request.inputs));
    }
    if (get("kwargs") != kwargs_json(point.request.kwargs)) {
      mismatch("the kwargs", get("kwargs"), kwargs_json(point.request.kwargs));
    }
    const Record grid = point.request.grid.empty() ? Record() : Record(point.request.grid);
    if (get("grid") != grid) mismatch("the grid", get("grid"), grid);
  } else if (get("params") != assignments_json(point.request.params)) {
    mismatch("the params", get("params"), assignments_json(point.request.params));
  }
  if (get("set") != assignments_json(point.request.sets)) {
    mismatch("the overrides", get("set"), assignments_json(point.request.sets));
  }
  if (identity.error.empty()) {
    if (get("kernel_hash") != Record(identity.kernel_hash)) {
      throw InputError(where, "the kernel file '" + point.request.kernel +
                                  "' changed since this point was recorded (kernel hash " +
                                  get("kernel_hash").dump() + ", now \"" + identity.kernel_hash +
                                  "\"); write to a new results file");
    }
    if (get("config_hash") != Record(identity.config_hash)) {
      throw InputError(where,
                       "the resolved config changed since this point was recorded "
                       "(config hash " +
                           get("config_hash").dump() + ", now \"" + identity.config_hash +
                           "\"); write to a new results file");
    }
  }
  if (!is_failure(record)) {
    for (const Metric& metric : metrics) {
      if (!record.contains("metrics") || !record["metrics"].contains(metric.name)) {
        throw InputError(where, "recorded without metric '" + metric.name +
                                    "': the spec's metrics changed; write to a new results file");
      }
    }
  }
}

}  // namespace

RunResult interpret_run(const WorkerOutcome& outcome, double timeout_s) {
  RunResult result;
  if (outcome.exit_code == 0) {
    result.statistics = json::parse(outcome.out, nullptr, /*allow_exceptions=*/false);
    result.ok = result.statistics.is_object();
    if (!result.ok) {
      result.error = "trnsim run exited 0 but did not print a statistics JSON object";
    }
    return result;
  }
  const std::string message = worker_message(outcome.err);
  if (outcome.exit_code == 2 && !message.empty()) {
    result.error = message;
  } else {
    result.error = "trnsim run " + describe_outcome(outcome, timeout_s) +
                   (message.empty() ? std::string() : ": " + message);
  }
  return result;
}

std::vector<RunResult> run_batch(const std::vector<RunRequest>& requests,
                                 const BatchOptions& options, std::ostream& log) {
  std::vector<RunResult> results(requests.size());
  util::Progress progress(options.label, requests.size(), 0, options.progress, log,
                          options.progress_options);
  std::size_t next_index = 0;
  WorkerOptions worker_options;
  worker_options.parallel = options.parallel;
  worker_options.timeout_s = options.timeout_s;
  worker_options.tick = [&progress] { progress.refresh(); };
  InterruptGuard guard;
  const bool completed = run_workers(
      worker_options,
      [&]() -> std::optional<WorkerTask> {
        if (next_index >= requests.size()) return std::nullopt;
        const std::size_t index = next_index++;
        return WorkerTask{index, run_command_line(requests[index], options.trnsim_binary)};
      },
      [&](const WorkerTask& task, WorkerOutcome&& outcome) {
        results[task.id] = interpret_run(outcome, options.timeout_s);
        progress.advance(!results[task.id].ok);
      });
  if (!completed) throw Interrupted();
  progress.finish();
  return results;
}

SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& options, std::ostream& log) {
  SweepSummary summary;
  summary.total_points = point_count(spec);
  for (std::size_t i = options.shard.index; i < summary.total_points; i += options.shard.count) {
    ++summary.shard_points;
  }

  const std::string& path = options.results_path;
  const bool exists = fs::exists(path);
  if (exists && !options.resume && !options.overwrite) {
    throw InputError(path,
                     "the results file exists; pass --resume to continue it or "
                     "--overwrite to start over");
  }
  IdentityCache identities;
  std::vector<Record> records;
  std::vector<bool> done(summary.total_points, false);
  std::size_t keep_bytes = 0;
  if (exists && options.resume) {
    ResultsFile file = read_results(path);
    keep_bytes = file.complete_bytes;
    if (file.partial_bytes > 0) {
      log << fmt::format(
          "sweep: dropping an incomplete last line of {} bytes (a run was killed "
          "while writing it)\n",
          file.partial_bytes);
    }
    for (Record& record : file.records) {
      const std::size_t index = record["index"].get<std::size_t>();
      if (index >= summary.total_points || !options.shard.contains(index)) {
        throw InputError(
            path, fmt::format("point {} is not a point of {} (shard {}/{}, {} "
                              "points); resume with the same spec and --shard",
                              index, spec.file.empty() ? spec.name : spec.file, options.shard.index,
                              options.shard.count, summary.total_points));
      }
      if (done[index]) continue;
      const SweepPoint point = make_point(spec, index);
      check_resumed(record, point, identities.identify(point.request), spec.metrics, path);
      done[index] = true;
      records.push_back(std::move(record));
    }
  }
  summary.resumed = records.size();

  ResultsAppender appender(path, keep_bytes);
  util::Progress progress(spec.name, summary.shard_points, summary.resumed, options.batch.progress,
                          log);
  std::map<std::size_t, Record> pending;  // started, awaiting their worker
  std::size_t next_index = options.shard.index;
  const auto record_done = [&](Record&& record) {
    appender.append(record);
    progress.advance(is_failure(record));
    records.push_back(std::move(record));
    ++summary.ran;
  };

  WorkerOptions worker_options;
  worker_options.parallel = options.batch.parallel;
  worker_options.timeout_s = options.batch.timeout_s;
  worker_options.tick = [&progress] { progress.refresh(); };
  InterruptGuard guard;
  const bool completed = run_workers(
      worker_options,
      [&]() -> std::optional<WorkerTask> {
        // Points whose kernel or config cannot load are recorded here, without a worker.
        for (; next_index < summary.total_points; next_index += options.shard.count) {
          if (done[next_index]) continue;
          const SweepPoint point = make_point(spec, next_index);
          const PointIdentity identity = identities.identify(point.request);
          Record record = point_record(point, identity);
          if (!identity.error.empty()) {
            RunResult failed;
            failed.error = identity.error;
            finish_record(record, spec.metrics, failed);
            record_done(std::move(record));
            continue;
          }
          pending.emplace(point.index, std::move(record));
          next_index += options.shard.count;
          return WorkerTask{point.index,
                            run_command_line(point.request, options.batch.trnsim_binary)};
        }
        return std::nullopt;
      },
      [&](const WorkerTask& task, WorkerOutcome&& outcome) {
        auto node = pending.extract(task.id);
        finish_record(node.mapped(), spec.metrics, interpret_run(outcome, options.batch.timeout_s));
        record_done(std::move(node.mapped()));
      });
  summary.interrupted = !completed;
  if (completed) {
    progress.finish();
    sort_by_index(records);
    write_results(path, records);
  } else {
    log << "\n";
  }
  std::size_t first_failed = summary.total_points;
  for (const Record& record : records) {
    if (!is_failure(record)) continue;
    ++summary.failed;
    const std::size_t index = record["index"].get<std::size_t>();
    if (index < first_failed) {
      first_failed = index;
      summary.first_error =
          fmt::format("point {}: {}", index,
                      record.contains("error") ? record["error"].get<std::string>() : "no status");
    }
  }
  return summary;
}

}  // namespace trnsim::sweep
