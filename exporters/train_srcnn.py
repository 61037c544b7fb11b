"""Train the shipped SRCNN x3 checkpoint (``exporters/weights/srcnn_x3.pt``) on images scikit-image ships.

SRCNN weights cannot be downloaded here, so this script makes them::

    python -m exporters.train_srcnn                 # ~3 minutes on one CPU thread
    python -m exporters.train_srcnn --minutes 0.5 --output /tmp/srcnn.pt

Data: the photographs bundled in ``skimage.data`` (no network). Each image is
cropped to a multiple of 3 and downscaled by 3 with antialiased bicubic; the
model (:class:`exporters.models.StaticSRCNN`, the tutorial's 9-1-5 architecture
with 64/32 channels and its built-in bicubic ``nn.Upsample``) learns to map
the small image back to the original. ``astronaut``, ``coffee`` and ``chelsea``
(= ``cat``) are held out and only used to report PSNR against plain bicubic.

Why the unusual initialisation: a plain SRCNN starts far from the identity and
needs hours to even reach bicubic quality. Three of conv1's channels, three of
conv2's and conv3's centre taps are set to pass the (non-negative) upsampled
image straight through, so training starts *at* bicubic and only learns the
correction - residual learning without changing the architecture, which has to
stay the tutorial's for the export styles to be comparable.

What it does NOT do: use a GPU, augment data, or train to convergence. It is
deterministic for a fixed seed and thread count, up to the time limit.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from exporters.models import StaticSRCNN

FACTOR = 3
DEFAULT_OUTPUT = Path(__file__).resolve().parent / "weights" / "srcnn_x3.pt"
HELD_OUT = ("astronaut", "coffee", "chelsea")
# `cat` is the same photograph as `chelsea`, so it is excluded from training too.
TRAIN = (
    "rocket",
    "immunohistochemistry",
    "hubble_deep_field",
    "retina",
    "colorwheel",
    "camera",
    "coins",
    "moon",
    "page",
    "text",
    "brick",
    "grass",
    "gravel",
    "cell",
)
BORDER = 6  # pixels ignored at the edges for PSNR: zero padding of the convolutions


def load_image(name: str) -> torch.Tensor:
    """``skimage.data.<name>()`` as a 1x3xHxW float tensor in [0, 1], cropped to a multiple of 3."""
    import skimage.data  # deferred: optional scikit-image

    array = np.asarray(getattr(skimage.data, name)())
    if array.dtype == bool:
        array = array.astype(np.uint8) * 255
    if array.ndim == 2:  # grayscale: same texture on all three channels
        array = np.stack([array] * 3, axis=-1)
    array = array[..., :3]
    height, width = (array.shape[0] // FACTOR) * FACTOR, (array.shape[1] // FACTOR) * FACTOR
    tensor = torch.from_numpy(np.ascontiguousarray(array[:height, :width])).float() / 255.0
    return tensor.permute(2, 0, 1).unsqueeze(0).contiguous()


def downscale(hr: torch.Tensor) -> torch.Tensor:
    """The degradation the model learns to undo: antialiased bicubic by 1/3, clamped to [0, 1]."""
    lr = F.interpolate(hr, scale_factor=1.0 / FACTOR, mode="bicubic", antialias=True, align_corners=False)
    return lr.clamp(0.0, 1.0)


def identity_init(model: StaticSRCNN, seed: int) -> StaticSRCNN:
    """Start the network at "output = its own bicubic upsampling" (see the module docstring)."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for conv in (model.conv1, model.conv2, model.conv3):
            torch.nn.init.normal_(conv.weight, std=math.sqrt(2.0 / (conv.weight[0].numel())) * 0.1)
            conv.bias.zero_()
        model.conv3.weight.mul_(0.01)
        for c in range(3):
            model.conv1.weight[c].zero_()
            model.conv1.weight[c, c, 4, 4] = 1.0
            model.conv2.weight[c].zero_()
            model.conv2.weight[c, c, 0, 0] = 1.0
            model.conv3.weight[c, c, 2, 2] = 1.0
    return model


def psnr(a: torch.Tensor, b: torch.Tensor, border: int = BORDER) -> float:
    """PSNR in dB of two [0, 1] images, ignoring ``border`` pixels at each edge."""
    a = a[..., border:-border, border:-border].clamp(0.0, 1.0)
    b = b[..., border:-border, border:-border]
    mse = torch.mean((a - b) ** 2).item()
    return float("inf") if mse == 0 else 10.0 * math.log10(1.0 / mse)


