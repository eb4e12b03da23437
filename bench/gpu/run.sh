#!/usr/bin/env bash
# The GPU bench on a machine with Python but no Node and no network (bench/gpu/README.md):
# unpacks bench/gpu/.pack (made here by `npm run bench:gpu:pack`; JEV_GPU_PACK names another), generates the 135M-shaped
# model, then runs bench.mjs on WebGPU (Dawn) and on wasm. Results go to $OUT (or
# $JEV_GPU_WORK/out): gpu.json, gpu.md, and the log. Arguments are passed to bench.mjs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pack=${JEV_GPU_PACK:-$here/.pack}
work=${JEV_GPU_WORK:-/tmp/jev-gpu}
out=${OUT:-$work/out}
mkdir -p "$work/ort" "$out"
[ -f "$pack/pack.json" ] || { echo "no pack at $pack: run 'npm run bench:gpu:pack' first" >&2; exit 2; }

# Unpack: Python's lzma for the .xz files (the machine may have no xz), plain copies of the rest.
python3 - "$pack" "$work" <<'PY'
import lzma, os, shutil, sys
pack, work = sys.argv[1], sys.argv[2]
for root, _, files in os.walk(pack):
    for f in files:
        src = os.path.join(root, f)
        dst = os.path.join(work, os.path.relpath(src, pack))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if f.endswith('.xz'):
            with lzma.open(src) as i, open(dst[:-3], 'wb') as o:
                shutil.copyfileobj(i, o, 1 << 20)
        else:
            shutil.copyfile(src, dst)
PY
node=$work/node
if [ -f "$node" ]; then chmod +x "$node"; else node=$(command -v node); fi
echo "node: $node $("$node" --version)"

# Dawn's Vulkan backend: the NVIDIA driver's ICD where the driver ships it outside the loader's path.
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; fi
done
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

export JEV_DAWN_NODE=$work/dawn.node JEV_ORT_DIR=$work/ort/
JEV_COMMIT=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['commit'])" "$pack/pack.json")
export JEV_COMMIT
model=${JEV_GPU_MODEL:-smollm2-135m-random}
case "$model" in smollm2-135m-random) only=smol ;; tiny-random-llama) only=tiny ;; *) only=$model ;; esac
t0=$(date +%s)
"$node" "$work/generate.mjs" --only "$only" --out "$work/models" | tail -3
echo "model generated in $(( $(date +%s) - t0 )) s"
"$node" "$work/bench.mjs" --models "$work/models" --model "$model" --json "$out/gpu.json" --md "$out/gpu.md" "$@"
