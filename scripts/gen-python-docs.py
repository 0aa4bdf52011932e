#!/usr/bin/env python3
"""Writes docs/sdk/python-reference.md from the docstrings of the Python SDK (sdk/python).

Reads the modules' source with ``ast`` — nothing is imported, so it runs with any Python 3.10+
and without the SDK's dependencies. Public classes (and their public methods, properties and
constructors) are rendered in the order of MODULES; Google-style sections (Args, Returns,
Raises, Attributes, Example) become lists and code blocks, reST roles become code spans.

    python3 scripts/gen-python-docs.py            # writes docs/sdk/python-reference.md
    python3 scripts/gen-python-docs.py --out DIR  # writes DIR/docs/sdk/python-reference.md
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "sdk", "python", "src", "kruntimes")
OUT = os.path.join("docs", "sdk", "python-reference.md")

#: (module, title, classes in the order shown; None = every public class in source order).
MODULES: list[tuple[str, str, list[str] | None]] = [
    ("client", "Synchronous client", ["Client", "Runs", "Functions", "Sessions", "Session", "GatewayInfo"]),
    ("aio", "asyncio client", ["AsyncClient", "AsyncRuns", "AsyncFunctions", "AsyncSessions", "AsyncSession"]),
    ("models", "Data classes", None),
    ("errors", "Errors", None),
]

def _exported() -> set[str]:
    """The names ``kruntimes/__init__.py`` exports (its ``__all__``)."""
    with open(os.path.join(PKG, "__init__.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


EXPORTED = _exported()

SECTIONS = ("Args", "Arguments", "Returns", "Raises", "Attributes", "Yields")


def roles(text: str) -> str:
    """reST roles and literals → Markdown code spans."""
    text = re.sub(r":(?:class|meth|func|mod|attr|data|exc):`~?([^`]+)`", r"`\1`", text)
    return re.sub(r"``([^`]+)``", r"`\1`", text)


def render_doc(doc: str | None) -> str:
    if not doc:
        return ""
    lines = textwrap.dedent(doc.split("\n", 1)[1] if "\n" in doc else "").splitlines()
    lines = [doc.split("\n", 1)[0].strip(), *lines]
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        head = stripped[:-1] if stripped.endswith(":") else None
        if head in SECTIONS and not line.startswith(" "):
            out.append(f"**{head}**")
            out.append("")
            i += 1
            items: list[str] = []
            while i < len(lines) and (lines[i].startswith(" ") or not lines[i].strip()):
                body = lines[i]
                if body.startswith("    ") and not body.startswith("        "):
                    items.append(body.strip())
                elif body.strip() and items:
                    items[-1] += " " + body.strip()
                i += 1
            for item in items:
                name, sep, rest = item.partition(": ")
                if sep and re.fullmatch(r"[A-Za-z_][\w, .*]*", name):
                    out.append(f"- `{name}`: {roles(rest)}")
                else:
                    out.append(f"- {roles(item)}")
            out.append("")
            continue
        if stripped.endswith("::"):
            label = stripped[:-2].rstrip()
            if label:
                out.append(roles(label) + ":")
                out.append("")
            i += 1
            block: list[str] = []
            while i < len(lines) and (lines[i].startswith(" ") or not lines[i].strip()):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            while block and not block[0].strip():
                block.pop(0)
            out.append("```python")
            out.extend(textwrap.dedent("\n".join(block)).splitlines())
            out.append("```")
            out.append("")
            continue
        if stripped.startswith("=====") or (stripped and set(stripped) <= {"=", " "}):
            i += 1
            continue
        out.append(roles(line))
        i += 1
    # Lines of one paragraph are joined (Markdown would anyway, and the output stays
    # formatter-stable); code blocks, list items and section heads are kept as they are.
    result: list[str] = []
    fenced = False
    for line in out:
        if line.startswith("```"):
            fenced = not fenced
            result.append(line)
            continue
        plain = line.strip() and not fenced and not line.startswith(("- ", "**", "|"))
        prev = result[-1] if result else ""
        joinable = prev.strip() and not prev.startswith(("```", "- ", "**", "|")) and not fenced
        if plain and joinable and not _in_fence(result):
            result[-1] = prev.rstrip() + " " + line.strip()
        else:
            result.append(line)
    return "\n".join(result).strip()


def _in_fence(lines: list[str]) -> bool:
    return sum(1 for x in lines if x.startswith("```")) % 2 == 1


def signature(fn: ast.FunctionDef | ast.AsyncFunctionDef, drop_self: bool = True) -> str:
    args = fn.args
    parts: list[str] = []
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for a, d in zip(positional, defaults, strict=True):
        if drop_self and a.arg in ("self", "cls"):
            continue
        if a.arg.startswith("_"):
            continue
        parts.append(_arg(a, d))
    if args.vararg:
        parts.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        parts.append("*")
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if a.arg.startswith("_"):
            continue
        parts.append(_arg(a, d))
    if args.kwarg:
        parts.append("**" + args.kwarg.arg)
    ret = f" -> {ast.unparse(fn.returns)}" if fn.returns else ""
    prefix = "async " if isinstance(fn, ast.AsyncFunctionDef) else ""
    one = f"{prefix}{fn.name}({', '.join(parts)}){ret}"
    if len(one) <= 100:
        return one
    inner = "".join(f"    {p},\n" for p in parts)
    return f"{prefix}{fn.name}(\n{inner}){ret}"


def _arg(a: ast.arg, d: ast.expr | None) -> str:
    s = a.arg
    if a.annotation is not None:
        s += f": {ast.unparse(a.annotation)}"
    if d is not None:
        s += f" = {ast.unparse(d)}" if a.annotation is not None else f"={ast.unparse(d)}"
    return s


def is_property(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list)


def is_classmethod(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list)


def anchor(name: str) -> str:
    return name.lower()


def render_class(module: str, cls: ast.ClassDef) -> list[str]:
    bases = ", ".join(ast.unparse(b) for b in cls.bases)
    out = [f"### {cls.name}", ""]
    out += ["```python", f"class {cls.name}({bases})" if bases else f"class {cls.name}", "```", ""]
    out.append(f"`kruntimes.{module}.{cls.name}`" + (f", also `kruntimes.{cls.name}`" if cls.name in EXPORTED else ""))
    out.append("")
    doc = render_doc(ast.get_docstring(cls))
    if doc:
        out += [doc, ""]
    methods = [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in methods:
        public = not fn.name.startswith("_") or (fn.name == "__init__" and cls.name.endswith("Client"))
        if not public:
            continue
        if fn.name == "__init__":
            title = f"{cls.name}(…)"
            sig = signature(fn).replace("__init__(", f"{cls.name}(", 1).replace(" -> None", "")
        elif is_property(fn):
            title = f"{cls.name}.{fn.name}"
            sig = f"{fn.name}: {ast.unparse(fn.returns) if fn.returns else 'Any'}  # property"
        else:
            title = f"{cls.name}.{fn.name}"
            sig = ("@classmethod\n" if is_classmethod(fn) else "") + signature(fn)
        out += [f"#### {title}", "", "```python", sig, "```", ""]
        d = render_doc(ast.get_docstring(fn))
        if d:
            out += [d, ""]
    return out


def render() -> str:
    out = [
        "# Python SDK reference",
        "",
        "<!-- Generated by scripts/gen-python-docs.py from the docstrings of sdk/python; do not edit. -->",
        "",
        "Every public class and method of the `kruntimes` package. The guide, with runnable examples, "
        "is [Python SDK](python.md).",
        "",
    ]
    toc: list[str] = []
    body: list[str] = []
    for module, title, names in MODULES:
        with open(os.path.join(PKG, f"{module}.py"), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef) and not n.name.startswith("_")}
        chosen = [classes[n] for n in names] if names else list(classes.values())
        body += [f"## {title}", ""]
        mdoc = render_doc(ast.get_docstring(tree))
        if mdoc:
            body += [mdoc, ""]
        toc.append(f"- {title}: " + ", ".join(f"[{c.name}](#{anchor(c.name)})" for c in chosen))
        for c in chosen:
            body += render_class(module, c)
    text = "\n".join([*out, *toc, "", *body]).rstrip() + "\n"
    return re.sub(r"\n{3,}", "\n\n", text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=ROOT, help="directory to write docs/sdk/python-reference.md under")
    args = ap.parse_args()
    path = os.path.join(args.out, OUT)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(render())
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
