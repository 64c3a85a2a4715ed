// Loading: built-ins, extends, overrides, round trip, and one test per class of config error.
#include "config/load.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "config/schema.hpp"
#include "test_support.hpp"

namespace trnsim::config {
namespace {

using ::testing::HasSubstr;
using testing::input_error;
using testing::ScratchDir;

TEST(Builtins, AllTenLoadAndValidate) {
  const std::vector<std::string> expected = {"trn1",
                                             "trn1-32xl",
                                             "trn2",
                                             "trn2-48xl",
                                             "trn2-ultraserver",
                                             "trn3",
                                             "trn3-ultraserver-144",
                                             "trn3-ultraserver-64",
                                             "trn4",
                                             "trn4-rack"};
  EXPECT_EQ(builtin_config_names(), expected);
  for (const auto& name : builtin_config_names()) {
    const LoadedConfig loaded = load_config(name);
    EXPECT_EQ(loaded.params.name, name);
    EXPECT_FALSE(builtin_config_description(name).empty()) << name;
    EXPECT_EQ(loaded.params.description, builtin_config_description(name));
  }
}

TEST(Builtins, GenerationConfigsSetEveryDeclaredKeyThemselves) {
  std::vector<std::string> generations;
  for (const auto& name : builtin_config_names()) {
    if (is_generation_config(name)) generations.push_back(name);
  }
  EXPECT_EQ(generations, (std::vector<std::string>{"trn1", "trn2", "trn3", "trn4"}));
  for (const auto& name : generations) {
    const auto raw = nlohmann::json::parse(builtin_config_text(name));
    for (const auto& field : parameter_fields()) {
      const bool present = field.section.empty() ? raw.contains(field.name)
                                                 : raw.contains(field.section) &&
                                                       raw[field.section].contains(field.name);
      // A derived field is computed, never written down (it would be a second place to change).
      EXPECT_EQ(present, field.meta.derived_from.empty())
          << name << (present ? " sets derived " : " does not set ") << field.key;
    }
    EXPECT_EQ(load_config(name).params.generation, parse_enum<Generation>(name));
  }
}

TEST(Builtins, EveryTrn4ValueIsMarkedProjected) {
  const LoadedConfig trn4 = load_config("trn4");
  for (const auto& field : parameter_fields()) {
    if (!field.meta.derived_from.empty()) continue;  // its source is its formula
    EXPECT_EQ(source_of(trn4, field.key).rfind("PROJECTED:", 0), 0u)
        << field.key << ": " << source_of(trn4, field.key);
  }
}

TEST(Builtins, NcVersionFollowsGeneration) {
  // hardware-facts.md §1: Trn1 NC-v2, Trn2 NC-v3, Trn3 NC-v4; Trn4 projected as 5.
  EXPECT_EQ(load_config("trn1").params.nc_version, 2);
  EXPECT_EQ(load_config("trn2").params.nc_version, 3);
  EXPECT_EQ(load_config("trn3").params.nc_version, 4);
  EXPECT_EQ(load_config("trn4").params.nc_version, 5);
}

TEST(Extends, FileChainRelativeToEachFileWithOwnNameAndSources) {
  ScratchDir dir;
  dir.write("base/fast.json", R"({"extends": "trn2", "name": "fast",
      "tensor": {"clock_ghz": 3.0}, "sources": {"tensor.clock_ghz": "what-if"}})");
  const std::string child =
      dir.write("child.json", R"({"extends": "base/fast.json", "vector": {"min_ii_cycles": 32}})");
  const LoadedConfig loaded = load_config(child);
  EXPECT_DOUBLE_EQ(loaded.params.tensor.clock_ghz, 3.0);
  EXPECT_EQ(loaded.params.vector.min_ii_cycles, 32);
  EXPECT_EQ(loaded.params.chip.cores, 8);  // inherited from trn2
  EXPECT_EQ(loaded.params.name, "child");  // name is not inherited: file stem
  EXPECT_EQ(loaded.params.description, "extends fast");
  EXPECT_EQ(source_of(loaded, "tensor.clock_ghz"), "what-if");
  // The child changed vector.min_ii_cycles without a source: the declaration's source applies.
  EXPECT_EQ(source_of(loaded, "vector.min_ii_cycles"),
            find_field("vector.min_ii_cycles")->meta.source);
  // trn2's own source for an untouched key survives.
  EXPECT_EQ(source_of(loaded, "vector.clock_ghz"),
            source_of(load_config("trn2"), "vector.clock_ghz"));
}

TEST(Extends, OverridingAValueDropsTheInheritedSource) {
  ScratchDir dir;
  const std::string file =
      dir.write("x.json", R"({"extends": "trn2", "tensor": {"clock_ghz": 2.0}})");
  const LoadedConfig loaded = load_config(file);
  EXPECT_EQ(source_of(loaded, "tensor.clock_ghz"), find_field("tensor.clock_ghz")->meta.source);
  EXPECT_FALSE(loaded.effective["sources"].contains("tensor.clock_ghz"));
}

TEST(Overrides, AreTypedAppliedInOrderAndRecordedAsSources) {
  const LoadedConfig loaded =
      load_config("trn2", {"tensor.clock_ghz=2.8", "vector.min_ii_cycles=64",
                           "tensor.throttle_enabled=false", "dma.arbitration=strict_priority",
                           "collective.rdh_max_bytes=100000000", "vector.min_ii_cycles=32"});
  EXPECT_DOUBLE_EQ(loaded.params.tensor.clock_ghz, 2.8);
  EXPECT_EQ(loaded.params.vector.min_ii_cycles, 32);  // the later override wins
  EXPECT_FALSE(loaded.params.tensor.throttle_enabled);
  EXPECT_EQ(loaded.params.dma.arbitration, DmaArbitration::strict_priority);
  EXPECT_EQ(loaded.params.collective.rdh_max_bytes, 100000000);
  EXPECT_EQ(source_of(loaded, "tensor.clock_ghz"), "--set on the command line");
  // An integer is accepted for a number parameter.
  EXPECT_DOUBLE_EQ(load_config("trn2", {"tensor.clock_ghz=3"}).params.tensor.clock_ghz, 3.0);
}

TEST(RoundTrip, ShowOutputLoadsBackToTheSameEffectiveJson) {
  ScratchDir dir;
  for (const auto& name : builtin_config_names()) {
    const LoadedConfig first = load_config(name, {"tensor.clock_ghz=2.5"});
    const std::string file = dir.write(name + ".json", first.effective.dump(2));
    const LoadedConfig second = load_config(file);
    EXPECT_EQ(first.effective.dump(2), second.effective.dump(2)) << name;
  }
}

TEST(RoundTrip, OutputIsDeterministicAndInDeclarationOrder) {
  const auto a = load_config("trn2-ultraserver").effective.dump();
  const auto b = load_config("trn2-ultraserver").effective.dump();
  EXPECT_EQ(a, b);
  const auto effective = load_config("trn2").effective;
  std::vector<std::string> top;
  for (const auto& [key, value] : effective.items()) top.push_back(key);
  EXPECT_EQ(top.front(), "name");
  EXPECT_EQ(top.back(), "sources");
  EXPECT_FALSE(effective.contains("extends"));
}

// ---- errors: one per class, asserting the located message
// ----------------------------------------

class ConfigErrors : public ::testing::Test {
 protected:
  /// Loads a file extending trn2 with `body` (JSON members without braces) and returns the error.
  std::string error_for(const std::string& body, const std::vector<std::string>& overrides = {}) {
    const std::string file = dir_.write("bad.json", R"({"extends": "trn2", )" + body + "}");
    return input_error([&] { load_config(file, overrides); });
  }
  std::string file(const std::string& name, const std::string& text) {
    return dir_.write(name, text);
  }

