#!/usr/bin/env bash
# `jev-local serve --device cuda` on a GPU machine with CUDA but no Node and no network
# (bench/gpu/README.md, "--device cuda"). `npm run bench:cuda:pack` cuts what it needs into trips
# (bench/gpu/.cuda/tripN); each device call carries one trip and runs this script. The trips
# gather in $JEV_CUDA_WORK (default /tmp/jev-cuda), which the machine keeps while it stays warm.
# Until every trip is there, the script says which are still to come and exits 3. Then it unpacks
# (Python's lzma: the machine may have no xz), puts the CUDA libraries the provider links on the
# loader's path, generates the 135M-shaped model and runs cuda.mjs (bench/gpu/cuda.ts), writing
# $OUT/cuda.json and $OUT/cuda.md. Arguments are passed to cuda.mjs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pack=${JEV_CUDA_PACK:-$here/.cuda}
work=${JEV_CUDA_WORK:-/tmp/jev-cuda}
out=${OUT:-$work/out}
mkdir -p "$work/trips" "$out"
# The libraries the CUDA provider links (cudart, cuBLAS, cuBLASLt, cuRAND; cuDNN where it is asked for), wherever the machine keeps them.
libs=$(find /usr/local/cuda* /usr/local/lib /opt /usr/lib/x86_64-linux-gnu -maxdepth 10 \( -name 'libcublasLt.so.13*' -o -name 'libcublas.so.13*' -o -name 'libcudart.so.13*' -o -name 'libcurand.so.10*' -o -name 'libcudnn.so.9*' \) 2>/dev/null | xargs -r -n1 dirname | sort -u | paste -sd: || true)
echo "CUDA libraries from: ${libs:-none found}"
export LD_LIBRARY_PATH=${libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for t in "$pack"/trip*/; do [ -d "$t" ] && cp -r "$t". "$work/trips/"; done

python3 - "$work" <<'PY'
import glob, json, lzma, os, sys
work = sys.argv[1]
trips, app = os.path.join(work, 'trips'), os.path.join(work, 'app')
marks = glob.glob(os.path.join(trips, 'trip*.json'))
if not marks:
    sys.exit('no trip is here: carry bench/gpu/.cuda/tripN (npm run bench:cuda:pack)')
manifest = json.load(open(marks[0]))
have = sorted(json.load(open(f))['trip'] for f in marks)
missing = [i for i in range(1, manifest['trips'] + 1) if i not in have]
if missing:
    print(f'trips here: {have}; still to come: {missing}')
    sys.exit(3)
if os.path.exists(os.path.join(app, 'unpacked')):
    sys.exit(0)
for f in manifest['files']:
    whole = os.path.join(trips, f)
    parts = [whole] if os.path.exists(whole) else sorted(glob.glob(whole + '.part*'), key=lambda p: int(p.rsplit('.part', 1)[1]))
    if not parts:
        sys.exit(f'{f} is in no trip')
    dst = os.path.join(app, f[:-3] if f.endswith('.xz') else f)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    unxz = lzma.LZMADecompressor() if f.endswith('.xz') else None
    with open(dst, 'wb') as o:
        for p in parts:
            with open(p, 'rb') as i:
                while chunk := i.read(1 << 22):
                    o.write(unxz.decompress(chunk) if unxz else chunk)
open(os.path.join(app, 'unpacked'), 'w').write(manifest['commit'])
print(f"unpacked {len(manifest['files'])} files of {manifest['commit']} in {app}")
PY

app=$work/app
node=$app/node
chmod +x "$node"
echo "node: $("$node" --version)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
provider=$app/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so
ldd "$provider" | grep -E 'not found|cublas|cudart|curand' || true
model=${JEV_GPU_MODEL:-smollm2-135m-random}
case "$model" in smollm2-135m-random) only=smol ;; tiny-random-llama) only=tiny ;; *) only=$model ;; esac
t0=$(date +%s)
[ -d "$work/models/$model" ] || "$node" "$app/generate.mjs" --only "$only" --out "$work/models" | tail -2
echo "model ready in $(( $(date +%s) - t0 )) s"
cd "$app"
"$node" cuda.mjs --models "$work/models" --model "$model" --json "$out/cuda.json" --md "$out/cuda.md" "$@"
