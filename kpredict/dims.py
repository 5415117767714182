"""Values for symbolic sizes written in the project: `[tool.kpredict.dims]` of the nearest pyproject.toml.

    [tool.kpredict.dims]
    n_layer = 12

`--dim NAME=INT` on the command line wins over these.
"""

from __future__ import annotations

import tomllib
from pathlib import Path


def project_dims(paths: tuple[str, ...] | list[str]) -> dict[str, int]:
    """The dims table of the pyproject.toml nearest to the first path (empty when there is none)."""
    from kpredict.verify.annotations import find_pyproject

    if not paths:
        return {}
    first = Path(str(paths[0]).split("::")[0]).absolute()
    pp = find_pyproject(first if first.is_file() else first / "x.py")
    if pp is None:
        return {}
    try:
        table = tomllib.loads(pp.read_text(encoding="utf-8")).get("tool", {}).get("kpredict", {}).get("dims", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {str(k): v for k, v in table.items() if isinstance(v, int) and not isinstance(v, bool)}


def merged_dims(paths: tuple[str, ...] | list[str], cli: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    dims = project_dims(paths)
    dims.update(dict(cli))
    return tuple(sorted(dims.items()))
