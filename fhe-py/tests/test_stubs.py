"""The type stubs describe the module as it is: every public name and method of the
stubs exists at run time and the reverse, and each has a docstring."""

import ast
import inspect
from pathlib import Path

import pytest

import lux_fhe
from lux_fhe import ckks

PKG = Path(lux_fhe.__file__).parent


def stub_names(path):
    """{top-level name: set of member names} from a .pyi (aliases and imports left out)."""
    tree = ast.parse(path.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign):
                    members.add(item.target.id)
            out[node.name] = {m for m in members if not m.startswith("_")}
        elif isinstance(node, ast.FunctionDef):
            out[node.name] = set()
        elif isinstance(node, ast.AnnAssign):
            out[node.target.id] = set()
    return out


def public(cls):
    return {n for n in dir(cls) if not n.startswith("_")}


@pytest.mark.parametrize("module, stub", [(lux_fhe, "__init__.pyi"), (ckks, "ckks.pyi")])
def test_stubs_match_the_module(module, stub):
    names = stub_names(PKG / stub)
    runtime = set(module.__all__) - {"ckks"}
    assert set(names) == runtime, (set(names) ^ runtime)
    for name, members in names.items():
        obj = getattr(module, name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            assert members == public(obj), (name, members ^ public(obj))


@pytest.mark.parametrize("module", [lux_fhe, ckks])
def test_every_public_class_and_method_has_a_docstring(module):
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        if name == "ckks" or not callable(obj):
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member in public(obj):
                attr = getattr(obj, member)
                if callable(attr) or isinstance(attr, property) or inspect.isgetsetdescriptor(attr):
                    if not (getattr(attr, "__doc__", None) or "").strip():
                        missing.append(f"{name}.{member}")
    assert not missing, missing
