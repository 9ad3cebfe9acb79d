#!/usr/bin/env bash
# `npm run image:coredns`: the CoreDNS image of dns/Dockerfile (CoreDNS with the clusterset plugin, docs/dns.md) built
# the way `npm run image` builds the main one: no daemon, no registry. One layer from scratch, as distroless/static:
# /coredns (static, CGO off, the Dockerfile's flags) with the file capability to bind port 53, and /etc/passwd with the
# `nonroot` user (65532) it runs as. The binary is cached by a hash of dns/'s Go sources and module files.
#
# Usage: npm run image:coredns [-- --archive FILE]
set -euo pipefail
USAGE=image:coredns
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
archive=$(archive_arg "$@")
need go:golang-go setcap:libcap2-bin

VERSION=$(cd "$REPO" && node_modules/node/bin/node -p 'require("./package.json").version')
IMAGE=localhost/mcs-cloudmap-coredns:$VERSION
sources=$(cd "$REPO" && find dns -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) | LC_ALL=C sort | xargs sha256sum | key)
root=$CACHE/coredns-$sources
if [ ! -x "$root/coredns" ]; then
  step "coredns: go build ./cmd/coredns (dns/ at $sources)"
  rm -rf "$root.tmp" && mkdir -p "$root.tmp/etc"
  (cd "$REPO/dns" && CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags "-s -w" -o "$root.tmp/coredns" ./cmd/coredns)
  setcap cap_net_bind_service=+ep "$root.tmp/coredns"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$root.tmp/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "$root.tmp/etc/group"
  rm -rf "$root" && mv "$root.tmp" "$root"
fi
for old in "$CACHE"/coredns-*; do [ "$old" = "$root" ] || rm -rf "$old"; done

add_coredns() {
  # buildah copy keeps the file capability (security.capability) of /coredns.
  buildah copy --quiet "$1" "$root/coredns" /coredns >/dev/null
  buildah copy --quiet "$1" "$root/etc" /etc >/dev/null
  buildah config --user 65532:65532 --entrypoint '["/coredns"]' --cmd '[]' --port 53 --port 53/udp \
    --label org.opencontainers.image.title=mcs-cloudmap-coredns --label org.opencontainers.image.version="$VERSION" "$1"
}
final scratch "$IMAGE" add_coredns "go build ./cmd/coredns (dns/, clusterset plugin), setcap cap_net_bind_service"
report "$IMAGE" "$archive"
