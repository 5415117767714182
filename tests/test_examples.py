"""Example inputs and constructor arguments: the tiny parser (literals and a few constructors, no torch)
and values as Python expressions of the analyzed file, evaluated by the abstract interpreter."""

from __future__ import annotations

import pytest

from kpredict.ir import TensorMeta
from kpredict.verify.examples import ExampleError, parse_examples, split_items, static_meta


def test_split_items_respects_brackets_and_comparisons():
    assert split_items("a=randn(64, 128, dtype=float16) m=rand(4, 4) > 0.5, n=128") == [
        ("a", "randn(64, 128, dtype=float16)"), ("m", "rand(4, 4) > 0.5"), ("n", "128")]


def test_static_meta_without_torch():
    meta = static_meta(parse_examples(
        "a=randn(1_000_000) i=randint(1000, (8, 128)) z=zeros((3, 4), dtype=torch.bfloat16) "
        "r=arange(0, 10, 3) f=full((2,), True) n=128 s='mean' t=(1, -2)"))
    assert meta["a"] == TensorMeta((1_000_000,), "float32")
    assert meta["a"].nbytes == 4_000_000
    assert meta["i"] == TensorMeta((8, 128), "int64")
    assert meta["z"] == TensorMeta((3, 4), "bfloat16")
    assert meta["r"] == TensorMeta((4,), "int64")
    assert meta["f"] == TensorMeta((2,), "bool")
    assert (meta["n"], meta["s"], meta["t"]) == (128, "mean", (1, -2))


@pytest.mark.parametrize("bad", [
    "a=eval('1')", "a=randn(8", "randn(8)", "a=randn(8).t()", "a=__import__('os')", "a=randn(2) a=randn(3)",
    "a=randn(2, device='cuda')", "a=randn(2, dtype=int64)", "a=randn(x)", "a=", "a=randint(5)",
    "a=lambda: 1", "a=randn(-1)", "a=[x for x in ()]", "a=randn(2, dtype=float99)", "a=open('f')",
])
def test_bad_input_is_one_line_error(bad):
    with pytest.raises(ExampleError) as ei:
        parse_examples(bad)
    assert str(ei.value) and "\n" not in str(ei.value)


# --------------------------------------------------------------------------------------------
# values as Python expressions of the analyzed file, evaluated by the abstract interpreter

_CONFIG_MODEL = '''
import torch
import torch.nn as nn
from dataclasses import dataclass

VOCAB = 100


@dataclass
class Cfg:
    n_layer: int = 4
    dim: int = 32

    @classmethod
    def small(cls):
        return cls(n_layer=1, dim=16)


class PlainCfg:
    def __init__(self, hidden_size=8, num_hidden_layers=3):
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers


class Net(nn.Module):
    def __init__(self, config, dtype=torch.float32):
        super().__init__()
        dim = getattr(config, "dim", None) or config.hidden_size
        n = getattr(config, "n_layer", None) or config.num_hidden_layers
        self.emb = nn.Embedding(VOCAB, dim, dtype=dtype)
        self.blocks = nn.ModuleList([nn.Linear(dim, dim, dtype=dtype) for _ in range(n)])

    def forward(self, idx):
        x = self.emb(idx)
        for b in self.blocks:
            x = b(x).relu()
        return x
'''


def _net(init: str, example: str = "idx=randint(0, VOCAB, (2, 16))", comment: str = ""):
    from kpredict.api import analyze_source
    from kpredict.settings import Settings

    src = _CONFIG_MODEL.replace("class Net(", comment + "class Net(") if comment else _CONFIG_MODEL
    return analyze_source(src, "net.py", Settings(target="cpu"), only="Net.forward",
                          inits={"Net.forward": init} if init else None, examples={"Net.forward": example})


