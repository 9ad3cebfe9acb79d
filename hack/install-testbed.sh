#!/usr/bin/env bash
# Installs the testbed's pinned binaries into a cache outside the repository:
# kube-apiserver, kube-controller-manager, kube-scheduler (built from k8s.io/kubernetes),
# etcd, kwok, CoreDNS with our clusterset plugin (built from the repository's dns/ module) and moto.
# Idempotent: every step is skipped when its output already exists (CoreDNS: when dns/ is unchanged).
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.33.13}
ETCD_VERSION=${ETCD_VERSION:-v3.5.21}
KWOK_VERSION=${KWOK_VERSION:-v0.7.0}
MOTO_VERSION=${MOTO_VERSION:-5.2.5}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${MCS_CLOUDMAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcs-cloudmap}
BIN="$CACHE/bin"
LOGS="$CACHE/install-logs"
mkdir -p "$BIN" "$LOGS" "$CACHE/src"

now() { date +%s; }
step() { printf '[install] %s\n' "$*" >&2; }
fail() { printf '[install] ERROR: %s\n' "$*" >&2; exit 1; }

need() {
  command -v "$1" >/dev/null 2>&1 || fail "'$1' is not on PATH: $2"
}

# Runs a long command with its output in a log file; prints progress every 60 s.
run_logged() {
  local name=$1; shift
  local log="$LOGS/$name.log" start; start=$(now)
  step "$name: started (log: $log)"
  ( "$@" ) >"$log" 2>&1 &
  local pid=$!
  local last=$start
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if (( $(now) - last >= 60 )); then last=$(now); step "$name: still running after $(( last - start ))s"; fi
  done
  if ! wait "$pid"; then
    tail -n 30 "$log" >&2 || true
    fail "$name failed after $(( $(now) - start ))s; full log: $log"
  fi
  step "$name: done in $(( $(now) - start ))s"
}

