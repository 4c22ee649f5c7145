"""Reading a puzzle YAML file with every value's line, so errors name file, line and key.

`Field` wraps one YAML node and the key path that led to it; its accessors
(`mapping`, `items`, `text`, `integer`, `vector`) check the type and raise a
PuzzleFileError("file:line: key.path: problem") when it is wrong.
"""

from __future__ import annotations

from pathlib import Path

import yaml


class PuzzleFileError(ValueError):
    """A puzzle file that cannot be read or is not a valid puzzle definition."""

    def __init__(self, file, line, key_path, message):
        self.file, self.line, self.key_path = str(file), line, key_path
        where = f"{file}:{line}" if line else str(file)
        super().__init__(f"{where}: {key_path or '(top level)'}: {message}")


class Field:
    """One YAML node of a puzzle file and the key path that reached it."""

    def __init__(self, node, file, key_path: str = "", parent_line: int | None = None):
        self.node, self.file, self.key_path = node, file, key_path
        self.line = node.start_mark.line + 1 if node is not None else parent_line

    def error(self, message: str, key: str | None = None) -> PuzzleFileError:
        path = self.key_path if key is None else self.child_path(key)
        return PuzzleFileError(self.file, self.line, path, message)

    def child_path(self, key) -> str:
        if isinstance(key, int):
            return f"{self.key_path}[{key}]"
        return f"{self.key_path}.{key}" if self.key_path else str(key)

    def mapping(self, required=(), optional=()) -> dict[str, "Field"]:
        """The keys of a mapping node, checked against the required and optional names."""
        if not isinstance(self.node, yaml.MappingNode):
            raise self.error("expected a mapping (key: value lines)")
        fields = {}
        allowed = set(required) | set(optional)
        for key_node, value_node in self.node.value:
            key = key_node.value
            child = Field(value_node, self.file, self.child_path(key))
            if not isinstance(key_node, yaml.ScalarNode):
                raise child.error("a key must be a plain name")
            if key in fields:
                raise PuzzleFileError(self.file, key_node.start_mark.line + 1, child.key_path, "given twice")
            if allowed and key not in allowed:
                raise PuzzleFileError(self.file, key_node.start_mark.line + 1, child.key_path,
                                      "unknown key (known here: " + ", ".join(sorted(allowed)) + ")")
            fields[key] = child
        missing = [key for key in required if key not in fields]
        if missing:
            raise self.error("missing key(s): " + ", ".join(missing))
        return fields

    def items(self) -> list["Field"]:
        if not isinstance(self.node, yaml.SequenceNode):
            raise self.error("expected a list, e.g. [a, b]")
        return [Field(node, self.file, self.child_path(i)) for i, node in enumerate(self.node.value)]

    def _scalar(self):
        if not isinstance(self.node, yaml.ScalarNode):
            raise self.error("expected a single value, got a list or mapping")
        return yaml.safe_load(self.node.value) if self.node.style is None else self.node.value

    def text(self) -> str:
        """A name, exactly as written (so that a piece called NO or ON is not read as a boolean)."""
        if not isinstance(self.node, yaml.ScalarNode):
            raise self.error("expected a name, got a list or mapping")
        if not self.node.value:
            raise self.error("expected a name, got nothing")
        return self.node.value

    def integer(self, minimum: int | None = None, maximum: int | None = None) -> int:
        value = self._scalar()
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"expected a whole number, got {self.node.value!r}")
        if minimum is not None and value < minimum:
            raise self.error(f"{value} is below the minimum {minimum}")
        if maximum is not None and value > maximum:
            raise self.error(f"{value} is above the maximum {maximum}")
        return value

    def number(self) -> float:
        value = self._scalar()
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(f"expected a number, got {self.node.value!r}")
        return float(value)

    def vector(self) -> tuple[float, float, float]:
        """A 3-vector [x, y, z]."""
        if not isinstance(self.node, yaml.SequenceNode) or len(self.node.value) != 3:
            raise self.error("expected a vector [x, y, z]")
        x, y, z = (item.number() for item in self.items())
        return x, y, z


def read_source(path) -> Field:
    """The top-level Field of a puzzle file (missing file and bad YAML raise PuzzleFileError)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise PuzzleFileError(path, None, "", f"cannot read puzzle file: {exc.strerror}") from None
    try:
        node = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise PuzzleFileError(path, mark.line + 1 if mark else None, "", f"not valid YAML: {exc}") from None
    if node is None:
        raise PuzzleFileError(path, None, "", "the file is empty")
    return Field(node, path)