def evaluate(model: StaticSRCNN, names=HELD_OUT) -> list[dict]:
    """PSNR of the model and of plain bicubic on each held-out image (rows for a table)."""
    rows = []
    model.eval()
    with torch.no_grad():
        for name in names:
            hr = load_image(name)
            lr = downscale(hr)
            bicubic = F.interpolate(lr, scale_factor=FACTOR, mode="bicubic", align_corners=False)
            rows.append(
                {
                    "image": name,
                    "size": tuple(hr.shape[-2:]),
                    "bicubic_db": psnr(bicubic, hr),
                    "srcnn_db": psnr(model(lr), hr),
                }
            )
    return rows


def patches(
    images: list[tuple[torch.Tensor, torch.Tensor]], count: int, lr_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` aligned (LR, HR) patch pairs drawn uniformly from the image pairs."""
    lows, highs = [], []
    picks = torch.randint(len(images), (count,), generator=generator).tolist()
    for index in picks:
        lr, hr = images[index]
        y = int(torch.randint(lr.shape[-2] - lr_size + 1, (1,), generator=generator))
        x = int(torch.randint(lr.shape[-1] - lr_size + 1, (1,), generator=generator))
        lows.append(lr[0, :, y : y + lr_size, x : x + lr_size])
        highs.append(hr[0, :, y * FACTOR : (y + lr_size) * FACTOR, x * FACTOR : (x + lr_size) * FACTOR])
    return torch.stack(lows), torch.stack(highs)


def train(
    minutes: float = 3.0, *, seed: int = 0, batch: int = 32, lr_size: int = 14, learning_rate: float = 2e-4, log=print
) -> StaticSRCNN:
    """Train a StaticSRCNN for about ``minutes`` of wall time and return it (in eval mode)."""
    generator = torch.Generator().manual_seed(seed)
    images = []
    for name in TRAIN:
        hr = load_image(name)
        images.append((downscale(hr), hr))
    model = identity_init(StaticSRCNN(upscale_factor=FACTOR), seed)
    # SRCNN's recipe: the last layer learns 10x slower.
    optimizer = torch.optim.Adam(
        [
            {"params": [*model.conv1.parameters(), *model.conv2.parameters()], "lr": learning_rate},
            {"params": model.conv3.parameters(), "lr": learning_rate * 0.1},
        ]
    )
    deadline = time.monotonic() + minutes * 60.0
    step = 0
    running = None
    model.train()
    while time.monotonic() < deadline:
        low, high = patches(images, batch, lr_size, generator)
        out = model(low)
        # The outer ring sees zero padding, not image: do not teach it to the model.
        loss = F.mse_loss(out[..., BORDER:-BORDER, BORDER:-BORDER], high[..., BORDER:-BORDER, BORDER:-BORDER])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running = loss.item() if running is None else 0.98 * running + 0.02 * loss.item()
        step += 1
        if step % 100 == 0:
            log(f"step {step:5d}  loss {running:.6f}  ({10 * math.log10(1 / running):.2f} dB on patches)")
    log(f"trained {step} steps in {minutes:.1f} min")
    return model.eval()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=3.0, help="wall-clock training budget")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the machine is shared)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument(
        "--evaluate-only", action="store_true", help="only report held-out PSNR of the checkpoint at --output"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    if args.evaluate_only:
        model = StaticSRCNN(upscale_factor=FACTOR)
        model.load_state_dict(torch.load(args.output, map_location="cpu", weights_only=True))
    else:
        model = train(args.minutes, seed=args.seed)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        state = {key: value.detach().clone().contiguous() for key, value in model.state_dict().items()}
        temp = args.output.with_name(args.output.name + ".tmp")
        torch.save(state, temp)
        temp.replace(args.output)
        print(f"wrote {args.output} ({args.output.stat().st_size / 1024:.0f} KiB)")

    rows = evaluate(model)
    print(f"{'held-out image':<16}{'size':>12}{'bicubic dB':>12}{'SRCNN dB':>10}{'gain':>8}")
    for row in rows:
        size = "x".join(map(str, row["size"]))
        print(
            f"{row['image']:<16}{size:>12}{row['bicubic_db']:>12.2f}{row['srcnn_db']:>10.2f}"
            f"{row['srcnn_db'] - row['bicubic_db']:>+8.2f}"
        )
    mean_bicubic = sum(r["bicubic_db"] for r in rows) / len(rows)
    mean_srcnn = sum(r["srcnn_db"] for r in rows) / len(rows)
    print(f"{'mean':<16}{'':>12}{mean_bicubic:>12.2f}{mean_srcnn:>10.2f}{mean_srcnn - mean_bicubic:>+8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
