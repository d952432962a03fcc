#!/usr/bin/env bash
# The image checks (tests/image_checks/README.md), run by .ci/run after the main suite: for each
# build context under images/, its Python dependencies resolve, build and install for the base
# image's Python and torch (base-image.txt), the pinned training code's third-party imports exist
# in them, and CPU smoke runs of what trainstack renders for the job. Each context gets its own
# virtual environment under .ci/image-checks/ (recreated on every run); plans come from
# `trainstack plan`, so the project's environment must be active (or .ci/venv must exist).
#
#   bash tests/image_checks/run.sh [litgpt] [mistral] [nemofw]     (default: all)
#
# Prints one line per check and closes with "image-checks: N passed, M failed"; exits 1 if any
# check failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
HERE=tests/image_checks
WORK=.ci/image-checks
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1

if [ "$#" -eq 0 ]; then set -- litgpt mistral nemofw; fi
rm -rf "$WORK"
mkdir -p "$WORK"
TOTAL_START=$SECONDS
passed=0
failed=0
failures=()

check() { # check NAME COMMAND...: run it, count it, time it
  local name=$1 start=$SECONDS
  shift
  echo "--- ${name}"
  if "$@"; then
    passed=$((passed + 1))
    echo "--- ok ${name} ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1))
    failures+=("${name}")
    echo "--- FAILED ${name} ($((SECONDS - start)) s)"
  fi
}

fact() { python3 "$HERE/facts.py" "$1" "$2"; }

find_python() { # the interpreter of version X.Y: a pyenv build, else one on PATH
  local version=$1 candidate
  for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/"python$version" \
                   /usr/local/bin/"python$version" /usr/bin/"python$version" "python$version"; do
    if "$candidate" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$version'.split('.'))))" 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "no Python $version here (looked in pyenv's versions and on PATH); the image checks need the base image's Python" >&2
  return 1
}

TRAINSTACK=$(command -v trainstack || echo .ci/venv/bin/trainstack)
plan() { # plan STACK: trainstack's rendering of the stack, under $WORK/plans/STACK
  [ -d "$WORK/plans/$1" ] || "$TRAINSTACK" plan "$1" --out "$WORK/plans/$1" > "$WORK/plans-$1.log" 2>&1 \
    || { cat "$WORK/plans-$1.log"; return 1; }
}

make_venv() { # make_venv CONTEXT NAME: $WORK/NAME with the base image's Python and torch
  local context=$1 venv=$WORK/$2 python
  python=$(find_python "$(fact "$context" python)") || return 1
  fact "$context" --constraints > "$WORK/$2-base-constraints.txt" || return 1
  "$python" -m venv "$venv" || return 1
  "$venv/bin/python" -m pip install --quiet "torch==$(fact "$context" torch-public)" -c "$WORK/$2-base-constraints.txt" || return 1
  "$venv/bin/python" -c 'import sys, torch; print(f"{sys.executable}: Python {sys.version.split()[0]}, torch {torch.__version__}")'
}

resolve_binary_only() { # resolve_binary_only CONTEXT REQUIREMENTS: wheels for the base's Python on glibc x86_64 exist for all
  local context=$1 requirements=$2 platforms=() minor
  for minor in $(seq 35 -1 5); do platforms+=(--platform "manylinux_2_${minor}_x86_64"); done
  platforms+=(--platform manylinux2014_x86_64 --platform manylinux2010_x86_64 --platform manylinux1_x86_64)
  fact "$context" --constraints > "$WORK/resolve-constraints.txt" || return 1
  python3 -m pip install --dry-run --quiet --ignore-installed --target "$WORK/resolve-target" \
    --only-binary=:all: --implementation cp --python-version "$(fact "$context" python)" "${platforms[@]}" \
    --report "$WORK/resolve-$(basename "$context").json" \
    -r "$requirements" -c "$WORK/resolve-constraints.txt" || return 1
  python3 -c "import json, sys; r = json.load(open(sys.argv[1])); print(f'{len(r[\"install\"])} packages resolve, all as wheels')" "$WORK/resolve-$(basename "$context").json"
}

# --- recipe 003: images/litgpt -----------------------------------------------------------------
litgpt_install() {
  local venv=$WORK/litgpt
  make_venv images/litgpt litgpt || return 1
  "$venv/bin/python" -m pip install --quiet -r images/litgpt/requirements.txt -c "$WORK/litgpt-base-constraints.txt" || return 1
  "$venv/bin/python" -m pip check
}

litgpt_flash_attn() { # the pinned flash-attn is published and is one lit-gpt's check accepts
  local venv=$WORK/litgpt pin
  pin=$(grep -E '^flash-attn==' images/litgpt/requirements-flash-attn.txt) || return 1
  "$venv/bin/python" -m pip index versions flash-attn 2>/dev/null | grep -E "^Available versions:.* ${pin#flash-attn==}(,|$)" > /dev/null \
    || { echo "${pin} is not on the package index"; return 1; }
  "$venv/bin/python" -c "
from packaging.requirements import Requirement
pin = '${pin#flash-attn==}'
# lit-gpt@6178c7cc lit_gpt/model.py: FlashAttention2Available = RequirementCache('flash-attn>=2.0.0.post1')
assert Requirement('flash-attn>=2.0.0.post1').specifier.contains(pin), pin
print(f'flash-attn {pin}: on the index; satisfies lit-gpt\'s flash-attn>=2.0.0.post1')"
}

