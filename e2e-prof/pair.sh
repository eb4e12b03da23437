#!/usr/bin/env bash
# Same specs, fresh contexts (main) against the warm context (wip), alternating.
SPECS="e2e/http-surface.spec.ts e2e/families.spec.ts e2e/decision-facade.spec.ts e2e/reliability-cancel.spec.ts"
for r in 1 2; do
  for tree in main wip; do
    cd /work/$tree
    t0=$(date +%s)
    JEV_DIST=dist-prof JEV_PREVIEW_PORT=6500 JEV_MIRROR_PORT=6501 timeout 900 npx playwright test -c e2e-prof/playwright.prof.config.ts $SPECS > /tmp/pair-$tree-$r.log 2>&1
    rc=$?
    echo "$tree run $r rc=$rc wall=$(( $(date +%s) - t0 ))s $(grep -E '[0-9]+ passed' /tmp/pair-$tree-$r.log) sum=$(grep -oE '\(([0-9.]+)(s|ms|m)\)$' /tmp/pair-$tree-$r.log | tr -d '()' | awk '/ms$/{s+=$0/1000;next} /m$/{s+=$0*60;next} {s+=$0} END{print s}')"
  done
done
