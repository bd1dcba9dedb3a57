"""The kit's models as .tflite (tinyml/kit_export.py): the layers, weights and MACs of the kit's
quantized models (tinyml/build.py), and the outputs of its calibration arithmetic up to TFLite's
rounding."""
import numpy as np
import pytest

from mcusim.tinyml import tflite_reference as R
from mcusim.tinyml.build import build
from mcusim.tinyml.kit_export import export
from mcusim.tinyml.model_plan import macs
from mcusim.tinyml.models import MODELS
from mcusim.tinyml.tflite_model import check_supported, load_model

KIT_OPS = {"conv": "CONV_2D", "depthwise": "DEPTHWISE_CONV_2D", "fc": "FULLY_CONNECTED", "average_pool":
           "AVERAGE_POOL_2D", "max_pool": "MAX_POOL_2D", "add": "ADD", "softmax": "SOFTMAX", "reshape": "RESHAPE"}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_an_exported_model_has_the_kit_s_layers_weights_and_macs(tmp_path, name):
    built = build(MODELS[name])
    (tmp_path / "m.tflite").write_bytes(export(built))
    model = load_model(tmp_path / "m.tflite")
    check_supported(model)
    assert [op.name for op in model.operators] == [KIT_OPS[layer.op] for layer in MODELS[name].layers]
    assert sum(macs(model, op) for op in model.operators) == built.macs
    tensors = {t.name: t for t in model.tensors}
    for q in built.layers:
        if q.weights is not None:
            assert (tensors[f"{q.output}/weights"].data.reshape(-1) == q.weights.reshape(-1)).all()
            assert (tensors[f"{q.output}/bias"].data == q.bias).all()
    # the same input gives the same first layer but for TFLite's rounding (one step at most)
    x = built.tensors["input"].data.reshape(model.tensors[model.inputs[0]].shape)
    first = built.layers[0].output
    ours = R.run(model, [x], nodes=1)[tensors[first].index]
    assert np.abs(ours.astype(int).reshape(-1) - built.tensors[first].data.astype(int).reshape(-1)).max() <= 1
