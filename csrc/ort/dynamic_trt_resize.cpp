// ONNX Runtime custom-op library: DynamicTRTResize in the domain `trt.plugins`
// (the domain ORT's TensorRT provider uses for plugins), computed by the same
// kernel as the PyTorch op (../resize_kernel.h). Load it with
// SessionOptions.register_custom_ops_library(path) (Python) or
// Ort::SessionOptions::RegisterCustomOpsLibrary (C++).
//
// Signatures (every form swap-plugin writes), told apart by the second input:
//   (X, scales)       scales: 1-D float, one entry per axis of X. Output size
//                     floor(float32(in) * scale) and coordinates as ONNX
//                     Runtime's own Resize computes them (resize_ort.h).
//   (X, size_tensor)  MMDeploy's: rank >= 2, any element type; only the shape
//                     is read: its last two dims are the output H, W.
//   (X, sizes)        the TensorRT V3 form: 1-D int64 (or int32), the output
//                     (H, W) or one entry per axis of X, as Resize's `sizes`.
// X: float32, float64, float16 / bfloat16 (computed in float32, rounded once), uint8,
// int8, int32 (ORT's integer arithmetic): see graphsurgeon_tools/resize/kernel_dtypes.py.
// Integer X with mode 'cubic' is refused (ORT's own Resize cannot run it).
// Attributes: those of ONNX Resize (mode, coordinate_transformation_mode,
// cubic_coeff_a, exclude_outside, nearest_mode; ONNX defaults when absent)
// plus MMDeploy's align_corners (int), which stands for
// coordinate_transformation_mode="align_corners" when that is absent.
// Others (plugin_version, plugin_namespace, tensorrt_plugin_shape_input_indices)
// are TensorRT's and ignored. Errors are ORT statuses naming the node.
//
// Uses only the C API reached through the OrtApiBase handed to
// RegisterCustomOps (no link against libonnxruntime); built against
// ORT_API_VERSION 21 headers, it loads into ONNX Runtime 1.21 and later.
// Does NOT support antialias, axes, keep_aspect_ratio_policy or roi (the
// plugin has none of them; swap-plugin refuses such nodes).
#include <onnxruntime_c_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "../resize_kernel.h"
#include "float16.h"
#include "ort_executor.h"
#include "shape_inference.h"

