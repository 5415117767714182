"""kpredict against real transformers models: --target cpu predictions, and the CPU oracle's figures.

    pip install --target /tmp/tfenv --no-deps transformers==5.25.0
    pip install --target /tmp/tfenv huggingface-hub tokenizers safetensors regex typer pyyaml tqdm filelock packaging numpy
    python scripts/transformers_scoreboard.py --site /tmp/tfenv --measure

For each model a tiny config (2 layers, hidden 64) is built in a script written next to the
`transformers` package folder in --site, so kpredict reads transformers' own source (the static
path never imports it). --measure also runs the script under the CPU oracle (kpredict verify, in a
child process with --site on PYTHONPATH). A partial tree (only transformers/models/, as in
benchmarks/throughput.py) is compared the same way with --site pointing at it, without --measure.
The scripts are removed afterwards. Prints one row per model; nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# name -> (package under transformers.models, config class, model class, config keywords)
DECODER = "vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4"
MODELS = {
    "bert": ("bert", "BertConfig", "BertModel",
             "vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, "
             "max_position_embeddings=64"),
    "gpt2": ("gpt2", "GPT2Config", "GPT2Model", "vocab_size=128, n_embd=64, n_layer=2, n_head=4, n_positions=64"),
    "llama": ("llama", "LlamaConfig", "LlamaModel", DECODER + ", num_key_value_heads=2"),
    "mistral": ("mistral", "MistralConfig", "MistralModel", DECODER + ", num_key_value_heads=2"),
    "qwen2": ("qwen2", "Qwen2Config", "Qwen2Model", DECODER + ", num_key_value_heads=2"),
    "gemma": ("gemma", "GemmaConfig", "GemmaModel", DECODER + ", num_key_value_heads=2, head_dim=16"),
    "olmo": ("olmo", "OlmoConfig", "OlmoModel", DECODER + ", num_key_value_heads=4"),
}

SCRIPT = '''import torch
from transformers.models.{pkg}.configuration_{pkg} import {cfg}
from transformers.models.{pkg}.modeling_{pkg} import {cls}

MODEL = {cls}({cfg}({kw})).eval()


# kpredict: example ids=randint(0, 128, (1, 16))
def run(ids):
    return MODEL(input_ids=ids, use_cache=False).last_hidden_state
'''


def predict(path: Path) -> tuple[object, object, int]:
    from kpredict.api import analyze_file
    from kpredict.settings import Settings

    rep = analyze_file(path, Settings(target="cpu"), only="run")
    if rep.error or not rep.functions:
        return "error", "error", 0
    f = rep.functions[0]
    return f.eager.kernels, f.compiled.kernels, f.compiled.graphs


def measure(path: Path, site: Path, timeout: int) -> tuple[object, object, object]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    res = subprocess.run([sys.executable, "-m", "kpredict", "verify", "--device", "cpu", "--format", "json",
                          f"{path.name}::run"], cwd=path.parent, env=env, capture_output=True, text=True,
                         timeout=timeout)
    try:
        fn = json.loads(res.stdout)["functions"][0]["measured"]
        return fn["eager"]["kernels"], fn["compiled"]["kernels"], fn["compiled"].get("graphs")
    except (json.JSONDecodeError, KeyError, IndexError, TypeError):
        return "failed", "failed", None


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
    print(f"{'model':<10} {'predicted eager/compiled (graphs)':>34} {'measured eager/compiled (graphs)':>34}")
    for name in args.models.split(","):
        pkg, cfg, cls, kw = MODELS[name]
        path = args.site / f"_kp_score_{name}.py"
        path.write_text(SCRIPT.format(pkg=pkg, cfg=cfg, cls=cls, kw=kw))
        try:
            e, c, g = predict(path)
            m = measure(path, args.site, args.timeout) if args.measure else ("-", "-", "-")
        finally:
            path.unlink()
        print(f"{name:<10} {f'{e}/{c} ({g})':>34} {f'{m[0]}/{m[1]} ({m[2]})':>34}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
