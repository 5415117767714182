"""kpredict against real transformers models: --target cpu predictions, and the CPU oracle's figures.

    pip install --target SITE transformers==5.25.0      # with its runtime dependencies
    PYTHONPATH=SITE python scripts/transformers_scoreboard.py --site SITE --measure     # what the store lacks
    python scripts/transformers_scoreboard.py --site SITE --markdown docs/transformers-scoreboard.md

Each model's `<Model>.forward` in transformers' own `modeling_<m>.py` is analyzed with a tiny config
(2 layers, hidden 64, no cache) given on the command line, as a user would give it:

    kpredict --target cpu <site>/transformers/models/llama/modeling_llama.py::LlamaModel.forward \\
        --init "config=LlamaConfig(vocab_size=128, ...)" --example "input_ids=randint(0, 128, (1, 16))"

The static path reads the config class from the package's configuration_<m>.py and never imports
transformers. --measure runs `kpredict verify --device cpu` on the same command (a child process that
imports the file as transformers.models.<m>.modeling_<m>; 1-2 minutes a model) for each model the store
lacks, or whose command or source changed: the figures are stored in benchmarks/transformers_scoreboard.json,
keyed model|torch|cpu with a digest of the config class, keywords, input and the modeling and
configuration files. Predictions are always made afresh and compared with the store; --markdown writes
the table (docs/transformers-scoreboard.md). With --cuda, also --target cuda, and with --measure cudagen's
compiled launches (Inductor's CUDA code generation on fake H100 tensors, keyed model|torch|cuda-sim). tests/test_transformers_scoreboard.py holds every
prediction to the store; tests/test_verify_real_models.py measures the first seven live (recorded).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CUDAGEN = ROOT.parent / "shared" / "tools" / "cudagen"
DEFAULT_OUT = ROOT / "benchmarks" / "transformers_scoreboard.json"
VERSION = "5.25.0"  # the transformers the store was measured with (--site must hold it)
EXAMPLE = "input_ids=randint(0, 128, (1, 16))"
DECODER = ("vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, "
           "use_cache=False")
ENCODER = ("vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, "
           "max_position_embeddings=64, use_cache=False")


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
    # Added for issue 27's >= 50 architectures: the same tiny sizes, keywords read from each configuration_<m>.py
    # (a default pad_token_id beyond the 128-word vocabulary is set to 0: nn.Embedding refuses it).
    HFModel("phi", "PhiConfig", "PhiModel", DECODER + ", num_key_value_heads=4, max_position_embeddings=64"),
    HFModel("phi3", "Phi3Config", "Phi3Model", DECODER + ", num_key_value_heads=2, pad_token_id=0"),
    HFModel("qwen3", "Qwen3Config", "Qwen3Model", DECODER + ", num_key_value_heads=2, head_dim=16"),
    HFModel("starcoder2", "Starcoder2Config", "Starcoder2Model", DECODER + ", num_key_value_heads=2"),
    HFModel("stablelm", "StableLmConfig", "StableLmModel", DECODER + ", num_key_value_heads=4"),
    HFModel("persimmon", "PersimmonConfig", "PersimmonModel", DECODER),
    HFModel("olmo2", "Olmo2Config", "Olmo2Model", DECODER + ", num_key_value_heads=2"),
    HFModel("olmo3", "Olmo3Config", "Olmo3Model", DECODER + ", num_key_value_heads=2"),
    HFModel("granite", "GraniteConfig", "GraniteModel", DECODER + ", num_key_value_heads=2"),
    HFModel("cohere", "CohereConfig", "CohereModel", DECODER + ", num_key_value_heads=2"),
    HFModel("cohere2", "Cohere2Config", "Cohere2Model", DECODER + ", num_key_value_heads=2"),
    HFModel("gemma2", "Gemma2Config", "Gemma2Model", DECODER + ", num_key_value_heads=2, head_dim=16"),
    HFModel("gemma3", "Gemma3TextConfig", "Gemma3TextModel", DECODER + ", num_key_value_heads=2, head_dim=16"),
    HFModel("glm", "GlmConfig", "GlmModel", DECODER + ", num_key_value_heads=2, head_dim=16, pad_token_id=0"),
    HFModel("glm4", "Glm4Config", "Glm4Model", DECODER + ", num_key_value_heads=2, head_dim=16, pad_token_id=0"),
    HFModel("helium", "HeliumConfig", "HeliumModel", DECODER + ", num_key_value_heads=4, head_dim=16"),
    HFModel("smollm3", "SmolLM3Config", "SmolLM3Model", DECODER + ", num_key_value_heads=2, pad_token_id=0"),
    HFModel("nemotron", "NemotronConfig", "NemotronModel", DECODER + ", num_key_value_heads=2"),
    HFModel("arcee", "ArceeConfig", "ArceeModel", DECODER + ", num_key_value_heads=2"),
    HFModel("apertus", "ApertusConfig", "ApertusModel", DECODER + ", num_key_value_heads=2"),
    HFModel("seed_oss", "SeedOssConfig", "SeedOssModel", DECODER + ", num_key_value_heads=2, head_dim=16"),
    HFModel("exaone4", "Exaone4Config", "Exaone4Model", DECODER + ", num_key_value_heads=2"),
    HFModel("hunyuan_v1_dense", "HunYuanDenseV1Config", "HunYuanDenseV1Model",
            DECODER + ", num_key_value_heads=2, head_dim=16"),
    HFModel("gpt_neox", "GPTNeoXConfig", "GPTNeoXModel", DECODER),
    HFModel("gptj", "GPTJConfig", "GPTJModel",
            "vocab_size=128, n_embd=64, n_layer=2, n_head=4, rotary_dim=8, n_positions=64, use_cache=False"),
    HFModel("codegen", "CodeGenConfig", "CodeGenModel",
            "vocab_size=128, n_embd=64, n_layer=2, n_head=4, rotary_dim=8, n_positions=64, n_ctx=64, "
            "use_cache=False"),
    HFModel("gpt_bigcode", "GPTBigCodeConfig", "GPTBigCodeModel",
            "vocab_size=128, n_embd=64, n_layer=2, n_head=4, n_positions=64, use_cache=False"),
    HFModel("gpt_neo", "GPTNeoConfig", "GPTNeoModel",
            "vocab_size=128, hidden_size=64, num_layers=2, num_heads=4, max_position_embeddings=64, "
            "attention_types=[[['global', 'local'], 1]], use_cache=False"),
    HFModel("opt", "OPTConfig", "OPTModel",
            "vocab_size=128, hidden_size=64, num_hidden_layers=2, ffn_dim=128, num_attention_heads=4, "
            "max_position_embeddings=64, word_embed_proj_dim=64, use_cache=False"),
    HFModel("bloom", "BloomConfig", "BloomModel", "vocab_size=128, hidden_size=64, n_layer=2, n_head=4, use_cache=False"),
    HFModel("falcon", "FalconConfig", "FalconModel",
            "vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, use_cache=False"),
    HFModel("mpt", "MptConfig", "MptModel",
            "vocab_size=128, d_model=64, n_heads=4, n_layers=2, max_seq_len=64, use_cache=False"),
    HFModel("biogpt", "BioGptConfig", "BioGptModel", DECODER + ", max_position_embeddings=64"),
    HFModel("xglm", "XGLMConfig", "XGLMModel",
            "vocab_size=128, d_model=64, ffn_dim=128, num_layers=2, attention_heads=4, max_position_embeddings=64, "
            "use_cache=False"),
    HFModel("roberta", "RobertaConfig", "RobertaModel", ENCODER),
    HFModel("xlm_roberta", "XLMRobertaConfig", "XLMRobertaModel", ENCODER),
    HFModel("camembert", "CamembertConfig", "CamembertModel", ENCODER),
    HFModel("megatron_bert", "MegatronBertConfig", "MegatronBertModel", ENCODER),
    HFModel("ernie", "ErnieConfig", "ErnieModel", ENCODER),
    HFModel("roformer", "RoFormerConfig", "RoFormerModel", ENCODER),
    HFModel("electra", "ElectraConfig", "ElectraModel", ENCODER + ", embedding_size=32"),
    HFModel("albert", "AlbertConfig", "AlbertModel",
            "vocab_size=128, embedding_size=32, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, "
            "intermediate_size=128, max_position_embeddings=64"),
    HFModel("distilbert", "DistilBertConfig", "DistilBertModel",
            "vocab_size=128, dim=64, hidden_dim=128, n_layers=2, n_heads=4, max_position_embeddings=64"),
    HFModel("deberta", "DebertaConfig", "DebertaModel",
            "vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, "
            "max_position_embeddings=64"),
    HFModel("deberta_v2", "DebertaV2Config", "DebertaV2Model",
            "vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, "
            "max_position_embeddings=64"),
    HFModel("mpnet", "MPNetConfig", "MPNetModel",
            "vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, "
            "max_position_embeddings=64"),
    HFModel("esm", "EsmConfig", "EsmModel",
            "vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, "
            "max_position_embeddings=64, pad_token_id=1"),
    HFModel("mixtral", "MixtralConfig", "MixtralModel",
            DECODER + ", num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2"),
    HFModel("qwen2_moe", "Qwen2MoeConfig", "Qwen2MoeModel",
            DECODER + ", num_key_value_heads=2, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32, "
            "shared_expert_intermediate_size=64"),
    HFModel("granitemoe", "GraniteMoeConfig", "GraniteMoeModel",
            DECODER + ", num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2"),
    # Composite models: the language model built by AutoModel.from_config from a sub-config given as a dict
    # (the vision tower is built, and not run on text alone)
    HFModel("llava", "LlavaConfig", "LlavaModel",
            f"text_config=dict(model_type='llama', {DECODER}, num_key_value_heads=2), vision_config=dict("
            "model_type='clip_vision_model', hidden_size=32, intermediate_size=64, num_hidden_layers=1, "
            "num_attention_heads=2, image_size=32, patch_size=8, projection_dim=32)"),
]}


def _kpredict(args: list[str], site: Path, timeout: int) -> tuple[int, dict | None]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    try:
        res = subprocess.run([sys.executable, "-m", "kpredict", *args], env=env, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, None
    try:
        return res.returncode, json.loads(res.stdout)
    except json.JSONDecodeError:
        return res.returncode, None


@dataclass
class Figures:
    """The figures a model is scored on (eager kernels, transfers and bytes; compiled kernels and graphs);
    None where not known."""
    eager: int | None = None
    reads: int | None = None
    writes: int | None = None
    eager_bytes: int | None = None
    compiled: int | None = None
    graphs: int | None = None
    lower_bound: bool = False
    error: str | None = None


def predict(m: HFModel, site: Path, timeout: int) -> Figures:
    """kpredict's static figures (`--target cpu`; nothing imported), or why there are none."""
    _rc, doc = _kpredict(["--target", "cpu", "--output-format", "json", *m.args(site)], site, timeout)
    try:
        f = doc["files"][0]
        if f["error"]:
            return Figures(error=str(f["error"])[:300])
        fn = f["functions"][0]
        e, c = fn["eager"], fn["compiled"]
        return Figures(e["kernels"], e["reads"], e["writes"], e["bytes"], c["kernels"], c["graphs"],
                       bool(e.get("lower_bound") or c.get("lower_bound")))
    except (TypeError, KeyError, IndexError):
        return Figures(error="no report")


