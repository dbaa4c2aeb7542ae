#!/usr/bin/env bash
# Co-change recall on serde's history (../shared/eval/cochange.py): graphctx
# with both relevance strategies, the same-directory guess, and aider's repo
# map when AIDER_PY points at a Python with aider-chat installed.
#   usage: benches/cochange.sh [BUDGET] [N_COMMITS]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
shared="${SHARED:-$here/../shared}"
budget="${1:-4096}"
n="${2:-40}"
cargo build --release --manifest-path "$here/Cargo.toml" >/dev/null
bin="$here/target/release/graphctx"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/graphctx-seed" <<SH
#!/bin/sh
if [ "\$1" = "context" ]; then exec "$bin" "\$@" --strategy seed; fi
exec "$bin" "\$@"
SH
chmod +x "$tmp/graphctx-seed"
run() { # label tool [env...]
  local label=$1 tool=$2; shift 2
  printf '%-22s ' "$label"
  env "$@" python3 "$shared/eval/cochange.py" "$shared/data/serde.bundle" "$tool" "$budget" "$n" 2>/dev/null | tail -n 1
}
run "graphctx (blended)" graphctx GRAPHCTX="$bin"
run "graphctx (seed)" graphctx GRAPHCTX="$tmp/graphctx-seed"
run "same directory" samedir
if [ -n "${AIDER_PY:-}" ]; then
  run "aider repo map" aider AIDER_PY="$AIDER_PY"
else
  echo "aider repo map         skipped (set AIDER_PY to a Python with aider-chat)"
fi