  ScratchDir dir_;
};

TEST_F(ConfigErrors, UnknownKeyInSectionSuggestsTheClosest) {
  const auto message = error_for(R"("tensor": {"clock_ghx": 3})");
  EXPECT_THAT(message,
              HasSubstr("bad.json: /tensor/clock_ghx: unknown key 'clock_ghx' in 'tensor'"));
  EXPECT_THAT(message, HasSubstr("did you mean 'clock_ghz'?"));
}

TEST_F(ConfigErrors, UnknownTopLevelKeySuggestsTheClosest) {
  const auto message = error_for(R"("tensr": {})");
  EXPECT_THAT(message, HasSubstr("bad.json: /tensr: unknown key 'tensr'; did you mean 'tensor'?"));
}

TEST_F(ConfigErrors, WrongTypeNamesExpectedAndFound) {
  EXPECT_THAT(error_for(R"("tensor": {"clock_ghz": "2.4"})"),
              HasSubstr("/tensor/clock_ghz: expected a number (GHz), found the string \"2.4\""));
  EXPECT_THAT(error_for(R"("chip": {"cores": 8.5})"),
              HasSubstr("/chip/cores: expected an integer (count), found the number 8.5"));
  EXPECT_THAT(error_for(R"("tensor": {"mx_supported": 1})"),
              HasSubstr("/tensor/mx_supported: expected true or false, found the integer 1"));
  EXPECT_THAT(error_for(R"("tensor": 5)"),
              HasSubstr("/tensor: expected an object (Tensor Engine (PE array), per NeuronCore), "
                        "found the integer 5"));
}

TEST_F(ConfigErrors, OutOfRangeGivesBoundsAndUnit) {
  EXPECT_THAT(error_for(R"("tensor": {"clock_ghz": 300})"),
              HasSubstr("/tensor/clock_ghz: tensor.clock_ghz must be between 0.01 and 20 GHz, "
                        "found 300"));
  EXPECT_THAT(error_for(R"("nc_version": 9)"), HasSubstr("nc_version must be between 2 and 5"));
  EXPECT_THAT(error_for(R"("chip": {"cores": 99999999999})"),
              HasSubstr("chip.cores must be between 1 and 1024 count"));
}

TEST_F(ConfigErrors, BadEnumListsChoicesAndSuggests) {
  EXPECT_THAT(error_for(R"("dma": {"arbitration": "round_robbin"})"),
              HasSubstr("/dma/arbitration: expected one of round_robin|strict_priority, found the "
                        "string \"round_robbin\"; did you mean 'round_robin'?"));
}

TEST_F(ConfigErrors, InvalidJsonGivesLineAndColumn) {
  const std::string path = file("broken.json", "{\n  \"extends\": \"trn2\",\n}");
  EXPECT_THAT(input_error([&] { load_config(path); }),
              HasSubstr("broken.json: invalid JSON: parse error at line 3, column 1"));
}

TEST_F(ConfigErrors, TopLevelMustBeAnObject) {
  const std::string path = file("array.json", "[1, 2]");
  EXPECT_THAT(input_error([&] { load_config(path); }),
              HasSubstr("array.json: expected a JSON object at the top level, found an array"));
}

TEST_F(ConfigErrors, ExtendsCycleShowsTheChain) {
  file("a.json", R"({"extends": "b.json"})");
  const std::string b = file("b.json", R"({"extends": "a.json"})");
  const auto message = input_error([&] { load_config(b); });
  EXPECT_THAT(message, HasSubstr("a.json: /extends: extends cycle: "));
  EXPECT_THAT(message, HasSubstr("b.json -> "));
  EXPECT_THAT(message, HasSubstr("a.json -> "));
}

TEST_F(ConfigErrors, ExtendsOfAMissingNameSuggestsABuiltin) {
  const std::string path = file("x.json", R"({"extends": "tnr2"})");
  const auto message = input_error([&] { load_config(path); });
  EXPECT_THAT(message, HasSubstr("x.json: /extends: no built-in config and no file named 'tnr2'"));
  EXPECT_THAT(message, HasSubstr("did you mean 'trn2'?"));
  EXPECT_THAT(message, HasSubstr("built-in configs: trn1, trn1-32xl, trn2,"));
}

TEST_F(ConfigErrors, ExtendsMustBeAString) {
  const std::string path = file("x.json", R"({"extends": 3})");
  EXPECT_THAT(input_error([&] { load_config(path); }),
              HasSubstr("x.json: /extends: expected the name of a built-in config or a file "
                        "path, found the integer 3"));
}

TEST_F(ConfigErrors, UnknownNameOnTheCommandLine) {
  EXPECT_THAT(input_error([] { load_config("trn9"); }),
              HasSubstr("no built-in config and no file named 'trn9'; did you mean 'trn1'?"));
}

TEST_F(ConfigErrors, IncompleteConfigListsMissingKeys) {
  const std::string path = file("partial.json", R"({"tensor": {"clock_ghz": 3}})");
  const auto message = input_error([&] { load_config(path); });
  EXPECT_THAT(message, HasSubstr("partial.json: incomplete config: "));
  EXPECT_THAT(message, HasSubstr("parameters not set: generation, nc_version, chip.cores"));
  EXPECT_THAT(message, HasSubstr("extend a complete config (e.g. \"extends\": \"trn2\")"));
}

TEST_F(ConfigErrors, SourcesMustNameDeclaredKeysWithText) {
  EXPECT_THAT(error_for(R"("sources": {"tensor.clock_gz": "x"})"),
              HasSubstr("/sources/tensor.clock_gz: unknown parameter 'tensor.clock_gz'; did you "
                        "mean 'tensor.clock_ghz'?"));
  EXPECT_THAT(error_for(R"("sources": {"tensor.clock_ghz": 1})"),
              HasSubstr("/sources/tensor.clock_ghz: expected a string, found the integer 1"));
  EXPECT_THAT(error_for(R"("sources": [])"), HasSubstr("/sources: expected an object"));
}

TEST_F(ConfigErrors, CrossFieldRulesNameTheValuesAndWhereTheyCameFrom) {
  EXPECT_THAT(error_for(R"("chip": {"cores": 6})"),
              HasSubstr("bad.json: chip.cores = 6 (from " + (dir_.path() / "bad.json").string() +
                        ") must equal chip.hbm_stacks x hbm.cores_per_stack = 4 x 2 = 8"));
  EXPECT_THAT(error_for(R"("sbuf": {"usable_partition_bytes": 300000})"),
              HasSubstr("sbuf.usable_partition_bytes = 300000 (from"));
  EXPECT_THAT(error_for(R"("sbuf": {"alignment_bytes": 24})"),
              HasSubstr("sbuf.alignment_bytes = 24 (from"));
  EXPECT_THAT(
      error_for(R"("tensor": {"moving_fmax": 8192})"),
      HasSubstr("4 bytes x tensor.moving_fmax = 8192 (from " + (dir_.path() / "bad.json").string() +
                ") exceeds psum.partition_bytes = psum.banks x psum.bank_bytes = 16384"));
  EXPECT_THAT(error_for(R"("collective": {"mesh_max_bytes": 100000000})"),
              HasSubstr("collective.mesh_max_bytes = 100000000"));
  EXPECT_THAT(error_for(R"("dma": {"hwdge_cost_ns": 900.0})"),
              HasSubstr("dma.hwdge_cost_ns = 900.0 (from " + (dir_.path() / "bad.json").string() +
                        ") must not exceed dma.hwdge_latency_ns = 750.0"));
  EXPECT_THAT(error_for(R"("nc_version": 2)"),
              HasSubstr("compiler.dge_mode = \"hwdge\" (from built-in config 'trn2') needs a "
                        "hardware DGE, which nc_version = 2 (from " +
                        (dir_.path() / "bad.json").string() + ") does not have"));
  EXPECT_THAT(error_for(R"("system": {"chips": 4})"),
              HasSubstr("system.chips = 4 (from " + (dir_.path() / "bad.json").string() +
                        ") needs a multi-chip system.topology"));
  EXPECT_THAT(error_for(R"("system": {"chips": 16, "topology": "torus2d", "torus_x": 8,
                                      "torus_y": 4, "chips_per_instance": 16})"),
              HasSubstr("a torus2d needs torus_x x torus_y = chips and torus_z = 1; found 8 x 4"));
  EXPECT_THAT(
      error_for(R"("system": {"chips": 64, "topology": "torus3d", "torus_x": 4,
                                      "torus_y": 4, "torus_z": 2})"),
      HasSubstr("a torus3d needs torus_x x torus_y x torus_z = chips; found 4 x 4 x 2 = 32"));
  EXPECT_THAT(
      error_for(R"("system": {"chips": 8, "topology": "switch",
                                      "switch_port_bandwidth_gbps": 100})"),
      HasSubstr("system.switch_levels = 0 (from built-in config 'trn2') must be at least 1"));
  EXPECT_THAT(error_for(R"("system": {"chips": 8, "topology": "switch", "switch_levels": 1,
                                      "switch_port_bandwidth_gbps": 100, "chips_per_instance": 3})"),
              HasSubstr("system.chips = 8 (from"));
}

