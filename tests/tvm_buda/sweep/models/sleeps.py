"""A model file that never finishes building: the sweep records TIMEOUT. A test fixture."""

import time


def build_model():
    time.sleep(600)
