"""The weights as the device holds them after a first run, carried in a TTI so a loaded model's
first run is as fast as a warm one.

A first run converts every weight to its device format (Parameter.device_tensor) and runs the
ops computed from weights only (consteval: transposed weights, reshaped biases); later runs reuse
both. An image stores their results (tile-padded, exact: bfloat16 bit patterns where the values
are bfloat16, else float32) and `restore` puts them back where a run looks for them, under the
keys the loaded module's own objects give (op.dispatch.consteval_key). Anything not restored is
simply computed by the first run, so a missing entry costs time, never a different result.
Device copies are kept only for weights that no stored consteval result is computed from (a
cached result needs no operand on the device). Each stored tensor also carries the bfloat16
fidelity terms a run cut from it (image_terms.py), so the first run cuts none.
"""

from __future__ import annotations

import numpy as np

from ..dataformat import DataFormat
from ..module import Constant, Parameter
from ..op.dispatch import consteval_key
from ..tensor import Tensor, storage_shape
from ..widen_on_read import WidenOnReadTensor
from . import image_terms

FLOAT32, BFLOAT16 = "float32", "bfloat16"    # how a padded float32 array is stored
_HOST_DTYPES = frozenset({"float32", "int32", "int8", "uint8", "int64", "bool"})


def _pack(padded: np.ndarray) -> tuple[np.ndarray, str]:
    """The padded values as bfloat16 bit patterns when that is exact (the low 16 bits all zero), else float32."""
    padded = np.ascontiguousarray(padded, dtype=np.float32)
    bits = padded.view(np.uint32)
    if not (bits & np.uint32(0xFFFF)).any():
        return (bits >> np.uint32(16)).astype(np.uint16).view(np.int16), BFLOAT16
    return padded, FLOAT32


def _check_storage(stored: np.ndarray, storage: str) -> None:
    if not ((storage == BFLOAT16 and stored.dtype == np.int16) or (storage == FLOAT32 and stored.dtype == np.float32)):
        raise ValueError(f"stored as {stored.dtype} but described as {storage!r}")


def _tensor_meta(tensor: Tensor) -> dict:
    return {"shape": list(tensor.shape), "data_format": tensor.data_format.name, "dtype": str(tensor.dtype)}


def capture(module, numerics) -> tuple[dict[str, np.ndarray], dict]:
    """(arrays, JSON metadata) of the device state a run left on `module` (a PyBudaModule run under
    `numerics`, a NumericsConfig). Entries whose keys cannot be named are left out."""
    params = {id(p): name for name, p in module._parameters.items()}
    constants = {id(v): name for name, v in module._constants.items() if v is not None}
    arrays, meta, consumed = {}, {}, set()
    for owner in module._parameters.values():
        for key, tensor in owner.consteval.items():
            operands = []
            for operand in key.operands:
                if len(operand) == 2 and operand[0] in params:
                    param = module._parameters[params[operand[0]]]
                    operands.append(["parameter", params[operand[0]]] if param.version == operand[1] else None)
                else:
                    operands.append(["constant", constants[operand[0]]] if operand[0] in constants else None)
            if None in operands or key.numerics != numerics.resolve(key.op_type, key.name):
                continue   # stale (a weight changed since) or run under other numerics
            entry = f"consteval.{len(meta)}"
            arrays[entry], storage = _pack(tensor.padded)
            meta[entry] = {"kind": "consteval", "op_type": key.op_type, "name": key.name, "attrs": key.attrs,
                           "operands": operands, "storage": storage, **_tensor_meta(tensor),
                           "terms": image_terms.capture(entry, tensor, arrays[entry], arrays)}
            consumed.update(n for kind, n in operands if kind == "parameter")
    for name, param in module._parameters.items():
        if name in consumed:
            continue
        for df, tensor in param._device_copies.items():
            if isinstance(df, DataFormat):   # copies in another layout (conv kernels) are recomputed
                entry = f"device_copy.{len(meta)}"
                arrays[entry], storage = _pack(tensor.padded)
                meta[entry] = {"kind": "device_copy", "parameter": name, "storage": storage, **_tensor_meta(tensor),
                               "terms": image_terms.capture(entry, tensor, arrays[entry], arrays)}
    return arrays, meta


def _restored_tensor(entry: str, info: dict, arrays: dict) -> Tensor:
    if entry not in arrays:
        raise ValueError(f"device state {entry!r} is described but not stored")
    if info.get("dtype") not in _HOST_DTYPES:
        raise ValueError(f"device state {entry!r}: unsupported dtype {info.get('dtype')!r}")
    shape = tuple(int(d) for d in info["shape"])
    stored, storage = image_terms.first_term(entry, info, arrays), info.get("storage")
    _check_storage(stored, storage)
    if stored.shape != storage_shape(shape):
        raise ValueError(f"device state {entry!r} holds {stored.shape}, a {shape} tensor is stored as {storage_shape(shape)}")
    stored.flags.writeable = False     # shared by every run, like a tensor the run made itself
    data_format = DataFormat.from_json(info["data_format"])
    if storage == BFLOAT16:            # widened when a kernel first reads it (maybe never: widen_on_read.py)
        tensor = WidenOnReadTensor(stored, shape, data_format, info["dtype"])
    else:
        tensor = Tensor(stored, shape, data_format, info["dtype"])
    image_terms.restore(entry, info, arrays, tensor)
    return tensor


def restore(module, numerics, arrays: dict[str, np.ndarray], meta: dict) -> int:
    """Put captured state back on a freshly loaded `module`; returns how many entries were restored.
    Raises ValueError naming the entry when the state does not fit the module."""
    for entry, info in meta.items():
        tensor = _restored_tensor(entry, info, arrays)
        if info.get("kind") == "device_copy":
            param = _parameter(module, entry, info.get("parameter"))
            if tuple(param.shape) != tensor.shape:
                raise ValueError(f"device state {entry!r}: parameter {info['parameter']!r} has shape {param.shape}")
            param._device_copies[tensor.data_format] = tensor
        elif info.get("kind") == "consteval":
            inputs = [_operand(module, entry, operand) for operand in info["operands"]]
            owners = [x for x in inputs if isinstance(x, Parameter)]
            if not owners:
                raise ValueError(f"device state {entry!r}: a consteval result needs a parameter operand")
            key = consteval_key(info["op_type"], info["name"], info["attrs"],
                                numerics.resolve(info["op_type"], info["name"]), inputs)
            owners[0].consteval[key] = tensor
        else:
            raise ValueError(f"device state {entry!r}: unknown kind {info.get('kind')!r}")
    return len(meta)


def _parameter(module, entry: str, name) -> Parameter:
    if name not in module._parameters:
        raise ValueError(f"device state {entry!r} names parameter {name!r}, which module {module.name} does not have")
    return module._parameters[name]


def _operand(module, entry: str, operand):
    kind, name = operand
    if kind == "parameter":
        return _parameter(module, entry, name)
    if kind == "constant" and module._constants.get(name) is not None:
        return Constant(name, module._constants[name])
    raise ValueError(f"device state {entry!r} names {kind} {name!r}, which module {module.name} does not have")
