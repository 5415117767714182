#!/usr/bin/env bash
# What a user gets from PyPI, checked: build the sdist, build the wheel from that sdist (so a file the
# sdist forgets fails here), check that both hold the rules and the report schema, install the wheel
# into a fresh virtual environment (its dependencies from the index) and run the installed command on
# the seed example from a folder outside the repository, where the source tree cannot be imported.
# Any problem stops the script with a message and a non-zero exit. About 30 s; needs the package index.
#
#   bash scripts/check_wheel.sh          # leaves nothing behind; KEEP=1 keeps its temporary folder
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/kpredict-wheel.XXXXXX")"
if [[ -z "${KEEP:-}" ]]; then trap 'rm -rf "$tmp"' EXIT; else echo "check_wheel: keeping $tmp"; fi
fail() { echo "check_wheel: FAIL: $*" >&2; exit 1; }
dist="$tmp/dist"
mkdir -p "$dist"

# 1. Build from a copy of the files a clone has (tracked and not ignored, as on disk now): a stale
#    *.egg-info or build/ in the checkout would otherwise slip files into the archives that a clean
#    build leaves out. The sdist is built with `build` (in its own venv, so the caller's environment
#    is left as it was), then the wheel from the sdist with pip.
src="$tmp/src"
"$python" - "$repo" "$src" <<'PY' || fail "copying the checkout"
import os, pathlib, shutil, subprocess, sys
repo, src = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
try:
    out = subprocess.run(["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         check=True, capture_output=True).stdout.decode()
    files = [f for f in out.split("\0") if f]
except (OSError, subprocess.CalledProcessError):  # not a git checkout: everything but build outputs
    skip = {".git", "build", "dist", ".venv", ".kpredict_cache", ".pytest_cache", ".hypothesis", "__pycache__"}
    files = [str(p.relative_to(repo)) for p in repo.rglob("*")
             if p.is_file() and not skip.intersection(p.relative_to(repo).parts)
             and not any(part.endswith(".egg-info") for part in p.relative_to(repo).parts)]
for f in files:
    if os.path.isfile(repo / f):  # a tracked file deleted in the working tree is left out
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / f, src / f)
PY
"$python" -m venv "$tmp/buildenv"
"$tmp/buildenv/bin/python" -m pip install -q build >"$tmp/buildenv.log" 2>&1 \
    || { cat "$tmp/buildenv.log" >&2; fail "could not install the build package"; }
"$tmp/buildenv/bin/python" -m build -q --sdist --outdir "$dist" "$src" >"$tmp/build.log" 2>&1 \
    || { cat "$tmp/build.log" >&2; fail "building the sdist"; }
sdists=("$dist"/*.tar.gz)
[[ ${#sdists[@]} -eq 1 && -f "${sdists[0]}" ]] || fail "expected one sdist in $dist"
sdist="${sdists[0]}"
"$tmp/buildenv/bin/python" -m pip wheel -q --no-deps -w "$dist" "$sdist" >"$tmp/wheel.log" 2>&1 \
    || { cat "$tmp/wheel.log" >&2; fail "building the wheel from $(basename "$sdist")"; }
wheels=("$dist"/*.whl)
[[ ${#wheels[@]} -eq 1 && -f "${wheels[0]}" ]] || fail "expected one wheel in $dist"
wheel="${wheels[0]}"
echo "check_wheel: built $(basename "$sdist") and $(basename "$wheel")"

# 2. Contents: every rules/*.toml and kpredict/schema/*.json of the checkout, in both archives;
#    the distribution's name and the kpredict command in the wheel's metadata.
"$python" - "$repo" "$sdist" "$wheel" <<'PY' || fail "archive contents (above)"
import pathlib, sys, tarfile, zipfile
repo, sdist, wheel = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
rules = sorted(p.name for p in (repo / "rules").glob("*.toml"))
schemas = sorted(p.name for p in (repo / "kpredict" / "schema").glob("*.json"))
assert rules and schemas, (rules, schemas)
problems = []
with zipfile.ZipFile(wheel) as z:
    names = set(z.namelist())
    for r in rules:
        if f"kpredict/_rules/{r}" not in names:
            problems.append(f"wheel lacks kpredict/_rules/{r}")
    for s in schemas:
        if f"kpredict/schema/{s}" not in names:
            problems.append(f"wheel lacks kpredict/schema/{s}")
    if "kpredict/cli.py" not in names:
        problems.append("wheel lacks kpredict/cli.py")
    info = {n.split("/", 1)[1]: n for n in names if n.split("/", 1)[0].endswith(".dist-info")}
    meta = z.read(info["METADATA"]).decode() if "METADATA" in info else ""
    if "\nName: torch-kpredict\n" not in meta:
        problems.append("wheel METADATA does not name the distribution torch-kpredict")
    entry = z.read(info["entry_points.txt"]).decode() if "entry_points.txt" in info else ""
    if "kpredict = kpredict.cli:main" not in entry:
        problems.append("wheel does not declare the kpredict command")
with tarfile.open(sdist) as t:
    names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for r in rules:
        if f"rules/{r}" not in names:
            problems.append(f"sdist lacks rules/{r}")
    for s in schemas:
        if f"kpredict/schema/{s}" not in names:
            problems.append(f"sdist lacks kpredict/schema/{s}")
for p in problems:
    print("check_wheel:", p, file=sys.stderr)
if problems:
    sys.exit(1)
print(f"check_wheel: both archives hold the {len(rules)} rules files and {len(schemas)} schema(s)")
PY

# 3. Install the wheel alone into a fresh venv; libcst, networkx and click come from the index.
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q "$wheel" >"$tmp/install.log" 2>&1 \
    || { cat "$tmp/install.log" >&2; fail "installing the wheel into a fresh venv"; }

# 4. Run it from outside the repository, on a copy of the seed.
run="$tmp/run"
mkdir -p "$run/fixtures"
cp -R "$repo/fixtures/seed" "$run/fixtures/seed"
cd "$run"
where="$("$tmp/venv/bin/python" -c 'import kpredict; print(kpredict.__file__)')" \
    || fail "the installed package does not import"
[[ "$where" == "$tmp/venv/"* ]] || fail "kpredict was imported from $where, not from the installed wheel"
set +e
"$tmp/venv/bin/kpredict" fixtures/seed/seed.py >"$tmp/seed.out" 2>"$tmp/seed.err"
rc=$?
set -e
cat "$tmp/seed.out"
# 0: analyzed, 1: analyzed with findings; 2 (a file failed) or a crash is a failure.
if [[ $rc -gt 1 ]] || [[ -s "$tmp/seed.err" ]]; then
    cat "$tmp/seed.err" >&2
    fail "the installed kpredict fixtures/seed/seed.py exited $rc (or wrote to stderr)"
fi
grep -q "add_relu" "$tmp/seed.out" || fail "the report does not show add_relu"
grep -q "compiled" "$tmp/seed.out" || fail "the report has no compiled figures"
echo "check_wheel: OK (kpredict from $(basename "$wheel") ran the seed, exit $rc)"
