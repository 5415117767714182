"""KP901 unused-suppression."""

from __future__ import annotations

from kpredict.lint.model import Example, Rule


class UnusedSuppression(Rule):
    """
    ## What it does
    Reports `# noqa: KPnnn` and `# kpredict: ignore[KPnnn]` comments (on a line, or on a `def` line
    for the whole function) that suppress nothing: the finding they were written for is gone, the
    code is not a kpredict rule, or the rule is not enabled. A bare `# noqa` is left alone (other
    linters read it); a bare `# kpredict: ignore` that suppresses nothing is reported.

    ## Why it costs
    Nothing at run time. A stale suppression hides the next real finding on that line: when the
    code changes again, a new regression of the same kind goes unreported.
    """

    code = "KP901"
    name = "unused-suppression"
    severity = "warning"
    summary = "A suppression comment that suppresses nothing"
    fix = "Remove the comment, or the codes in it that no longer apply."
    scope = "engine"

    INVALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example a=randn(1000) b=randn(1000)\n"
            "def add(a, b):\n"
            "    return a + b  # noqa: KP101  # expect: KP901\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example a=randn(1000)\n"
            "def scale(a):  # kpredict: ignore[KP999]  # expect: KP901\n"
            "    return a * 2\n"
        ),
    ]
    VALID = [
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example a=randn(1000) b=randn(1000)\n"
            "def chain(a, b):\n"
            "    return ((a + b) * 2).relu()  # noqa: KP101\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "# kpredict: example a=randn(1000) b=randn(1000)\n"
            "def chain(a, b):  # kpredict: ignore[KP101]\n"
            "    c = a + b\n"
            "    return (c * 2).relu()\n"
        ),
        Example(
            "import torch\n"
            "\n"
            "\n"
            "def helper(a):\n"
            "    return a + 1  # noqa: E501\n"
        ),
    ]
