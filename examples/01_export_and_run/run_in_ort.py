"""Upscale a picture with an exported SRCNN in plain ONNX Runtime: python run_in_ort.py MODEL.onnx"""

import sys

import numpy as np
import onnxruntime as ort
from PIL import Image

model_path = sys.argv[1] if len(sys.argv) > 1 else "srcnn_x3.onnx"
session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
(x_info,) = session.get_inputs()
print(f"{model_path}: input {x_info.name} {x_info.shape}, output {session.get_outputs()[0].shape}")

try:  # a picture scikit-image ships (no download); a gradient if it is not installed
    import skimage.data

    picture = skimage.data.chelsea()[60:156, 150:246]
except ImportError:
    picture = np.dstack(np.meshgrid(np.arange(96), np.arange(96)) + [np.zeros((96, 96))]).astype(np.uint8) * 2
x = (picture.astype(np.float32) / 255.0).transpose(2, 0, 1)[None]  # 1 x 3 x H x W in [0, 1]

(y,) = session.run(None, {x_info.name: x})
print(f"upscaled {x.shape[2]}x{x.shape[3]} -> {y.shape[2]}x{y.shape[3]}")
Image.fromarray((np.clip(y[0].transpose(1, 2, 0), 0, 1) * 255).round().astype(np.uint8)).save("upscaled_x3.png")
print("wrote upscaled_x3.png")
