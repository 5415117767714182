"""`--strict` (report, check, diff): figures that rest on an assumed input or config are an error.

A function fails when one of its assumptions says that a value it runs on was not given (by
`--init`/`--example`, a `# kpredict:` comment, `[tool.kpredict.init|examples]`, or the file's own
call of it) and kpredict took one instead:

- a parameter taken as a tensor of unknown shape (and a dtype), or as a value not known statically
  (an int symbol, a bool flag with both branches analyzed, a string);
- a config built with its class's defaults (`config: GPTConfig() with its default values`,
  `GPTConfig() field defaults: ...`) or whose fields are symbols;
- a `# kpredict: init` / `# kpredict: example` value that could not be read.

A default written in the function's own signature (`dim=-1`) is the code's value, not an assumption;
neither are the analysis' own limits (a loop counted once, a condition not known statically), which
the figures list as before. `strict_errors` gives one line per failing function naming its first such
assumption; the commands print them on stderr and exit 2.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kpredict.ir import FileReport

# "x: tensor of unknown shape, float32", "x: int64 tensor of unknown shape (...)", "n: not known
# statically (symbol n)", "flag: a bool flag, not known statically (...)", "config: fields not known
# statically (...)", "config: GPTConfig() with its default values" (a parameter's name, then ':')
_PARAMETER = re.compile(r"^[A-Za-z_]\w*: .*(unknown shape|not known statically|with its default values)")
_FIELD_DEFAULTS = re.compile(r"^[A-Za-z_][\w.]*\(\) field defaults: ")
_COMMENT = re.compile(r"^# kpredict: (init|example) ")


def assumed_input(text: str) -> bool:
    """Whether an assumption (a line of FunctionReport.assumptions) stands for an input or config not given."""
    return bool(_PARAMETER.match(text) or _FIELD_DEFAULTS.match(text) or _COMMENT.match(text))


def strict_errors(reports: Iterable[FileReport]) -> list[str]:
    """One line per function whose figures rest on an assumed input or config:
    `PATH::QUALNAME: error: --strict: assumed <its first such assumption> (and N more)`."""
    out = []
    for r in reports:
        for fn in r.functions:
            assumed = [a for a in fn.assumptions if assumed_input(a)]
            if assumed:
                more = f" (and {len(assumed) - 1} more)" if len(assumed) > 1 else ""
                out.append(f"{r.path}::{fn.qualname}: error: --strict: assumed {assumed[0]}{more}")
    return out
