"""A generated forward() frees each value after its last use; the file on disk is left as written."""

import ast
import textwrap
import tracemalloc

import numpy as np

import pybuda
from codegen import GeneratedFiles, import_source
from codegen.liveness import with_frees

SOURCE = textwrap.dedent('''\
    import pybuda


    class Chain(pybuda.PyBudaModule):
        def __init__(self, name="chain"):
            super().__init__(name)

        def forward(self, x, unused):
            a = pybuda.op.Exp("a", x)
            b = pybuda.op.Add("b", a, x)
            dead = pybuda.op.Relu("dead", b)
            c = pybuda.op.Multiply("c", b, b)
            d = pybuda.op.Add("d", c, 1.0)
            return d, a
''')


def test_deletes_follow_each_last_read():
    got = ast.unparse(with_frees(ast.parse(SOURCE))).split("def forward(self, x, unused):\n")[1]
    assert got == textwrap.indent(textwrap.dedent('''\
        a = pybuda.op.Exp('a', x)
        b = pybuda.op.Add('b', a, x)
        del x
        dead = pybuda.op.Relu('dead', b)
        del dead
        c = pybuda.op.Multiply('c', b, b)
        del b
        d = pybuda.op.Add('d', c, 1.0)
        del c
        return (d, a)'''), " " * 8)


def test_forward_with_control_flow_or_closures_runs_as_written():
    for body in ["if x is None:\n            x = 1\n        return x",
                 "f = lambda: x\n        return f()",
                 "y = x\n        print(locals())\n        return y"]:
        source = f"class M:\n    def forward(self, x):\n        {body}\n"
        assert ast.unparse(with_frees(ast.parse(source))) == ast.unparse(ast.parse(source))


def _peak_of_run(module, x) -> int:
    tracemalloc.start()
    try:
        module(x)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_programs_intermediates_die_at_their_last_use(tmp_path):
    """Twelve elementwise ops on a 1 MB tensor: with frees the run holds a few tensors at a time,
    without them all twelve (what every program did before)."""
    lines = ["import pybuda", "", "", "class Long(pybuda.PyBudaModule):", "    def forward(self, v0):"]
    lines += [f"        v{i + 1} = pybuda.op.Add('add{i}', v{i}, 1.0)" for i in range(12)]
    lines += ["        return v12", ""]
    path = tmp_path / "long.py"
    path.write_text("\n".join(lines))
    x = pybuda.Tensor.create_from_torch(__import__("torch").zeros(512, 512))   # 1 MB of float32
    freed = import_source(path).Long("long")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)   # the plain source: every local to the end
    kept = namespace["Long"]("long")
    size = 512 * 512 * 4
    assert _peak_of_run(kept, x) > 10 * size
    assert _peak_of_run(freed, x) < 4 * size
    out_freed, out_kept = freed(x), kept(x)
    assert np.array_equal(out_freed.value().numpy(), out_kept.value().numpy())
    assert path.read_text() == "\n".join(lines)                            # the file is as written


def test_generated_files_stay_as_codegen_wrote_them(tmp_path):
    files = GeneratedFiles.for_module(tmp_path, "m")
    files.source.write_text(SOURCE)
    import_source(files.source)
    assert files.source.read_text() == SOURCE
