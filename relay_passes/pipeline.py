"""The one place that lists, in order, the graph passes a model goes through before partitioning."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import tvm
from tvm import relax

from .channels_last_convs import ConvsChannelsLast
from .collapse_sum_as_sum import CollapseSumAsSum
from .decompose_elementwise import DecomposeElementwise
from .decompose_norms import DecomposeNorms
from .decompose_shapes import DecomposeStackAndAdaptivePool
from .dropout_as_identity import DropoutAsIdentity
from .fill_constants import FillConstants
from .fold_batch_norm import FoldBatchNormIntoConv
from .fold_constant import FoldConstants
from .gather_as_slices import GatherAsSlices
from .one_d_as_two_d import ConvPool1DAs2D
from .pads_per_axis import PadsPerAxis
from .three_d_as_two_d import ThreeDAs2D
from .divide_by_constant import DivideByConstantAsMultiply
from .fold_constant_layouts import FoldConstantLayouts
from .guard_take import GuardTakeIndices
from .prepare_conv_layouts import PrepareConvLayouts
from .reconstruct_gelu import ReconstructGelu
from .reconstruct_layer_norm import ReconstructLayerNorm
from .reconstruct_softmax import ReconstructSoftmax
from .safe_softmax_guard import SimplifySafeSoftmaxGuard
from .simplify_layout_chains import SimplifyLayoutChains
from .split_as_slices import SplitAsSlices
from .split_multi_axis import SplitMultiAxisOps
from .top_one_as_max import TopOneAsMax


@dataclass(frozen=True)
class NamedPass:
    name: str
    make: Callable[[], tvm.transform.Pass]
    why: str


@dataclass
class PassPipeline:
    """An ordered list of named passes; `verify` (optional) runs after each one and may raise."""

    passes: list[NamedPass]

    def __call__(self, mod: tvm.IRModule, verify: Callable[[str, tvm.IRModule], None] | None = None) -> tvm.IRModule:
        for p in self.passes:
            try:
                mod = p.make()(mod)
            except Exception as exc:
                exc.add_note(f"in graph pass {p.name} ({p.why})")   # which pass, for the user and `explain`
                raise
            if verify is not None:
                verify(p.name, mod)
        return mod

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.passes]


def buda_pass_pipeline(weights: dict | None = None, baked: set | None = None) -> PassPipeline:
    """weights: values of `main`'s weight parameters by name, for rewrites that fold weights at compile
    time (batch norm into convolutions); `baked` collects the names of the weights they folded."""
    return PassPipeline(
        [
            # canonicalise
            NamedPass("canonicalize_bindings", relax.transform.CanonicalizeBindings,
                      "drop trivial re-bindings so patterns see ops back to back"),
            NamedPass("dropout_as_identity", DropoutAsIdentity, "dropout's output is its input at inference"),
            NamedPass("guard_take_indices", GuardTakeIndices,
                      "out-of-range ids must never reach take's unchecked fast mode; first, so constant takes "
                      "(position ids) fold guarded too and TVM prints no fast-mode warning"),
            NamedPass("fold_batch_norm", lambda: FoldBatchNormIntoConv(weights, baked),
                      "inference batch norm after a convolution is that convolution's kernel and bias (numpy, "
                      "at compile time): four elementwise passes per activation fewer"),
            NamedPass("decompose_ops_for_inference", relax.transform.DecomposeOpsForInference,
                      "batch_norm (a tuple-valued op) into elementwise scale and shift, before folding"),
            NamedPass("fill_constants", FillConstants,
                      "ConstantOfShape weights filled in numpy, not one compiled kernel per shape"),
            NamedPass("fold_constant", FoldConstants,
                      "compute what depends only on constants at compile time (TVM's FoldConstant, "
                      "without lowering every op to find the foldable ones)"),
            NamedPass("gather_as_slices", GatherAsSlices,
                      "take with constant indices (PyTorch's reflect/replicate pads) as slices + concat; "
                      "after fold_constant, which makes the index a constant"),
            NamedPass("eliminate_common_subexpr", relax.transform.EliminateCommonSubexpr,
                      "importers repeat subexpressions (x - mean twice in a layer norm); patterns want one"),
            NamedPass("divide_by_constant_as_multiply", DivideByConstantAsMultiply,
                      "x / c is x * (1 / c): no reciprocal on the device, one form for the patterns"),
            NamedPass("top_one_as_max", TopOneAsMax, "topk(k=1) values, PyTorch's x.max(dim), are a max reduction"),
            NamedPass("simplify_layout_chains", SimplifyLayoutChains,
                      "collapse reshape/permute chains and drop no-op reshapes and broadcasts"),
            NamedPass("simplify_safe_softmax_guard", SimplifySafeSoftmaxGuard,
                      "PyTorch's all -inf row guard in float ops, so attention stays on the device"),
            # reconstruct what frameworks wrote out elementwise
            NamedPass("reconstruct_gelu", ReconstructGelu, "x * Phi(x) in erf or tanh form is one Gelu"),
            NamedPass("reconstruct_layer_norm", ReconstructLayerNorm,
                      "mean/subtract/square/mean/rsqrt/scale/shift is one Layernorm"),
            NamedPass("reconstruct_softmax", ReconstructSoftmax, "exp / sum(exp) is one Softmax"),
            # decompose what the device lacks into what it has
            NamedPass("decompose_norms", DecomposeNorms,
                      "instance and group norm as mean/variance reductions and elementwise ops; tile as concat"),
            NamedPass("decompose_elementwise", DecomposeElementwise, "rsqrt, negative, square, silu via device ops"),
            NamedPass("decompose_stack_and_adaptive_pool", DecomposeStackAndAdaptivePool,
                      "stack as concat, adaptive average pooling as mean or avg_pool2d"),
            NamedPass("collapse_sum_as_sum", CollapseSumAsSum,
                      "autodiff's gradient of a broadcast (collapse_sum_to) as sum + reshape"),
            NamedPass("conv_pool_1d_as_2d", ConvPool1DAs2D,
                      "1-D conv and pools as the device's 2-D ones over a height of 1 (as PyBuda did)"),
            NamedPass("three_d_as_two_d", ThreeDAs2D,
                      "3-D conv as 2-D convs summed over kernel depth, 3-D pools as a 2-D pool then a depth pool"),
            NamedPass("pads_per_axis", PadsPerAxis,
                      "pads of more than the last two dims (3-D pads) as one device pad per axis"),
            NamedPass("split_as_slices", SplitAsSlices, "split returns a tuple; its parts are strided slices"),
            NamedPass("split_multi_axis_ops", SplitMultiAxisOps,
                      "device reductions and slices take one axis at a time"),
            # layouts
            NamedPass("prepare_conv_layouts", PrepareConvLayouts,
                      "TFLite's HWIO/HWOI kernels as OIHW; NHWC data runs as is (channel_last)"),
            NamedPass("convs_channels_last", ConvsChannelsLast,
                      "conv regions in NHWC (channels as tile columns), one transpose at each end of a region"),
            NamedPass("simplify_channels_last_chains", SimplifyLayoutChains,
                      "bias and batch-norm vectors reshaped then permuted are one reshape"),
            NamedPass("fold_constant_layouts", FoldConstantLayouts,
                      "constants moved to NHWC or permuted kernels: numpy moves them, no compiled kernel per call"),
            NamedPass("fold_weight_permutes", FoldConstants,
                      "weights permuted by prepare_conv_layouts and constants moved to NHWC are constants again"),
            NamedPass("dead_code_elimination", relax.transform.DeadCodeElimination,
                      "remove bindings nothing uses"),
        ]
    )
