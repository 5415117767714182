"""Which requests the CPU oracle tests make: one list, read by those tests, by the store's currency
test (tests/test_oracle_store.py) and by scripts/record_oracle.py."""

from __future__ import annotations

from pathlib import Path

from kpredict.lint.examples import strip_marks
from kpredict.lint.model import as_example
from kpredict.lint.registry import by_code
from kpredict.verify.runner import child_request

REPO = Path(__file__).resolve().parent.parent
MODELS = REPO / "fixtures" / "models"

# tests/test_fixtures_oracle.py: every fixture file with example inputs, outside models/ and libraries/
FIXTURE_FILES = sorted(
    p for p in (REPO / "fixtures").rglob("*.py")
    if "# kpredict: example" in p.read_text() and p.parent.name not in ("models", "libraries")
)
# tests/test_models_oracle.py: model files in eval mode, and those whose modes differ in train mode too
MODEL_FILES = sorted(p.name for p in MODELS.glob("*.py") if "kpredict: example" in p.read_text(encoding="utf-8"))
TRAIN_FILES = [ln.strip() for ln in (MODELS / "train_mode.txt").read_text(encoding="utf-8").splitlines()
               if ln.strip() and not ln.startswith("#")]
KP101_NAME = "kp101_example.py"
# tests/test_named_sizes.py: a model whose input sizes are named, not given (B, T = idx.size()), measured at
# two sizes so that its byte formula is held against torch at both
SIZES = REPO / "fixtures" / "sizes"
SIZED_INIT = "config=GPTConfig(n_layer=2, n_head=4, n_embd=64, vocab_size=100, block_size=64)"
SIZED_VALUES = ({"B": 2, "T": 16}, {"B": 3, "T": 40})


# layers whose inputs say nothing of their shape: (qualname, init, example, the assumed names' values)
ASSUMED = SIZES / "assumed_layouts.py"
ASSUMED_CASES = (
    ("RMSNorm.forward", "hidden_size=16", "hidden_states=randn(2, 5, 16)", {"B": 2, "T": 5, "hidden_size": 16}),
    ("SelfOutput.forward", None, "hidden_states=randn(2, 5, 64) input_tensor=randn(2, 5, 32)", {"B": 2, "T": 5}),
    ("ConvBlock.forward", None, "pixel_values=randn(2, 4, 10, 12)", {"B": 2, "H": 10, "W": 12}),
    ("PatchEmbed.forward", None, "pixel_values=randn(2, 3, 32, 32)", {"B": 2}),
    ("GroupNormAct.forward", None, "hidden_state=randn(2, 8, 5, 6)", {"B": 2, "H": 5, "W": 6}),
    ("RopeAttention.forward", None, "hidden_states=randn(2, 5, 32) position_embeddings=(randn(2, 5, 8), "
     "randn(2, 5, 8)) attention_mask=None", {"B": 2, "T": 5}),
    # no init given to the static side: the class as Layer builds it (the oracle is told the same values)
    ("HeadAttention.forward", "dim=32 heads=4", "hidden_states=randn(2, 5, 32)", {"B": 2, "T": 5}),
    # the heads fixed at 8 for the formula: the oracle runs 8 heads of a 64-wide layer
    ("HeadsUnknown.forward", "hidden_size=64 num_heads=8", "hidden_states=randn(2, 5, 64)",
     {"B": 2, "T": 5, "hidden_size": 64}),
)


def assumed_request(qual: str, init: str | None, example: str) -> dict:
    return child_request(str(ASSUMED), qual, "cpu", examples=example, init=init)


def sized_request(values: dict[str, int]) -> dict:
    return child_request(str(SIZES / "gpt_sizes.py"), "GPT.forward", "cpu",
                         examples=f"idx=randint(0, 100, ({values['B']}, {values['T']}))", init=SIZED_INIT)


def kp101_sources() -> list[str]:
    """KP101's INVALID examples as the file tests/test_lint_rules.py writes for each."""
    return [strip_marks(as_example(ex).source) for ex in by_code()["KP101"].INVALID]


def model_request(name: str, mode: str) -> dict:
    return child_request(str(MODELS / name), "*", "cpu", mode=mode)


def requests(tmp: Path) -> list[dict]:
    """Every request the oracle tests make (KP101's examples written under `tmp`)."""
    out = [child_request(str(p), "*", "cpu") for p in FIXTURE_FILES]
    out += [model_request(n, "eval") for n in MODEL_FILES]
    out += [model_request(n, "train") for n in TRAIN_FILES]
    out += [sized_request(v) for v in SIZED_VALUES]
    out += [assumed_request(q, i, e) for q, i, e, _ in ASSUMED_CASES]
    for i, src in enumerate(kp101_sources()):
        d = tmp / f"kp101-{i}"
        d.mkdir(parents=True, exist_ok=True)
        (d / KP101_NAME).write_text(src)
        out.append(child_request(str(d / KP101_NAME), "*", "cpu"))
    return out
