"""`pybuda.optimizers`: SGD, Adam, AdamW and LAMB with PyBuda's signatures, shaped like torch.optim
(parameters, per-parameter state, `step`, `state_dict` / `load_state_dict`).

The device holds the weights, so `step(parameters, gradients)` takes and returns values by name.
Each optimizer's update rule is one function of (m, p, g, state, step, hyper) that runs on the
host in float32 (`device_params=False`, PyBuda's default) or as simulator ops in the optimizer's
formats (`device_params=True`; Float32 / HiFi4 unless `optimizer_df` / `math_fidelity` say
otherwise). Rules follow torch.optim's definitions so results compare one to one.
"""

from __future__ import annotations

import numpy as np

from ..dataformat import DataFormat, MathFidelity
from .flat_values import FlatLayout, FlatValues, aligned_empty, flat_of
from .optimizer_math import DeviceMath, HostMath


def sgd_rule(m, p, g, state, step, hp):
    if hp["weight_decay"]:
        g = g + hp["weight_decay"] * p
    if hp["momentum"]:
        buf = g if "momentum_buffer" not in state else hp["momentum"] * state["momentum_buffer"] + g
        state["momentum_buffer"] = buf
        g = buf
    return p - hp["lr"] * g


def adam_rule(m, p, g, state, step, hp):
    if hp["weight_decay"]:
        if hp["adam_w"]:
            p = p * (1.0 - hp["lr"] * hp["weight_decay"])
        else:
            g = g + hp["weight_decay"] * p
    exp_avg = hp["beta1"] * state["exp_avg"] + (1.0 - hp["beta1"]) * g
    exp_avg_sq = hp["beta2"] * state["exp_avg_sq"] + (1.0 - hp["beta2"]) * (g * g)
    state["exp_avg"], state["exp_avg_sq"] = exp_avg, exp_avg_sq
    c1, c2 = (1.0 - hp["beta1"] ** step, 1.0 - hp["beta2"] ** step) if hp["bias_correction"] else (1.0, 1.0)
    denom = m.sqrt(exp_avg_sq * (1.0 / c2)) + hp["eps"]
    return p - (hp["lr"] / c1) * (exp_avg / denom)


def lamb_rule(m, p, g, state, step, hp):
    exp_avg = hp["beta1"] * state["exp_avg"] + (1.0 - hp["beta1"]) * g
    exp_avg_sq = hp["beta2"] * state["exp_avg_sq"] + (1.0 - hp["beta2"]) * (g * g)
    state["exp_avg"], state["exp_avg_sq"] = exp_avg, exp_avg_sq
    c1, c2 = (1.0 - hp["beta1"] ** step, 1.0 - hp["beta2"] ** step) if hp["bias_correction"] else (1.0, 1.0)
    update = (exp_avg * (1.0 / c1)) / (m.sqrt(exp_avg_sq * (1.0 / c2)) + hp["eps"])
    if hp["weight_decay"]:
        update = update + hp["weight_decay"] * p
    low, high = hp["clip_value"]
    weight_norm = float(np.clip(m.array(m.norm(p)).reshape(()), low, high))
    update_norm = float(m.array(m.norm(update)).reshape(()))
    trust = weight_norm / update_norm if weight_norm > 0 and update_norm > 0 else 1.0
    return p - (hp["lr"] * trust) * update


