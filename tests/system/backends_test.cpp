// The registry of pluggable models (system/backends.hpp): every name a config may give
// dma.model or hbm.model has a model and the other way round, a registered model becomes a
// value configs accept, and build_memory_system refuses models that do not fit together.
#include "system/backends.hpp"

#include <gtest/gtest.h>
#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <string>
#include <vector>

#include "config/load.hpp"
#include "config/schema.hpp"
#include "util/error.hpp"

namespace trnsim::system {
namespace {

std::vector<std::string> sorted_choices(const std::string& key) {
  const config::FieldInfo* field = config::find_field(key);
  EXPECT_NE(field, nullptr) << key;
  if (field == nullptr) return {};
  std::vector<std::string> choices = field->choices;
  std::sort(choices.begin(), choices.end());
  return choices;
}

TEST(Backends, EveryModelNameAConfigAcceptsHasAModelAndTheOtherWayRound) {
  EXPECT_EQ(sorted_choices("dma.model"), dma_model_names());
  EXPECT_EQ(sorted_choices("hbm.model"), hbm_model_names());
  EXPECT_EQ(dma_model_names(), (std::vector<std::string>{"flow", "packet", "transfer"}));
  EXPECT_EQ(hbm_model_names(), (std::vector<std::string>{"banked", "ideal"}));
}

TEST(Backends, AnHbmModelOtherThanBankedNeedsThePacketModel) {
  const config::Params params =
      config::load_config("trn2", {"dma.model=flow", "hbm.model=ideal"}).params;
  try {
    build_memory_system(params, 1);
    FAIL() << "flow with hbm.model=ideal was accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.where(), "config 'trn2': hbm.model");
    EXPECT_NE(error.message().find("only under dma.model = packet"), std::string::npos)
        << error.message();
  }
}

/// A model of a test's own: the smallest HbmTarget.
class NullHbm : public HbmTarget {
 public:
  tlm_utils::simple_target_socket<NullHbm> socket{"socket"};
  explicit NullHbm(sc_core::sc_module_name name) : HbmTarget(name) {}
  tlm::tlm_target_socket<>& target_socket() override { return socket; }
  void add_statistics(stats::Group& /*stack*/, double /*elapsed_ns*/) const override {}
};

TEST(Backends, ARegisteredHbmModelIsAValueConfigsAcceptAndBuildsTheStacks) {
  EXPECT_THROW(config::load_config("trn2", {"hbm.model=null_hbm"}), InputError);
  std::vector<HbmTargetSpec> built;
  register_hbm_model("null_hbm", [&built](sc_core::sc_module_name name, const HbmTargetSpec& spec,
                                          const config::Params& /*params*/) {
    built.push_back(spec);
    return std::make_unique<NullHbm>(name);
  });
  EXPECT_EQ(hbm_model_names(), (std::vector<std::string>{"banked", "ideal", "null_hbm"}));
  const config::Params params =
      config::load_config("trn2-48xl", {"dma.model=packet", "hbm.model=null_hbm"})
          .params;  // 2 chips x 4 stacks
  const auto memory_system = build_memory_system(params, 16);
  ASSERT_EQ(built.size(), 8u);
  EXPECT_EQ(built[5].stack, 5u);
  EXPECT_EQ(built[5].chip, 1u);
  EXPECT_DOUBLE_EQ(built[5].peak_bandwidth_gbps, params.hbm.stack_bandwidth_gbps);
  EXPECT_EQ(built[5].capacity_bytes, std::uint64_t{24} << 30);
  EXPECT_EQ(built[5].max_transaction_bytes, static_cast<std::uint32_t>(params.dma.packet_bytes));
  // Stacks that served nothing are left out of the statistics.
  EXPECT_TRUE(memory_system->statistics(0)["hbm"]["stacks"].empty());
}

}  // namespace
}  // namespace trnsim::system