run_litgpt() {
  check "litgpt: Dockerfile starts from base-image.txt's image, installs the requirement files" fact images/litgpt --check-from
  check "litgpt: requirements resolve as wheels for the base's Python and torch" resolve_binary_only images/litgpt images/litgpt/requirements.txt
  check "litgpt: requirements install on the base's Python and torch" litgpt_install
  check "litgpt: lit-gpt@6178c7cc's imports exist in the pins" "$WORK/litgpt/bin/python" "$HERE/check_imports.py" "$HERE/imports-litgpt.txt"
  check "litgpt: flash-attn pin" litgpt_flash_attn
  check "litgpt: the base's torch takes lit-gpt's attention call (scale=)" "$WORK/litgpt/bin/python" "$HERE/sdpa_scale.py" accepted
  check "litgpt: plan a3high-litgpt" plan a3high-litgpt
  check "litgpt: CPU smoke run, 2 steps, launcher's flags" "$WORK/litgpt/bin/python" "$HERE/smoke_litgpt.py" "$WORK/plans/a3high-litgpt"
}

# --- recipe 004: images/mistral ----------------------------------------------------------------
mistral_install() {
  local venv=$WORK/mistral pip
  make_venv images/mistral mistral || return 1
  pip="$venv/bin/python -m pip"
  # The same sequence as images/mistral/Dockerfile: Cython < 3, quinine's PyYAML and cytoolz from
  # source without build isolation (no cached wheel: it must be this build), then the rest.
  $pip install --quiet -c images/mistral/build-constraints.txt cython wheel || return 1
  $pip install --quiet --no-cache-dir --no-build-isolation --ignore-installed --no-deps -r images/mistral/requirements-source.txt || return 1
  PIP_CONSTRAINT="$WORK/mistral-base-constraints.txt images/mistral/build-constraints.txt" \
    $pip install --quiet -r images/mistral/requirements.txt || return 1
  $pip check || return 1
  "$venv/bin/python" -c "
import yaml, cytoolz, quinine, deepspeed
assert yaml.__version__ == '5.4', yaml.__version__
print(f'PyYAML {yaml.__version__} (built here), cytoolz {cytoolz.__version__} (built here), quinine imports, deepspeed {deepspeed.__version__}')" 2>&1 | grep -v '^\[' || return 1
  "$venv/bin/deepspeed" --help 2>/dev/null | grep -q -- '--no_ssh' || { echo "deepspeed's launcher has no --no_ssh"; return 1; }
  echo "deepspeed's launcher takes --no_ssh"
}

run_mistral() {
  check "mistral: Dockerfile starts from base-image.txt's image, installs the requirement files" fact images/mistral --check-from
  check "mistral: sources build and requirements install on the base's Python and torch" mistral_install
  check "mistral: mistral@bf9eff0's imports exist in the pins" "$WORK/mistral/bin/python" "$HERE/check_imports.py" "$HERE/imports-mistral.txt"
  check "mistral: plan a2-gpt2-deepspeed" plan a2-gpt2-deepspeed
  check "mistral: rendered job loads through quinine, HF and DeepSpeed's parser" "$WORK/mistral/bin/python" "$HERE/check_mistral_config.py" "$WORK/plans/a2-gpt2-deepspeed"
  # The torch of the NGC 23.05 base (which images/litgpt had) cannot run lit-gpt@6178c7cc.
  check "mistral: NGC 23.05's torch refuses lit-gpt's attention call (scale=)" "$WORK/mistral/bin/python" "$HERE/sdpa_scale.py" rejected
}

# --- recipe 001: images/nemofw-23.05 -----------------------------------------------------------
nemofw_hydra() { # Hydra and OmegaConf as NeMo 1.19 pins them, on the image's Python (3.8)
  local venv=$WORK/nemofw python
  python=$(find_python "$(fact images/nemofw-23.05 python)") || return 1
  "$python" -m venv "$venv" || return 1
  "$venv/bin/python" -m pip install --quiet -r "$HERE/requirements-nemo-config.txt" || return 1
  "$venv/bin/python" -c 'import sys, hydra, omegaconf; print(f"Python {sys.version.split()[0]}, hydra-core {hydra.__version__}, omegaconf {omegaconf.__version__}")'
}

run_nemofw() {
  check "nemofw: Dockerfile starts from base-image.txt's image, installs the requirement files" fact images/nemofw-23.05 --check-from
  check "nemofw: plan a3high-nemo-gpt5b" plan a3high-nemo-gpt5b
  check "nemofw: Hydra and OmegaConf of NeMo 1.19 install" nemofw_hydra
  check "nemofw: the job's config composes under Hydra as the recipe's, with the baked tokenizer" "$WORK/nemofw/bin/python" "$HERE/check_nemo_config.py" "$WORK/plans/a3high-nemo-gpt5b" images/nemofw-23.05
}

for context in "$@"; do
  case "$context" in
    litgpt | mistral | nemofw) "run_${context}" ;;
    *) echo "unknown context ${context} (litgpt, mistral, nemofw)"; exit 2 ;;
  esac
done

echo
echo "image checks took $((SECONDS - TOTAL_START)) s"
for name in "${failures[@]+"${failures[@]}"}"; do echo "failed: ${name}"; done
echo "image-checks: ${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
