"""kpredict against real transformers models: --target cpu predictions, and the CPU oracle's figures.

    pip install --target /tmp/tfenv transformers==5.25.0      # with its runtime dependencies
    python scripts/transformers_scoreboard.py --site /tmp/tfenv --measure

Each model's `<Model>.forward` in transformers' own `modeling_<m>.py` is analyzed with a tiny config
(2 layers, hidden 64, no cache) given on the command line, as a user would give it:

    kpredict --target cpu <site>/transformers/models/llama/modeling_llama.py::LlamaModel.forward \\
        --init "config=LlamaConfig(vocab_size=128, ...)" --example "input_ids=randint(0, 128, (1, 16))"

The static path reads the config class from the package's configuration_<m>.py and never imports
transformers. --measure also runs `kpredict verify --device cpu` on the same command (a child process
that imports the file as transformers.models.<m>.modeling_<m>), whose exit status says whether every
figure matches. A partial tree (only transformers/models/, as in benchmarks/throughput.py) is
predicted the same way with --site pointing at it, without --measure. Prints one row per model;
tests/test_verify_transformers.py holds the same commands against the CPU oracle.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "input_ids=randint(0, 128, (1, 16))"
DECODER = ("vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, "
           "use_cache=False")


@dataclass(frozen=True)
class HFModel:
    """One scoreboard model: its package under transformers.models, its classes, its config keywords."""
    name: str
    config: str
    model: str
    keywords: str

    def path(self, site: Path) -> Path:
        return site / "transformers" / "models" / self.name / f"modeling_{self.name}.py"

    def args(self, site: Path) -> list[str]:
        """The command line's selection and inputs, the same for report and verify."""
        return [f"{self.path(site)}::{self.model}.forward", "--init", f"config={self.config}({self.keywords})",
                "--example", EXAMPLE]


MODELS = {m.name: m for m in [
    HFModel("bert", "BertConfig", "BertModel",
            "vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, "
            "max_position_embeddings=64, use_cache=False"),
    HFModel("gpt2", "GPT2Config", "GPT2Model",
            "vocab_size=128, n_embd=64, n_layer=2, n_head=4, n_positions=64, use_cache=False"),
    HFModel("llama", "LlamaConfig", "LlamaModel", DECODER + ", num_key_value_heads=2"),
    HFModel("mistral", "MistralConfig", "MistralModel", DECODER + ", num_key_value_heads=2"),
    HFModel("qwen2", "Qwen2Config", "Qwen2Model", DECODER + ", num_key_value_heads=2"),
    HFModel("gemma", "GemmaConfig", "GemmaModel", DECODER + ", num_key_value_heads=2, head_dim=16"),
    HFModel("olmo", "OlmoConfig", "OlmoModel", DECODER + ", num_key_value_heads=4"),
]}


def _kpredict(args: list[str], site: Path, timeout: int) -> tuple[int, dict | None]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    res = subprocess.run([sys.executable, "-m", "kpredict", *args], env=env, capture_output=True, text=True,
                         timeout=timeout)
    try:
        return res.returncode, json.loads(res.stdout)
    except json.JSONDecodeError:
        return res.returncode, None


def predict(m: HFModel, site: Path, timeout: int) -> str:
    """eager/compiled kernels (graphs) of the static report, or why there are none."""
    _rc, doc = _kpredict(["--target", "cpu", "--output-format", "json", *m.args(site)], site, timeout)
    try:
        f = doc["files"][0]
        if f["error"]:
            return "error"
        fn = f["functions"][0]
        low = ">=" if fn["eager"].get("lower_bound") else ""
        return f"{low}{fn['eager']['kernels']}/{fn['compiled']['kernels']} ({fn['compiled']['graphs']})"
    except (TypeError, KeyError, IndexError):
        return "error"


def measure(m: HFModel, site: Path, timeout: int) -> tuple[str, str]:
    """The CPU oracle's eager/compiled kernels (graphs), and verify's verdict (its exit status)."""
    rc, doc = _kpredict(["verify", "--device", "cpu", "--output-format", "json", *m.args(site)], site, timeout)
    verdict = {0: "match", 1: "MISMATCH"}.get(rc, f"failed (exit {rc})")
    try:
        got = doc["functions"][0]["measured"]
        return f"{got['eager']['kernels']}/{got['compiled']['kernels']} ({got['compiled'].get('graphs')})", verdict
    except (TypeError, KeyError, IndexError):
        return "failed", verdict


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", required=True, type=Path, help="folder holding the transformers package source")
    ap.add_argument("--models", default=",".join(MODELS), help="comma list of: " + ", ".join(MODELS))
    ap.add_argument("--measure", action="store_true", help="also run the CPU oracle (needs torch and transformers)")
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args()
    if not (args.site / "transformers").is_dir():
        print(f"{args.site}: no transformers folder here", file=sys.stderr)
        return 2
    unknown = [n for n in args.models.split(",") if n not in MODELS]
    if unknown:
        print(f"--models: unknown {', '.join(unknown)} (known: {', '.join(MODELS)})", file=sys.stderr)
        return 2
    print(f"{'model':<10} {'predicted eager/compiled (graphs)':>34} {'measured eager/compiled (graphs)':>34}  verify")
    for name in args.models.split(","):
        m = MODELS[name]
        p = predict(m, args.site, args.timeout)
        got, verdict = measure(m, args.site, args.timeout) if args.measure else ("-", "-")
        print(f"{name:<10} {p:>34} {got:>34}  {verdict}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
