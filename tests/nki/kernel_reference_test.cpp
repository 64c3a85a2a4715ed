// Recognising NKI Python kernels among kernel references, and the rule that a kernel gets only
// the arguments of its kind.
#include "nki/kernel_reference.hpp"

#include <gtest/gtest.h>

#include "util/error.hpp"

namespace trnsim::nki {
namespace {

/// The InputError message of check_kernel_arguments, or "" when it passes.
std::string error_of(const std::string& kernel, const std::vector<std::string>& params,
                     const NkiArguments& nki) {
  try {
    check_kernel_arguments(kernel, params, nki);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(KernelReference, APythonFileIsAnNkiKernelWithOrWithoutAFunction) {
  EXPECT_TRUE(is_nki_kernel("k.py"));
  EXPECT_TRUE(is_nki_kernel("dir/k.py::vector_add"));
  EXPECT_TRUE(is_nki_kernel("/abs/dir.v2/k.py::f"));
  EXPECT_TRUE(is_nki_kernel("k.py::"));  // the tracer reports the missing function name
  EXPECT_FALSE(is_nki_kernel("k.json"));
  EXPECT_FALSE(is_nki_kernel("k.json::f"));
  EXPECT_FALSE(is_nki_kernel("k.pyc"));
  EXPECT_FALSE(is_nki_kernel(".py"));
  EXPECT_FALSE(is_nki_kernel(""));
}

TEST(KernelReference, FilePartAndReplacingIt) {
  EXPECT_EQ(kernel_file("dir/k.py::f"), "dir/k.py");
  EXPECT_EQ(kernel_file("dir/k.py"), "dir/k.py");
  EXPECT_EQ(kernel_file("dir/k.json"), "dir/k.json");
  EXPECT_EQ(kernel_file("a::b.py::f"), "a::b.py");
  EXPECT_EQ(with_kernel_file("k.py::f", "specs/k.py"), "specs/k.py::f");
  EXPECT_EQ(with_kernel_file("k.py", "specs/k.py"), "specs/k.py");
  EXPECT_EQ(with_kernel_file("k.json", "specs/k.json"), "specs/k.json");
}

TEST(KernelArguments, EachKindTakesItsOwnOptions) {
  NkiArguments nki;
  nki.inputs = {"a=float32[128,512]"};
  nki.kwargs = {"T=4"};
  nki.grid = "2";
  EXPECT_EQ(error_of("k.py::f", {}, nki), "");
  EXPECT_EQ(error_of("k.json", {"T=4"}, {}), "");
  EXPECT_EQ(error_of("k.py::f", {"T=4"}, {}),
            "--param T=4: 'k.py::f' is an NKI Python kernel: give its arguments with --kwarg "
            "NAME=VALUE and its tensors with --input NAME=DTYPE[SHAPE]");
  EXPECT_EQ(error_of("k.json", {}, nki),
            "--input a=float32[128,512]: 'k.json' is a JSON kernel, which declares its tensors: "
            "--input takes NAME=FILE.npy, the values of an HBM tensor for --numerics");
  NkiArguments values_only;
  values_only.inputs = {"a=a.npy"};
  EXPECT_EQ(error_of("k.json", {}, values_only), "");
  NkiArguments kwargs_only;
  kwargs_only.kwargs = {"T=4"};
  EXPECT_EQ(error_of("k.json", {}, kwargs_only),
            "--kwarg T=4: 'k.json' is a JSON kernel: --kwarg and --grid are for NKI Python "
            "kernels (FILE.py::FUNCTION); set a JSON kernel's params with --param NAME=VALUE");
  NkiArguments grid_only;
  grid_only.grid = "2,2";
  EXPECT_EQ(error_of("k.json", {}, grid_only).rfind("--grid 2,2: 'k.json' is a JSON kernel", 0),
            0u);
}

TEST(KernelArguments, AssignmentsNeedANameAndAreGivenOnce) {
  NkiArguments nki;
  nki.inputs = {"float32[128]"};
  EXPECT_EQ(error_of("k.py", {}, nki),
            "--input float32[128]: expected NAME=DTYPE[SHAPE] (e.g. a=float32[128,512]) or "
            "NAME=FILE.npy");
  nki.inputs = {"a=float32[1]"};
  nki.kwargs = {"=4"};
  EXPECT_EQ(error_of("k.py", {}, nki),
            "--kwarg =4: expected NAME=VALUE (VALUE a Python literal, e.g. T=4)");
  nki.kwargs = {"T=4", "T=8"};
  EXPECT_EQ(error_of("k.py", {}, nki), "--kwarg T=8: 'T' is given twice");
}

}  // namespace
}  // namespace trnsim::nki
