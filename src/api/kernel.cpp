// trnsim::Kernel (include/trnsim/kernel.hpp): parse, param overrides and preparation, as
// `trnsim run` loads a JSON kernel (cli/kernel_loading.cpp), with the same content hash.
#include "trnsim/kernel.hpp"

#include "api/errors.hpp"
#include "api/state.hpp"
#include "kernel/parse.hpp"
#include "kernel/target_from_config.hpp"
#include "util/hash.hpp"
#include "util/json_input.hpp"

namespace trnsim {

Kernel::Kernel(std::shared_ptr<const detail::KernelState> state) : state_(std::move(state)) {}

Kernel Kernel::load(const std::string& path, const Config& config, const KernelOptions& options) {
  const std::string text =
      detail::translating_errors([&] { return util::read_input_file(path, "kernel file"); });
  return parse(text, path, config, options);
}

Kernel Kernel::parse(const std::string& json_text, const std::string& origin, const Config& config,
                     const KernelOptions& options) {
  return detail::translating_errors([&] {
    kernel::ParseOptions parse_options;
    std::uint64_t hash = util::fnv1a64(json_text);
    for (const std::string& assignment : options.params) {
      parse_options.param_overrides.push_back(kernel::parse_param_override(assignment));
      hash = util::fnv1a64("\n--param " + assignment, hash);
    }
    auto state = std::make_shared<detail::KernelState>(detail::KernelState{config, {}, {}, {}});
    state->hash = util::hex64(hash);
    state->program = std::make_shared<const kernel::Program>(
        kernel::parse_program_text(json_text, origin, parse_options));
    state->prepared = kernel::prepare_kernel(
        state->program, kernel::target_from_params(config.state().loaded.params));
    return Kernel(std::move(state));
  });
}

std::string Kernel::name() const {
  return state_->program->name;
}

std::uint32_t Kernel::cores() const {
  return state_->prepared.cores;
}

std::string Kernel::hash() const {
  return state_->hash;
}

const Config& Kernel::config() const {
  return state_->config;
}

}  // namespace trnsim
