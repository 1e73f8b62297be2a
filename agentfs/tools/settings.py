"""Settings files (a policy, a set of workspaces): TOML or JSON, checked by a pydantic model,
and every problem one ``ValueError`` line that names the file and the setting."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


def load(model: type[M], path: str | Path) -> M:
    """``model`` from the ``.toml`` or ``.json`` file at ``path``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text: {exc}") from None
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not valid {path.suffix[1:] or 'JSON'}: {exc}") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg'].lower()}"
            for e in exc.errors()
        )
        raise ValueError(f"{path}: {problems}") from None
