// trnsim: entry point. Parses the command line, dispatches to a subcommand, and maps errors to
// the documented exit codes (util/error.hpp): results go to stdout, diagnostics to stderr.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <streambuf>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "util/error.hpp"
#include "util/huge_pages.hpp"
#include "util/log.hpp"

namespace {

void configure_logging(int verbosity, const std::vector<std::string>& log_specs) {
  trnsim::log::configure(verbosity, log_specs);
  auto logger = spdlog::stderr_color_mt("trnsim");
  logger->set_pattern("trnsim: %l: %v");
  logger->set_level(verbosity >= 2   ? spdlog::level::debug
                    : verbosity == 1 ? spdlog::level::info
                                     : spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

/// std::cout's buffer when standard output is not a terminal: write(2) in large blocks, keeping
/// the first error (errno) so that a lost result is reported with its reason. A terminal keeps
/// the usual line-by-line stream.
class StdoutBuffer : public std::streambuf {
 public:
  StdoutBuffer() { setp(buffer_, buffer_ + sizeof buffer_); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!write_out()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return write_out() ? 0 : -1; }

 private:
  bool write_out() {
    const char* data = pbase();
    auto size = static_cast<std::size_t>(pptr() - pbase());
    while (size > 0 && error_ == 0) {
      const ssize_t written = ::write(STDOUT_FILENO, data, size);
      if (written < 0) {
        if (errno != EINTR) error_ = errno;
        continue;
      }
      data += written;
      size -= static_cast<std::size_t>(written);
    }
    setp(buffer_, buffer_ + sizeof buffer_);
    return error_ == 0;
  }

  char buffer_[1 << 16];
  int error_ = 0;  ///< errno of the first failed write, 0 when none failed
};

/// `code`, unless standard output could not be written (a full disk, /dev/full, a closed
/// file): then one message and kExitInvalidInput, so no result is silently lost.
int check_stdout(int code, StdoutBuffer* buffer, std::streambuf* original) {
  std::cout.flush();
  const bool failed = !std::cout.good() || (buffer != nullptr && buffer->error() != 0);
  const int error = buffer != nullptr ? buffer->error() : 0;
  if (buffer != nullptr) std::cout.rdbuf(original);  // `buffer` ends with main()
  if (!failed || code == trnsim::kExitInvalidInput || code == trnsim::kExitInternal) return code;
  std::cerr << "trnsim: error: writing standard output failed"
            << (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) << "\n";
  return trnsim::kExitInvalidInput;
}

int run(int argc, char** argv) {
  // The SystemC banner is not ours to print on stdout.
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);

  CLI::App app{"trnsim: a cycle-approximate simulator of AWS Trainium accelerators"};
  app.set_version_flag("--version", std::string("trnsim ") + TRNSIM_VERSION);
  app.require_subcommand(1);
  trnsim::cli::CommandContext context;
  app.add_flag("-v,--verbose", context.verbosity,
               "More diagnostics on stderr (-v info and NKI front-end tracebacks, -vv debug)");
  std::vector<std::string> log_specs;
  app.add_option("--log", log_specs,
                 "Trace a simulator component on stderr: COMPONENT=LEVEL, repeatable or comma-"
                 "separated (components: core, core.dma, dma, collective; levels: trace, debug, "
                 "info, warn, error, off; -vv sets every component to debug)")
      ->type_name("COMPONENT=LEVEL")
      ->delimiter(',');
  app.footer(
      "Exit codes: 0 success, 1 a requested check failed, 2 invalid input or an output that "
      "cannot be written, 70 internal error.");

  // -v and --log may follow the subcommand too (`trnsim run k.json --log dma=debug`).
  app.fallthrough();

  app.parse_complete_callback(
      [&context, &log_specs] { configure_logging(context.verbosity, log_specs); });

  trnsim::cli::register_config_command(app, context);
  trnsim::cli::register_check_command(app, context);
  trnsim::cli::register_run_command(app, context);
  trnsim::cli::register_sweep_command(app, context);
  trnsim::cli::register_compare_command(app, context);
  trnsim::cli::register_regress_command(app, context);
  trnsim::cli::register_collective_command(app, context);
  trnsim::cli::register_validate_command(app, context);
  trnsim::cli::register_nki_command(app, context);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and usage on stderr
    return trnsim::kExitInvalidInput;
  } catch (const trnsim::InputError& e) {
    std::cerr << "trnsim: error: " << e.what() << "\n";
    return trnsim::kExitInvalidInput;
  } catch (const std::exception& e) {
    std::cerr << "trnsim: internal error: " << e.what() << "\n";
    return trnsim::kExitInternal;
  }
  return context.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  trnsim::util::prefer_huge_pages(argv);
  std::unique_ptr<StdoutBuffer> buffer;
  std::streambuf* original = std::cout.rdbuf();
  if (::isatty(STDOUT_FILENO) == 0) {
    buffer = std::make_unique<StdoutBuffer>();
    std::cout.rdbuf(buffer.get());
  }
  const int code = run(argc, argv);
  return check_stdout(code, buffer.get(), original);
}