def predict_cuda(m: HFModel, site: Path) -> Figures:
    """kpredict's --target cuda compiled figures, as cudagen counts them: an extern call once (the ATen
    launches inside it, such as a bias copied before cuBLAS, are not in Inductor's wrapper)."""
    from kpredict.api import analyze_file
    from kpredict.settings import Settings

    q = f"{m.model}.forward"
    rep = analyze_file(m.path(site), Settings(target="cuda"), only=q, examples={q: EXAMPLE},
                       inits={q: f"config={m.config}({m.keywords})"})
    if rep.error or not rep.functions:
        return Figures(error=str(rep.error or "no function")[:300])
    f = rep.functions[0]
    return Figures(compiled=f.compiled.kernels - f.compiled.extern_inner, graphs=f.compiled.graphs,
                   lower_bound=f.lower_bound)


CUDA_CHILD = """
import importlib, json, os, sys
sys.path[:0] = [sys.argv[1], os.environ["KPREDICT_SCRIPTS"]]
import torch, fakecuda, kp, cudagen_child
cudagen_child.retarget_positional_devices(fakecuda)
mod = importlib.import_module(sys.argv[2])
config = eval(sys.argv[3], vars(mod))
model = getattr(mod, sys.argv[4])(config).eval()
ids = eval("torch." + sys.argv[5])
with torch.no_grad():
    res = fakecuda.cuda_compile(lambda: model(input_ids=ids))
launches = cudagen_child.launches(res, kp)
print(json.dumps({"graphs": res.graphs, "kernels": len(launches), "errors": [e.strip().splitlines()[-1] for e in res.errors]}))
"""


