# Shared by the image scripts (build.sh, data-path.sh): tools, caches, and committing one layer at a time with buildah.
# Sourced, not run.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Root's tools (setcap, iptables, sysctl, runc) live in sbin directories that a shell that is not a login shell, or a CI
# runner, may leave off PATH.
for d in /usr/local/sbin /usr/sbin /sbin; do case ":$PATH:" in *":$d:"*) ;; *) PATH="$PATH:$d" ;; esac; done
export PATH
CACHE=${MCS_CLOUDMAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcs-cloudmap}/image
mkdir -p "$CACHE"
started=$(date +%s)

step() { printf '[image] %s\n' "$*" >&2; }
fail() { printf '[image] ERROR: %s\n' "$*" >&2; exit 1; }

# need COMMAND:PACKAGE...: installs the Debian packages of missing commands with apt-get (root only).
need() {
  local missing=() tool
  for tool in "$@"; do command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}"); done
  [ ${#missing[@]} -eq 0 ] && return
  [ "$EUID" = 0 ] || fail "missing ${missing[*]}: install them (apt-get install ${missing[*]}) or run as root"
  step "installing ${missing[*]} with apt-get"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}
need buildah:buildah podman:podman runc:runc
# runc and the rlimits this sandbox allows (docs/testbed.md "Container runtime").
export CONTAINERS_CONF=${CONTAINERS_CONF:-$REPO/hack/image/containers.conf}

key() { sha256sum | cut -c1-16; }
exists() { buildah inspect --type image "$1" >/dev/null 2>&1; }

# layer FROM TO FILL WHAT: runs `FILL <container>` on a working container made from FROM (an image or scratch), then
# commits it as TO; WHAT says what the layer holds in the image's history.
layer() {
  local from=$1 to=$2 fill=$3 what=$4
  local ctr; ctr=$(buildah from --pull=never "$from")
  trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' RETURN
  "$fill" "$ctr"
  buildah config --created-by "$what" "$ctr"
  buildah commit -q --rm "$ctr" "$to" >/dev/null
  trap - RETURN
}

# final FROM IMAGE FILL WHAT: the tagged image, as layer; the image it replaced (now untagged) is removed so repeated
# builds do not pile up.
final() {
  local previous; previous=$(buildah inspect --type image --format '{{.FromImageID}}' "$2" 2>/dev/null || true)
  layer "$@"
  local current; current=$(buildah inspect --type image --format '{{.FromImageID}}' "$2")
  if [ -n "$previous" ] && [ "$previous" != "$current" ]; then buildah rmi "$previous" >/dev/null 2>&1 || true; fi
}

# prune REPOSITORY KIND... -- KEEP...: removes the tags REPOSITORY:<kind>-* not in KEEP (layers of inputs no key reaches
# any more), children first: give the kinds in that order.
prune() {
  local repository=$1 kind tag; shift
  local kinds=() keep=" "
  while [ $# -gt 0 ] && [ "$1" != -- ]; do kinds+=("$1"); shift; done
  shift
  keep+="$* "
  local tags; tags=$(buildah images --format '{{.Name}}:{{.Tag}}' | grep "^$repository:" || true)
  for kind in "${kinds[@]}"; do
    for tag in $(grep ":$kind-" <<<"$tags"); do
      [[ $keep == *" $tag "* ]] || buildah rmi "$tag" >/dev/null 2>&1 || true
    done
  done
}

# report IMAGE [ARCHIVE]: writes the OCI archive if asked, prints the size and the layers, and IMAGE on stdout.
report() {
  local image=$1 archive=${2:-}
  if [ -n "$archive" ]; then
    rm -f "$archive"
    buildah push --quiet "$image" "oci-archive:$archive:${image#localhost/}" >&2
    step "OCI archive: $archive ($(du -h "$archive" | cut -f1))"
  fi
  local size; size=$(podman image inspect --format '{{.Size}}' "$image")
  step "built $image in $(( $(date +%s) - started ))s: $(( size / 1000000 )) MB uncompressed, layers:"
  podman history --no-trunc --format '  {{.Size}}\t{{.CreatedBy}}' "$image" >&2
  echo "$image"
}

# archive_arg "$@": the FILE of `--archive FILE`, the scripts' only option.
archive_arg() {
  [ $# -eq 0 ] && return
  if [ $# -eq 2 ] && [ "$1" = --archive ] && [ -n "$2" ]; then echo "$2"; return; fi
  fail "unknown arguments $*; usage: npm run ${USAGE:-image} [-- --archive FILE]"
}
