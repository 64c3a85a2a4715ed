// Running the NKI front end's tracer (`PYTHON -m trnsim_nki trace`, src/frontend) in a child
// process to lower an NKI Python kernel to trnsim-kernel/1 JSON for one target. Finds the
// Python interpreter and the front end's packages, passes the target on stdin, and turns the
// tracer's exit codes into trnsim's (2: one located message; 70: an internal error). Leaves out
// parsing the JSON (kernel/parse.hpp) and any time limit: a tracing kernel that never returns
// runs until it is interrupted (a sweep's --timeout kills the worker, and the tracer with it).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "nki/kernel_reference.hpp"

namespace trnsim::nki {

/// The Python interpreter: $TRNSIM_PYTHON when set, else /usr/bin/python3 when it exists, else
/// python3 on PATH. Throws InputError when there is none (or $TRNSIM_PYTHON is not executable).
std::string python_interpreter();

/// The directory holding the front end's packages (trnsim_nki, neuronxcc, nki): $TRNSIM_NKI_PATH
/// when set, else <directory of the trnsim binary>/../share/trnsim/python when it exists (an
/// installed tree), else the source tree's src/frontend. Throws InputError when the chosen
/// directory has no trnsim_nki package.
std::string frontend_directory();

struct TraceRequest {
  std::string kernel;             ///< FILE.py[::FUNCTION], relative to the working directory
  NkiArguments arguments;         ///< --input, --kwarg, --grid
  nlohmann::ordered_json target;  ///< target_json() of the config
  bool traceback = false;         ///< show Python tracebacks of kernel errors on `diagnostics`
};

/// Traces the kernel; returns the trnsim-kernel/1 JSON text. What the kernel prints goes to
/// `diagnostics`, and so does the front end's traceback of an error when `traceback` is set.
/// Throws InputError for a kernel or input the front end rejects (its one-line message, e.g.
/// "k.py:12: the kernel raised ValueError: ..."), and when the front end cannot run or dies.
/// An internal error of the front end (its exit 70) writes its report to `diagnostics` and
/// throws std::runtime_error.
std::string trace_kernel(const TraceRequest& request, std::ostream& diagnostics);

}  // namespace trnsim::nki
