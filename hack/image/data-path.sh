#!/usr/bin/env bash
# The images the testbed's real nodes run (docs/testbed.md "Data path"), built without a registry and written as
# docker archives that the testbed imports into each node's containerd (`ctr images import`):
#   registry.k8s.io/pause:3.10            stand-in: our pause (hack/image/pause), the sandbox of every pod
#   docker.io/nginxdemos/hello:plain-text stand-in: nginx answering with its address and host name, as the tutorial's
#   docker.io/nicolaka/netshoot:v0.15     stand-in: sh, curl, dig, nslookup, socat, nc, hostname, ip
#   docker.io/alpine/socat:1.7.4.4        stand-in: the same tools, entrypoint socat
# The last three share one Debian root filesystem (mmdebstrap); only their configs differ. The upstream MCS
# conformance suite and the tutorial name these images, so their pods run unchanged. Keyed by a hash of this script
# and the pause sources: a warm run takes well under a second.
#
# Usage: bash hack/image/data-path.sh   (prints the directory holding images.list and the archives)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need mmdebstrap:mmdebstrap go:golang-go

SUITE=bookworm
TOOLS_PACKAGES=nginx-light,curl,socat,bind9-dnsutils,netcat-openbsd,hostname,iproute2,procps
OUT=$CACHE/data-path
input_key=$( { cat "${BASH_SOURCE[0]}"; cat "$REPO"/hack/image/pause/*; } | key)
if [ "$(cat "$OUT/key" 2>/dev/null)" = "$input_key" ] && [ -f "$OUT/images.list" ]; then
  echo "$OUT"
  exit 0
fi
step "data-path images: building into $OUT (about 2 min on a cold cache)"
rm -rf "$OUT.tmp" && mkdir -p "$OUT.tmp"

# ---------- pause ----------
(cd "$REPO/hack/image/pause" && CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags "-s -w" -o "$OUT.tmp/pause" .)
add_pause() {
  buildah copy --quiet --chmod 0755 "$1" "$OUT.tmp/pause" /pause >/dev/null
  buildah config --entrypoint '["/pause"]' --cmd '[]' "$1"
}
final scratch registry.k8s.io/pause:3.10 add_pause "hack/image/pause"

# ---------- tools: one Debian root filesystem ----------
# nginx's hello page answers like nginxdemos/hello:plain-text (its address, its host name), so a curl shows which pod
# of which cluster answered.
TOOLS_HOOK='set -e
rm -rf "$1"/usr/share/doc "$1"/usr/share/man "$1"/usr/share/info "$1"/usr/share/locale "$1"/var/cache/apt/*.bin "$1"/var/lib/apt/lists/*
cat > "$1"/etc/nginx/hello.conf <<CONF
daemon off;
user root;
worker_processes 1;
error_log stderr;
pid /run/nginx.pid;
events { worker_connections 256; }
http {
  access_log off;
  server {
    listen 80 default_server;
    default_type text/plain;
    location / {
      return 200 "Server address: \$server_addr:\$server_port\nServer name: \$hostname\nDate: \$time_local\nURI: \$request_uri\nRequest ID: \$request_id\n";
    }
  }
}
CONF'
tools_key=$(printf '%s\n' "$SUITE" "$TOOLS_PACKAGES" "$TOOLS_HOOK" | key)
tools_tar=$CACHE/data-path-tools-$tools_key.tar
if [ ! -f "$tools_tar" ]; then
  step "tools: mmdebstrap $SUITE ($TOOLS_PACKAGES)"
  mmdebstrap --quiet --variant=minbase --include="$TOOLS_PACKAGES" --customize-hook="$TOOLS_HOOK" \
    --aptopt='Acquire::Check-Valid-Until "false"' "$SUITE" "$CACHE/partial.tar" >&2
  mv "$CACHE/partial.tar" "$tools_tar"
fi
for old in "$CACHE"/data-path-tools-*.tar; do [ "$old" = "$tools_tar" ] || rm -f "$old"; done
LAYERS=localhost/mcs-testbed-layers
tools_image=$LAYERS:tools-$tools_key
if ! exists "$tools_image"; then
  add_tools() {
    buildah add --quiet "$1" "$tools_tar" / >/dev/null
    buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$1"
  }
  layer scratch "$tools_image" add_tools "mmdebstrap --variant=minbase $SUITE $TOOLS_PACKAGES"
fi
prune "$LAYERS" tools -- "$tools_image"

# variant NAME ENTRYPOINT CMD: the tools layer under the name pods ask for, with that image's entrypoint and command.
variant() {
  local name=$1 entrypoint=$2 cmd=$3
  configure() { buildah config --entrypoint "$entrypoint" --cmd "$cmd" "$1"; }
  final "$tools_image" "$name" configure "config of $name"
}
variant docker.io/nginxdemos/hello:plain-text '[]' '["nginx", "-c", "/etc/nginx/hello.conf"]'
variant docker.io/nicolaka/netshoot:v0.15 '[]' '["sh"]'
variant docker.io/alpine/socat:1.7.4.4 '["socat"]' '[]'

# ---------- one archive ----------
# A multi-image docker archive stores the shared tools layer once; `ctr images import` keeps every tag.
IMAGES=(registry.k8s.io/pause:3.10 docker.io/nginxdemos/hello:plain-text docker.io/nicolaka/netshoot:v0.15 docker.io/alpine/socat:1.7.4.4)
podman save --quiet --format docker-archive -m -o "$OUT.tmp/images.tar" "${IMAGES[@]}"
printf '%s\n' "${IMAGES[@]}" > "$OUT.tmp/images.list"
echo "$input_key" > "$OUT.tmp/key"
rm -rf "$OUT" && mv "$OUT.tmp" "$OUT"
step "data-path images ready in $(( $(date +%s) - started ))s: $(cut -f1 "$OUT/images.list" | xargs)"
echo "$OUT"
