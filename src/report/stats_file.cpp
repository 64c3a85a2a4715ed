#include "report/stats_file.hpp"

#include "report/output_file.hpp"
#include "util/hash.hpp"

namespace trnsim::report {

nlohmann::ordered_json stats_document(const nlohmann::json& statistics,
                                      const config::LoadedConfig& config) {
  nlohmann::ordered_json document;
  document["format"] = kStatsFormat;
  nlohmann::ordered_json provenance = nlohmann::ordered_json::object();
  if (statistics.contains("provenance")) {
    provenance = nlohmann::ordered_json::parse(statistics["provenance"].dump());
  }
  const std::string resolved_text = config.effective.dump();
  provenance["config"] = {{"name", config.params.name},
                          {"origin", config.origin},
                          {"hash", util::hex64(util::fnv1a64(resolved_text))},
                          {"resolved", config.effective}};
  document["provenance"] = provenance;
  for (const auto& [key, value] : statistics.items()) {
    if (key == "provenance") continue;
    document[key] = nlohmann::ordered_json::parse(value.dump());
  }
  return document;
}

void write_stats_file(const std::string& path, const nlohmann::ordered_json& document) {
  OutputFile file(path, "--stats");
  file.buffer() << document.dump(2) << '\n';
  file.commit();
}

}  // namespace trnsim::report
