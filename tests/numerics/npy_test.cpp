// NumPy .npy files (numerics/npy.hpp): files built byte by byte from the format's definition
// (numpy.lib.format), what trnsim writes, and a located error for each kind of bad file.
#include "numerics/npy.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "util/error.hpp"

namespace trnsim::numerics {
namespace {

/// A version 1.0 file: magic, version 1.0, the header length (little-endian), `header`, `data`.
std::string npy_v1(const std::string& header, const std::string& data) {
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

std::string message_of(const std::string& bytes) {
  try {
    parse_npy(bytes, "x.npy");
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

TEST(Npy, ReadsAVersionOneFileAsNumPyWritesIt) {
  // np.save of np.array([[1, 2, 3], [4, 5, 6]], dtype='<f4'): a 118-byte header (10 + 118 = 128),
  // then six float32 (1.0f = 00 00 80 3F).
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string data;
  for (int i = 0; i < 6; ++i) data += std::string("\x00\x00\x80\x3F", 4);
  const NpyArray array = parse_npy(npy_v1(header, data), "x.npy");
  EXPECT_EQ(array.descr, "<f4");
  EXPECT_EQ(array.shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(array.elements(), 6u);
  ASSERT_EQ(array.data.size(), 24u);
  EXPECT_EQ(array.data[3], 0x3F);
}

TEST(Npy, ReadsOtherKeyOrdersQuotesScalarsAndOneTuples) {
  const NpyArray scalar = parse_npy(
      npy_v1("{\"shape\": (), \"fortran_order\": False, \"descr\": \"|u1\"}\n", "\x07"), "x.npy");
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.elements(), 1u);
  const NpyArray vector = parse_npy(
      npy_v1("{'descr': '|V2', 'fortran_order': False, 'shape': (3,), }\n", std::string(6, '\x01')),
      "x.npy");
  EXPECT_EQ(vector.shape, (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(npy_item_bytes(vector.descr), 2u);  // bfloat16 as ml_dtypes saves it
}

TEST(Npy, WritesWhatItReadsWithAHeaderPaddedTo64Bytes) {
  NpyArray array;
  array.descr = "<i4";
  array.shape = {2, 1};
  array.data = {1, 0, 0, 0, 2, 0, 0, 0};
  const std::string bytes = npy_bytes(array);
  const std::size_t header_length = static_cast<unsigned char>(bytes[8]) |
                                    static_cast<std::size_t>(static_cast<unsigned char>(bytes[9]))
                                        << 8;
  EXPECT_EQ((10 + header_length) % 64, 0u);
  EXPECT_EQ(bytes[10 + header_length - 1], '\n');
  EXPECT_NE(bytes.find("'shape': (2, 1), }"), std::string::npos);
  const NpyArray back = parse_npy(bytes, "y.npy");
  EXPECT_EQ(back.descr, array.descr);
  EXPECT_EQ(back.shape, array.shape);
  EXPECT_EQ(back.data, array.data);
  array.shape = {5};
  array.data.assign(20, 0);
  EXPECT_NE(npy_bytes(array).find("'shape': (5,), }"), std::string::npos);  // a 1-tuple
}

TEST(Npy, BadFilesAreLocatedErrors) {
  EXPECT_EQ(message_of("PK\x03\x04zipfile"),
            "x.npy: expected a NumPy .npy file (starting with \\x93NUMPY), found 'PK??zipf'");
  EXPECT_EQ(
      message_of(npy_v1("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n", "abcd")),
      "x.npy: expected a little-endian element type (bool, int8-32, uint8-32, float16, "
      "float32, float64, or 1-2 byte void such as bfloat16), found descr '>f4'");
  EXPECT_EQ(
      message_of(npy_v1("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }\n", "abcd")),
      "x.npy: expected fortran_order False (C order; save numpy.ascontiguousarray(x)), "
      "found True");
  EXPECT_EQ(
      message_of(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", "abcd")),
      "x.npy: expected 2 elements of 4 bytes (8 bytes) after the header, found 4 bytes");
  EXPECT_NE(
      message_of(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2 x), }\n", "abcdefgh"))
          .find("expected ',' or ')' in the shape tuple at offset"),
      std::string::npos);
  EXPECT_NE(message_of(npy_v1("{'descr': '<f4', 'shape': (1,), }\n", "abcd"))
                .find("found no 'fortran_order'"),
            std::string::npos);
  std::string version9 = npy_v1("{}", "");
  version9[6] = '\x09';
  EXPECT_EQ(message_of(version9), "x.npy: expected .npy format version 1, 2 or 3, found version 9");
  EXPECT_EQ(message_of("\x93NUMPY\x01"), "x.npy: expected a .npy header, found the end");
}

}  // namespace
}  // namespace trnsim::numerics
