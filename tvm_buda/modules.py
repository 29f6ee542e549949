"""PyBuda's framework module wrappers: name a framework model so devices can compile it.

Each wrapper keeps the model in `framework_module`, imports it for compilation
(`import_model`) and runs it in its own framework (`cpu_eval`: CPUDevice, and the golden).
Frameworks are imported only when a wrapper is used.
"""

from __future__ import annotations

from pathlib import Path

from buda_runtime_sim.module import Module


class FrameworkModule(Module):
    """A framework model placed on a TT device is compiled by tvm_buda on first use."""

    framework = "unknown"

    def __init__(self, name: str, module):
        super().__init__(name)
        self.framework_module = module

    def compile_for_device(self, sample_inputs, config):
        """Called by the simulated TTDevice: compile for the buda backend."""
        from .model_compiler import compile_model

        return compile_model(self, sample_inputs, config=config, name=self.name)

    def compile_for_training(self, sample_inputs, config, input_grad_count: int = 0):
        """Called by the simulated TTDevice when training: forward and backward graphs for the device."""
        from .training.frameworks import compile_for_training

        return compile_for_training(self, sample_inputs, config, input_grad_count)

    def import_model(self, sample_inputs, name: str):
        """The model as an ImportedModel (Relax module, weights, signature)."""
        raise NotImplementedError

    def cpu_eval(self, *inputs, **named_inputs):
        """Run the framework model itself (CPUDevice, and the golden reference)."""
        return self.framework_module(*inputs, **named_inputs)


class PyTorchModule(FrameworkModule):
    """`PyTorchModule(name, torch.nn.Module)`: torch tensors in and out."""

    framework = "pytorch"

    def __init__(self, name: str, module, redirect_forward: bool = True):
        import torch

        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"PyTorchModule {name!r}: expected a torch.nn.Module, got {type(module).__name__}")
        super().__init__(name, module)

    def check_input_names(self, names) -> None:
        """Named inputs (a dict, a tokenizer's BatchEncoding) must be arguments of the model's forward.

        A key the forward does not take (e.g. token_type_ids for a model without them) is an error,
        as it is for `model(**inputs)` in PyTorch: dropping it silently could hide a wrong input.
        """
        import inspect

        params = inspect.signature(self.framework_module.forward).parameters
        if any(p.kind == p.VAR_KEYWORD for p in params.values()):
            return
        unknown = [n for n in names if n not in params]
        if unknown:
            accepted = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
            raise TypeError(f"PyTorchModule {self.name!r}: input(s) {unknown} are not arguments of "
                            f"{type(self.framework_module).__name__}.forward (it takes {accepted}); "
                            f"remove them from the inputs, e.g. inputs.pop({unknown[0]!r})")

    def import_model(self, sample_inputs, name: str):
        from .frontends.pytorch import import_pytorch

        return import_pytorch(self.framework_module, sample_inputs, name)

    def forward(self, *args, **kwargs):
        """Call the model as PyTorch would: with gradients enabled the outputs carry the autograd
        graph `backward` follows."""
        return self.framework_module(*args, **kwargs)

    def backward(self, *args):
        """Backpropagate from outputs of `forward`: each argument is an (output, incoming gradient)
        pair (or pass one list of them); gradients accumulate in the model's parameters' `.grad`
        and in inputs that require grad, as `torch.autograd.backward` does."""
        import torch

        pairs = args[0] if len(args) == 1 and isinstance(args[0], list) else list(args)
        if not pairs:
            raise ValueError(f"PyTorchModule {self.name!r}.backward needs (output, gradient) pairs, got none")
        for i, pair in enumerate(pairs):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise TypeError(f"PyTorchModule {self.name!r}.backward: argument #{i} must be an (output, gradient) "
                                f"pair, got {type(pair).__name__}")
            output, grad = pair
            if not isinstance(output, torch.Tensor) or output.grad_fn is None and not output.requires_grad:
                raise ValueError(f"PyTorchModule {self.name!r}.backward: output #{i} carries no autograd graph; "
                                 "compute it with forward(...) while gradients are enabled (not under torch.no_grad, "
                                 "and not from a device run, which is inference only)")
            if tuple(grad.shape) != tuple(output.shape):
                raise ValueError(f"PyTorchModule {self.name!r}.backward: gradient #{i} has shape "
                                 f"{tuple(grad.shape)}, its output has shape {tuple(output.shape)}")
        outputs = [o for o, _ in pairs]
        grads = [torch.as_tensor(g.value() if hasattr(g, "value") else g, dtype=o.dtype) for o, g in pairs]
        torch.autograd.backward(outputs, grads)

    def cpu_eval(self, *inputs, **named_inputs):
        import torch

        with torch.no_grad():  # a device run is inference: no graph is kept
            return self.forward(*inputs, **named_inputs)


