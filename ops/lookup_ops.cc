// Lookup tables (tf.lookup, the feature columns' vocabularies): HashTableV2
// (filled once, by InitializeTableV2, InitializeTableFromTextFileV2 or
// LookupTableImportV2) and MutableHashTableV2 (LookupTableInsertV2), both
// resources read by LookupTableFindV2, LookupTableSizeV2 and
// LookupTableExportV2 (kernels/cpu/lookup_table_ops.cc).
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "graph/op_registry.h"
#include "ops/shape_fns.h"

namespace towerflow {
namespace {

absl::Status ScalarHandle(InferenceContext* c) {
  c->set_output(0, PartialTensorShape({}));
  return absl::OkStatus();
}

// The handle input must be a scalar.
absl::Status CheckHandle(InferenceContext* c) {
  PartialTensorShape handle;
  return c->WithRank(c->input(0), 0, &handle);
}

[[maybe_unused]] const bool kRegistered = [] {
  for (const char* name : {"HashTableV2", "MutableHashTableV2"}) {
    RegisterOp(OpDefBuilder(name, __FILE__)
                   .Output("table_handle: resource")
                   .Attr("container: string = ''")
                   .Attr("shared_name: string = ''")
                   .Attr("use_node_name_sharing: bool = false")
                   .Attr("key_dtype: type")
                   .Attr("value_dtype: type")
                   .SetIsStateful()
                   .Doc(std::string(name) == "HashTableV2"
                            ? "A table filled once by an initializer, then read."
                            : "A table that LookupTableInsertV2 adds to or overwrites.")
                   .SetShapeFn(ScalarHandle));
  }
  RegisterOp(OpDefBuilder("LookupTableFindV2", __FILE__)
                 .Input("table_handle: resource")
                 .Input("keys: Tin")
                 .Input("default_value: Tout")
                 .Output("values: Tout")
                 .Attr("Tin: type")
                 .Attr("Tout: type")
                 .SetIsStateful()
                 .Doc("The value of each key, or default_value for a key not in the table.")
                 .SetShapeFn([](InferenceContext* c) {
                   TW_RETURN_IF_ERROR(CheckHandle(c));
                   c->set_output(0, c->input(1));
                   return absl::OkStatus();
                 }));
  for (const char* name : {"InitializeTableV2", "LookupTableImportV2", "LookupTableInsertV2"}) {
    const bool init = std::string(name) == "InitializeTableV2";
    RegisterOp(OpDefBuilder(name, __FILE__)
                   .Input("table_handle: resource")
                   .Input(init ? "keys: Tkey" : "keys: Tin")
                   .Input(init ? "values: Tval" : "values: Tout")
                   .Attr(init ? "Tkey: type" : "Tin: type")
                   .Attr(init ? "Tval: type" : "Tout: type")
                   .SetIsStateful()
                   .Doc(std::string(name) == "LookupTableInsertV2"
                            ? "Adds keys -> values to a mutable table (overwriting)."
                            : "Fills the table with keys -> values.")
                   .SetShapeFn(CheckHandle));
  }
  RegisterOp(OpDefBuilder("InitializeTableFromTextFileV2", __FILE__)
                 .Input("table_handle: resource")
                 .Input("filename: string")
                 .Attr("key_index: int >= -2")
                 .Attr("value_index: int >= -2")
                 .Attr("vocab_size: int >= -1 = -1")
                 .Attr("delimiter: string = '\\t'")
                 .AttrAddedAfterTF1("offset: int = 0")
                 .SetIsStateful()
                 .Doc("Fills the table from a text file's lines: a key and a value per line, "
                      "each a column, the whole line (-2) or the line number (-1, plus offset).")
                 .SetShapeFn(CheckHandle));
  RegisterOp(OpDefBuilder("LookupTableSizeV2", __FILE__)
                 .Input("table_handle: resource")
                 .Output("size: int64")
                 .SetIsStateful()
                 .Doc("The number of entries in the table.")
                 .SetShapeFn([](InferenceContext* c) {
                   TW_RETURN_IF_ERROR(CheckHandle(c));
                   c->set_output(0, PartialTensorShape({}));
                   return absl::OkStatus();
                 }));
  RegisterOp(OpDefBuilder("LookupTableExportV2", __FILE__)
                 .Input("table_handle: resource")
                 .Output("keys: Tkeys")
                 .Output("values: Tvalues")
                 .Attr("Tkeys: type")
                 .Attr("Tvalues: type")
                 .SetIsStateful()
                 .Doc("The table's keys and values, in no particular order.")
                 .SetShapeFn([](InferenceContext* c) {
                   TW_RETURN_IF_ERROR(CheckHandle(c));
                   c->set_output(0, PartialTensorShape({-1}));
                   c->set_output(1, PartialTensorShape({-1}));
                   return absl::OkStatus();
                 }));
  return true;
}();

}  // namespace
}  // namespace towerflow
