#!/usr/bin/env bash
# The CMake flags llama-cpp-python is built with (scripts/setup.sh, scripts/check_clean_install.sh):
# AVX2 without the AMX code path, which segfaults on these CPUs in the default (native) build; AVX-512
# where the CPU has it.
flags="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
flags="$flags -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
if grep -q avx512f /proc/cpuinfo 2>/dev/null; then flags="$flags -DGGML_AVX512=ON"; fi
echo "$flags"
