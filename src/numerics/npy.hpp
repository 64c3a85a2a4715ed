// NumPy's .npy files (format versions 1.0, 2.0 and 3.0, as numpy.lib.format defines them): the
// inputs and outputs of functional execution. A file is the magic "\x93NUMPY", the version, the
// header length (2 bytes in 1.0, 4 in 2.0 and 3.0, little-endian), a header that is a Python
// dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with spaces to a
// multiple of 64 bytes and ended by a newline, then the elements in C order.
// Element types: the little-endian (or byte-order-free) descriptions of bool, 8/16/32-bit signed
// and unsigned integers and 16/32/64-bit floats, and raw 1- and 2-byte void ('|V1', '|V2': how
// NumPy saves bfloat16 and the FP8 types of ml_dtypes), whose meaning the kernel's tensor
// declares. Left out: big-endian data, Fortran order, structured and object arrays (each a
// located error naming what was found).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trnsim::numerics {

struct NpyArray {
  std::string descr;                 ///< NumPy's type description, e.g. "<f4", "|u1", "|V2"
  std::vector<std::uint64_t> shape;  ///< empty: a scalar (one element)
  std::vector<std::uint8_t> data;    ///< the elements, C order, little-endian

  std::uint64_t elements() const;
};

/// A shape as messages write it: "[2, 128, 64]" ("[]" for a scalar).
std::string format_shape(const std::vector<std::uint64_t>& shape);

/// Bytes of one element of `descr` (0 when trnsim does not read that description).
std::uint32_t npy_item_bytes(std::string_view descr);

/// Parses the bytes of a .npy file. `where` names it in messages (a path). Throws InputError
/// ("WHERE: expected ..., found ...") for anything left out above or malformed.
NpyArray parse_npy(std::string_view bytes, const std::string& where);

/// The bytes of a version 1.0 .npy file for `array` (its descr must be one npy_item_bytes reads).
std::string npy_bytes(const NpyArray& array);

/// Reads a .npy file (InputError naming the path when it cannot be read or parsed).
NpyArray read_npy(const std::string& path);

/// Writes a .npy file by trnsim's rule for result files (util/output_target.hpp): never half
/// written. `option` names it in messages ("--output-dir").
void write_npy(const std::string& path, const NpyArray& array, const std::string& option);

}  // namespace trnsim::numerics
