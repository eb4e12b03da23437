#!/usr/bin/env bash
# The same four spec files with fresh contexts and with the warm context, alternating, twice.
# Usage: bash e2e-prof/pair.sh FRESH_TREE WARM_TREE
#   FRESH_TREE: a worktree before the warm context landed (git worktree add /tmp/fresh 9689474),
#   WARM_TREE: one with it; each with node_modules, models/ and a build in dist-prof
#   (npx vite build --outDir dist-prof).
set -u
FRESH=${1:?FRESH_TREE} WARM=${2:?WARM_TREE}
SPECS="e2e/http-surface.spec.ts e2e/families.spec.ts e2e/decision-facade.spec.ts e2e/reliability-cancel.spec.ts"
for r in 1 2; do
  for tree in "$FRESH" "$WARM"; do
    cd "$tree" || exit 1
    log=$(mktemp)
    t0=$(date +%s)
    JEV_DIST=dist-prof JEV_PREVIEW_PORT=6500 JEV_MIRROR_PORT=6501 timeout 900 npx playwright test $SPECS > "$log" 2>&1
    rc=$?
    echo "$tree run $r rc=$rc wall=$(( $(date +%s) - t0 ))s $(grep -E '[0-9]+ passed' "$log")"
  done
done