namespace {

using onnxtool::ort_op::OrtExecutor;
using onnxtool::ort_op::bfloat16_to_float;
using onnxtool::ort_op::float_to_bfloat16;
using onnxtool::ort_op::float_to_half;
using onnxtool::ort_op::half_to_float;
using onnxtool::ResizeAttrs;
using onnxtool::ResizePlan;

const OrtApi* g_api = nullptr;
constexpr const char* kDomain = "trt.plugins";
constexpr const char* kOpName = "DynamicTRTResize";

OrtStatus* error(OrtErrorCode code, const std::string& message) {
  return g_api->CreateStatus(code, message.c_str());
}

// ---- attributes --------------------------------------------------------------

struct Kernel {
  std::string where;  // "DynamicTRTResize node 'name'"
  std::string coord;  // resolved coordinate_transformation_mode
  ResizeAttrs attrs;
};

// Reads a string attribute: false when absent. A present attribute of another type is an error.
OrtStatus* string_attr(const OrtKernelInfo* info, const Kernel& k, const char* name,
                       std::string* out, bool* present) {
  size_t size = 0;
  OrtStatus* status = g_api->KernelInfoGetAttribute_string(info, name, nullptr, &size);
  if (status == nullptr) {
    std::vector<char> buf(size);
    status = g_api->KernelInfoGetAttribute_string(info, name, buf.data(), &size);
    if (status != nullptr) return status;
    out->assign(buf.data());
    *present = true;
    return nullptr;
  }
  g_api->ReleaseStatus(status);
  int64_t i = 0;
  float f = 0;
  OrtStatus* as_int = g_api->KernelInfoGetAttribute_int64(info, name, &i);
  OrtStatus* as_float = g_api->KernelInfoGetAttribute_float(info, name, &f);
  const bool other_type = as_int == nullptr || as_float == nullptr;
  if (as_int) g_api->ReleaseStatus(as_int);
  if (as_float) g_api->ReleaseStatus(as_float);
  if (other_type) return error(ORT_INVALID_ARGUMENT, k.where + ": attribute " + name + " must be a string");
  *present = false;
  return nullptr;
}

OrtStatus* int_attr(const OrtKernelInfo* info, const Kernel& k, const char* name, int64_t* out,
                    bool* present) {
  OrtStatus* status = g_api->KernelInfoGetAttribute_int64(info, name, out);
  if (status == nullptr) {
    *present = true;
    return nullptr;
  }
  g_api->ReleaseStatus(status);
  float f = 0;
  status = g_api->KernelInfoGetAttribute_float(info, name, &f);
  if (status == nullptr) return error(ORT_INVALID_ARGUMENT, k.where + ": attribute " + name + " must be an int");
  g_api->ReleaseStatus(status);
  *present = false;
  return nullptr;
}

OrtStatus* float_attr(const OrtKernelInfo* info, const Kernel& k, const char* name, float* out,
                      bool* present) {
  OrtStatus* status = g_api->KernelInfoGetAttribute_float(info, name, out);
  if (status == nullptr) {
    *present = true;
    return nullptr;
  }
  g_api->ReleaseStatus(status);
  int64_t i = 0;
  status = g_api->KernelInfoGetAttribute_int64(info, name, &i);
  if (status == nullptr) return error(ORT_INVALID_ARGUMENT, k.where + ": attribute " + name + " must be a float");
  g_api->ReleaseStatus(status);
  *present = false;
  return nullptr;
}

OrtStatus* read_attributes(const OrtKernelInfo* info, Kernel* k) {
  size_t size = 0;
  std::string node;
  if (OrtStatus* s = g_api->KernelInfo_GetNodeName(info, nullptr, &size)) {
    g_api->ReleaseStatus(s);
  } else {
    std::vector<char> buf(size + 1, '\0');
    if (OrtStatus* s2 = g_api->KernelInfo_GetNodeName(info, buf.data(), &size)) g_api->ReleaseStatus(s2);
    node = buf.data();
  }
  k->where = std::string(kOpName) + " node '" + node + "'";

  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
  float cubic = -0.75f;
  int64_t exclude = 0, align_corners = 0;
  bool has_mode, has_coord, has_nearest, has_cubic, has_exclude, has_align;
  if (OrtStatus* s = string_attr(info, *k, "mode", &mode, &has_mode)) return s;
  if (OrtStatus* s = string_attr(info, *k, "coordinate_transformation_mode", &coord, &has_coord)) return s;
  if (OrtStatus* s = string_attr(info, *k, "nearest_mode", &nearest, &has_nearest)) return s;
  if (OrtStatus* s = float_attr(info, *k, "cubic_coeff_a", &cubic, &has_cubic)) return s;
  if (OrtStatus* s = int_attr(info, *k, "exclude_outside", &exclude, &has_exclude)) return s;
  if (OrtStatus* s = int_attr(info, *k, "align_corners", &align_corners, &has_align)) return s;
  if (!has_coord && has_align && align_corners != 0) coord = "align_corners";
  if (has_coord && has_align && (align_corners != 0) != (coord == "align_corners"))
    return error(ORT_INVALID_ARGUMENT,
                 k->where + ": align_corners=" + std::to_string(align_corners) +
                     " contradicts coordinate_transformation_mode='" + coord + "'");
  int64_t antialias = 0;
  bool has_antialias;
  if (OrtStatus* s = int_attr(info, *k, "antialias", &antialias, &has_antialias)) return s;
  if (antialias != 0)
    return error(ORT_NOT_IMPLEMENTED, k->where + ": antialias=1 is not supported by the plugin");
  if (coord == "tf_crop_and_resize")
    return error(ORT_NOT_IMPLEMENTED,
                 k->where + ": coordinate_transformation_mode 'tf_crop_and_resize' needs roi, which the plugin has no input for");
  const std::string bad = onnxtool::parse_attrs(mode, coord, nearest, cubic, exclude != 0, 0.0, false, &k->attrs);
  if (!bad.empty()) return error(ORT_INVALID_ARGUMENT, k->where + ": " + bad);
  k->coord = coord;
  return nullptr;
}

// ---- compute -----------------------------------------------------------------

// ORT's float32 scale for an output size: float(out) / float(in) (1 for an empty axis).
double ort_scale_for_size(int64_t in, int64_t size) {
  return in == 0 ? 1.0 : static_cast<double>(static_cast<float>(size) / static_cast<float>(in));
}

std::string shape_str(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << (v.size() == 1 ? ",)" : ")");
  return os.str();
}

struct TensorView {
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<int64_t> shape;
  int64_t numel = 1;
  const void* data = nullptr;
};

OrtStatus* view_input(OrtKernelContext* context, size_t index, TensorView* v) {
  const OrtValue* value = nullptr;
  if (OrtStatus* s = g_api->KernelContext_GetInput(context, index, &value)) return s;
  OrtTensorTypeAndShapeInfo* info = nullptr;
  if (OrtStatus* s = g_api->GetTensorTypeAndShape(value, &info)) return s;
  size_t rank = 0;
  OrtStatus* s = g_api->GetTensorElementType(info, &v->type);
  if (s == nullptr) s = g_api->GetDimensionsCount(info, &rank);
  if (s == nullptr) {
    v->shape.resize(rank);
    s = g_api->GetDimensions(info, v->shape.data(), rank);
  }
  g_api->ReleaseTensorTypeAndShapeInfo(info);
  if (s != nullptr) return s;
  for (int64_t d : v->shape) v->numel *= d;
  // The v21 C API has no const accessor; the data is only read.
  void* data = nullptr;
  if (OrtStatus* s2 = g_api->GetTensorMutableData(const_cast<OrtValue*>(value), &data)) return s2;
  v->data = data;
  return nullptr;
}

double element(const TensorView& v, int64_t i) {
  switch (v.type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return static_cast<const float*>(v.data)[i];
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return static_cast<const double*>(v.data)[i];
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return half_to_float(static_cast<const uint16_t*>(v.data)[i]);
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return static_cast<double>(static_cast<const int64_t*>(v.data)[i]);
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return static_cast<double>(static_cast<const int32_t*>(v.data)[i]);
    default: return 0.0;
  }
}

bool is_float(ONNXTensorElementDataType t) {
  return t == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT || t == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE ||
         t == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
}

// The output sizes and the per-axis float64 scales the kernel runs with.
OrtStatus* target(const Kernel& k, const TensorView& x, const TensorView& second,
                  std::vector<int64_t>* sizes, std::vector<double>* scales) {
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank < 1) return error(ORT_INVALID_ARGUMENT, k.where + ": X must have at least one dimension, got a 0-D tensor");
  sizes->assign(rank, 0);
  scales->assign(rank, 1.0);
  const int64_t srank = static_cast<int64_t>(second.shape.size());
  if (srank == 1 && is_float(second.type)) {  // scales
    if (second.numel != rank) {
      std::ostringstream os;
      os << k.where << ": scales must have one entry per input dimension (" << rank << "), got " << second.numel;
      return error(ORT_INVALID_ARGUMENT, os.str());
    }
    std::vector<float> s32(rank);
    for (int64_t i = 0; i < rank; ++i) {
      s32[i] = static_cast<float>(element(second, i));
      if (!(std::isfinite(s32[i]) && s32[i] > 0)) {
        std::ostringstream os;
        os << k.where << ": scales[" << i << "] must be a finite number > 0, got " << s32[i];
        return error(ORT_INVALID_ARGUMENT, os.str());
      }
      // ORT's output size: the float32 product, truncated.
      const float product = static_cast<float>(x.shape[i]) * s32[i];
      if (!(product <= static_cast<float>(onnxtool::kMaxOutputElements))) {
        std::ostringstream os;
        os << k.where << ": scales[" << i << "] = " << s32[i] << " would make dimension " << i << " of size "
           << x.shape[i] << " over the limit of 2^31 elements; check the scales";
        return error(ORT_INVALID_ARGUMENT, os.str());
      }
      (*sizes)[i] = static_cast<int64_t>(std::floor(product));
    }
    for (int64_t i = 0; i < rank; ++i) {
      if ((*sizes)[i] <= 0) {
        std::ostringstream os;
        os << k.where << ": scales [";
        for (int64_t j = 0; j < rank; ++j) os << (j ? ", " : "") << s32[j];
        os << "] give an empty output " << shape_str(*sizes) << " for input " << shape_str(x.shape);
        return error(ORT_INVALID_ARGUMENT, os.str());
      }
      (*scales)[i] = static_cast<double>(s32[i]);  // ORT's coordinates use the float32 scale itself
    }
    return nullptr;
  }
  const bool integer = second.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 || second.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
  if (srank == 1 && integer) {  // sizes (V3): the output (H, W), or every axis
    if (second.numel != rank && !(second.numel == 2 && rank >= 2)) {
      std::ostringstream os;
      os << k.where << ": sizes must have 2 or rank(X) = " << rank << " entries, got " << second.numel;
      return error(ORT_INVALID_ARGUMENT, os.str());
    }
    const int64_t first = rank - second.numel;
    for (int64_t i = 0; i < rank; ++i)
      (*sizes)[i] = i < first ? x.shape[i] : static_cast<int64_t>(element(second, i - first));
  } else if (srank >= 2 && rank >= 2) {  // MMDeploy's size tensor: only its shape counts
    for (int64_t i = 0; i < rank; ++i) (*sizes)[i] = i < rank - 2 ? x.shape[i] : second.shape[srank - rank + i];
  } else {
    return error(ORT_INVALID_ARGUMENT,
                 k.where + ": second input of shape " + shape_str(second.shape) +
                     " is neither scales (1-D float), sizes (1-D int64) nor a size tensor (rank >= 2)");
  }
  for (int64_t i = 0; i < rank; ++i) {
    if ((*sizes)[i] <= 0 || static_cast<double>((*sizes)[i]) > onnxtool::kMaxOutputElements) {
      return error(ORT_INVALID_ARGUMENT, k.where + ": the second input asks for output " + shape_str(*sizes) +
                                             " from input " + shape_str(x.shape) + "; every size must be in [1, 2^31]");
    }
    (*scales)[i] = ort_scale_for_size(x.shape[i], (*sizes)[i]);
  }
  return nullptr;
}

