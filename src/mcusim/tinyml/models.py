"""The paper's TinyML applications (shared/reference/002, Table III) as layer lists.

Each model has the layer structure and sizes of the application the paper ran; weights are
pseudo-random (seeded) and the test input fixed, so firmware and oracle agree bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass, field


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
    paper_macs: int                      # Table III #MACC
    description: str = ""
    seed: int = 1
    notes: list = field(default_factory=list)


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

MODELS = {model.name: model for model in (MICRO_SPEECH, ANOMALY_AE)}
