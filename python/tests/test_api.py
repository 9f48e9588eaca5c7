"""The package's surface: every public name documented, typed in the stubs, introspectable."""

import ast
import inspect
from pathlib import Path

import cavesweep as cs
from cavesweep import _native


def test_every_public_name_has_a_docstring_and_a_signature():
    for name in cs.__all__:
        obj = getattr(cs, name)
        if callable(obj):
            assert (obj.__doc__ or "").strip(), name
            if not isinstance(obj, type):
                inspect.signature(obj)  # help() and editors show the parameters
    assert "trajectory" in str(inspect.signature(cs.generate))
    assert "connectivity" in str(inspect.signature(cs.measure))


def test_the_stubs_cover_the_native_module():
    stub = Path(_native.__file__).with_name("_native.pyi")
    assert stub.is_file(), "the .pyi is installed beside the module"
    assert Path(_native.__file__).with_name("py.typed").is_file()
    tree = ast.parse(stub.read_text())
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    names |= {t.id for n in tree.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    public = {n for n in dir(_native) if not n.startswith("__")} - {"Recipe"}
    assert public - names == set(), public - names
    assert "Recipe" in names
    recipe = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Recipe")
    members = {n.name for n in recipe.body if isinstance(n, ast.FunctionDef)}
    for attr in ("replace", "to_toml", "from_toml", "rows", "cols", "shape", "spawn", "exit", "trajectory_len"):
        assert attr in members and hasattr(cs.Recipe, attr), attr