class Optimizer:
    """Base: hyper-parameters, the parameters it updates (names), their state, the step count."""

    rule = None
    state_keys: tuple[str, ...] = ()
    # The rule works value by value (no norms): on the host it runs once over every parameter's
    # values laid end to end (flat_values), which gives each value the bits it gets alone.
    elementwise = False

    def __init__(self, learning_rate: float, parameters=None, device_params: bool = False,
                 optimizer_df: DataFormat = DataFormat.Float32, math_fidelity: MathFidelity = MathFidelity.HiFi4,
                 **hyper):
        if not isinstance(learning_rate, (int, float)) or learning_rate < 0:
            raise ValueError(f"{type(self).__name__}: learning_rate must be a non-negative number, got {learning_rate!r}")
        self.learning_rate = float(learning_rate)
        self.hyper = hyper
        self.device_params = bool(device_params)
        self.math = DeviceMath(optimizer_df, math_fidelity) if device_params else HostMath()
        self.parameters = None if parameters is None else [_param_name(p) for p in parameters]
        self.state: dict[str, dict[str, np.ndarray]] = {}
        self.step_count = 0
        self._layout: FlatLayout | None = None   # the last flat step's layout (kept: flat_of needs the same one)
        self._flat: list[FlatValues] = []        # its weights and state (kept: flat_of finds only live ones)

    # ---- binding --------------------------------------------------------------------------
    def bind(self, available) -> list[str]:
        """Called by the device: optimise `parameters` if given, else every trainable parameter."""
        available = list(available)
        if self.parameters is None:
            self.parameters = available
        unknown = sorted(set(self.parameters) - set(available))
        if unknown:
            raise KeyError(f"{type(self).__name__}: parameter(s) {unknown} are not trainable parameters of the "
                           f"device; trainable: {available}")
        if not self.parameters:
            raise ValueError(f"{type(self).__name__}: the device has no trainable parameters to optimise "
                             "(every parameter has requires_grad=False, or the module has no weights)")
        return self.parameters

    # ---- stepping -------------------------------------------------------------------------
    def set_optimizer_parameters(self, learning_rate: float | None = None, **hyper) -> None:
        """What schedulers call: change the learning rate (or other hyper-parameters) in place."""
        if learning_rate is not None:
            self.learning_rate = float(learning_rate)
        self.hyper.update(hyper)

    def step(self, parameters: dict, gradients: dict) -> dict:
        """New values for every optimised parameter that has a gradient: {name: float32 array}."""
        if self.parameters is None:
            self.bind(gradients)
        self.step_count += 1
        hp = dict(self.hyper, lr=self.learning_rate)
        m = self.math
        if self.elementwise and type(m) is HostMath:
            out = self._step_flat(parameters, gradients, hp)
            if out is not None:
                return out
        out = {}
        for name in self.parameters:
            if name not in gradients:
                continue
            p, g = np.asarray(parameters[name], np.float32), np.asarray(gradients[name], np.float32)
            self._check_shapes(name, p.shape, g.shape)
            stored = self.state.setdefault(name, {k: np.zeros_like(p) for k in self.state_keys})
            state = {k: m.value(v) for k, v in stored.items()}
            new = type(self).rule(m, m.value(p), m.value(g), state, self.step_count, hp)
            self.state[name] = {k: m.array(v) for k, v in state.items()}
            out[name] = m.array(new).reshape(p.shape)
        return out

    def _check_shapes(self, name: str, p_shape, g_shape) -> None:
        if p_shape != g_shape:
            raise ValueError(f"{type(self).__name__}: gradient of {name} has shape {tuple(g_shape)}, parameter "
                             f"{tuple(p_shape)}")

    def _step_flat(self, parameters: dict, gradients: dict, hp: dict) -> dict | None:
        """step's loop as one run of the rule over all values laid end to end; None when the state
        differs between parameters (then the loop runs). New values are views of one aligned buffer."""
        names = [n for n in self.parameters if n in gradients]
        if not names:
            return {}
        shapes = []
        for name in names:
            p, g = parameters[name], gradients[name]
            p_shape = p.shape if type(p) is np.ndarray else np.shape(p)
            g_shape = g.shape if type(g) is np.ndarray else np.shape(g)
            self._check_shapes(name, p_shape, g_shape)
            shapes.append(p_shape)
        layout = self._layout
        if layout is None or not layout.matches(names, shapes):
            layout = self._layout = FlatLayout(names, shapes)
        stored = [self.state.get(name) for name in names]
        keys = [tuple(s) if s is not None else self.state_keys for s in stored]
        if any(k != keys[0] for k in keys):
            return None
        state = {}
        for key in keys[0]:
            values = {name: s[key] if s is not None else np.zeros(shape, np.float32)
                      for name, s, shape in zip(names, stored, layout.shapes)}
            try:
                state[key] = _flat(values, layout)
            except ValueError:   # state of another shape (a loaded state dict): the loop's broadcasting
                return None
        new = type(self).rule(self.math, _flat(parameters, layout), _flat(gradients, layout), state,
                              self.step_count, hp)
        weights = aligned_empty(layout.total)
        np.copyto(weights, new)
        held = {key: FlatValues(layout, np.asarray(v, np.float32)) for key, v in state.items()}
        for name in names:
            self.state[name] = {key: flat.views[name] for key, flat in held.items()}
        self._flat = [FlatValues(layout, weights), *held.values()]
        return dict(self._flat[0].views)

    # ---- state ----------------------------------------------------------------------------
    def state_dict(self) -> dict:
        return {"learning_rate": self.learning_rate, "hyper": dict(self.hyper), "step": self.step_count,
                "parameters": list(self.parameters or []),
                "state": {n: {k: v.copy() for k, v in s.items()} for n, s in self.state.items()}}

    def load_state_dict(self, state: dict) -> None:
        self.learning_rate = float(state["learning_rate"])
        self.hyper.update(state.get("hyper", {}))
        self.step_count = int(state.get("step", 0))
        if state.get("parameters"):
            self.parameters = list(state["parameters"])
        self.state = {n: {k: np.asarray(v, np.float32).copy() for k, v in s.items()}
                      for n, s in state.get("state", {}).items()}

    def __repr__(self) -> str:
        where = "device" if self.device_params else "host"
        return f"{type(self).__name__}(learning_rate={self.learning_rate}, {where}, {self.hyper})"


