"""Trainable weights for TensorFlow/Keras models, which reach Relax through TFLite as constants.

TVM 0.27 has no TensorFlow frontend: the TFLite route freezes every variable into a constant
(and the converter drops constants it can fold, e.g. an all-zero bias). To train, we import the
model once with each trainable variable set to a distinct random *tag*, find every Relax constant
that equals a variable's tag up to an axis permutation (TFLite holds a Dense kernel [out, in],
a conv kernel [out, kh, kw, in]), turn those constants into weight parameters holding the real
values in the constant's layout, and restore the variables. Trained values go back into the
variables through the inverse permutation, so the Keras model holds the result.

A variable the converter folded into another constant (batch norm into the convolution before
it) matches nothing: that is an error naming the variable, not a silently frozen weight.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import tvm
from tvm import relax
from tvm.relax.expr_functor import PyExprMutator, mutator

TAG_SEED = 0x7B0DA


@mutator
class _ConstantsToVars(PyExprMutator):
    def __init__(self, replacements: dict):
        super().__init__()
        self.replacements = replacements   # id of the constant's handle -> Var

    def visit_generic_const_(self, op) -> relax.Expr:
        return self.replacements.get(op.__chandle__(), op)


def _is_tensor_constant(expr) -> bool:
    """A tensor constant (tirx IntImm/FloatImm are tvm.ir.Constant subclasses too)."""
    return isinstance(expr, tvm.ir.Constant) and isinstance(getattr(expr, "value", None), tvm.runtime.Tensor)


def _constants(func: relax.Function) -> list:
    found, seen = [], set()

    def visit(expr):
        if _is_tensor_constant(expr) and expr.__chandle__() not in seen:
            seen.add(expr.__chandle__())
            found.append(expr)

    relax.analysis.post_order_visit(func.body, visit)
    return found


def _layouts(tag: np.ndarray, shape: tuple) -> list:
    """Axis permutations taking a variable's shape to `shape` (identity first), and a plain
    reshape when the element count matches but no permutation does (a depthwise kernel)."""
    perms = [p for p in itertools.permutations(range(tag.ndim)) if tuple(tag.shape[i] for i in p) == shape]
    return perms or ([None] if tag.size == int(np.prod(shape)) else [])


def to_layout(value: np.ndarray, layout, shape) -> np.ndarray:
    value = np.asarray(value, dtype=np.float32)
    return np.ascontiguousarray(value.reshape(shape) if layout is None else np.transpose(value, layout))


def from_layout(value: np.ndarray, layout, shape) -> np.ndarray:
    value = np.asarray(value, dtype=np.float32)
    return value.reshape(shape) if layout is None else np.transpose(value, np.argsort(layout))


def _tags(variables) -> list[np.ndarray]:
    """Distinct values no two variables (or a variable and its own permutation) share."""
    rng = np.random.default_rng(TAG_SEED)
    return [rng.uniform(0.5, 1.5, tuple(v.shape)).astype(np.float32) * rng.choice([-1.0, 1.0], tuple(v.shape))
            .astype(np.float32) for v in variables]


def param_name(path: str) -> str:
    return "tf_" + re.sub(r"[^A-Za-z0-9_]", "_", path)


def import_tf_for_training(model, sample_inputs, name: str, import_model):
    """(ImportedModel with the trainable variables as weights, {graph name: variable path},
    write_back(values by graph name)). `import_model(sample_inputs, name)` runs the TFLite import."""
    variables = list(getattr(model, "trainable_variables", []))
    if not variables:
        raise ValueError(f"training: TF model {name!r} has no trainable variables (trainable_variables is empty); "
                         "make some layers trainable, or run it for inference")
    originals = [v.numpy() for v in variables]
    tags = _tags(variables)
    try:
        for v, tag in zip(variables, tags):
            v.assign(tag)
        imported = import_model(sample_inputs, name)
    finally:
        for v, value in zip(variables, originals):
            v.assign(value)
    main = imported.mod["main"]
    replacements, params, where = {}, {}, {}
    for const in _constants(main):
        array = const.value.numpy()
        if array.dtype != np.float32 or array.ndim == 0:
            continue
        for index, tag in enumerate(tags):
            layout = next((lay for lay in _layouts(tag, array.shape)
                           if np.array_equal(to_layout(tag, lay, array.shape), array)), False)
            if layout is False:
                continue
            path = variables[index].path
            graph = param_name(path) if (index, layout) not in where.values() else None
            if graph is None:   # the same variable in the same layout twice: one weight
                graph = next(g for g, v in where.items() if v == (index, layout))
            elif graph in where:
                raise NotImplementedError(f"training: variable {path} of TF model {name!r} appears in two layouts "
                                          "after the TFLite conversion; it cannot be trained as one weight")
            else:
                where[graph] = (index, layout)
                params[graph] = to_layout(originals[index], layout, array.shape)
            replacements[const.__chandle__()] = relax.Var(graph, relax.TensorType(array.shape, "float32"))
            break
    found = {index for index, _ in where.values()}
    folded = [variables[i].path for i in range(len(variables)) if i not in found]
    if folded:
        raise NotImplementedError(
            f"training: TF model {name!r}: trainable variable(s) {folded} were folded by the TFLite converter into "
            "other constants (batch norm into the convolution before it, or an op on constants), so they have no "
            "weight of their own on the device; set those layers' trainable=False or train the model in TensorFlow")
    vars_by_graph = {}
    for var in replacements.values():
        vars_by_graph.setdefault(var.name, var)
    imported.mod["main"] = _with_weight_params(main, replacements, [vars_by_graph[g] for g in where])
    imported.params = params
    names = {graph: variables[index].path for graph, (index, _) in where.items()}
    shapes = {graph: tuple(variables[index].shape) for graph, (index, _) in where.items()}

    def write_back(values: dict) -> None:
        for graph, value in values.items():
            if graph in where:
                index, layout = where[graph]
                variables[index].assign(from_layout(value, layout, shapes[graph]))

    return imported, names, write_back


def _with_weight_params(main: relax.Function, replacements: dict, new_params: list) -> relax.Function:
    """main(inputs...) with constants replaced -> main(inputs..., weights...)."""
    canonical = {v.name: v for v in new_params}
    body = _ConstantsToVars({k: canonical[v.name] for k, v in replacements.items()}).visit_expr(main.body)
    num_input = len(main.params)
    func = relax.Function(list(main.params) + new_params, body, main.ret_ty, attrs=main.attrs)
    return func.with_attr("num_input", num_input)