TEST_F(ConfigErrors, CrossFieldRuleBrokenByAnOverrideNamesTheOverride) {
  EXPECT_THAT(input_error([] { load_config("trn2-48xl", {"system.torus_x=2"}); }),
              HasSubstr("built-in config 'trn2-48xl': a torus2d needs torus_x x torus_y = chips"));
  EXPECT_THAT(input_error([] { load_config("trn2", {"chip.cores=4"}); }),
              HasSubstr("chip.cores = 4 (from --set chip.cores=4)"));
}

TEST_F(ConfigErrors, OverrideErrors) {
  EXPECT_THAT(input_error([] { load_config("trn2", {"tensor.clock_ghz"}); }),
              HasSubstr("--set tensor.clock_ghz: expected KEY=VALUE"));
  EXPECT_THAT(input_error([] { load_config("trn2", {"tensr.clock_ghz=3"}); }),
              HasSubstr("--set tensr.clock_ghz=3: unknown parameter 'tensr.clock_ghz'; did you "
                        "mean 'tensor.clock_ghz'?"));
  EXPECT_THAT(input_error([] { load_config("trn2", {"tensor.rows=1.5"}); }),
              HasSubstr("--set tensor.rows=1.5: expected an integer, found '1.5'"));
  EXPECT_THAT(input_error([] { load_config("trn2", {"tensor.clock_ghz=fast"}); }),
              HasSubstr("--set tensor.clock_ghz=fast: expected a number, found 'fast'"));
  EXPECT_THAT(input_error([] { load_config("trn2", {"tensor.clock_ghz=inf"}); }),
              HasSubstr("expected a number, found 'inf'"));
  EXPECT_THAT(input_error([] { load_config("trn2", {"tensor.mx_supported=yes"}); }),
              HasSubstr("--set tensor.mx_supported=yes: expected true or false, found 'yes'"));
  EXPECT_THAT(input_error([] { load_config("trn2", {"system.topology=torus"}); }),
              HasSubstr("expected one of single|torus2d|torus3d|switch|nvlink_switch, found the "
                        "string \"torus\"; did you mean 'torus2d'?"));
  EXPECT_THAT(input_error([] { load_config("trn2", {"tensor.clock_ghz=0"}); }),
              HasSubstr("--set tensor.clock_ghz=0: tensor.clock_ghz must be between 0.01 and 20"));
}

}  // namespace
}  // namespace trnsim::config