class SGD(Optimizer):
    """p -= lr * (g + weight_decay * p), with optional momentum (torch.optim.SGD's definition)."""

    rule = sgd_rule
    elementwise = True

    def __init__(self, learning_rate: float, parameters=None, device_params: bool = False, momentum: float = 0.0,
                 weight_decay: float = 0.0, **formats):
        super().__init__(learning_rate, parameters, device_params, momentum=float(momentum),
                         weight_decay=float(weight_decay), **formats)


class Adam(Optimizer):
    """Adam (torch.optim.Adam); with enable_adam_w=True decoupled weight decay (AdamW)."""

    rule = adam_rule
    state_keys = ("exp_avg", "exp_avg_sq")
    elementwise = True

    def __init__(self, learning_rate: float, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
                 weight_decay: float = 0.0, bias_correction: bool = True, parameters=None, device_params: bool = False,
                 enable_adam_w: bool = False, **formats):
        super().__init__(learning_rate, parameters, device_params, beta1=float(beta1), beta2=float(beta2),
                         eps=float(eps), weight_decay=float(weight_decay), bias_correction=bool(bias_correction),
                         adam_w=bool(enable_adam_w), **formats)


class AdamW(Adam):
    """Adam with decoupled weight decay (torch.optim.AdamW)."""

    def __init__(self, learning_rate: float, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8,
                 weight_decay: float = 0.01, bias_correction: bool = True, parameters=None,
                 device_params: bool = False, **formats):
        super().__init__(learning_rate, beta1, beta2, eps, weight_decay, bias_correction, parameters, device_params,
                         enable_adam_w=True, **formats)


class LAMB(Optimizer):
    """LAMB (You et al. 2019): Adam's update scaled per parameter by ||p|| / ||update||, ||p|| clipped."""

    rule = lamb_rule
    state_keys = ("exp_avg", "exp_avg_sq")

    def __init__(self, learning_rate: float, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-6,
                 weight_decay: float = 0.0, clip_value: tuple[float, float] = (0.0, 10.0),
                 bias_correction: bool = True, parameters=None, device_params: bool = False, **formats):
        super().__init__(learning_rate, parameters, device_params, beta1=float(beta1), beta2=float(beta2),
                         eps=float(eps), weight_decay=float(weight_decay), clip_value=tuple(clip_value),
                         bias_correction=bool(bias_correction), **formats)


def _flat(values: dict, layout: FlatLayout) -> np.ndarray:
    """The values as one flat float32 array: their own buffer when they are its views, else a copy."""
    flat = flat_of(values, layout)
    return layout.gather(values) if flat is None else flat


def _param_name(p) -> str:
    return p if isinstance(p, str) else p.get_name()
