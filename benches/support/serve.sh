# Sourced by the shell benches (http.sh, team.sh): the binary measured,
# a scratch directory, CPU pinning, and `serve` to start a server.
# BENCH_BIN=path measures an already built binary instead of building the
# release profile (to compare profiles or commits). Client and server are
# pinned to CPU 0 (taskset) where available, as spec/09-quality.md asks
# for latency figures.
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
if [ -n "${BENCH_BIN:-}" ]; then
  bin=$BENCH_BIN
else
  cargo build --release --quiet
  bin=${CARGO_TARGET_DIR:-$PWD/target}/release/quire
fi
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
pin=""
command -v taskset >/dev/null && pin="taskset -c 0"

# serve NAME DURABILITY ARGS…: starts `quire --headless --port 0 ARGS…`
# with its data in $work/d-NAME and its stderr in $work/err-NAME, waits
# for its `quire: serving` line, and sets `pid` and `url`.
serve() {
  local name=$1 durability=$2
  shift 2
  XDG_CONFIG_HOME=$work/c XDG_DATA_HOME=$work/d-$name QUIRE_SYSTEM_CONFIG_DIR=$work/e \
    QUIRE_STORAGE__DURABILITY=$durability $pin "$bin" --headless --port 0 "$@" 2>"$work/err-$name" &
  pid=$!
  url=""
  for _ in $(seq 1 200); do
    url=$(grep -o 'quire: serving http://[0-9.:]*' "$work/err-$name" 2>/dev/null | grep -o 'http://.*' || true)
    [ -n "$url" ] && break
    sleep 0.05
  done
  [ -n "$url" ] || { cat "$work/err-$name" >&2; exit 1; }
}
