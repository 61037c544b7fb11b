"""onnxtool's compiled ONNX Runtime library, and a user's own op library beside it.

* ``library`` (module fixture): the path of onnxtool's compiled ONNX Runtime library; skips, with the
  reason, where it is not available.
* ``user_library`` (module fixture): a tiny user op library (``Twice(X) = 2 * X`` in domain ``user.ops``,
  ``USER_OP``), compiled with g++ against the same ONNX Runtime headers.
* ``user_resize_model(plugin=, constant_scales=)``: ``X -> Twice -> Resize (or the plugin) -> Y``;
  ``twice_as_mul(model)``: the same with Twice written as a standard Mul by 2 (a reference ORT runs alone).
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from graphsurgeon_tools.runtime import ort_library


@pytest.fixture(scope="module")
def library() -> Path:
    path = ort_library.library_path()
    if path is None:
        pytest.skip(f"ONNX Runtime library not available: {ort_library.unavailable_reason()}")
    return path


USER_OP = textwrap.dedent("""
    // A user's op library: Twice(X) = 2 * X (float32), domain user.ops.
    #include <onnxruntime_c_api.h>
    #include <cstdint>
    #include <vector>
    static const OrtApi* api;
    struct Twice : OrtCustomOp {
      Twice() : OrtCustomOp{} {
        version = 17;
        CreateKernel = [](const OrtCustomOp*, const OrtApi*, const OrtKernelInfo*) -> void* { return new int(0); };
        GetName = [](const OrtCustomOp*) { return "Twice"; };
        GetExecutionProviderType = [](const OrtCustomOp*) -> const char* { return nullptr; };
        GetInputType = [](const OrtCustomOp*, size_t) { return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT; };
        GetInputTypeCount = [](const OrtCustomOp*) -> size_t { return 1; };
        GetOutputType = [](const OrtCustomOp*, size_t) { return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT; };
        GetOutputTypeCount = [](const OrtCustomOp*) -> size_t { return 1; };
        GetInputCharacteristic = [](const OrtCustomOp*, size_t) { return INPUT_OUTPUT_REQUIRED; };
        GetOutputCharacteristic = [](const OrtCustomOp*, size_t) { return INPUT_OUTPUT_REQUIRED; };
        GetInputMemoryType = [](const OrtCustomOp*, size_t) { return OrtMemTypeDefault; };
        GetVariadicInputMinArity = [](const OrtCustomOp*) { return 1; };
        GetVariadicInputHomogeneity = [](const OrtCustomOp*) { return 1; };
        GetVariadicOutputMinArity = [](const OrtCustomOp*) { return 1; };
        GetVariadicOutputHomogeneity = [](const OrtCustomOp*) { return 1; };
        KernelCompute = [](void*, OrtKernelContext* ctx) {
          const OrtValue* in; OrtValue* out; OrtTensorTypeAndShapeInfo* info; size_t n, rank;
          api->KernelContext_GetInput(ctx, 0, &in);
          api->GetTensorTypeAndShape(in, &info);
          api->GetTensorShapeElementCount(info, &n);
          api->GetDimensionsCount(info, &rank);
          std::vector<int64_t> dims(rank);
          api->GetDimensions(info, dims.data(), rank);
          api->ReleaseTensorTypeAndShapeInfo(info);
          api->KernelContext_GetOutput(ctx, 0, dims.data(), rank, &out);
          float *x, *y;
          api->GetTensorMutableData(const_cast<OrtValue*>(in), (void**)&x);
          api->GetTensorMutableData(out, (void**)&y);
          for (size_t i = 0; i < n; ++i) y[i] = 2 * x[i];
        };
        KernelDestroy = [](void* k) { delete static_cast<int*>(k); };
      }
    };
    extern "C" __attribute__((visibility("default")))
    OrtStatus* RegisterCustomOps(OrtSessionOptions* options, const OrtApiBase* base) {
      static Twice op;
      api = base->GetApi(17);
      OrtCustomOpDomain* domain;
      if (OrtStatus* s = api->CreateCustomOpDomain("user.ops", &domain)) return s;
      if (OrtStatus* s = api->CustomOpDomain_Add(domain, &op)) return s;
      return api->AddCustomOpDomain(options, domain);
    }
""")


@pytest.fixture(scope="module")
def user_library(tmp_path_factory: pytest.TempPathFactory, library: Path) -> Path:
    """A tiny user op library (Twice in user.ops), compiled here against the same headers."""
    folder = tmp_path_factory.mktemp("user_lib")
    source = folder / "twice.cpp"
    source.write_text(USER_OP)
    out = folder / "libtwice.so"
    subprocess.run(
        ["g++", "-std=c++17", "-O1", "-shared", "-fPIC", f"-I{ort_library.header_dir()}", str(source), "-o", str(out)],
        check=True,
        capture_output=True,
    )
    return out


def user_resize_model(*, plugin: bool, constant_scales: bool = False) -> onnx.ModelProto:
    """X -> Twice (user.ops) -> Resize (or the plugin) -> Y; scales an input, or a constant."""
    twice = helper.make_node("Twice", ["X"], ["T"], domain="user.ops", name="twice")
    if plugin:
        resize = helper.make_node("DynamicTRTResize", ["T", "S"], ["Y"], domain="trt.plugins", name="up", mode="linear")
    else:
        resize = helper.make_node("Resize", ["T", "", "S"], ["Y"], name="up", mode="linear")
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 4, 4])]
    initializers = []
    if constant_scales:
        initializers.append(onnx.numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "S"))
    else:
        inputs.append(helper.make_tensor_value_info("S", TensorProto.FLOAT, [4]))
    graph = helper.make_graph(
        [twice, resize],
        "g",
        inputs,
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 1, "OH", "OW"])],
        initializer=initializers,
    )
    opsets = [helper.make_opsetid("", 19), helper.make_opsetid("user.ops", 1)]
    if plugin:
        opsets.append(helper.make_opsetid("trt.plugins", 1))
    return helper.make_model(graph, opset_imports=opsets)


def twice_as_mul(model: onnx.ModelProto) -> onnx.ModelProto:
    """The same model with Twice written as a standard Mul by 2 (the reference)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    node = copy.graph.node[0]
    node.op_type, node.domain = "Mul", ""
    node.input.append("two")
    copy.graph.initializer.append(onnx.numpy_helper.from_array(np.array(2, np.float32), "two"))
    kept = [o for o in copy.opset_import if o.domain != "user.ops"]
    del copy.opset_import[:]
    copy.opset_import.extend(kept)
    return copy
