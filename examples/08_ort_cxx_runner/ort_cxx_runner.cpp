// Runs an ONNX model with plugin nodes from C++: ONNX Runtime's C++ API plus
// onnxtool's custom-op library (DynamicTRTResize in `trt.plugins`).
//
//   ort_cxx_runner MODEL LIBRARY OUT_PREFIX [--threads N] NAME=FILE:TYPE:D0xD1x... ...
//
// Each input is raw little-endian data in FILE (TYPE float32, float64 or int64,
// shape D0xD1x...). Output i is written raw to OUT_PREFIX<i>.bin and described
// on stdout as "output <name> <type> <d0>x<d1>x...". Exit 1 on any ORT error,
// with ORT's message (which names the failing node) on stderr.
#include <onnxruntime_cxx_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Input {
  std::string name;
  ONNXTensorElementDataType type;
  std::vector<int64_t> shape;
  std::vector<char> bytes;
};

size_t element_size(ONNXTensorElementDataType t) {
  switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return 4;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return 8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return 8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return 2;
    default: return 0;
  }
}

const char* type_name(ONNXTensorElementDataType t) {
  switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return "float32";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return "float64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return "int64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return "float16";
    default: return "other";
  }
}

Input parse_input(const std::string& spec) {
  // NAME=FILE:TYPE:D0xD1x...
  Input in;
  const size_t eq = spec.find('='), c1 = spec.find(':', eq), c2 = spec.find(':', c1 + 1);
  if (eq == std::string::npos || c1 == std::string::npos || c2 == std::string::npos)
    throw std::runtime_error("input '" + spec + "' is not NAME=FILE:TYPE:D0xD1x...");
  in.name = spec.substr(0, eq);
  const std::string file = spec.substr(eq + 1, c1 - eq - 1), type = spec.substr(c1 + 1, c2 - c1 - 1);
  if (type == "float32") in.type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
  else if (type == "float64") in.type = ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
  else if (type == "int64") in.type = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
  else throw std::runtime_error("input '" + in.name + "': type must be float32, float64 or int64, got " + type);
  std::stringstream dims(spec.substr(c2 + 1));
  std::string dim;
  size_t count = 1;
  while (std::getline(dims, dim, 'x')) {
    in.shape.push_back(std::stoll(dim));
    count *= static_cast<size_t>(in.shape.back());
  }
  std::ifstream f(file, std::ios::binary);
  in.bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  if (in.bytes.size() != count * element_size(in.type))
    throw std::runtime_error("input '" + in.name + "': " + file + " holds " + std::to_string(in.bytes.size()) +
                             " bytes, the shape needs " + std::to_string(count * element_size(in.type)));
  return in;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: ort_cxx_runner MODEL LIBRARY OUT_PREFIX [--threads N] NAME=FILE:TYPE:D0xD1x... ...\n";
    return 2;
  }
  try {
    const std::string model = argv[1], library = argv[2], prefix = argv[3];
    int threads = 1;
    std::vector<Input> inputs;
    for (int i = 4; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--threads" && i + 1 < argc) {
        threads = std::atoi(argv[++i]);
      } else {
        inputs.push_back(parse_input(arg));
      }
    }
    Ort::Env env(ORT_LOGGING_LEVEL_WARNING, "ort_cxx_runner");
    Ort::SessionOptions options;
    options.SetIntraOpNumThreads(threads);
    options.RegisterCustomOpsLibrary(library.c_str());  // ORT loads it and calls RegisterCustomOps
    Ort::Session session(env, model.c_str(), options);

    const Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    std::vector<Ort::Value> values;
    std::vector<const char*> input_names;
    for (Input& in : inputs) {
      values.push_back(Ort::Value::CreateTensor(memory, in.bytes.data(), in.bytes.size(), in.shape.data(),
                                                in.shape.size(), in.type));
      input_names.push_back(in.name.c_str());
    }
    Ort::AllocatorWithDefaultOptions allocator;
    std::vector<Ort::AllocatedStringPtr> held;
    std::vector<const char*> output_names;
    for (size_t i = 0; i < session.GetOutputCount(); ++i) {
      held.push_back(session.GetOutputNameAllocated(i, allocator));
      output_names.push_back(held.back().get());
    }
    std::vector<Ort::Value> outputs = session.Run(Ort::RunOptions{nullptr}, input_names.data(), values.data(),
                                                  values.size(), output_names.data(), output_names.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      const auto info = outputs[i].GetTensorTypeAndShapeInfo();
      const auto shape = info.GetShape();
      const size_t bytes = info.GetElementCount() * element_size(info.GetElementType());
      std::ofstream f(prefix + std::to_string(i) + ".bin", std::ios::binary);
      f.write(static_cast<const char*>(outputs[i].GetTensorRawData()), static_cast<std::streamsize>(bytes));
      std::cout << "output " << output_names[i] << " " << type_name(info.GetElementType()) << " ";
      for (size_t d = 0; d < shape.size(); ++d) std::cout << (d ? "x" : "") << shape[d];
      std::cout << "\n";
    }
  } catch (const std::exception& e) {  // Ort::Exception included
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
