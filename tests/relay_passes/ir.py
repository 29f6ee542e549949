"""What the relay-pass tests ask of a Relax module: the ops it calls, and its result built for llvm."""

import tvm
from tvm import relax


def op_names(mod) -> list[str]:
    """Names of the ops `main` calls, in post order, once per call (so counts can be checked)."""
    names = []
    relax.analysis.post_order_visit(mod["main"], lambda e: isinstance(e, relax.Call) and isinstance(e.op, tvm.ir.Op)
                                    and names.append(e.op.name))
    return names


def run_llvm(mod, *arrays):
    """`main` built with plain TVM for llvm: a numpy array, or a list of them for a tuple output."""
    out = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())["main"](
        *[tvm.runtime.tensor(a) for a in arrays])
    return out.numpy() if hasattr(out, "numpy") else [t.numpy() for t in out]