# ---------- Kubernetes control plane ----------
k8s_staging_replaces() {
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local patch=${K8S_VERSION##*.}
  local mod; mod=$(GOWORK=off go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [ -f "$mod" ] || fail "could not download k8s.io/kubernetes@$K8S_VERSION's go.mod"
  # Staging modules are the require lines pinned to v0.0.0; each maps to its published v0.<minor>.<patch>.
  grep -oE '^\s+k8s\.io/[a-z0-9-]+ v0\.0\.0$' "$mod" | awk -v v="v0.$minor.$patch" '{print "replace " $1 " => " $1 " " v}'
}

build_kubernetes() {
  local dir="$CACHE/src/kubernetes-$K8S_VERSION" mod minor
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  mkdir -p "$dir"
  mod=$(GOWORK=off go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "module mcs-cloudmap.local/kube-build"
    grep -E '^go [0-9.]+$' "$mod"
    grep -E '^godebug ' "$mod" || true
    echo "require k8s.io/kubernetes $K8S_VERSION"
    k8s_staging_replaces
  } >"$dir/go.mod"
  cat >"$dir/tools.go" <<GO
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
GO
  local ld="" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  (
    cd "$dir"
    export GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=mod
    go mod tidy -e >/dev/null 2>&1 || true
    go mod download
    for c in kube-apiserver kube-controller-manager kube-scheduler; do
      echo "building $c"
      go build -trimpath -ldflags "-s -w $ld" -o "$BIN/$c.tmp" "k8s.io/kubernetes/cmd/$c"
      mv "$BIN/$c.tmp" "$BIN/$c"
    done
  )
}

# ---------- etcd ----------
build_etcd() {
  local dir="$CACHE/src/etcd-$ETCD_VERSION"
  mkdir -p "$dir"
  cat >"$dir/go.mod" <<MOD
module mcs-cloudmap.local/etcd-build

go 1.23

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
MOD
  cat >"$dir/tools.go" <<GO
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
  (
    cd "$dir"
    export GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=mod
    go mod tidy -e >/dev/null 2>&1 || true
    go build -trimpath -ldflags "-s -w" -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3
    mv "$BIN/etcd.tmp" "$BIN/etcd"
  )
}

# ---------- kwok ----------
build_kwok() {
  GOWORK=off CGO_ENABLED=0 GOBIN="$BIN" go install -trimpath "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
}

# The Stage definitions ship inside the kwok module: "fast" node initialisation and pod lifecycle, plus the node
# heartbeat with lease (without it kube-controller-manager's node lifecycle controller marks the fake nodes NotReady
# after the grace period and evicts their pods).
install_kwok_stages() {
  local src; src=$(GOWORK=off go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [ -d "$src/kustomize/stage" ] || fail "sigs.k8s.io/kwok@$KWOK_VERSION has no kustomize/stage directory (module dir: '$src')"
  rm -rf "$CACHE/kwok-stages.tmp" && mkdir -p "$CACHE/kwok-stages.tmp"
  local f
  for f in "$src"/kustomize/stage/node/fast/*.yaml "$src"/kustomize/stage/node/heartbeat-with-lease/*.yaml \
           "$src"/kustomize/stage/pod/fast/*.yaml; do
    [ "$(basename "$f")" = kustomization.yaml ] || cp "$f" "$CACHE/kwok-stages.tmp/"
  done
  chmod u+w "$CACHE"/kwok-stages.tmp/*.yaml
  rm -rf "$CACHE/kwok-stages" && mv "$CACHE/kwok-stages.tmp" "$CACHE/kwok-stages"
}

# ---------- CoreDNS ----------
# CoreDNS (version pinned by dns/go.mod) with the clusterset plugin, from the repository's dns/ module. Keyed by a
# hash of dns/'s Go sources and module files, so editing the plugin rebuilds it on the next run.
coredns_sources_hash() {
  (cd "$REPO" && find dns -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)
}

build_coredns() {
  cd "$REPO/dns"
  export GOWORK=off CGO_ENABLED=0
  go build -trimpath -ldflags "-s -w" -o "$BIN/coredns.tmp" ./cmd/coredns
  mv "$BIN/coredns.tmp" "$BIN/coredns"
}

# ---------- moto ----------
# A wrapper, not a symlink: Python finds its venv only when started by the venv's own path.
write_moto_python() {
  rm -f "$BIN/moto-python"
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$CACHE/moto-venv/bin/python" >"$BIN/moto-python"
  chmod +x "$BIN/moto-python"
}

install_moto() {
  python3 -m venv "$CACHE/moto-venv"
  "$CACHE/moto-venv/bin/pip" install --quiet "moto[server]==$MOTO_VERSION"
  ln -sf "$CACHE/moto-venv/bin/moto_server" "$BIN/moto_server"
}

total_start=$(now)
need go "install Go 1.24 or newer (https://go.dev/doc/install, or Debian's golang package)"
need python3 "install Python 3.9 or newer with the venv module (Debian: apt-get install python3 python3-venv)"

[ -x "$BIN/moto_server" ] || run_logged moto install_moto
# The Cloud Map emulator (hack/testbed/cloudmap_emulator) runs in moto's venv.
write_moto_python
[ -x "$BIN/etcd" ] || run_logged etcd build_etcd
[ -x "$BIN/kwok" ] || run_logged kwok build_kwok
[ -f "$CACHE/kwok-stages/node-heartbeat-with-lease.yaml" ] || run_logged kwok-stages install_kwok_stages
if [ ! -x "$BIN/kube-apiserver" ] || [ ! -x "$BIN/kube-controller-manager" ] || [ ! -x "$BIN/kube-scheduler" ] \
   || [ "$(cat "$CACHE/kubernetes.version" 2>/dev/null)" != "$K8S_VERSION" ]; then
  run_logged kubernetes build_kubernetes
  echo "$K8S_VERSION" >"$CACHE/kubernetes.version"
fi
coredns_hash=$(coredns_sources_hash)
if [ ! -x "$BIN/coredns" ] || [ "$(cat "$CACHE/coredns.sources" 2>/dev/null)" != "$coredns_hash" ]; then
  run_logged coredns build_coredns
  echo "$coredns_hash" >"$CACHE/coredns.sources"
fi
# Left by installers from before the clusterset plugin, when CoreDNS depended on an unobtainable module.
rm -f "$CACHE/coredns.unavailable"
step "all binaries in $BIN ($(( $(now) - total_start ))s)"
