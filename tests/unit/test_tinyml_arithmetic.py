"""The arithmetic the kit's models are quantized with (src/mcusim/tinyml/arithmetic.py) and the
model descriptions, checked against direct loops and the paper's Table III."""
import numpy as np
import pytest

from mcusim.tinyml import arithmetic as A
from mcusim.tinyml.build import build
from mcusim.tinyml.models import MODELS, PAPER_MODELS


@pytest.mark.parametrize("real", [0.5, 0.0123, 3.7e-4, 1.999, 7.5])
def test_quantized_multiplier_represents_the_real_multiplier(real):
    multiplier, shift = A.quantize_multiplier(real)
    assert 1 << 30 <= multiplier < 1 << 31
    assert multiplier / 2 ** 31 * 2.0 ** shift == pytest.approx(real, rel=1e-9)


def test_requantize_rounds_half_up_in_64_bits():
    half = 1 << 30  # multiplier 0.5 at shift 0
    assert A.requantize(3, half, 0) == 2 and A.requantize(-3, half, 0) == -1
    assert A.requantize(2 ** 31 - 1, 2 ** 31 - 1, 0) == 2 ** 31 - 2  # no overflow: the product needs 62 bits


def naive_conv(x, w, bias, zp, stride, top_left, out_shape):
    oh, ow = out_shape
    o, kh, kw, c = w.shape
    acc = np.zeros((oh, ow, o), np.int64)
    for i in range(oh):
        for j in range(ow):
            for k in range(o):
                total = int(bias[k])
                for a in range(kh):
                    for b in range(kw):
                        y, z = i * stride[0] - top_left[0] + a, j * stride[1] - top_left[1] + b
                        if 0 <= y < x.shape[0] and 0 <= z < x.shape[1]:
                            total += int(np.dot(x[y, z].astype(np.int64) - zp, w[k, a, b].astype(np.int64)))
                acc[i, j, k] = total
    return acc


def test_conv_matches_direct_loops_with_same_padding():
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (7, 6, 3)).astype(np.int8)
    w = rng.integers(-127, 128, (4, 3, 2, 3)).astype(np.int8)
    bias = rng.integers(-500, 500, 4)
    (oh, top), (ow, left) = A.output_size(7, 3, 2, True), A.output_size(6, 2, 2, True)
    assert (oh, ow) == (4, 3)
    m, s = np.full(4, 1 << 30), np.full(4, -6)
    got = A.conv2d(x, w, bias, m, s, 5, -3, (2, 2), (top, left), (oh, ow))
    expected = np.clip(-3 + A.requantize(naive_conv(x, w, bias, 5, (2, 2), (top, left), (oh, ow)), m, s), -128, 127)
    assert np.array_equal(got, expected)


def test_fully_connected_and_depthwise_match_direct_loops():
    rng = np.random.default_rng(4)
    x = rng.integers(-128, 128, 10).astype(np.int8)
    w = rng.integers(-127, 128, (3, 10)).astype(np.int8)
    acc = np.array([int(np.dot(row.astype(np.int64), x.astype(np.int64) - 2)) + 7 for row in w])
    got = A.fully_connected(x, w, np.full(3, 7), np.full(3, 1 << 30), np.full(3, -4), 2, 0)
    assert np.array_equal(got, np.clip(A.requantize(acc, 1 << 30, -4), -128, 127))
    image = rng.integers(-128, 128, (5, 5, 2)).astype(np.int8)
    dw = rng.integers(-127, 128, (3, 3, 2)).astype(np.int8)
    as_conv = np.zeros((2, 3, 3, 2), np.int8)  # depthwise = a conv whose filters see one channel each
    as_conv[0, :, :, 0], as_conv[1, :, :, 1] = dw[:, :, 0], dw[:, :, 1]
    args = (np.zeros(2, np.int64), np.full(2, 1 << 30), np.full(2, -3), 1, 0, (1, 1), (1, 1), (5, 5))
    assert np.array_equal(A.depthwise_conv2d(image, dw, *args), A.conv2d(image, as_conv, *args))


def test_softmax_outputs_are_probabilities_in_256ths():
    x = np.array([10, -20, 30, 0], np.int8)
    out = A.softmax(x, A.softmax_table(0.1)).astype(np.int64) + 128
    assert abs(out.sum() - 256) <= len(x) and out.argmax() == 2


@pytest.mark.parametrize("name", sorted(model.name for model in PAPER_MODELS))
def test_models_have_the_papers_mac_counts(name):
    """Zhang et al. (ICCD 2022) Table III #MACC, within 2%."""
    model = MODELS[name]
    assert build(model).macs == pytest.approx(model.paper_macs, rel=0.02)
