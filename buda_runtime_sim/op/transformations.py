"""Tensor manipulations (PyBuda API reference, "Transformations"). Extensions beyond the
reference: Transpose, Permute, Squeeze, Unsqueeze, Broadcast, BroadcastTo, Cast."""

from __future__ import annotations

from .dispatch import pybuda_op, run_op
from .validate import Args, positive_ints


def _slices(op_type, name, operandA, slices, stacking: bool):
    args = Args(op_type, name)
    slices = args.int("slices", slices, -1 if stacking else 1)
    if slices == 0:
        args.fail("slices", "must be positive, or -1 to stack all of Z")
    return run_op(op_type, name, [operandA], slices=slices)


@pybuda_op
def HSlice(name, operandA, slices):
    """[.., Z, R, C] -> [.., Z * slices, R, C / slices]: columns cut into pieces stacked along Z."""
    return _slices("HSlice", name, operandA, slices, stacking=False)


@pybuda_op
def HStack(name, operandA, slices=-1):
    """[.., Z, R, C] -> [.., Z / slices, R, C * slices]; slices=-1 stacks all of Z."""
    return _slices("HStack", name, operandA, slices, stacking=True)


@pybuda_op
def VSlice(name, operandA, slices):
    """[.., Z, R, C] -> [.., Z * slices, R / slices, C]."""
    return _slices("VSlice", name, operandA, slices, stacking=False)


@pybuda_op
def VStack(name, operandA, slices=-1):
    """[.., Z, R, C] -> [.., Z / slices, R * slices, C]; slices=-1 stacks all of Z."""
    return _slices("VStack", name, operandA, slices, stacking=True)


@pybuda_op
def Reshape(name, operandA, shape):
    if not positive_ints(shape):
        shape = Args("Reshape", name).shape("shape", shape)
    return run_op("Reshape", name, [operandA], shape=shape)


@pybuda_op
def Index(name, operandA, dim, start, stop=None, stride=1):
    """operandA[start:stop:stride] along `dim`."""
    args = Args("Index", name)
    stride = args.int("stride", stride)
    if stride == 0:
        args.fail("stride", "must not be 0")
    stop = None if stop is None else args.int("stop", stop)
    return run_op("Index", name, [operandA], dim=args.int("dim", dim), start=args.int("start", start), stop=stop,
                  stride=stride)


@pybuda_op
def Select(name, operandA, dim, index, stride=0):
    """index: an int, or (start, length); stride > 0 repeats the selection every `stride` elements."""
    args = Args("Select", name)
    if isinstance(index, int):
        index = (index, 1)
    start, length = args.ints("index", index, (2,))
    return run_op("Select", name, [operandA], dim=args.int("dim", dim), index=(start, length),
                  stride=args.int("stride", stride, 0))


@pybuda_op
def Pad(name, operandA, pad, mode="constant", channel_last=False, value=0.0):
    """pad = (left, right) or (left, right, top, bottom); mode "constant", "replicate" or "reflect".
    `value` (an extension) is the constant padding value."""
    args = Args("Pad", name)
    return run_op("Pad", name, [operandA], pad=args.ints("pad", pad, (2, 4), 0),
                  mode=args.choice("mode", mode, ("constant", "replicate", "reflect")),
                  channel_last=args.bool("channel_last", channel_last), value=args.float("value", value))


@pybuda_op
def Concatenate(name, *operands, axis):
    if not operands:
        Args("Concatenate", name).fail("operands", "must name at least one tensor")
    return run_op("Concatenate", name, list(operands), axis=Args("Concatenate", name).int("axis", axis))


@pybuda_op
def BinaryStack(name, operandA, operandB, dim):
    """Interleave a and b along `dim` (the result has twice the size there)."""
    return run_op("BinaryStack", name, [operandA, operandB], dim=Args("BinaryStack", name).int("dim", dim))


@pybuda_op
def Transpose(name, operandA, dim0, dim1):
    if type(dim0) is not int or type(dim1) is not int:   # (ints pass Args.int as they are)
        args = Args("Transpose", name)
        dim0, dim1 = args.int("dim0", dim0), args.int("dim1", dim1)
    return run_op("Transpose", name, [operandA], dim0=dim0, dim1=dim1)


@pybuda_op
def Permute(name, operandA, axes):
    """Reorder all dims (PyBuda spells this as a chain of Transposes)."""
    return run_op("Permute", name, [operandA], axes=Args("Permute", name).ints("axes", axes))


@pybuda_op
def Squeeze(name, operandA, dim):
    return run_op("Squeeze", name, [operandA], dim=Args("Squeeze", name).int("dim", dim))


@pybuda_op
def Unsqueeze(name, operandA, dim):
    return run_op("Unsqueeze", name, [operandA], dim=Args("Unsqueeze", name).int("dim", dim))


@pybuda_op
def Broadcast(name, operandA, dim, shape):
    """Repeat the size-1 dim `dim` to size `shape`."""
    args = Args("Broadcast", name)
    return run_op("Broadcast", name, [operandA], dim=args.int("dim", dim), shape=args.int("shape", shape, 1))


@pybuda_op
def BroadcastTo(name, operandA, shape):
    """Broadcast to a full shape (numpy rules)."""
    return run_op("BroadcastTo", name, [operandA], shape=Args("BroadcastTo", name).ints("shape", shape, minimum=0))


CAST_DTYPES = ("float32", "float16", "bfloat16", "bool")


@pybuda_op
def Cast(name, operandA, dtype):
    """Round to the device format of a float dtype, or to 0/1 for "bool"."""
    return run_op("Cast", name, [operandA], dtype=Args("Cast", name).choice("dtype", str(dtype), CAST_DTYPES))
