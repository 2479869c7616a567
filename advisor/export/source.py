"""Writing Python source that ruff leaves as it is: the pieces (advisor/export/pieces/) cut into their
top-level definitions and put together with what they use, the imports they need, and calls laid out at
ruff's default line length.

A piece is a real module (linted, typed and tested as such); a download copies the definitions it needs
from it, follows the names each one uses to the definitions they name (in its own piece, or imported from
another), and writes the imports of what remains used. Nothing here imports torch.
"""

from __future__ import annotations

import ast
import functools
import json
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

WIDTH = 88  # ruff's default line length: the downloaded files are checked with ruff's defaults
INDENT = "    "
PIECES = Path(__file__).resolve().parent / "pieces"
PACKAGE = "advisor.export.pieces"
# The pieces in the order a file lists their definitions: a name must be defined before a module-level
# statement uses it (a type alias, a dataclass's base); functions may use what comes later.
ORDER = (
    *("layers", "setup", "stopping", "data", "fit"),
    *("cd", "contrastive", "backprop", "pretrained", "adversarial", "variational"),
    "main",
)


@dataclass(frozen=True)
class Definition:
    piece: str
    names: frozenset[str]  # what it binds
    uses: frozenset[str]  # the names it reads
    text: str  # its source, with the comment lines just above it
    position: int


@dataclass(frozen=True)
class Import:
    module: str  # "" for `import x`
    name: str  # the imported name (or module)
    alias: str  # the name it binds

    def statement(self) -> tuple[str, str]:
        """(its sort key, the clause it contributes)."""
        clause = self.name if self.alias == self.name.split(".")[0] else f"{self.name} as {self.alias}"
        return (self.module, clause)


@dataclass(frozen=True)
class Piece:
    name: str
    definitions: tuple[Definition, ...]
    imports: dict[str, Import]  # alias -> an outside import
    links: dict[str, tuple[str, str]]  # alias -> (piece, name) imported from another piece