@pytest.mark.parametrize("init, layers, dim", [
    ("config=Cfg(n_layer=2, dim=64)", 2, 64),
    ("config=Cfg.small()", 1, 16),
    ("config=PlainCfg(hidden_size=24, num_hidden_layers=2)", 2, 24),
    ("config=SimpleNamespace(dim=8, n_layer=3)", 3, 8),
])
def test_init_values_are_expressions_of_the_file(init, layers, dim):
    r = _net(init)
    assert r.error is None, r.error
    f = r.functions[0]
    assert f.eager.kernels == 1 + 2 * layers  # embedding, then linear + relu per layer
    # idx (int64) + table in, x out; per layer weight, bias, in and out of linear; relu reads and writes
    tok, n = 2 * 16, 2 * 16 * dim * 4
    emb = tok * 8 + 100 * dim * 4 + n
    per_layer = (dim * dim * 4 + dim * 4 + 2 * n) + 2 * n
    assert f.eager.bytes == emb + layers * per_layer
    assert not [a for a in f.assumptions if "config" in a]


def test_dtype_values_and_tuples():
    r = _net("config=Cfg(n_layer=1, dim=8) dtype=torch.float16", "idx=torch.randint(0, VOCAB, size=(4,))")
    assert r.error is None, r.error
    assert r.functions[0].eager.bytes == 4 * 8 + 100 * 8 * 2 + 4 * 8 * 2 + (8 * 8 * 2 + 8 * 2 + 4 * 8 * 2 * 2) + 4 * 8 * 2 * 2


@pytest.mark.parametrize("init, why", [
    ("config=Nope(n_layer=2)", "name 'Nope' is not defined"),
    ("config=Cfg(n_layer=2", "unbalanced '('"),
    ("config=Cfg(n_layer=2))", "unbalanced ')'"),
    ("config=Cfg(n_layer=2) idx=", "idx= has no value"),
    ("config=1 +* 2", "not a Python expression"),
])
def test_a_bad_given_value_is_the_files_one_line_error(init, why):
    r = _net(init)
    assert r.error is not None and why in r.error and "\n" not in r.error
    assert r.error.startswith("init for Net: ")


def test_a_bad_value_in_a_comment_is_an_assumption_naming_it():
    r = _net("", comment="# kpredict: init config=Missing() dtype=torch.float16\n")
    assert any("# kpredict: init config=Missing(): name 'Missing' is not defined" in a
               and "config takes its default" in a for a in r.functions[0].assumptions), r.functions[0].assumptions


def test_the_given_value_replaces_the_comments_item_of_the_same_name():
    r = _net("config=Cfg(n_layer=2, dim=64)", comment="# kpredict: init config=Cfg(n_layer=9) dtype=torch.float16\n")
    assert r.error is None
    f = r.functions[0]
    assert f.eager.kernels == 5
    assert f.eager.bytes is not None and (2 * 16 * 64 * 2) < f.eager.bytes  # float16, from the comment


# --------------------------------------------------------------------------------------------
# --init and --example on report and check

CONFIG_OBJECT = "fixtures/models/config_object.py"
INIT = "config=GPTConfig(n_layer=4, n_head=4, n_embd=128, vocab_size=100, block_size=1024)"


def _cli(*args: str) -> tuple[int, str, str]:
    from click.testing import CliRunner

    from kpredict.cli import main

    r = CliRunner().invoke(main, list(args))
    if r.exception and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout, r.stderr


def _bytes(out: str) -> int:
    import json

    return json.loads(out)["files"][0]["functions"][0]["eager"]["bytes"]


def test_report_takes_init_and_example_for_one_function():
    sel = f"{CONFIG_OBJECT}::GPT.forward"
    code, out, _ = _cli("report", "--no-cache", "--target", "cpu", "--output-format", "json", sel)
    assert code == 0
    small = _bytes(out)  # the comment's 2-layer, 64-wide config and 2 x 16 tokens
    code, out, _ = _cli("report", "--no-cache", "--target", "cpu", "--output-format", "json", sel,
                        "--init", INIT, "--example", "idx=randint(0, 100, (8, 1024))")
    assert code == 0
    assert _bytes(out) > 100 * small
    # only the items given replace the comment's: the same config as the comment gives the same bytes
    code, out, _ = _cli("report", "--no-cache", "--target", "cpu", "--output-format", "json", sel, "--init",
                        "config=GPTConfig(n_layer=2, n_head=4, n_embd=64, vocab_size=100, block_size=64)")
    assert _bytes(out) == small


