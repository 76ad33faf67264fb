"""``notebook_agent.errors`` lists every public error of the package, and its docstring draws their tree as the
classes really are: an error added anywhere without being listed, or a base changed without the tree, fails here."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import notebook_agent
from notebook_agent import errors
from notebook_agent.core.errors import NotebookAgentError


def defined_errors() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(notebook_agent.__path__, "notebook_agent."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, NotebookAgentError)
                and obj.__module__ == info.name
                and not name.startswith("_")
            ):
                found[name] = obj
    return found


def tree(classes: dict[str, type[BaseException]]) -> list[str]:
    lines: list[str] = []

    def walk(cls: type[BaseException], depth: int) -> None:
        extra = [b.__name__ for b in cls.__bases__ if not issubclass(b, NotebookAgentError) and b is not Exception]
        also = f" (also {', '.join(extra)})" if extra else ""
        lines.append("    " * depth + ("* " if depth else "") + cls.__name__ + also)
        for sub in sorted((c for c in classes.values() if cls in c.__bases__), key=lambda c: c.__name__):
            walk(sub, depth + 1)

    walk(NotebookAgentError, 0)
    return lines


def test_every_public_error_is_listed_and_is_the_same_class() -> None:
    classes = defined_errors()
    assert len(classes) > 30
    assert sorted(classes) == sorted(errors.__all__)
    for name, cls in classes.items():
        assert getattr(errors, name) is cls


def test_the_docstring_draws_the_tree_as_it_is() -> None:
    doc = errors.__doc__ or ""
    drawn = "\n".join("    " + line for line in tree(defined_errors()))
    assert drawn in doc


def test_an_unknown_name_is_a_clear_attribute_error() -> None:
    try:
        errors.NoSuchError  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchError" in str(exc)
    else:
        raise AssertionError("no AttributeError")