OrtStatus* compute(const Kernel& k, OrtKernelContext* context) {
  TensorView x, second;
  if (OrtStatus* s = view_input(context, 0, &x)) return s;
  if (OrtStatus* s = view_input(context, 1, &second)) return s;
  std::vector<int64_t> sizes;
  std::vector<double> scales;
  if (OrtStatus* s = target(k, x, second, &sizes, &scales)) return s;

  const bool integer = x.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 || x.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8 ||
                       x.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
  if (integer && k.attrs.mode == onnxtool::Mode::kCubic)
    return error(ORT_NOT_IMPLEMENTED,
                 k.where + ": mode 'cubic' is not supported on integer X: ONNX Runtime's own Resize cannot run it");
  ResizePlan plan;
  const std::string bad = onnxtool::make_plan(x.shape, scales.data(), nullptr, true, k.attrs, &plan, sizes.data());
  if (!bad.empty()) return error(ORT_INVALID_ARGUMENT, k.where + ": " + bad);
  for (size_t i = 0; i < sizes.size(); ++i) {
    // x.shape[i] == 0 keeps its 0: ORT's Resize gives an empty output there too.
    if (plan.out_shape[i] != sizes[i] && x.shape[i] != 0)
      return error(ORT_FAIL, k.where + ": internal error: planned output " + shape_str(plan.out_shape) +
                                 ", expected " + shape_str(sizes));
  }
  OrtValue* out = nullptr;
  if (OrtStatus* s = g_api->KernelContext_GetOutput(context, 0, plan.out_shape.data(), plan.out_shape.size(), &out)) return s;
  void* y = nullptr;
  if (OrtStatus* s = g_api->GetTensorMutableData(out, &y)) return s;
  if (plan.out_numel == 0) return nullptr;

  const OrtExecutor exec(g_api, context);
  switch (x.type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
      onnxtool::run_plan<float>(plan, static_cast<const float*>(x.data), static_cast<float*>(y), exec);
      return nullptr;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
      onnxtool::run_plan<double>(plan, static_cast<const double*>(x.data), static_cast<double*>(y), exec);
      return nullptr;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
      onnxtool::run_plan<uint8_t>(plan, static_cast<const uint8_t*>(x.data), static_cast<uint8_t*>(y), exec);
      return nullptr;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
      onnxtool::run_plan<int8_t>(plan, static_cast<const int8_t*>(x.data), static_cast<int8_t*>(y), exec);
      return nullptr;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
      onnxtool::run_plan<int32_t>(plan, static_cast<const int32_t*>(x.data), static_cast<int32_t*>(y), exec);
      return nullptr;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: {
      // ORT's float expression (exact blend), rounded once to the half type.
      const bool bf16 = x.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16;
      const uint16_t* xs = static_cast<const uint16_t*>(x.data);
      std::unique_ptr<float[]> xf(new float[static_cast<size_t>(x.numel)]);
      std::unique_ptr<float[]> yf(new float[static_cast<size_t>(plan.out_numel)]);
      for (int64_t i = 0; i < x.numel; ++i) xf[i] = bf16 ? bfloat16_to_float(xs[i]) : half_to_float(xs[i]);
      onnxtool::run_plan<float>(plan, xf.get(), yf.get(), exec, true);
      uint16_t* ys = static_cast<uint16_t*>(y);
      for (int64_t i = 0; i < plan.out_numel; ++i) ys[i] = bf16 ? float_to_bfloat16(yf[i]) : float_to_half(yf[i]);
      return nullptr;
    }
    default:
      return error(ORT_INVALID_ARGUMENT, k.where + ": X must be float32, float64, float16, bfloat16, uint8, int8 or int32");
  }
}