class TFModule(FrameworkModule):
    """`TFModule(name, model)`: a Keras model, a tf.Module with __call__ or a tf.function; tf.Tensor out."""

    framework = "tensorflow"

    def __init__(self, name: str, module):
        if not callable(module):
            raise TypeError(f"TFModule {name!r}: expected a Keras model, a tf.Module with __call__ or a tf.function, "
                            f"got {type(module).__name__}")
        super().__init__(name, module)

    def import_model(self, sample_inputs, name: str):
        from .frontends.tensorflow import import_tensorflow

        return import_tensorflow(self.framework_module, sample_inputs, name)

    def cpu_eval(self, *inputs, **named_inputs):
        from .frontends.tensorflow import call_tf_model

        return call_tf_model(self.framework_module, inputs, named_inputs)


class TFGraphDefModule(FrameworkModule):
    """`TFGraphDefModule(name, graph_def, output_names)`: inputs are the GraphDef's placeholders."""

    framework = "tensorflow"

    def __init__(self, name: str, module, output_names):
        if not hasattr(module, "node"):
            raise TypeError(f"TFGraphDefModule {name!r}: expected a tf.compat.v1.GraphDef, got {type(module).__name__}")
        super().__init__(name, module)
        self.output_names = [output_names] if isinstance(output_names, str) else list(output_names)
        if not self.output_names:
            raise ValueError(f"TFGraphDefModule {name!r}: output_names is empty")

    def import_model(self, sample_inputs, name: str):
        from .frontends.tensorflow import import_graph_def

        return import_graph_def(self.framework_module, self.output_names, sample_inputs, name)

    def cpu_eval(self, *inputs, **named_inputs):
        from .frontends.tensorflow import run_graph_def

        return run_graph_def(self.framework_module, self.output_names, inputs, named_inputs, self.name)


class JaxModule(FrameworkModule):
    """`JaxModule(name, fn)`: any JAX-traceable callable of arrays (a closure over params, a bound flax module)."""

    framework = "jax"

    def __init__(self, name: str, module):
        if not callable(module):
            raise TypeError(f"JaxModule {name!r}: expected a JAX-traceable callable, got {type(module).__name__}")
        super().__init__(name, module)

    def import_model(self, sample_inputs, name: str):
        from .frontends.jax import import_jax

        return import_jax(self.framework_module, sample_inputs, name)


class OnnxModule(FrameworkModule):
    """`OnnxModule(name, onnx.ModelProto, onnx_path=None)`: numpy in and out (onnxruntime on the CPU)."""

    framework = "onnx"

    def __init__(self, name: str, module=None, onnx_path=None):
        if module is None and onnx_path is not None:
            from .frontends.onnx import load_onnx

            module = load_onnx(onnx_path)
        if not hasattr(module, "graph"):
            raise TypeError(f"OnnxModule {name!r}: expected an onnx.ModelProto (or onnx_path), "
                            f"got {type(module).__name__}")
        super().__init__(name, module)
        self.onnx_path = onnx_path

    def import_model(self, sample_inputs, name: str):
        from .frontends.onnx import import_onnx

        return import_onnx(self.framework_module, sample_inputs, name)

    def cpu_eval(self, *inputs, **named_inputs):
        from .frontends.onnx import run_onnxruntime

        return _one_or_tuple(run_onnxruntime(self.framework_module, inputs, named_inputs, self.name))


class TFLiteModule(FrameworkModule):
    """`TFLiteModule(name, tflite_path)`: numpy in and out (the TFLite interpreter on the CPU)."""

    framework = "tflite"

    def __init__(self, name: str, module):
        if not isinstance(module, (str, Path)):
            raise TypeError(f"TFLiteModule {name!r}: expected the path of a .tflite file, got {type(module).__name__}")
        super().__init__(name, str(module))

    def import_model(self, sample_inputs, name: str):
        from .frontends.tflite import import_tflite

        return import_tflite(self.framework_module, sample_inputs, name)

    def cpu_eval(self, *inputs, **named_inputs):
        from .frontends.tflite import run_tflite_file

        return _one_or_tuple(run_tflite_file(self.framework_module, inputs, named_inputs, self.name))


def _one_or_tuple(outputs: list):
    return outputs[0] if len(outputs) == 1 else tuple(outputs)
