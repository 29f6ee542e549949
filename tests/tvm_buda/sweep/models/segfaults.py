"""A model file that crashes its process (reads address 0): the sweep records CRASH. A test fixture."""

import ctypes


def build_model():
    ctypes.string_at(0)