// ---- the op, one instance per (X, second input) element-type pair -----------

struct ResizeOp : OrtCustomOp {
  ONNXTensorElementDataType x_type, second_type;

  ResizeOp(ONNXTensorElementDataType x, ONNXTensorElementDataType second)
      : OrtCustomOp{}, x_type(x), second_type(second) {
    version = ORT_API_VERSION;
    GetName = [](const OrtCustomOp*) { return kOpName; };
    GetExecutionProviderType = [](const OrtCustomOp*) -> const char* { return nullptr; };
    GetInputTypeCount = [](const OrtCustomOp*) -> size_t { return 2; };
    GetInputType = [](const OrtCustomOp* op, size_t i) {
      const ResizeOp* self = static_cast<const ResizeOp*>(op);
      return i == 0 ? self->x_type : self->second_type;
    };
    GetOutputTypeCount = [](const OrtCustomOp*) -> size_t { return 1; };
    GetOutputType = [](const OrtCustomOp* op, size_t) { return static_cast<const ResizeOp*>(op)->x_type; };
    GetInputCharacteristic = [](const OrtCustomOp*, size_t) { return INPUT_OUTPUT_REQUIRED; };
    GetOutputCharacteristic = [](const OrtCustomOp*, size_t) { return INPUT_OUTPUT_REQUIRED; };
    GetInputMemoryType = [](const OrtCustomOp*, size_t) { return OrtMemTypeDefault; };
    GetVariadicInputMinArity = [](const OrtCustomOp*) { return 1; };
    GetVariadicInputHomogeneity = [](const OrtCustomOp*) { return 1; };
    GetVariadicOutputMinArity = [](const OrtCustomOp*) { return 1; };
    GetVariadicOutputHomogeneity = [](const OrtCustomOp*) { return 1; };
    CreateKernelV2 = [](const OrtCustomOp*, const OrtApi*, const OrtKernelInfo* info, void** kernel) -> OrtStatus* {
      std::unique_ptr<Kernel> k(new Kernel);
      if (OrtStatus* s = read_attributes(info, k.get())) return s;
      *kernel = k.release();
      return nullptr;
    };
    KernelComputeV2 = [](void* kernel, OrtKernelContext* context) -> OrtStatus* {
      return compute(*static_cast<const Kernel*>(kernel), context);
    };
    KernelDestroy = [](void* kernel) { delete static_cast<Kernel*>(kernel); };
    InferOutputShapeFn = [](const OrtCustomOp*, OrtShapeInferContext* ctx) {
      return onnxtool::ort_op::infer_output_shape(g_api, ctx);
    };
    GetStartVersion = [](const OrtCustomOp*) { return 1; };
    GetEndVersion = [](const OrtCustomOp*) { return std::numeric_limits<int>::max(); };
  }
};

