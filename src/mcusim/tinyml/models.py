"""The TinyML applications of Zhang et al., "Power-Performance Characterization of TinyML
Systems" (IEEE ICCD 2022, Table III), as layer lists.

Each model has the layer structure and sizes of the application the paper ran; weights are
pseudo-random (seeded) and the test input fixed, so every build computes the same outputs.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Layer:
    name: str
    op: str                          # conv, depthwise, fc, average_pool, max_pool, add, softmax, reshape
    inputs: tuple[str, ...]          # tensor names ("input" is the model input)
    output: str
    out_channels: int = 0            # conv, fc
    kernel: tuple[int, int] = (1, 1)
    stride: tuple[int, int] = (1, 1)
    same: bool = False               # SAME padding (TensorFlow's), else VALID
    relu: bool = False
    shape: tuple[int, ...] = ()      # reshape: the new shape


@dataclass(frozen=True)
class Model:
    name: str
    input_shape: tuple[int, int, int]    # H, W, C
    layers: tuple[Layer, ...]
    paper_macs: int | None               # Table III #MACC (None: not one of the paper's five)
    description: str = ""
    seed: int = 1
    asymmetric: bool = False             # outputs quantized over their min..max (any zero point)


def _fc_chain(widths, prefix="fc"):
    layers, previous = [], "input"
    for i, width in enumerate(widths):
        last = i == len(widths) - 1
        name = f"{prefix}{i + 1}"
        layers.append(Layer(name, "fc", (previous,), name, out_channels=width, relu=not last))
        previous = name
    return layers


# Micro Speech (TFLM's micro_speech example): a 49x40 spectrogram, an 8-filter 10x8 convolution
# with stride 2 and SAME padding, a fully connected layer to 4 classes, softmax.
MICRO_SPEECH = Model(
    name="micro_speech",
    input_shape=(49, 40, 1),
    layers=(
        Layer("conv", "conv", ("input",), "conv", out_channels=8, kernel=(10, 8), stride=(2, 2), same=True,
              relu=True),
        Layer("fc", "fc", ("conv",), "fc", out_channels=4),
        Layer("softmax", "softmax", ("fc",), "softmax"),
    ),
    paper_macs=336_000,
    description="Recognizing two wake words: Conv + FC (paper Table III)",
)

# Anomaly Detection (MLPerf Tiny ToyADMOS deep autoencoder): 640 inputs, four dense layers of
# 128, a bottleneck of 8, four of 128, and 640 outputs (10 FC layers).
ANOMALY_AE = Model(
    name="anomaly_ae",
    input_shape=(1, 1, 640),
    layers=tuple(_fc_chain([128, 128, 128, 128, 8, 128, 128, 128, 128, 640])),
    paper_macs=264_000,
    description="Detecting anomalies in machine operating sounds: 10 FC (paper Table III)",
)

def _ds_block(index: int, source: str, channels: int, stride: int) -> list[Layer]:
    """A depthwise-separable block: 3x3 depthwise (SAME) + ReLU, then 1x1 pointwise + ReLU."""
    dw, pw = f"dw{index}", f"pw{index}"
    return [Layer(dw, "depthwise", (source,), dw, kernel=(3, 3), stride=(stride, stride), same=True, relu=True),
            Layer(pw, "conv", (dw,), pw, out_channels=channels, relu=True)]


def _kws_dscnn(width: int = 64, name: str = "kws_dscnn", paper_macs: int | None = 2_657_000) -> Model:
    """Keyword Spotting (MLPerf Tiny DS-CNN): 49x10 MFCC input, a `width`-filter 10x4 convolution
    with stride 2, four depthwise-separable blocks of `width` channels, global average pooling,
    FC to 12 classes, softmax (paper Table III: Conv + 4 DSC + FC, width 64)."""
    layers = [Layer("conv", "conv", ("input",), "conv", out_channels=width, kernel=(10, 4), stride=(2, 2),
                    same=True, relu=True)]
    source = "conv"
    for i in range(1, 5):
        layers += _ds_block(i, source, width, 1)
        source = f"pw{i}"
    layers += [Layer("pool", "average_pool", (source,), "pool", kernel=(25, 5), stride=(25, 5)),
               Layer("fc", "fc", ("pool",), "fc", out_channels=12),
               Layer("softmax", "softmax", ("fc",), "softmax")]
    return Model(name, (49, 10, 1), tuple(layers), paper_macs=paper_macs,
                 description=f"10 keyword spotting: Conv + 4 DSC + FC, width {width} (paper Table III: 64)")


def _person_detection() -> Model:
    """Person Detection (TFLM's person_detect, MobileNet v1 with width 0.25): 96x96 grayscale,
    an 8-filter 3x3 convolution with stride 2, 13 depthwise-separable blocks, global average
    pooling, FC to 2 classes, softmax (paper Table III: Conv + 13 DSC + FC)."""
    layers = [Layer("conv", "conv", ("input",), "conv", out_channels=8, kernel=(3, 3), stride=(2, 2), same=True,
                    relu=True)]
    blocks = [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1), (128, 1), (128, 1), (128, 1),
              (128, 1), (256, 2), (256, 1)]
    source = "conv"
    for i, (channels, stride) in enumerate(blocks, 1):
        layers += _ds_block(i, source, channels, stride)
        source = f"pw{i}"
    layers += [Layer("pool", "average_pool", (source,), "pool", kernel=(3, 3), stride=(3, 3)),
               Layer("fc", "fc", ("pool",), "fc", out_channels=2),
               Layer("softmax", "softmax", ("fc",), "softmax")]
    return Model("person_detection", (96, 96, 1), tuple(layers), paper_macs=7_158_000,
                 description="Recognizing a person: MobileNet v1 0.25, Conv + 13 DSC + FC (paper Table III)")


def _resnet8() -> Model:
    """Image Classification (MLPerf Tiny ResNet-8): 32x32x3 input, a 16-filter 3x3 convolution,
    three residual stacks of 16, 32 and 64 filters (the last two with stride 2 and a 1x1
    shortcut convolution), global average pooling, FC to 10 classes, softmax (paper Table III:
    9 Conv + FC)."""
    layers = [Layer("conv", "conv", ("input",), "conv", out_channels=16, kernel=(3, 3), same=True, relu=True)]
    source = "conv"
    for stack, (channels, stride) in enumerate([(16, 1), (32, 2), (64, 2)], 1):
        a, b, add = f"s{stack}_conv1", f"s{stack}_conv2", f"s{stack}_add"
        layers += [Layer(a, "conv", (source,), a, out_channels=channels, kernel=(3, 3), stride=(stride, stride),
                         same=True, relu=True),
                   Layer(b, "conv", (a,), b, out_channels=channels, kernel=(3, 3), same=True)]
        shortcut = source
        if stride != 1:
            shortcut = f"s{stack}_shortcut"
            layers.append(Layer(shortcut, "conv", (source,), shortcut, out_channels=channels,
                                stride=(stride, stride)))
        layers.append(Layer(add, "add", (b, shortcut), add, relu=True))
        source = add
    layers += [Layer("pool", "average_pool", (source,), "pool", kernel=(8, 8), stride=(8, 8)),
               Layer("fc", "fc", ("pool",), "fc", out_channels=10),
               Layer("softmax", "softmax", ("fc",), "softmax")]
    return Model("resnet8", (32, 32, 3), tuple(layers), paper_macs=12_502_000,
                 description="Small image classification: ResNet-8, 9 Conv + FC (paper Table III)")


KWS_DSCNN = _kws_dscnn()
# The same network at half and double the width, for latency against model size (as the
# paper's Table VIII does with three MicroNet KWS models).
KWS_DSCNN_S = _kws_dscnn(32, "kws_dscnn_s", None)
KWS_DSCNN_L = _kws_dscnn(128, "kws_dscnn_l", None)
PERSON_DETECTION = _person_detection()
RESNET8 = _resnet8()

# Not an application: a regression model whose shapes reach every kernel path the paper's
# models leave out (taps and channels not multiples of four, odd pixel and channel counts,
# strided depthwise with padding, a residual add, both pools, a reshape) with zero points
# anywhere in the int8 range.
ODD_SHAPES = Model(
    name="odd_shapes",
    input_shape=(9, 11, 3),
    layers=(
        Layer("conv", "conv", ("input",), "conv", out_channels=7, kernel=(3, 5), stride=(2, 2), same=True),
        Layer("dw", "depthwise", ("conv",), "dw", kernel=(3, 3), same=True),
        Layer("add", "add", ("conv", "dw"), "add", relu=True),
        Layer("dw2", "depthwise", ("add",), "dw2", kernel=(3, 3), stride=(2, 2), same=True),
        Layer("pw", "conv", ("dw2",), "pw", out_channels=5),
        Layer("avg", "average_pool", ("pw",), "avg", kernel=(2, 2), stride=(1, 1)),
        Layer("max", "max_pool", ("avg",), "max", kernel=(1, 2), stride=(1, 1)),
        Layer("flat", "reshape", ("max",), "flat", shape=(1, 1, 10)),
        Layer("fc", "fc", ("flat",), "fc", out_channels=3),
        Layer("softmax", "softmax", ("fc",), "softmax"),
    ),
    paper_macs=None,
    description="kernel paths the paper's models do not reach (a test, not an application)",
    seed=7,
    asymmetric=True,
)

PAPER_MODELS = (MICRO_SPEECH, PERSON_DETECTION, KWS_DSCNN, RESNET8, ANOMALY_AE)
MODELS = {model.name: model for model in PAPER_MODELS + (KWS_DSCNN_S, KWS_DSCNN_L, ODD_SHAPES)}
