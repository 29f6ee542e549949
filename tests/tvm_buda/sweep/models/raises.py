"""A model file whose build raises: the sweep records ERROR with this line. A test fixture."""


def build_model():
    raise RuntimeError("this model cannot be built\nsecond line not shown")
