#!/usr/bin/env bash
# Installs the testbed's pinned binaries into a cache outside the repository:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kubelet and kube-proxy (built from k8s.io/kubernetes),
# etcd, kwok, stock CoreDNS, moto, helm and promtool, and the CRDs of the mcs-api release our own are compared with;
# as root, also the data path's Debian packages (containerd, runc, CNI plugins, iptables) and images
# (hack/image/data-path.sh).
# Idempotent: every step is skipped when its output already exists at its pinned version.
# Run by `npm test` (hack/test.sh) and `npm run demo` (hack/demo.ts) before anything else. It first checks the tools it
# cannot install itself (Go, Python with venv, OpenSSL) and says what to install, then prints what it will build and
# how long that took on a cold cache, then builds.
set -euo pipefail
# Root's tools (setcap, iptables, sysctl, runc) live in sbin directories that a shell that is not a login shell, or a CI
# runner, may leave off PATH.
for d in /usr/local/sbin /usr/sbin /sbin; do case ":$PATH:" in *":$d:"*) ;; *) PATH="$PATH:$d" ;; esac; done
export PATH

K8S_VERSION=${K8S_VERSION:-v1.33.13}
ETCD_VERSION=${ETCD_VERSION:-v3.5.21}
KWOK_VERSION=${KWOK_VERSION:-v0.7.0}
MOTO_VERSION=${MOTO_VERSION:-5.2.5}
HELM_VERSION=${HELM_VERSION:-v3.22.0}
# Prometheus 3.16.0 (promtool) as its Go module numbers it: v0.<major><minor>.<patch>.
PROMETHEUS_VERSION=${PROMETHEUS_VERSION:-v0.316.0}
# The newest sigs.k8s.io/mcs-api release on the Go module proxy (`go list -m -versions sigs.k8s.io/mcs-api`); hack/testbed/paths.ts reads this default.
MCS_API_VERSION=${MCS_API_VERSION:-v0.5.2}
# The newest release of `go list -m -versions github.com/coredns/coredns` that builds with our Go (v1.15.0 needs 1.26).
COREDNS_VERSION=${COREDNS_VERSION:-v1.15.0}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${MCS_CLOUDMAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcs-cloudmap}
BIN="$CACHE/bin"
LOGS="$CACHE/install-logs"
mkdir -p "$BIN" "$LOGS" "$CACHE/src"
# One installer at a time per cache: runs started side by side (lanes, worktrees, a demo beside the tests) would build
# into the same files. The later one waits, then finds every step done.
exec 9>"$CACHE/install.lock"
flock -n 9 || { printf '[install] another install into %s is running; waiting for it\n' "$CACHE" >&2; flock 9; }

now() { date +%s; }
step() { printf '[install] %s\n' "$*" >&2; }
fail() { printf '[install] ERROR: %s\n' "$*" >&2; exit 1; }


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

# The control plane and kubectl from one wrapper module, with the same version stamping; builds the commands given.
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
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
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
    for c in "$@"; do
      echo "building $c"
      go build -trimpath -ldflags "-s -w $ld" -o "$BIN/$c.tmp" "k8s.io/kubernetes/cmd/$c"
      mv "$BIN/$c.tmp" "$BIN/$c"
    done
  )
  echo "$K8S_VERSION" >"$CACHE/kubernetes.version"
}

KUBE_COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy)

