"""`pybuda.schedulers`: learning-rate schedules that set an optimizer's learning rate.

`run_training` steps the scheduler after every epoch (PyBuda's contract); a manual loop calls
`scheduler.step()` wherever it wants.
"""

from __future__ import annotations


class LearningRateScheduler:
    """Base: `get_lr()` is the rate for the current step count; `step()` advances and applies it."""

    def __init__(self, optimizer):
        if not hasattr(optimizer, "set_optimizer_parameters"):
            raise TypeError(f"{type(self).__name__}: expected a pybuda optimizer, got {type(optimizer).__name__}")
        self.optimizer = optimizer
        self.base_lr = optimizer.learning_rate
        self.step_count = 0
        self.optimizer.set_optimizer_parameters(learning_rate=self.get_lr())

    def get_lr(self) -> float:
        return self.base_lr

    def step(self) -> float:
        self.step_count += 1
        lr = self.get_lr()
        self.optimizer.set_optimizer_parameters(learning_rate=lr)
        return lr

    def state_dict(self) -> dict:
        return {"base_lr": self.base_lr, "step_count": self.step_count}

    def load_state_dict(self, state: dict) -> None:
        self.base_lr = float(state["base_lr"])
        self.step_count = int(state["step_count"])
        self.optimizer.set_optimizer_parameters(learning_rate=self.get_lr())


class LinearWarmup(LearningRateScheduler):
    """lr = base_lr * (step + 1) / (warmup_steps + 1) for the first warmup_steps steps, then base_lr
    (optionally decaying linearly to 0 at total_steps)."""

    def __init__(self, optimizer, warmup_steps: int, total_steps: int | None = None):
        if int(warmup_steps) < 0:
            raise ValueError(f"LinearWarmup: warmup_steps must be >= 0, got {warmup_steps}")
        if total_steps is not None and int(total_steps) <= int(warmup_steps):
            raise ValueError(f"LinearWarmup: total_steps ({total_steps}) must exceed warmup_steps ({warmup_steps})")
        self.warmup_steps = int(warmup_steps)
        self.total_steps = None if total_steps is None else int(total_steps)
        super().__init__(optimizer)

    def get_lr(self) -> float:
        s = self.step_count
        if s < self.warmup_steps:
            return self.base_lr * (s + 1) / (self.warmup_steps + 1)
        if self.total_steps is None:
            return self.base_lr
        return self.base_lr * max(0.0, (self.total_steps - s) / (self.total_steps - self.warmup_steps))