def measure_cuda(m: HFModel, site: Path, timeout: int) -> Figures:
    """cudagen (../shared/tools/cudagen): Inductor's own CUDA code generation on fake H100 tensors, the
    compiled launches of the model's forward on the same config and input (a child that imports
    transformers; triton from $CUDAGEN_PYLIB)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in [str(site), str(ROOT), os.environ.get(
        "CUDAGEN_PYLIB", "")] if p), "KPREDICT_SCRIPTS": str(ROOT / "scripts")}
    try:
        res = subprocess.run([sys.executable, "-c", CUDA_CHILD, str(CUDAGEN), f"transformers.models.{m.name}."
                              f"modeling_{m.name}", f"{m.config}({m.keywords})", m.model, EXAMPLE.partition("=")[2]],
                             env=env, capture_output=True, text=True, timeout=timeout)
        d = json.loads(res.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return Figures(error="timeout")
    except (json.JSONDecodeError, IndexError):
        return Figures(error=((res.stderr or "").strip().splitlines() or [f"exit {res.returncode}"])[-1][:300])
    return Figures(compiled=d["kernels"], graphs=d["graphs"], error="; ".join(d.get("errors") or []) or None)


def measure(m: HFModel, site: Path, timeout: int, raw: Path | None = None) -> Figures:
    """The CPU oracle's figures: `kpredict verify --device cpu` (a child that imports transformers,
    TorchDispatchMode for eager, the profiler's cpp_fused_* rows for torch.compile). `raw`: a folder
    where verify's whole answer (per-op rows, kernel names) is kept as <model>.json, to read a miss."""
    rc, doc = _kpredict(["verify", "--device", "cpu", "--output-format", "json", "--timeout", str(timeout),
                         *m.args(site)], site, timeout + 60)
    if raw is not None and doc is not None:
        raw.mkdir(parents=True, exist_ok=True)
        (raw / f"{m.name}.json").write_text(json.dumps(doc, indent=1))
    try:
        fn = doc["functions"][0]
        e, c = fn["measured"]["eager"], fn["measured"].get("compiled") or {}
        return Figures(e["kernels"], e["reads"], e["writes"], e["bytes"], c.get("kernels"), c.get("graphs"),
                       error=fn.get("error") and str(fn["error"])[:300])
    except (TypeError, KeyError, IndexError):
        return Figures(error="timeout" if rc == 124 else f"verify exit {rc}, no figures")