# The Kubernetes commands to (re)build: all of them after a version change, else the missing ones.
kube_commands_to_build() {
  local c
  for c in "${KUBE_COMMANDS[@]}"; do
    if [ "$(cat "$CACHE/kubernetes.version" 2>/dev/null)" != "$K8S_VERSION" ] || [ ! -x "$BIN/$c" ]; then echo "$c"; fi
  done
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
# Stock CoreDNS with its default plugins: the kubernetes plugin's `multicluster` option (CoreDNS 1.12.2 and newer)
# serves clusterset.local from ServiceImports and MCS EndpointSlices (docs/dns.md). A module download has no git
# commit for CoreDNS's Makefile to stamp, so the release tag stands in for it in `coredns -version`.
build_coredns() {
  GOWORK=off CGO_ENABLED=0 GOBIN="$BIN" go install -trimpath \
    -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION" "github.com/coredns/coredns@$COREDNS_VERSION"
  echo "$COREDNS_VERSION" >"$CACHE/coredns.version"
}

# ---------- helm ----------
# The chart's tests (charts/mcs-cloudmap) run a real helm, built from helm.sh/helm/v3 (no replace lines). Stamped like
# helm's Makefile does: without it `helm version` says v3.NN and the default Kubernetes version for `helm template` and
# lint comes from an old hard-coded value instead of the client-go helm is built with.
build_helm() {
  local mod client minor ld
  mod=$(GOWORK=off go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [ -f "$mod" ] || fail "could not download helm.sh/helm/v3@$HELM_VERSION's go.mod"
  client=$(sed -n 's/^\s*k8s\.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$mod")
  [ -n "$client" ] || fail "no k8s.io/client-go requirement in helm.sh/helm/v3@$HELM_VERSION's go.mod"
  ld="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    ld="$ld -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$client"
  done
  GOWORK=off CGO_ENABLED=0 GOBIN="$BIN" go install -trimpath -ldflags "$ld" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
}

# ---------- promtool ----------
# Parses the alerting rules and the dashboard queries of kustomize/components/monitoring with Prometheus' own parser
# (test/integration/monitoring/). From the github.com/prometheus/prometheus module; its go.mod has no replace lines.
build_promtool() {
  # v0.316.0 is Prometheus 3.16.0: stamped so that `promtool --version` says which.
  local minor=${PROMETHEUS_VERSION#v0.}; minor=${minor%%.*}
  local version="${minor:0:1}.${minor:1}.${PROMETHEUS_VERSION##*.}"
  GOWORK=off CGO_ENABLED=0 GOBIN="$BIN" go install -trimpath -ldflags "-s -w -X github.com/prometheus/common/version.Version=$version" \
    "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_VERSION"
}

# ---------- upstream mcs-api CRDs ----------
# The ServiceExport and ServiceImport CRDs of sigs.k8s.io/mcs-api, kept per version, which
# test/integration/webhook/upstream-crds.test.ts compares our schemas with (K5).
install_mcs_api_crds() {
  local src dir="$CACHE/mcs-api/$MCS_API_VERSION"
  src=$(GOWORK=off GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/mcs-api@$MCS_API_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [ -d "$src/config/crd" ] || fail "sigs.k8s.io/mcs-api@$MCS_API_VERSION has no config/crd directory (module dir: '$src')"
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
  cp "$src"/config/crd/*.yaml "$dir.tmp/"
  chmod u+w "$dir.tmp"/*.yaml
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
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

# ---------- data path ----------
# The real nodes of startClusterSet({ dataPath: true }) (docs/testbed.md "Data path") run Debian's containerd, runc, CNI
# plugins and iptables, and images built locally. Both need root; without it the rest of the testbed still installs
# and the data path says what is missing when it starts.
DATA_PATH_PACKAGES=(containerd runc containernetworking-plugins iptables conntrack mmdebstrap buildah podman)
DATA_PATH_FILES=(/usr/bin/containerd /usr/bin/ctr /usr/sbin/runc /usr/lib/cni/bridge /usr/lib/cni/host-local /usr/lib/cni/loopback
  /usr/sbin/iptables /usr/sbin/conntrack /usr/bin/mmdebstrap /usr/bin/buildah /usr/bin/podman)

install_data_path_packages() {
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${DATA_PATH_PACKAGES[@]}"
}

build_data_path_images() {
  bash "$REPO/hack/image/data-path.sh"
}

# ---------- prerequisites ----------
# What the installer cannot install itself, with the oldest version known to work: Go builds every binary
# (helm v3.22 and CoreDNS v1.15 declare go 1.26; k8s.io/kubernetes v1.33 and kwok v0.7.0 go 1.24), Python runs moto (5.2 needs 3.9) from a venv, and the
# testbed and the demo make their certificates with `openssl req -x509 -CA` (OpenSSL 3.0).

# True when dotted version $1 is at least $2.
version_at_least() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

# $1 tool, $2 version found (empty: none), $3 minimum, $4 how to install it.
require_version() {
  [ -n "$2" ] || fail "$1 is not installed (or not on PATH); $1 $3 or newer is needed: $4"
  version_at_least "$2" "$3" || fail "$1 $2 is too old; $1 $3 or newer is needed: $4"
}

check_prerequisites() {
  local go_version python_version openssl_version
  go_version=$(command -v go >/dev/null && go env GOVERSION 2>/dev/null | sed -n 's/^go\([0-9][0-9.]*\).*/\1/p' || true)
  require_version Go "$go_version" 1.26 "install it from https://go.dev/doc/install (or your distribution's golang package)"
  python_version=$(command -v python3 >/dev/null && python3 -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null || true)
  require_version Python "$python_version" 3.9 "install python3 and its venv module (Debian/Ubuntu: apt-get install python3 python3-venv)"
  python3 -c 'import venv, ensurepip' 2>/dev/null \
    || fail "Python $python_version has no venv module with pip (ensurepip): install it (Debian/Ubuntu: apt-get install python3-venv)"
  openssl_version=$(command -v openssl >/dev/null && openssl version 2>/dev/null | sed -n 's/^OpenSSL \([0-9][0-9.]*\).*/\1/p' || true)
  require_version OpenSSL "$openssl_version" 3.0 "install OpenSSL 3 (Debian/Ubuntu: apt-get install openssl; LibreSSL lacks 'req -CA')"
}

# ---------- plan ----------
# Each step with the seconds it took on a cold cache with 2 cores (docs/testbed.md "Timings"), so the first run says
# up front how long it will take.
moto_needed() { [ ! -x "$BIN/moto_server" ]; }
etcd_needed() { [ ! -x "$BIN/etcd" ]; }
kwok_needed() { [ ! -x "$BIN/kwok" ]; }
kwok_stages_needed() { [ ! -f "$CACHE/kwok-stages/node-heartbeat-with-lease.yaml" ]; }
mcs_api_crds_needed() { [ ! -f "$CACHE/mcs-api/$MCS_API_VERSION/multicluster.x-k8s.io_serviceimports.yaml" ]; }
kubernetes_needed() { [ -n "$(kube_commands_to_build)" ]; }
helm_needed() { [ ! -x "$BIN/helm" ] || [ "$(cat "$CACHE/helm.version" 2>/dev/null)" != "$HELM_VERSION" ]; }
promtool_needed() { [ ! -x "$BIN/promtool" ] || [ "$(cat "$CACHE/promtool.version" 2>/dev/null)" != "$PROMETHEUS_VERSION" ]; }
data_path_packages_needed() {
  local f
  for f in "${DATA_PATH_FILES[@]}"; do [ -x "$f" ] || return 0; done
  return 1
}
# hack/image/data-path.sh keys its output by its inputs; a quick check here, the script itself decides.
data_path_images_needed() { [ ! -f "$CACHE/image/data-path/images.tar" ] || [ "$(cat "$CACHE/image/data-path/key" 2>/dev/null)" != "$(data_path_images_key)" ]; }
data_path_images_key() { { cat "$REPO/hack/image/data-path.sh"; cat "$REPO"/hack/image/pause/*; } | sha256sum | cut -c1-16; }
coredns_needed() { [ ! -x "$BIN/coredns" ] || [ "$(cat "$CACHE/coredns.version" 2>/dev/null)" != "$COREDNS_VERSION" ]; }

STEPS=(moto etcd kwok kwok_stages mcs_api_crds kubernetes coredns helm promtool data_path_packages data_path_images)
declare -A COLD_SECONDS=([moto]=25 [etcd]=55 [kwok]=75 [kwok_stages]=5 [mcs_api_crds]=5 [kubernetes]=420 [coredns]=160 [helm]=300
  [promtool]=888 [data_path_packages]=40 [data_path_images]=90)

run_step() {
  case $1 in
    moto) run_logged moto install_moto ;;
    etcd) run_logged etcd build_etcd ;;
    kwok) run_logged kwok build_kwok ;;
    kwok_stages) run_logged kwok-stages install_kwok_stages ;;
    mcs_api_crds) run_logged mcs-api-crds install_mcs_api_crds ;;
    # shellcheck disable=SC2046 # one word per command
    kubernetes) run_logged kubernetes build_kubernetes $(kube_commands_to_build) ;;
    coredns) run_logged coredns build_coredns ;;
    helm) run_logged helm build_helm && echo "$HELM_VERSION" >"$CACHE/helm.version" ;;
    promtool) run_logged promtool build_promtool && echo "$PROMETHEUS_VERSION" >"$CACHE/promtool.version" ;;
    data_path_packages) run_logged data-path-packages install_data_path_packages ;;
    data_path_images) run_logged data-path-images build_data_path_images ;;
  esac
}

total_start=$(now)
check_prerequisites
pending=() estimate=0
for s in "${STEPS[@]}"; do
  if [[ $s == data_path_* ]] && [ "$EUID" != 0 ]; then
    if "${s}_needed"; then step "not root: skipping $s; the data path (startClusterSet({ dataPath: true }), the demo's curl) needs it: run this installer as root"; fi
    continue
  fi
  if "${s}_needed"; then pending+=("$s"); estimate=$(( estimate + COLD_SECONDS[$s] )); fi
done
if [ ${#pending[@]} -gt 0 ]; then
  step "to build into $CACHE: ${pending[*]/#kubernetes/kubernetes ($(kube_commands_to_build | xargs))}"
  step "a cold install of these takes about $(( (estimate + 59) / 60 )) min on 2 idle cores (longer on a busy machine); later runs take seconds"
fi
for s in "${pending[@]}"; do run_step "$s"; done
# The Cloud Map emulator (hack/testbed/cloudmap_emulator) runs in moto's venv.
write_moto_python
# Left by older installers: the build of our own CoreDNS plugin (keyed by its sources), and before it a marker of an
# unobtainable module.
rm -f "$CACHE/coredns.sources" "$CACHE/coredns.unavailable"
step "all binaries in $BIN ($(( $(now) - total_start ))s)"
