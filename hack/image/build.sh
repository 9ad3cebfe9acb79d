#!/usr/bin/env bash
# `npm run image`: builds the production image mcs-cloudmap:<package.json version> into the local containers-storage,
# without a Docker daemon and without pulling from any image registry. It makes what the Dockerfile's final stage makes:
#   base     a distroless-like Debian root filesystem (libc, libstdc++, CA certificates; no shell, no package manager)
#            made by mmdebstrap from Debian's packages, plus /etc/passwd with the image's user
#   node     the Node 24 binary of the npm `node` package (the repository's dev dependency) as /usr/local/bin/node
#   deps     production dependencies only: `npm ci --omit=dev --ignore-scripts`, as the Dockerfile's deps stage
#   app      dist/ (`tsc -p tsconfig.build.json`) and package.json
# Each layer is its own image, tagged by a hash of its inputs, so a warm run only rebuilds what changed (usually the
# app layer, seconds). Caches live outside the repository: $MCS_CLOUDMAP_CACHE/image (default ~/.cache/mcs-cloudmap).
# Missing tools (buildah, podman, runc, mmdebstrap) are installed with apt-get when running as root.
#
# Usage: npm run image [-- --archive FILE]   (--archive also writes the image as an OCI archive, for `skopeo copy`)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
archive=$(archive_arg "$@")
need mmdebstrap:mmdebstrap

# The final stage of the Dockerfile says the same (test/e2e/image.test.ts compares the built image with it).
UID_GID=1000:1000
WORKDIR=/app
IMAGE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SUITE=bookworm
BASE_PACKAGES=libc6,libstdc++6,ca-certificates
LAYERS=localhost/mcs-cloudmap-layers

NODE_BIN=$REPO/node_modules/node/bin/node
[ -x "$NODE_BIN" ] || fail "$NODE_BIN is missing: run 'npm ci' first (Node 24 is the npm 'node' dev dependency)"
VERSION=$("$NODE_BIN" -p 'require(process.argv[1]).version' "$REPO/package.json")
IMAGE=localhost/mcs-cloudmap:$VERSION

# ---------- base: a root filesystem from Debian's packages ----------
# The extract variant unpacks the packages and their dependencies without running maintainer scripts or installing
# dpkg/apt/a shell (so customize hooks do not run); the extract hook does the one thing a script would (the CA bundle)
# and adds the image's user.
BASE_HOOK='set -e
rm -rf "$1"/usr/share/doc "$1"/usr/share/man "$1"/usr/share/info "$1"/usr/share/locale "$1"/usr/share/lintian
cat "$1"/usr/share/ca-certificates/mozilla/*.crt > "$1"/etc/ssl/certs/ca-certificates.crt
printf "root:x:0:0:root:/root:/usr/sbin/nologin\nnode:x:1000:1000:node:/home/node:/usr/sbin/nologin\n" > "$1"/etc/passwd
printf "root:x:0:\nnode:x:1000:\n" > "$1"/etc/group
mkdir -p "$1"/tmp "$1"/home/node "$1"/root
chmod 1777 "$1"/tmp
chown 1000:1000 "$1"/home/node'
base_key=$(printf '%s\n' "$SUITE" "$BASE_PACKAGES" "$BASE_HOOK" | key)
base_tar=$CACHE/base-$base_key.tar
if [ ! -f "$base_tar" ]; then
  step "base: mmdebstrap $SUITE ($BASE_PACKAGES) → $base_tar"
  # mmdebstrap picks the output format by the file's extension: the partial file must end in .tar too.
  mmdebstrap --quiet --variant=extract --include="$BASE_PACKAGES" --extract-hook="$BASE_HOOK" \
    --aptopt='Acquire::Check-Valid-Until "false"' "$SUITE" "$CACHE/partial.tar" >&2
  mv "$CACHE/partial.tar" "$base_tar"
fi
base_image=$LAYERS:base-$base_key
if ! exists "$base_image"; then
  step "base: importing $base_tar"
  add_base() { buildah add --quiet "$1" "$base_tar" / >/dev/null; }
  layer scratch "$base_image" add_base "mmdebstrap --variant=extract $SUITE $BASE_PACKAGES"
fi

# ---------- node ----------
node_version=$("$NODE_BIN" --version)
node_image=$LAYERS:node-$( { echo "$base_key"; sha256sum < "$NODE_BIN"; } | key)
if ! exists "$node_image"; then
  step "node: $node_version from the npm 'node' package"
  add_node() {
    buildah copy --quiet --chmod 0755 "$1" "$NODE_BIN" /usr/local/bin/node >/dev/null
    buildah config --env PATH=$IMAGE_PATH "$1"
  }
  layer "$base_image" "$node_image" add_node "node $node_version (npm package node)"
fi

# ---------- deps: production dependencies only ----------
# The lockfile alone decides what `npm ci` installs (its root entry repeats package.json's dependencies; npm ci refuses
# a package.json that disagrees), so editing scripts in package.json does not rebuild this layer.
deps_key=$(key < "$REPO/package-lock.json")
deps_dir=$CACHE/deps-$deps_key
if [ ! -d "$deps_dir/node_modules" ]; then
  step "deps: npm ci --omit=dev into $deps_dir"
  rm -rf "$deps_dir.tmp" && mkdir -p "$deps_dir.tmp"
  cp "$REPO/package.json" "$REPO/package-lock.json" "$deps_dir.tmp/"
  (cd "$deps_dir.tmp" && PATH=$(dirname "$NODE_BIN"):$PATH npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  rm -rf "$deps_dir" && mv "$deps_dir.tmp" "$deps_dir"
fi
deps_image=$LAYERS:deps-$( { echo "$node_image"; echo "$deps_key"; } | key)
if ! exists "$deps_image"; then
  step "deps: layer of $(du -sh "$deps_dir/node_modules" | cut -f1) node_modules"
  add_deps() { buildah copy --quiet --chown "$UID_GID" "$1" "$deps_dir/node_modules" "$WORKDIR/node_modules" >/dev/null; }
  layer "$node_image" "$deps_image" add_deps "npm ci --omit=dev --ignore-scripts"
fi

# ---------- app: dist/ and package.json ----------
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
step "app: tsc -p tsconfig.build.json"
(cd "$REPO" && "$NODE_BIN" node_modules/@typescript/native/bin/tsc -p tsconfig.build.json --outDir "$stage/dist")
add_app() {
  buildah copy --quiet --chown "$UID_GID" "$1" "$stage/dist" "$WORKDIR/dist" >/dev/null
  buildah copy --quiet --chown "$UID_GID" "$1" "$REPO/package.json" "$WORKDIR/package.json" >/dev/null
  buildah config --env NODE_ENV=production --workingdir "$WORKDIR" --user "$UID_GID" \
    --cmd '["node", "dist/src/cli/main.js", "--help"]' --entrypoint '[]' \
    --label org.opencontainers.image.title=mcs-cloudmap --label org.opencontainers.image.version="$VERSION" "$1"
}
final "$deps_image" "$IMAGE" add_app "tsc -p tsconfig.build.json: dist/, package.json"

for old in "$CACHE"/base-*.tar "$CACHE"/deps-*; do
  case $old in "$base_tar" | "$deps_dir") ;; *) rm -rf "$old" ;; esac
done
prune "$LAYERS" deps node base -- "$base_image" "$node_image" "$deps_image"
report "$IMAGE" "$archive"