def test_init_needs_one_selected_function_and_a_bad_value_is_one_line():
    code, _, err = _cli("report", "--no-cache", CONFIG_OBJECT, "--init", INIT)
    assert code == 2 and "--init applies to one function" in err
    code, _, err = _cli("check", "--no-cache", CONFIG_OBJECT, "--example", "idx=randn(2)")
    assert code == 2 and "--example applies to one function" in err
    code, _, err = _cli("report", "--no-cache", f"{CONFIG_OBJECT}::GPT.forward", "--init", "config=GPTConfg()")
    assert code == 2
    assert "error: init for GPT: config=GPTConfg(): name 'GPTConfg' is not defined" in err


def test_check_takes_init_and_example(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("import torch\n\n\nclass M(torch.nn.Module):\n    def __init__(self, c):\n"
                 "        super().__init__()\n        self.n = c.n\n\n    def forward(self, x):\n"
                 "        return (x * self.n + 1).relu().sigmoid()\n")
    code, out, _ = _cli("check", "--no-cache", "--output-format", "concise", f"{p}::M.forward",
                        "--init", "c=SimpleNamespace(n=3)", "--example", "x=randn(1024, 1024)")
    assert code == 1 and "KP101" in out and "(33.6 MB)" in out


# --------------------------------------------------------------------------------------------
# a keyword a class of the file does not take is an error naming it, as Python's TypeError

@pytest.mark.parametrize("init, why", [
    ("config=Cfg(n_layr=2)", "Cfg() got an unexpected keyword argument 'n_layr' (it takes: n_layer, dim)"),
    ("config=PlainCfg(hidden=24)",
     "PlainCfg() got an unexpected keyword argument 'hidden' (it takes: hidden_size, num_hidden_layers)"),
])
def test_a_misspelled_config_field_is_an_error(init, why):
    r = _net(init)
    assert r.error is not None and "\n" not in r.error, r.error
    assert r.error == f"init for Net: {init}: {why}"
    # in a comment, the same words are an assumption, and the parameter takes its default
    r = _net("", comment=f"# kpredict: init {init}\n")
    assert r.error is None
    assert any(why in a and "config takes its default" in a for a in r.functions[0].assumptions), \
        r.functions[0].assumptions


def test_keywords_are_not_checked_where_the_class_may_take_more():
    src = _CONFIG_MODEL + '''

class Loose:
    def __init__(self, **kw):
        self.dim = kw.get("dim", 8)
        self.n_layer = 1


@dataclass
class Open(Cfg):
    def __post_init__(self, **kw):
        pass
'''
    from kpredict.api import analyze_source
    from kpredict.settings import Settings

    for init in ("config=Loose(dim=16, extra=1)", "config=Open(n_layer=1, dim=8, extra=3)",
                 "config=SimpleNamespace(dim=8, n_layer=1, other=2)"):
        r = analyze_source(src, "net.py", Settings(target="cpu"), only="Net.forward",
                           inits={"Net.forward": init}, examples={"Net.forward": "idx=randint(0, 100, (2, 16))"})
        assert r.error is None, (init, r.error)


def test_a_misspelled_field_on_the_command_line():
    code, _, err = _cli("report", "--no-cache", f"{CONFIG_OBJECT}::GPT.forward", "--init", "config=GPTConfig(n_layr=2)")
    assert code == 2
    assert err.strip() == (f"{CONFIG_OBJECT}: error: init for GPT: config=GPTConfig(n_layr=2): GPTConfig() got an "
                           "unexpected keyword argument 'n_layr' (it takes: block_size, vocab_size, n_layer, n_head, "
                           "n_embd, bias)")