def _uses(node: ast.AST) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def _binds(node: ast.stmt) -> frozenset[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return frozenset({node.name})
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return frozenset(t.id for t in targets if isinstance(t, ast.Name))


@functools.cache
def piece(name: str) -> Piece:
    text = (PIECES / f"{name}.py").read_text()
    lines = text.splitlines()
    tree = ast.parse(text)
    definitions: list[Definition] = []
    imports: dict[str, Import] = {}
    links: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
            source = (node.module or "").rsplit(".", 1)[1]
            links |= {a.asname or a.name: (source, a.name) for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            imports |= {
                a.asname or a.name: Import(node.module or "", a.name, a.asname or a.name) for a in node.names
            }
        elif isinstance(node, ast.Import):
            for a in node.names:
                alias = a.asname or a.name.split(".")[0]
                imports[alias] = Import("", a.name, alias)
        elif not isinstance(node, ast.Expr | ast.ImportFrom):  # not the docstring, not __future__
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            while first > 1 and lines[first - 2].startswith("#"):
                first -= 1
            source = "\n".join(lines[first - 1 : node.end_lineno])
            definitions.append(Definition(name, _binds(node), _uses(node), source, len(definitions)))
    return Piece(name, tuple(definitions), imports, links)


def assemble(
    wanted: Iterable[tuple[str, str]],
    *,
    swap: Mapping[str, str] | None = None,
    elsewhere: Mapping[str, str] | None = None,
) -> tuple[list[Import], list[Definition]]:
    """The definitions that `wanted` (piece, name) pairs need, in file order, and the outside imports they
    use. `swap` points a piece's links elsewhere (main's loop functions: to the candidate's own loop);
    `elsewhere` names the pieces another file holds (train.py imports model.py's classes, not a copy)."""
    swap, elsewhere = swap or {}, elsewhere or {}
    found: dict[tuple[str, str], Definition] = {}
    imports: dict[str, Import] = {}
    todo = list(wanted)
    while todo:
        where, name = todo.pop()
        where = swap.get(where, where)
        p = piece(where)
        definition = next((d for d in p.definitions if name in d.names), None)
        if definition is None:
            raise KeyError(f"the piece {where!r} defines no {name!r}")
        if (where, name) in found:
            continue
        for bound in definition.names:
            found[(where, bound)] = definition
        for used in definition.uses:
            if used in p.links and p.links[used][0] in elsewhere:
                other, name = p.links[used]
                imports[used] = Import(elsewhere[other], name, used)
            elif used in p.links:
                todo.append(p.links[used])
            elif used in p.imports:
                imports[used] = p.imports[used]
            elif any(used in d.names for d in p.definitions):
                todo.append((where, used))
    chosen = sorted(
        {id(d): d for d in found.values()}.values(), key=lambda d: (ORDER.index(d.piece), d.position)
    )
    seen: dict[str, str] = {}
    for d in chosen:
        for bound in d.names:
            if seen.setdefault(bound, d.piece) != d.piece:
                raise ValueError(f"{bound!r} is defined by the pieces {seen[bound]!r} and {d.piece!r}")
    return list(imports.values()), chosen


def import_block(imports: Iterable[Import]) -> str:
    """`from __future__ import annotations`, then the standard library, then the rest (torch, numpy), then
    this download's own modules: isort's sections, straight imports before `from` ones."""
    sections: dict[int, set[tuple[str, str]]] = {}
    for item in imports:
        top = (item.module or item.name).split(".")[0]
        section = 0 if top in sys.stdlib_module_names else 2 if top == "model" else 1
        sections.setdefault(section, set()).add(item.statement())
    blocks = ["from __future__ import annotations"]
    for section in sorted(sections):
        clauses = sorted(sections[section])
        straight = sorted(f"import {clause}" for module, clause in clauses if not module)
        froms: dict[str, list[str]] = {}
        for module, clause in clauses:
            if module:
                froms.setdefault(module, []).append(clause)
        lines = straight + [_from(module, sorted(names)) for module, names in sorted(froms.items())]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _from(module: str, names: list[str]) -> str:
    flat = f"from {module} import {', '.join(names)}"
    if len(flat) <= WIDTH:
        return flat
    return f"from {module} import (\n" + "".join(f"{INDENT}{n},\n" for n in names) + ")"


def literal(value: object) -> str:
    """A Python literal for a JSON value: strings in double quotes, as ruff writes them."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        items = [literal(v) for v in value]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    raise TypeError(f"no literal for {value!r}")


@dataclass
class Call:
    """A call (or a parenthesised tuple, `func=""`) to lay out: flat where it fits, else one argument per
    line with a trailing comma, which ruff keeps. `comments[i]` goes with argument i."""

    func: str
    args: list[str | Call]
    comments: list[str] | None = None

    def flat(self) -> str:
        inner = ", ".join(a if isinstance(a, str) else a.flat() for a in self.args)
        return f"{self.func}({inner})"

    def lines(self, indent: str, tail: str = "", lead: str = "") -> list[str]:
        """The call at `indent`, after `lead` (`return `, `x = `) and before `tail` (a comma)."""
        flat = self.flat()
        if len(indent + lead + flat + tail) <= WIDTH and not any(self.comments or []):
            return [f"{indent}{lead}{flat}{tail}"]
        inner = indent + INDENT
        out = [f"{indent}{lead}{self.func}("]
        for i, arg in enumerate(self.args):
            comment = (self.comments or [""] * len(self.args))[i]
            text = arg if isinstance(arg, str) else None
            if text is not None:
                entry = [f"{inner}{text},"]
            else:
                assert isinstance(arg, Call)
                entry = arg.lines(inner, ",")
            if comment and len(entry) == 1 and len(f"{entry[0]}  # {comment}") <= WIDTH:
                entry = [f"{entry[0]}  # {comment}"]
            elif comment:
                entry = comment_lines(comment, inner) + entry
            out += entry
        out.append(f"{indent}){tail}")
        return out


def comment_lines(text: str, indent: str) -> list[str]:
    """A comment on lines of its own, wrapped to the line length."""
    width = max(40, WIDTH - len(indent) - 2)
    return [f"{indent}# {line}" for line in textwrap.wrap(text, width, break_on_hyphens=False)]


def docstring(text: str, indent: str = "") -> str:
    """A docstring whose paragraphs are wrapped to the line length."""
    paragraphs = text.strip().split("\n\n")
    width = WIDTH - len(indent) - 3  # a one-line docstring's closing quotes stay on its line
    wrapped = []
    for paragraph in paragraphs:
        if paragraph.startswith("    "):  # a command line: as it is
            wrapped.append(paragraph)
        elif paragraph.startswith("- "):  # a list item: its lines hang under its first
            text = " ".join(paragraph.split())
            wrapped.append(
                "\n".join(textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False))
            )
        else:
            wrapped.append(
                "\n".join(textwrap.wrap(" ".join(paragraph.split()), width, break_on_hyphens=False))
            )
    body = "\n\n".join(wrapped).replace('"""', "'''")
    if "\n" not in body:
        return f'{indent}"""{body}"""'
    lines = f'"""{body}\n"""'.splitlines()
    return "\n".join(indent + line if line else line for line in lines)


def module(doc: str, imports: str, sections: Sequence[str]) -> str:
    """The docstring, the imports, then top-level sections two blank lines apart."""
    body = "\n\n\n".join(s.strip("\n") for s in sections if s.strip())
    return f"{doc}\n\n{imports}\n\n\n{body}\n"
