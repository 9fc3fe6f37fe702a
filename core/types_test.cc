#include "core/types.h"

#include "gtest/gtest.h"

namespace towerflow {
namespace {

TEST(TypesTest, NamesFollowTensorFlowCpp) {
  EXPECT_EQ(DataTypeString(DT_FLOAT), "float");
  EXPECT_EQ(DataTypeString(DT_INT64), "int64");
  EXPECT_EQ(DataTypeString(DT_FLOAT_REF), "float_ref");
  EXPECT_EQ(DataTypeString(DT_RESOURCE), "resource");
  EXPECT_EQ(DataTypeString(static_cast<DataType>(77)), "unknown dtype enum (77)");
}

TEST(TypesTest, ParsesCppPythonAndEnumSpellings) {
  DataType dt;
  ASSERT_TRUE(DataTypeFromString("float", &dt));
  EXPECT_EQ(dt, DT_FLOAT);
  ASSERT_TRUE(DataTypeFromString("float32", &dt));
  EXPECT_EQ(dt, DT_FLOAT);
  ASSERT_TRUE(DataTypeFromString("float64", &dt));
  EXPECT_EQ(dt, DT_DOUBLE);
  ASSERT_TRUE(DataTypeFromString("DT_INT32", &dt));
  EXPECT_EQ(dt, DT_INT32);
  ASSERT_TRUE(DataTypeFromString("int64_ref", &dt));
  EXPECT_EQ(dt, DT_INT64_REF);
  EXPECT_FALSE(DataTypeFromString("float33", &dt));
  EXPECT_FALSE(DataTypeFromString("", &dt));
}

TEST(TypesTest, RefTypesAreBasePlusHundred) {
  EXPECT_TRUE(IsRefType(DT_FLOAT_REF));
  EXPECT_FALSE(IsRefType(DT_FLOAT));
  EXPECT_EQ(BaseType(DT_INT32_REF), DT_INT32);
  EXPECT_EQ(MakeRefType(DT_BOOL), DT_BOOL_REF);
  EXPECT_EQ(static_cast<int>(DT_FLOAT_REF), 101);
}

TEST(TypesTest, ValidityCoversGapsAndRefs) {
  EXPECT_TRUE(IsValidDataType(DT_UINT64));
  EXPECT_TRUE(IsValidDataType(DT_UINT64_REF));
  EXPECT_FALSE(IsValidDataType(0));
  EXPECT_FALSE(IsValidDataType(50));
  EXPECT_FALSE(IsValidDataType(100));
  EXPECT_FALSE(IsValidDataType(-3));
  // A ref of a ref: DT_INT64_REF (109) + 100. Found by fuzz/tensor_proto, where
  // DataTypeString dereferenced a null type entry.
  EXPECT_FALSE(IsValidDataType(209));
  EXPECT_EQ(DataTypeString(static_cast<DataType>(209)), "unknown dtype enum (209)");
}

TEST(TypesTest, ElementSizes) {
  EXPECT_EQ(DataTypeSize(DT_FLOAT), 4);
  EXPECT_EQ(DataTypeSize(DT_DOUBLE), 8);
  EXPECT_EQ(DataTypeSize(DT_BOOL), 1);
  EXPECT_EQ(DataTypeSize(DT_HALF), 2);
  EXPECT_EQ(DataTypeSize(DT_COMPLEX128), 16);
  EXPECT_EQ(DataTypeSize(DT_FLOAT_REF), 4);
  EXPECT_EQ(DataTypeSize(DT_STRING), 0);
  EXPECT_EQ(DataTypeSize(DT_RESOURCE), 0);
}

TEST(TypesTest, TypeSetsMatchTensorFlowMacros) {
  EXPECT_EQ(RealNumberTypes().size(), 12u);
  EXPECT_EQ(NumberTypes().size(), 19u);  // TF's numbertype lists 19 types
  for (DataType dt : RealNumberTypes()) {
    EXPECT_FALSE(DataTypeIsComplex(dt)) << DataTypeString(dt);
    EXPECT_FALSE(DataTypeIsQuantized(dt)) << DataTypeString(dt);
  }
}

TEST(TypesTest, CppTypesMapToEnums) {
  EXPECT_EQ(DataTypeToEnum<float>::value, DT_FLOAT);
  EXPECT_EQ(DataTypeToEnum<int64_t>::value, DT_INT64);
  EXPECT_EQ(DataTypeToEnum<std::string>::value, DT_STRING);
  EXPECT_EQ(DataTypeToEnum<bool>::value, DT_BOOL);
}

}  // namespace
}  // namespace towerflow
