"""Write TFLite flatbuffers with the `tflite` package's generated builders: tensors (with
per-tensor or per-channel quantization), operators with builtin options, one subgraph. The kit's
models are exported with it (kit_export.py); the tests and benchmarks write their models with it."""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import flatbuffers
import numpy as np
import tflite

TYPES = {"float32": tflite.TensorType.FLOAT32, "int32": tflite.TensorType.INT32, "int8": tflite.TensorType.INT8,
         "uint8": tflite.TensorType.UINT8, "int16": tflite.TensorType.INT16, "int64": tflite.TensorType.INT64}


@dataclass
class T:
    name: str
    shape: tuple
    dtype: str = "int8"
    data: np.ndarray | None = None
    scales: tuple = (0.05,)
    zero_points: tuple = (0,)
    quantized_dimension: int = 0


@dataclass
class Op:
    name: str                 # builtin operator name, e.g. "CONV_2D"
    inputs: tuple
    outputs: tuple
    options_kind: str = ""    # e.g. "Conv2DOptions"
    options: dict = field(default_factory=dict)  # schema field name -> value, e.g. {"StrideW": 2}


def _vector(builder, start, values, prepend):
    start(builder, len(values))
    for value in reversed(values):
        prepend(value)
    return builder.EndVector()


def _ints(builder, module, name, values):
    return _vector(builder, getattr(module, f"Start{name}Vector"), [int(v) for v in values], builder.PrependInt32)


def model_bytes(tensors: list[T], operators: list[Op], inputs, outputs, description: str = "test") -> bytes:
    b = flatbuffers.Builder(1024)
    M, S, Tn, O, C, Q, B = (importlib.import_module(f"tflite.{m}") for m in
                            ("Model", "SubGraph", "Tensor", "Operator", "OperatorCode", "QuantizationParameters",
                             "Buffer"))
    buffers = []
    B.Start(b)
    buffers.append(B.End(b))  # buffer 0: empty, as the converter writes it
    tensor_offsets = []
    for t in tensors:
        buffer_index = 0
        if t.data is not None:
            raw = np.ascontiguousarray(t.data, np.dtype(t.dtype).newbyteorder("<")).tobytes()
            data = b.CreateByteVector(raw)
            B.Start(b)
            B.AddData(b, data)
            buffers.append(B.End(b))
            buffer_index = len(buffers) - 1
        name = b.CreateString(t.name)
        shape = _ints(b, Tn, "Shape", t.shape)
        scale = _vector(b, Q.StartScaleVector, [float(s) for s in t.scales], b.PrependFloat32)
        zero = _vector(b, Q.StartZeroPointVector, [int(z) for z in t.zero_points], b.PrependInt64)
        Q.Start(b)
        Q.AddScale(b, scale)
        Q.AddZeroPoint(b, zero)
        Q.AddQuantizedDimension(b, t.quantized_dimension)
        quantization = Q.End(b)
        Tn.Start(b)
        Tn.AddShape(b, shape)
        Tn.AddType(b, TYPES[t.dtype])
        Tn.AddBuffer(b, buffer_index)
        Tn.AddName(b, name)
        Tn.AddQuantization(b, quantization)
        tensor_offsets.append(Tn.End(b))
    codes = sorted({op.name for op in operators})
    code_offsets = []
    for code in codes:
        value = getattr(tflite.BuiltinOperator, code)
        C.Start(b)
        C.AddDeprecatedBuiltinCode(b, min(value, 127))
        C.AddBuiltinCode(b, value)
        C.AddVersion(b, 1)
        code_offsets.append(C.End(b))
    op_offsets = []
    for op in operators:
        options = None
        if op.options_kind:
            module = importlib.import_module(f"tflite.{op.options_kind}")
            vectors = {k: _ints(b, module, k, v) for k, v in op.options.items() if isinstance(v, (tuple, list))}
            module.Start(b)
            for key, value in op.options.items():
                getattr(module, f"Add{key}")(b, vectors.get(key, value))
            options = module.End(b)
        op_inputs = _ints(b, O, "Inputs", op.inputs)
        op_outputs = _ints(b, O, "Outputs", op.outputs)
        O.Start(b)
        O.AddOpcodeIndex(b, codes.index(op.name))
        O.AddInputs(b, op_inputs)
        O.AddOutputs(b, op_outputs)
        if options is not None:
            O.AddBuiltinOptionsType(b, getattr(tflite.BuiltinOptions, op.options_kind))
            O.AddBuiltinOptions(b, options)
        op_offsets.append(O.End(b))
    tensors_vector = _vector(b, S.StartTensorsVector, tensor_offsets, b.PrependUOffsetTRelative)
    ops_vector = _vector(b, S.StartOperatorsVector, op_offsets, b.PrependUOffsetTRelative)
    graph_inputs = _ints(b, S, "Inputs", inputs)
    graph_outputs = _ints(b, S, "Outputs", outputs)
    S.Start(b)
    S.AddTensors(b, tensors_vector)
    S.AddOperators(b, ops_vector)
    S.AddInputs(b, graph_inputs)
    S.AddOutputs(b, graph_outputs)
    graph = S.End(b)
    subgraphs = _vector(b, M.StartSubgraphsVector, [graph], b.PrependUOffsetTRelative)
    codes_vector = _vector(b, M.StartOperatorCodesVector, code_offsets, b.PrependUOffsetTRelative)
    buffers_vector = _vector(b, M.StartBuffersVector, buffers, b.PrependUOffsetTRelative)
    text = b.CreateString(description)
    M.Start(b)
    M.AddVersion(b, 3)
    M.AddOperatorCodes(b, codes_vector)
    M.AddSubgraphs(b, subgraphs)
    M.AddDescription(b, text)
    M.AddBuffers(b, buffers_vector)
    b.Finish(M.End(b), file_identifier=b"TFL3")
    return bytes(b.Output())
