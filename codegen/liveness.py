"""Values freed at their last use: `del` statements added to a generated module's forward() as it
is imported, never to the file.

A generated forward() is straight-line code binding one local per op, and Python keeps every local
alive until the function returns: a program's intermediates all lived to its end (for a Llama
layer at 128 tokens that is every activation of every layer at once). Like torch.fx's generated
code, the forward that runs deletes each local after the statement that reads it last, so an
activation lives from its op to its last reader. The file on disk stays what codegen wrote (and
what a user edits): the statements are added to the syntax tree the loader compiles, with the
line numbers of the statements they follow.

Only a forward() whose body is plain assignments and a final return is changed (what codegen
writes); one with control flow, nested functions or lambdas (a hand edit) runs as written.
"""

from __future__ import annotations

import ast

_PLAIN = (ast.Assign, ast.AnnAssign, ast.Expr)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_FRAME_READERS = frozenset({"locals", "vars", "eval", "exec", "dir"})


def _writes(statement: ast.stmt) -> set[str]:
    targets = statement.targets if isinstance(statement, ast.Assign) else \
        [statement.target] if isinstance(statement, ast.AnnAssign) else []
    if all(type(t) is ast.Name for t in targets):            # what codegen writes: one walk saved
        return {t.id for t in targets}
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _reads_if_plain(statement: ast.stmt) -> set[str] | None:
    """The names `statement` reads, or None when it holds something that keeps a local beyond its
    statement (a closure) or reads the frame by name. One walk of the statement: on a warm start
    from the cache this runs over every generated statement, so it does the work of what were
    three walks (reads, the straight-line check) at once."""
    reads = set()
    for node in ast.walk(statement):
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is ast.Load:
                reads.add(node.id)
        elif kind is ast.Call:
            if type(node.func) is ast.Name and node.func.id in _FRAME_READERS:
                return None
        elif isinstance(node, _SCOPES) or isinstance(node, (ast.Global, ast.Nonlocal, ast.NamedExpr)):
            return None
    return reads


def _straight_line_reads(body: list[ast.stmt]) -> list[set[str]] | None:
    """Each statement's reads when the body is assignments and expressions, then at most one return
    at the end, with nothing that keeps a local beyond its statement or reads the frame; else None."""
    if not body or not all(isinstance(s, _PLAIN) for s in body[:-1]) or not isinstance(body[-1], (*_PLAIN, ast.Return)):
        return None
    out = []
    for statement in body:
        reads = _reads_if_plain(statement)
        if reads is None:
            return None
        out.append(reads)
    return out


def _delete(names: list[str], after: ast.stmt) -> ast.Delete:
    """`del names` with `after`'s location on every node (so the tree needs no fix_missing_locations walk)."""
    where = {"lineno": after.lineno, "col_offset": after.col_offset,
             "end_lineno": after.end_lineno, "end_col_offset": after.end_col_offset}
    return ast.Delete(targets=[ast.Name(n, ast.Del(), **where) for n in names], **where)


def free_after_last_use(function: ast.FunctionDef) -> bool:
    """Add `del` statements to `function` (in place) for each local after its last read; True if
    the body qualified. Arguments count as locals (the frame's reference is dropped; the caller's
    own stays), `self` is left alone."""
    body = function.body
    start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
    statements = body[start:]
    reads_of = _straight_line_reads(statements)
    if reads_of is None:
        return False
    arguments = {a.arg for a in function.args.args + function.args.kwonlyargs + function.args.posonlyargs} - {"self"}
    bound, last_use = set(arguments), {}
    for i, (statement, reads) in enumerate(zip(statements, reads_of)):
        writes = _writes(statement)
        for name in (reads & bound) | writes:   # (a name written and never read: dead at once)
            last_use[name] = i
        bound |= writes
    returns = isinstance(statements[-1], ast.Return)
    dying: dict[int, list[str]] = {}
    for name, i in last_use.items():
        if not (returns and i == len(statements) - 1):       # what the return reads stays
            dying.setdefault(i, []).append(name)
    out = body[:start]
    for i, statement in enumerate(statements):
        out.append(statement)
        names = sorted(dying.get(i, ()))
        if names:
            out.append(_delete(names, statement))
    function.body = out
    return True


def with_frees(tree: ast.Module) -> ast.Module:
    """`tree` (a generated module's source) with every class's forward() freeing its values at
    their last use, where the body qualifies."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "forward":
                    free_after_last_use(item)
    return tree       # every node added has its location (_delete)
