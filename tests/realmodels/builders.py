"""Small random-weight models built by their projects' own code, each with interpolate/upsample sites.

Every builder seeds torch, builds from a config (no download, no weights file), and returns a
:class:`TorchModel`: an ``nn.Module`` in eval mode that takes one image-like tensor and returns one
tensor, plus that example input. The configs are tiny on purpose: the whole set exports in seconds.

Sites, as the projects' code writes them:

* ``dpt`` (transformers ``DPTForDepthEstimation``): each fusion stage upsamples by
  ``scale_factor=2`` (bilinear, ``align_corners=True``), the head by another 2x; the
  position embedding is resized to the patch grid (``size=``, bilinear).
* ``segformer`` (transformers ``SegformerForSemanticSegmentation``): the all-MLP decode head
  resizes every stage to the first stage's size (``size=``, bilinear) before a concat.
* ``swin2sr`` (transformers ``Swin2SRForImageSuperResolution``, ``upsampler="nearest+conv"``):
  two ``scale_factor=2`` nearest upsamples, a x4 super-resolution net.
* ``vae_decoder`` (diffusers ``AutoencoderKL.decode``): ``Upsample2D`` nearest x2 per up block.
* ``upernet`` (transformers ``UperNetForSemanticSegmentation`` on a ConvNeXt backbone): an FPN
  (lateral ``size=`` bilinear upsample + add, then upsample + concat) and a final ``size=`` resize.

Weights: the projects' default initializer_range (0.02) leaves DPT's depth at ~1e-8 and the
segmentation logits at ~1e-3, below any useful tolerance (a vacuous comparison); the configs here
raise it so that every output is O(0.1..10).

Requires: torch, transformers and diffusers (the ``realmodels`` extra). Never imports torchvision
or timm (their wheels here are linked against another torch build).
Does NOT: export (see :mod:`realmodels.exports`) or touch the network.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class TorchModel:
    name: str
    module: Any  # torch.nn.Module: image tensor in, one tensor out
    example: Any  # torch.Tensor, NCHW
    project: str  # "transformers 5.24.0": who wrote the architecture


def _first_output(model: Any) -> Any:
    import torch

    class FirstOutput(torch.nn.Module):
        """transformers models return a ModelOutput; the exporters want one plain tensor."""

        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
            return self.inner(pixel_values, return_dict=False)[0]

    return FirstOutput(model).eval()


def _transformers(config: Any, cls: Any) -> Any:
    # "eager" attention: scaled_dot_product_attention has no TorchScript symbolic below opset 14.
    config._attn_implementation = "eager"
    return _first_output(cls(config).eval())


def _project(name: str) -> str:
    import importlib.metadata

    return f"{name} {importlib.metadata.version(name)}"


def dpt() -> TorchModel:
    import torch
    from transformers import DPTConfig, DPTForDepthEstimation

    torch.manual_seed(0)
    config = DPTConfig(
        image_size=32,
        patch_size=8,
        hidden_size=32,
        num_hidden_layers=4,
        backbone_out_indices=[0, 1, 2, 3],
        num_attention_heads=2,
        intermediate_size=37,
        neck_hidden_sizes=[8, 16, 32, 64],
        fusion_hidden_size=16,
        head_hidden_size=8,
        reassemble_factors=[4, 2, 1, 0.5],
        initializer_range=0.15,
    )
    return TorchModel(
        "dpt", _transformers(config, DPTForDepthEstimation), torch.randn(1, 3, 32, 32), _project("transformers")
    )


def segformer() -> TorchModel:
    import torch
    from transformers import SegformerConfig, SegformerForSemanticSegmentation

    torch.manual_seed(0)
    config = SegformerConfig(
        num_channels=3,
        num_encoder_blocks=4,
        depths=[1, 1, 1, 1],
        sr_ratios=[8, 4, 2, 1],
        hidden_sizes=[8, 16, 32, 64],
        patch_sizes=[7, 3, 3, 3],
        strides=[4, 2, 2, 2],
        num_attention_heads=[1, 1, 2, 2],
        mlp_ratios=[2, 2, 2, 2],
        decoder_hidden_size=16,
        num_labels=3,
        initializer_range=0.1,
    )
    return TorchModel(
        "segformer",
        _transformers(config, SegformerForSemanticSegmentation),
        torch.randn(1, 3, 64, 64),
        _project("transformers"),
    )


def swin2sr() -> TorchModel:
    import torch
    from transformers import Swin2SRConfig, Swin2SRForImageSuperResolution

    torch.manual_seed(0)
    # "nearest+conv" only exists for upscale=4 in transformers: two nearest x2 sites.
    config = Swin2SRConfig(
        image_size=16,
        patch_size=1,
        num_channels=3,
        embed_dim=16,
        depths=[1, 1],
        num_heads=[2, 2],
        window_size=4,
        upscale=4,
        upsampler="nearest+conv",
        img_range=1.0,
    )
    return TorchModel(
        "swin2sr",
        _transformers(config, Swin2SRForImageSuperResolution),
        torch.rand(1, 3, 16, 16),
        _project("transformers"),
    )


def vae_decoder() -> TorchModel:
    import torch
    from diffusers import AutoencoderKL
    from diffusers.models.attention_processor import AttnProcessor

    torch.manual_seed(0)
    vae = AutoencoderKL(
        in_channels=3,
        out_channels=3,
        down_block_types=["DownEncoderBlock2D"] * 2,
        up_block_types=["UpDecoderBlock2D"] * 2,
        block_out_channels=[8, 16],
        layers_per_block=1,
        latent_channels=4,
        norm_num_groups=4,
        sample_size=32,
    ).eval()
    vae.set_attn_processor(AttnProcessor())  # plain matmul attention: exports at opset 13 too

    class Decoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.vae = vae

        def forward(self, latents: torch.Tensor) -> torch.Tensor:
            return self.vae.decode(latents, return_dict=False)[0]

    return TorchModel("vae_decoder", Decoder().eval(), torch.randn(1, 4, 8, 8), _project("diffusers"))


def upernet() -> TorchModel:
    import torch
    from transformers import ConvNextConfig, UperNetConfig, UperNetForSemanticSegmentation

    torch.manual_seed(0)
    backbone = ConvNextConfig(
        num_channels=3,
        hidden_sizes=[8, 16, 32, 64],
        depths=[1, 1, 1, 1],
        out_features=["stage1", "stage2", "stage3", "stage4"],
        initializer_range=0.1,
    )
    config = UperNetConfig(
        backbone_config=backbone,
        hidden_size=16,
        pool_scales=[1, 2],
        use_auxiliary_head=False,
        num_labels=3,
        initializer_range=0.1,
    )
    return TorchModel(
        "upernet",
        _transformers(config, UperNetForSemanticSegmentation),
        torch.randn(1, 3, 64, 64),
        _project("transformers"),
    )


BUILDERS: dict[str, Callable[[], TorchModel]] = {
    "dpt": dpt,
    "segformer": segformer,
    "swin2sr": swin2sr,
    "vae_decoder": vae_decoder,
    "upernet": upernet,
}
