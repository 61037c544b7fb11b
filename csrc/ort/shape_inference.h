// Output type and shape of DynamicTRTResize for ONNX Runtime's graph
// resolution: X's element type and rank; the leading dims of X where they pass
// through (size tensor, (H, W) sizes; sizes with one entry per axis keep none);
// the size tensor's last two dims. Values (scales,
// sizes) are not visible to shape inference, so those dims get fresh names.
#pragma once

#include <onnxruntime_c_api.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace onnxtool {
namespace ort_op {


// The input infos belong to the context (the C++ wrapper releases them
// unfreed too); only the output info is ours to free.
inline OrtStatus* infer_output_shape(const OrtApi* api, OrtShapeInferContext* ctx) {
  OrtTensorTypeAndShapeInfo* xi = nullptr;
  if (OrtStatus* s = api->ShapeInferContext_GetInputTypeShape(ctx, 0, &xi)) return s;
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  size_t rank = 0;
  OrtStatus* status = api->GetTensorElementType(xi, &type);
  if (status == nullptr) status = api->GetDimensionsCount(xi, &rank);
  std::vector<int64_t> dims(rank, -1);
  std::vector<const char*> symbols(rank, "");
  if (status == nullptr) status = api->GetDimensions(xi, dims.data(), rank);
  if (status == nullptr) status = api->GetSymbolicDimensions(xi, symbols.data(), rank);
  std::vector<std::string> names(symbols.begin(), symbols.end());
  if (status != nullptr) return status;
  // A rank-0 "shape" is what an input without any shape looks like here: leave the output unknown.
  if (rank == 0) return nullptr;

  OrtTensorTypeAndShapeInfo* si = nullptr;
  if (OrtStatus* s = api->ShapeInferContext_GetInputTypeShape(ctx, 1, &si)) return s;
  size_t srank = 0;
  ONNXTensorElementDataType stype = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  status = api->GetTensorElementType(si, &stype);
  if (status == nullptr) status = api->GetDimensionsCount(si, &srank);
  std::vector<int64_t> sdims(srank, -1);
  if (status == nullptr) status = api->GetDimensions(si, sdims.data(), srank);
  if (status != nullptr) return status;

  std::vector<int64_t> out(rank, -1);
  std::vector<std::string> out_names(rank);
  const bool size_tensor = srank >= 2 && rank >= 2;
  const bool integer_sizes = !size_tensor && (stype == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 ||
                                               stype == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32);
  // Sizes with one entry per axis of X may resize any axis (D of N, C, D, H, W): their values are not
  // visible here, so no dim of X is kept. Only (H, W) sizes (or a size tensor) keep the leading dims.
  const bool full_sizes = integer_sizes && srank == 1 && sdims[0] == static_cast<int64_t>(rank);
  const bool keep_leading = size_tensor || (integer_sizes && !full_sizes);
  for (size_t i = 0; i < rank; ++i) {
    if (keep_leading && i + 2 < rank) {  // kept: the leading dims pass through
      out[i] = dims[i];
      out_names[i] = names[i];
    } else if (size_tensor && i + 2 >= rank) {
      out[i] = sdims[srank - rank + i];
    }
  }
  // An unknown dim needs a name: ORT stores a nameless -1 as the value -1 and
  // then warns on every run. Fresh names promise nothing about equality.
  static std::atomic<uint64_t> counter{0};
  for (size_t i = 0; i < rank; ++i)
    if (out[i] < 0 && out_names[i].empty())
      out_names[i] = "DynamicTRTResize_dim_" + std::to_string(counter.fetch_add(1));
  std::vector<const char*> out_symbols;
  for (const std::string& n : out_names) out_symbols.push_back(n.c_str());
  OrtTensorTypeAndShapeInfo* oi = nullptr;
  if (OrtStatus* s = api->CreateTensorTypeAndShapeInfo(&oi)) return s;
  status = api->SetTensorElementType(oi, type);
  if (status == nullptr) status = api->SetDimensions(oi, out.data(), rank);
  if (status == nullptr) status = api->SetSymbolicDimensions(oi, out_symbols.data(), rank);
  if (status == nullptr) status = api->ShapeInferContext_SetOutputTypeShape(ctx, 0, oi);
  api->ReleaseTensorTypeAndShapeInfo(oi);
  return status;
}

}  // namespace ort_op
}  // namespace onnxtool
