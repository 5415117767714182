"""Which files a run analyzes: directories become their `.py` files, the way a user expects.

- Every `*.py` below each directory argument, in a deterministic order (sorted per argument).
- `.gitignore` files are honoured (the ones inside the walked tree and those above it up to the
  repository root, plus `.git/info/exclude`). In a git checkout with `git` on PATH, the list comes
  from `git ls-files --cached --others --exclude-standard` (fast, and exactly git's semantics);
  otherwise, or when git fails, our own matcher below applies the same rules.
- Virtual environments, caches, VCS folders and build outputs are skipped by default (SKIP_DIRS,
  `is_venv`), but a directory named explicitly on the command line is always walked.
- Symlinks are followed; each real directory is entered once, so symlink loops end.
- An explicitly named file is always analyzed, even when ignored or not ending in `.py`.
- A path that does not exist stays in the list: it becomes one `path: error: no such file` line.

Nothing here imports the analyzed code or torch.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

# Directory names never entered while walking (unless named on the command line).
SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".bzr", "__pycache__", "site-packages", "node_modules", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".kpredict_cache", "build", "dist", ".eggs",
    ".ipynb_checkpoints", "__pypackages__",
})
VENV_NAMES = frozenset({".venv", "venv", "env"})


@dataclass(frozen=True, slots=True)
class Target:
    """One thing to analyze: a file path, optionally one qualname in it, or why it cannot be."""

    path: str
    only: str | None = None
    error: str | None = None


def split_target(spec: str) -> tuple[str, str | None]:
    """'model.py::Block.forward' -> ('model.py', 'Block.forward')."""
    if "::" in spec:
        path, _, qual = spec.partition("::")
        return path, qual or None
    return spec, None


def is_venv(d: Path) -> bool:
    """A virtual environment (venv/virtualenv `pyvenv.cfg`, conda `conda-meta`, or a named env with an activate script)."""
    try:
        if (d / "pyvenv.cfg").is_file() or (d / "conda-meta").is_dir():
            return True
        if d.name in VENV_NAMES:
            return (d / "bin" / "activate").is_file() or (d / "Scripts" / "activate").is_file()
    except OSError:
        return False
    return False


# ---------------------------------------------------------------------------------------------
# .gitignore matching (git's rules, as documented in gitignore(5))


def _translate(glob: str) -> str:
    """A gitignore glob (without `!`, anchoring `/` and trailing `/`) as a regex over a '/'-path."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i):
                before_ok = i == 0 or glob[i - 1] == "/"
                after = glob[i + 2:i + 3]
                if before_ok and after == "/":  # '**/' : zero or more directories
                    out.append("(?:.*/)?")
                    i += 3
                    continue
                if before_ok and i + 2 == n:  # trailing '/**' (or a lone '**'): everything inside
                    out.append(".*")
                    i += 2
                    continue
                out.append("[^/]*")  # other '**' are plain '*'
                i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and glob[j] in "!^":
                j += 1
            if j < n and glob[j] == "]":
                j += 1
            while j < n and glob[j] != "]":
                j += 1
            if j >= n:  # no closing bracket: a literal '['
                out.append(re.escape(c))
            else:
                body = glob[i + 1:j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                body = body.replace("\\", "\\\\")
                out.append(f"(?!/)[{body}]")
                i = j
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Rule:
    negate: bool
    dir_only: bool
    anchored: bool  # matches the path relative to the .gitignore's folder, not just the name
    regex: re.Pattern[str]


def parse_gitignore(text: str) -> list[Rule]:
    rules: list[Rule] = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if not line or line.startswith("#"):
            continue
        # trailing spaces are ignored unless escaped with a backslash
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "
        line = stripped
        if not line:
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/") and not line.endswith("\\/")
        if dir_only:
            line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        if not line:
            continue
        try:
            regex = re.compile(_translate(line) + r"\Z", re.DOTALL)
        except re.error:
            continue  # git ignores patterns it cannot read; so do we
        rules.append(Rule(negate, dir_only, anchored, regex))
    return rules


class IgnoreStack:
    """The .gitignore files in force for one folder: (folder, rules) from outermost to innermost."""

    __slots__ = ("layers",)

    def __init__(self, layers: tuple[tuple[str, tuple[Rule, ...]], ...] = ()) -> None:
        self.layers = layers  # (absolute folder as a posix string ending in '/', its rules)

    def with_file(self, folder: Path, file: Path) -> IgnoreStack:
        try:
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return self
        rules = tuple(parse_gitignore(text))
        prefix = folder.as_posix().rstrip("/") + "/"
        return IgnoreStack(self.layers + ((prefix, rules),)) if rules else self

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """git's verdict for an absolute path: the last matching pattern wins, deeper files after shallower ones."""
        verdict = False
        full = path.as_posix()
        name = path.name
        for prefix, rules in self.layers:
            if not full.startswith(prefix):
                continue
            rel = full[len(prefix):]
            for r in rules:
                if r.dir_only and not is_dir:
                    continue
                if r.regex.match(rel if r.anchored else name):
                    verdict = not r.negate
        return verdict


def _git_top(start: Path) -> Path | None:
    """The work tree root above `start` (a folder holding `.git`, a directory or a worktree file)."""
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    return None


def _initial_stack(root: Path) -> IgnoreStack:
    """Ignore files that apply to `root` from above it: up to its repository's top, if any."""
    top = _git_top(root)
    stack = IgnoreStack()
    if top is None:
        return stack
    exclude = top / ".git" / "info" / "exclude"
    if exclude.is_file():
        stack = stack.with_file(top, exclude)
    chain = [root, *root.parents]
    for d in reversed(chain[1:chain.index(top) + 1] if top in chain else []):
        gi = d / ".gitignore"
        if gi.is_file():
            stack = stack.with_file(d, gi)
    return stack


# ---------------------------------------------------------------------------------------------
# the walks


def _scan(d: Path) -> list[os.DirEntry[str]]:
    with os.scandir(d) as it:
        return sorted(it, key=lambda e: e.name)


def _walk_matcher(root: Path, stack: IgnoreStack, seen_dirs: set[str], errors: list[Target]) -> Iterator[Path]:
    """Depth-first walk of `root` with our own .gitignore matcher; follows symlinks, once per real folder."""
    try:
        real = os.path.realpath(root)
    except OSError:
        return
    if real in seen_dirs:
        return
    seen_dirs.add(real)
    gi = root / ".gitignore"
    if gi.is_file():
        stack = stack.with_file(root, gi)
    try:
        entries = _scan(root)
    except OSError as e:
        errors.append(Target(str(root), error=f"cannot read directory: {e.strerror or e}"))
        return
    for e in entries:
        p = root / e.name
        try:
            is_dir = e.is_dir()  # follows symlinks; False for a broken link
            is_file = not is_dir and e.is_file()
        except OSError:
            continue
        if is_dir:
            if e.name in SKIP_DIRS or is_venv(p) or stack.ignored(p, True):
                continue
            yield from _walk_matcher(p, stack, seen_dirs, errors)
        elif is_file and e.name.endswith(".py") and not stack.ignored(p, False):
            yield p


@lru_cache(maxsize=1)
def _git_exe() -> str | None:
    if os.environ.get("KPREDICT_NO_GIT"):
        return None
    return shutil.which("git")


def _git_list(root: Path) -> list[str] | None:
    """`git ls-files` under root (relative paths, may name folders: submodules, nested repos), or None."""
    git = _git_exe()
    if git is None or _git_top(root) is None:
        return None
    try:
        out = subprocess.run(
            [git, "-c", "core.quotepath=off", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=root, capture_output=True, timeout=120, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    try:
        return [p for p in out.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
    except UnicodeDecodeError:
        return None


def _walk_git(root: Path, listed: list[str], seen_dirs: set[str], errors: list[Target]) -> Iterator[Path]:
    venv_memo: dict[Path, bool] = {}

    def skipped(parts: tuple[str, ...]) -> bool:
        d = root
        for part in parts:
            d = d / part
            if part in SKIP_DIRS:
                return True
            v = venv_memo.get(d)
            if v is None:
                v = venv_memo[d] = is_venv(d)
            if v:
                return True
        return False

    seen_dirs.add(os.path.realpath(root))
    for rel in listed:
        is_folder = rel.endswith("/")
        rel = rel.rstrip("/")
        parts = tuple(rel.split("/"))
        if skipped(parts[:-1]):
            continue
        p = root.joinpath(*parts)
        if is_folder or p.is_dir():
            # a nested repository, a submodule or a symlink to a folder: walk it ourselves
            if parts[-1] in SKIP_DIRS or is_venv(p):
                continue
            yield from _walk_matcher(p, _initial_stack(p), seen_dirs, errors)
        elif rel.endswith(".py") and p.is_file():  # --cached also lists files deleted since
            yield p


def walk_dir(root: Path, seen_dirs: set[str] | None = None, errors: list[Target] | None = None,
             use_git: bool = True) -> list[Path]:
    """The .py files under one folder, sorted; errors (unreadable folders) are appended to `errors`."""
    seen_dirs = set() if seen_dirs is None else seen_dirs
    errors = [] if errors is None else errors
    top = Path(os.path.abspath(root))  # absolute (for .gitignore folders), symlinks kept as spelled
    n_errors = len(errors)
    listed = _git_list(top) if use_git else None
    if listed is not None:
        found = list(_walk_git(top, listed, seen_dirs, errors))
    else:
        found = list(_walk_matcher(top, _initial_stack(top), seen_dirs, errors))
    files = [root / p.relative_to(top) for p in found]  # back to the spelling the user gave
    for i in range(n_errors, len(errors)):
        e = Path(errors[i].path)
        if e.is_relative_to(top):
            errors[i] = Target(str(root / e.relative_to(top)), error=errors[i].error)
    return sorted(files, key=lambda p: p.as_posix())


def holds_python(folder: str) -> bool:
    """Whether a `.py` file lies under `folder` outside the folders a walk never enters (SKIP_DIRS,
    virtual environments), git-ignored or not: a folder whose every file git ignores is then said to be
    so, not to hold no Python file."""
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not is_venv(Path(root) / d)]
        if any(n.endswith(".py") for n in names):
            return True
    return False


def discover(specs: Iterable[str], use_git: bool = True, empty: list[str] | None = None) -> list[Target]:
    """Expand command-line paths (`dir`, `file.py`, `file.py::Qual.name`) into targets, in order.

    Each file appears once (by real path, per qualname). Missing paths and unreadable folders become
    targets with an `error`, so the caller reports them as `path: error: ...` and goes on. A folder
    under which no `.py` file is found (and that no earlier argument walked) is appended to `empty`,
    for the caller's "no Python files found under DIR" warning.
    """
    out: list[Target] = []
    seen: set[tuple[str, str | None]] = set()
    seen_dirs: set[str] = set()

    def add(path: str, only: str | None) -> None:
        try:
            key = (os.path.realpath(path), only)
        except OSError:
            key = (path, only)
        if key not in seen:
            seen.add(key)
            out.append(Target(path, only))

    for spec in specs:
        path, only = split_target(spec)
        p = Path(path)
        if only is None and p.is_dir():
            errors: list[Target] = []
            walked_before = os.path.realpath(p) in seen_dirs
            found = walk_dir(p, seen_dirs, errors, use_git=use_git)
            for f in found:
                add(str(f), None)
            out.extend(errors)
            if not found and not errors and not walked_before and empty is not None:
                empty.append(path)
        elif not os.path.lexists(path):
            out.append(Target(path, only, error="no such file or directory"))
        else:
            add(path, only)  # named explicitly: analyzed even if ignored (analyze_file reports folders)
    return out


def iter_python_files(paths: Iterable[str]) -> Iterator[tuple[str, str | None]]:
    """(path, qualname or None) per file of `paths`: directories expanded into .py files (see discover),
    'file::qualname' specs kept as they are, paths that do not exist yielded as they are."""
    for t in discover(paths):
        yield t.path, t.only
