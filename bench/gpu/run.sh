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

export JEV_DAWN_NODE=$work/dawn.node JEV_ORT_DIR=$work/ort/ XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

# Dawn's Vulkan backend needs the loader (libvulkan.so.1) and a driver's ICD. Try the Vulkan setup
# as it is, then each NVIDIA ICD found where drivers put it outside the loader's search path; keep
# the first under which Dawn offers an adapter.
probe() { "$node" -e "const d=require(process.env.JEV_DAWN_NODE);Object.assign(globalThis,d.globals);d.create([]).requestAdapter({powerPreference:'high-performance'}).then(a=>{console.log(a?'adapter: '+[a.info.vendor,a.info.architecture,a.info.description].join(' / ')+(a.features.has('shader-f16')?', shader-f16':''):'no adapter');process.exit(a?0:1)})" 2>&1 | grep -v '^ *$' | tail -4; }
ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1' || echo "no libvulkan.so.1 in ldconfig: see bench/gpu/README.md"
if [ -z "${JEV_DAWN_FLAGS:-}" ] && ! probe; then
  for icd in ${VK_DRIVER_FILES:-} /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json $(find /usr/local/nvidia /usr/share/vulkan /etc/vulkan /usr/lib/x86_64-linux-gnu -maxdepth 4 -name 'nvidia_icd*.json' 2>/dev/null); do
    [ -f "$icd" ] || continue
    echo "trying VK_DRIVER_FILES=$icd"
    if VK_DRIVER_FILES=$icd probe; then export VK_DRIVER_FILES=$icd; break; fi
  done
fi
JEV_COMMIT=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['commit'])" "$pack/pack.json")
export JEV_COMMIT
model=${JEV_GPU_MODEL:-smollm2-135m-random}
case "$model" in smollm2-135m-random) only=smol ;; tiny-random-llama) only=tiny ;; *) only=$model ;; esac
t0=$(date +%s)
"$node" "$work/generate.mjs" --only "$only" --out "$work/models" | tail -3
echo "model generated in $(( $(date +%s) - t0 )) s"
"$node" "$work/bench.mjs" --models "$work/models" --model "$model" --json "$out/gpu.json" --md "$out/gpu.md" "$@"
