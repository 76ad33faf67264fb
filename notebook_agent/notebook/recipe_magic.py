"""The notebook's recipe commands: ``%agent recipe RUN --template T [--save FILE] [--out NAME]`` makes a recipe of
a saved run and binds it in the notebook, and ``%%agent --each ROWS --recipe RUN`` maps it over a table (the
cell body is the task template, so the run's values of its ``{column}``s become the slots).

RUN is what :func:`~notebook_agent.agent.recipes.recipe.open_recipe` reads: a recipe in the notebook, a recipe file
(``.json``), a run file, or a saved run by position or id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..agent.recipes.recipe import Recipe, RecipeError, open_recipe
from ..config import options
from .runtime import STATE

USAGE = 'usage: %agent recipe RUN --template "TASK" [--save FILE] [--out NAME]'


def recipe_in(ref: str, template: str | None, namespace: dict[str, Any]) -> Recipe:
    """The recipe ``ref`` names: a notebook variable holding a recipe or a run result first, else a file or run."""
    bound = namespace.get(ref)
    if bound is not None and ref.isidentifier():
        result = getattr(bound, "result", bound)  # a run handle's result
        return open_recipe(result, template=template, runs_dir=STATE.config.runs_dir)
    return open_recipe(ref, template=template, runs_dir=STATE.config.runs_dir)


def recipe_command(
    rest: list[str], namespace: dict[str, Any], parse: Callable[[list[str], set[str], str], dict[str, str] | None]
) -> Recipe | None:
    """``%agent recipe``: make the recipe, say its slots, bind it (``--out``, default ``recipe``)."""
    import shlex

    try:
        rest = shlex.split(" ".join(rest))  # --template "Find the price of {product}": quotes keep its spaces
    except ValueError as exc:
        print(f"%agent recipe: {exc} (quote the template with \" or ')")
        return None
    if not rest or rest[0].startswith("--"):
        print(USAGE)
        return None
    opts = parse(rest[1:], {"--template", "--save", "--out"}, "%agent recipe")
    if opts is None:
        return None
    out = opts.get("--out") or "recipe"
    try:
        if not out.isidentifier():
            raise options.OptionError(f"--out needs a Python variable name, got {out!r}.")
        recipe = recipe_in(rest[0], opts.get("--template"), namespace)
        if opts.get("--save"):
            recipe.save(opts["--save"])
    except (RecipeError, ValueError, OSError) as exc:
        print(f"%agent recipe: {exc}")
        return None
    namespace[out] = recipe
    slots = "; ".join(f"{s.name} ({', '.join(s.used) or 'task only'})" for s in recipe.slots)
    print(f"{out} = {recipe!r}\nslots: {slots or 'none'}")
    return recipe