const std::vector<std::unique_ptr<ResizeOp>>& ops() {
  static const auto* all = [] {
    auto* v = new std::vector<std::unique_ptr<ResizeOp>>;
    // The dtypes of graphsurgeon_tools/resize/kernel_dtypes.py (KERNEL_DTYPES).
    const ONNXTensorElementDataType xs[] = {
        ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
        ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8,
        ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32};
    const ONNXTensorElementDataType seconds[] = {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE,
                                                 ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,
                                                 ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32};
    for (auto x : xs)
      for (auto s : seconds) v->emplace_back(new ResizeOp(x, s));
    return v;
  }();  // leaked on purpose: sessions may outlive static destruction
  return *all;
}

}  // namespace

extern "C" {

// Called by ONNX Runtime for every SessionOptions the library is registered
// with. Each call makes its own domain object: ORT requires a domain to
// outlive the sessions that use it, so they are kept (a few bytes each).
__attribute__((visibility("default"))) OrtStatus* ORT_API_CALL RegisterCustomOps(OrtSessionOptions* options, const OrtApiBase* base) {
  const OrtApi* api = base->GetApi(ORT_API_VERSION);
  if (api == nullptr) {
    const OrtApi* any = base->GetApi(1);
    std::string message = std::string("the onnxtool DynamicTRTResize library needs ONNX Runtime 1.") +
                          std::to_string(ORT_API_VERSION) + " or later; this one is " + base->GetVersionString();
    return any->CreateStatus(ORT_FAIL, message.c_str());
  }
  static std::mutex mutex;
  static std::vector<OrtCustomOpDomain*>* domains = new std::vector<OrtCustomOpDomain*>;
  std::lock_guard<std::mutex> lock(mutex);
  g_api = api;
  OrtCustomOpDomain* domain = nullptr;
  if (OrtStatus* s = api->CreateCustomOpDomain(kDomain, &domain)) return s;
  domains->push_back(domain);
  for (const auto& op : ops())
    if (OrtStatus* s = api->CustomOpDomain_Add(domain, op.get())) return s;
  return api->AddCustomOpDomain(options, domain);
}

}  // extern "C"
