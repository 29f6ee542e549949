"""Corrections to TVM 0.27's TFLite op converters, applied by subclassing its OperatorConverter.

- GELU: TVM ignores GeluOptions.approximate and always emits the erf form; we emit
  `nn.gelu` or `nn.gelu_tanh` (one op each, which the device also supports).
- RESHAPE with a computed shape (files converted with a dynamic batch compute new shapes at
  run time, e.g. Keras Dense on 3-D inputs): TVM cannot take it. With the input shapes fixed,
  the output shape is known: from `known_shapes` (the TFLite interpreter's, when TF is
  installed) or from the output's shape signature when it has at most one unknown dim.
- GATHER_ND: TVM moves the index axis first (Relay's layout), but Relax's gather_nd takes
  TF/ONNX layout (index tuple last), so every real gather_nd failed shape inference.
  jax2tf lowers `jnp.take` (embeddings) to GATHER_ND.
"""

from __future__ import annotations

import functools


def operator_converter(known_shapes: dict[int, tuple] | None = None):
    """The `op_converter` argument for from_tflite: corrected converters that know these tensor shapes."""
    return functools.partial(_converter_class(), known_shapes=known_shapes or {})


@functools.cache
def _converter_class():
    """Built on first use: TVM's TFLite frontend is imported lazily."""
    from tvm import relax
    from tvm.relax.frontend.tflite.tflite_frontend import OperatorConverter

    class BudaOperatorConverter(OperatorConverter):
        def __init__(self, model, subgraph, exp_tab, bb, conversion_state=None, known_shapes=None):
            super().__init__(model, subgraph, exp_tab, bb, conversion_state)
            self.known_shapes = known_shapes or {}  # main subgraph only; nested subgraphs get none

        def convert_gelu(self, op):
            if self.is_quantized(op):
                return super().convert_gelu(op)
            (tensor,) = self.get_input_tensors(op)
            x = self.get_tensor_expr(tensor)
            return relax.op.nn.gelu_tanh(x) if _gelu_is_approximate(op) else relax.op.nn.gelu(x)

        def convert_reshape(self, op):
            inputs = self.get_input_tensors(op)
            target = _static_target(self, op, inputs)
            if target is None:
                return super().convert_reshape(op)
            return relax.op.reshape(self.get_tensor_expr(inputs[0]), target)

        def convert_gather_nd(self, op):
            data, indices = (self.get_tensor_expr(t) for t in self.get_input_tensors(op))
            return relax.op.gather_nd(data, relax.op.astype(indices, "int64"))

    return BudaOperatorConverter


def _static_target(converter, op, inputs) -> list[int] | None:
    """The reshape target when the shape operand is computed at run time, if it can be known now."""
    if len(inputs) != 2 or not converter.has_expr(inputs[1].tensor_idx) or inputs[0].qnn_params:
        return None
    (output,) = converter.get_output_tensors(op)
    if output.tensor_idx in converter.known_shapes:
        return [int(d) for d in converter.known_shapes[output.tensor_idx]]
    tensor = output.tensor
    dims = tensor.ShapeSignatureAsNumpy() if tensor.ShapeSignatureLength() else tensor.ShapeAsNumpy()
    dims = [int(d) for d in dims]
    return dims if sum(d < 0 for d in dims) <= 1 else None


def _gelu_is_approximate(op) -> bool:
    from tflite.GeluOptions import GeluOptions

    table = op.BuiltinOptions()
    if table is None:
        return False
    options = GeluOptions()
    options.Init(table.Bytes, table.Pos)
    return bool(options.Approximate())