def digest(m: HFModel, site: Path) -> str:
    """What a measurement depends on besides torch: the command (classes, keywords, input) and the
    model's modeling and configuration source files. A change to any of them measures it again."""
    h = hashlib.sha256("\0".join([m.config, m.model, m.keywords, EXAMPLE]).encode())
    for path in (m.path(site), m.path(site).with_name(f"configuration_{m.name}.py")):
        h.update(path.read_bytes() if path.is_file() else b"-")
    return h.hexdigest()[:16]


def _torch_version() -> str:
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def exact(p: Figures, m: dict[str, Any] | None) -> dict[str, bool | None]:
    """Which figures the prediction has right (None: not measured, or the measurement failed)."""
    ok = bool(m) and not m.get("error") and m.get("eager") is not None
    return {
        "eager": (p.eager == m["eager"]) if ok else None,
        "transfers": ((p.reads, p.writes) == (m["reads"], m["writes"])) if ok else None,
        "bytes": (p.eager_bytes == m["eager_bytes"]) if ok and p.eager_bytes is not None else None,
        "compiled": ((p.compiled, p.graphs) == (m["compiled"], m["graphs"]))
        if ok and m.get("compiled") is not None else None,
    }


def markdown(store: dict[str, Any]) -> str:
    """The scoreboard as a markdown table: predicted / measured per figure, **x** where they differ."""
    def cell(p: object, m: object, ok: bool | None) -> str:
        return f"{p} / -" if m is None else f"{p} / {m}{' **x**' if ok is False else ''}"

    out = ["# transformers scoreboard (generated by scripts/transformers_scoreboard.py --markdown)", "",
           f"torch {store.get('torch')}, transformers {VERSION}, `<Model>.forward` on input_ids (1, 16), 2 layers, "
           "target cpu: kpredict's static prediction / the CPU oracle's measurement (`kpredict verify --device "
           "cpu`); **x** marks a miss, `-` not measured or not known.", "",
           "| model | eager kernels | eager transfers (r+w) | eager bytes | compiled kernels (graphs) | compiled, cuda "
           "(cudagen) |",
           "|---|---|---|---|---|---|"]
    for name, r in store["rows"].items():
        p, m, x = r["predicted"], r["measured"] or {}, r["exact"]
        if p.get("error"):
            out.append(f"| {name} | error: {p['error'][:60]} | | | | |")
            continue
        lb = ">= " if p["lower_bound"] else ""
        tp, tm = f"{p['reads']}+{p['writes']}", m and f"{m.get('reads')}+{m.get('writes')}"
        cp = f"{p['compiled']} ({p['graphs']})"
        cm = m and m.get("compiled") is not None and f"{m['compiled']} ({m['graphs']})" or None
        pg, mg = r.get("predicted_cuda") or {}, r.get("measured_cuda_sim") or {}
        gp = f"{pg['compiled']} ({pg['graphs']})" if pg.get("compiled") is not None else "-"
        gm = f"{mg['compiled']} ({mg['graphs']})" if mg.get("compiled") is not None and not mg.get("error") else None
        out.append(f"| {name} | {lb}{cell(p['eager'], m.get('eager'), x['eager'])} | {cell(tp, tm, x['transfers'])} | "
                   f"{cell(p['eager_bytes'] if p['eager_bytes'] is not None else '?', m.get('eager_bytes'), x['bytes'])}"
                   f" | {cell(cp, cm, x['compiled'])} | {cell(gp, gm, x.get('cuda_compiled'))} |")
    s = store["summary"]
    out += ["", f"Of {s['measured']} measured: eager kernels exact {s['eager']}, eager transfers exact "
            f"{s['transfers']}, eager bytes exact {s['bytes']} (of those predicted with a figure), compiled "
            f"kernels and graphs exact {s['compiled']}; both kernel counts exact {s['both']}"
            + (f"; compiled on cuda (cudagen: fake H100) exact {s['cuda_compiled']}." if s.get("cuda_compiled") else ".")]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", required=True, type=Path, help="folder holding the transformers package source")
    ap.add_argument("--models", default=",".join(MODELS), help="comma list of: " + ", ".join(MODELS))
    ap.add_argument("--measure", action="store_true", help="measure what the store lacks (needs torch and "
                    "transformers; minutes a model)")
    ap.add_argument("--remeasure", action="store_true", help="measure again even what the store has")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per command")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--markdown", type=Path, help="also write the table as markdown here")
    ap.add_argument("--cuda", action="store_true", help="also predict --target cuda and, with --measure, measure "
                    "with cudagen (../shared/tools/cudagen; triton on $CUDAGEN_PYLIB; ~20 s a model)")
    ap.add_argument("--raw", type=Path, help="keep verify's whole answer per model in this folder (to read misses)")
    args = ap.parse_args()
    if not (args.site / "transformers").is_dir():
        print(f"{args.site}: no transformers folder here", file=sys.stderr)
        return 2
    chosen = args.models.split(",")
    unknown = [n for n in chosen if n not in MODELS]
    if unknown:
        print(f"--models: unknown {', '.join(unknown)} (known: {', '.join(MODELS)})", file=sys.stderr)
        return 2
    t0 = time.time()
    store: dict[str, Any] = json.loads(args.out.read_text()) if args.out.is_file() else {}
    measured: dict[str, Any] = store.setdefault("measured", {})
    tv = _torch_version()
    rows: dict[str, Any] = dict(store.get("rows") or {})
    print(f"{'model':<18} {'eager p/m':>10} {'transfers p/m':>16} {'bytes':>5} {'compiled p/m':>14}  note")
    for name in chosen:
        m = MODELS[name]
        key, h = f"{name}|{tv}|cpu", digest(m, args.site)
        old = measured.get(key)
        if args.remeasure or (args.measure and (not old or old.get("digest") != h)):
            t1 = time.time()
            fig = measure(m, args.site, args.timeout, args.raw)
            measured[key] = {"digest": h, "seconds": round(time.time() - t1, 1), **asdict(fig)}
            args.out.write_text(json.dumps(store, indent=1, sort_keys=True) + "\n")
        got = measured.get(key)
        stale = bool(got) and got.get("digest") != h
        p = predict(m, args.site, args.timeout)
        x = exact(p, None if stale else got)
        rows[name] = {"command": f"{m.config}({m.keywords})", "predicted": asdict(p), "measured": got,
                      "stale": stale, "exact": x}
        if args.cuda:
            gkey = f"{name}|{tv}|cuda-sim"
            gold = measured.get(gkey)
            if args.remeasure or (args.measure and (not gold or gold.get("digest") != h or gold.get("error"))):
                t1 = time.time()
                gfig = measure_cuda(m, args.site, args.timeout)
                measured[gkey] = {"digest": h, "seconds": round(time.time() - t1, 1), **asdict(gfig)}
                args.out.write_text(json.dumps(store, indent=1, sort_keys=True) + "\n")
            gm = measured.get(gkey) or {}
            pg = predict_cuda(m, args.site)
            ok = bool(gm) and gm.get("digest") == h and not gm.get("error") and gm.get("compiled") is not None
            x["cuda_compiled"] = ((pg.compiled, pg.graphs) == (gm["compiled"], gm["graphs"])) if ok and \
                not pg.error else None
            rows[name].update({"predicted_cuda": asdict(pg), "measured_cuda_sim": gm or None})
        elif name in (store.get("rows") or {}):  # a run without --cuda keeps the cuda columns it has
            old_row = store["rows"][name]
            for k in ("predicted_cuda", "measured_cuda_sim"):
                if old_row.get(k) is not None:
                    rows[name][k] = old_row[k]
            if "cuda_compiled" in (old_row.get("exact") or {}):
                x["cuda_compiled"] = old_row["exact"]["cuda_compiled"]
        g = got or {}
        mark = {True: "=", False: "x", None: "-"}
        note = p.error or g.get("error") or ("measured for other source (stale)" if stale else "")
        e_cell = f"{p.eager}/{g.get('eager', '-')}"
        t_cell = f"{p.reads}+{p.writes}/{g.get('reads', '-')}+{g.get('writes', '-')}"
        c_cell = f"{p.compiled}({p.graphs})/{g.get('compiled', '-')}({g.get('graphs', '-')})"
        pgc, mgc = rows[name].get("predicted_cuda") or {}, rows[name].get("measured_cuda_sim") or {}
        g_cell = f"{pgc.get('compiled', '-')}/{mgc.get('compiled', '-')}" if args.cuda else ""
        print(f"{name:<18} {e_cell:>10}{mark[x['eager']]} {t_cell:>16}{mark[x['transfers']]} {mark[x['bytes']]:>5} "
              f"{c_cell:>14}{mark[x['compiled']]} {g_cell:>9}{mark[x.get('cuda_compiled')] if args.cuda else ''}  "
              f"{note[:80]}", flush=True)
    rows = {n: rows[n] for n in MODELS if n in rows}
    judged = [r["exact"] for r in rows.values() if r["exact"]["eager"] is not None]

    def count(k: str) -> str:
        vals = [x[k] for x in judged if x[k] is not None]
        return f"{sum(vals)}/{len(vals)}"

    summary = {"models": len(rows), "measured": len(judged), **{k: count(k) for k in
                                                               ("eager", "transfers", "bytes", "compiled")},
               "both": f"{sum(bool(x['eager'] and x['compiled']) for x in judged)}/{len(judged)}"}
    cuda_judged = [r["exact"].get("cuda_compiled") for r in rows.values() if r["exact"].get("cuda_compiled") is not None]
    if cuda_judged:
        summary["cuda_compiled"] = f"{sum(cuda_judged)}/{len(cuda_judged)}"
    print(" ".join(f"{k}={v}" for k, v in summary.items()))
    store.update({"torch": tv, "transformers": VERSION, "rows": rows, "summary": summary})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(store, indent=1, sort_keys=True) + "\n")
    if args.markdown:
        args.markdown.write_text(markdown(store))
    print(f"{len(rows)} models in {time.time() - t0:.0f} s; written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
