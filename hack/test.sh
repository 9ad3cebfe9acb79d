#!/usr/bin/env bash
# The whole test suite (README's `npm test`): installs the testbed binaries (cached outside the repository), type-checks,
# then runs unit, integration and end-to-end tests in parallel lanes (hack/test-lanes.ts): each lane is one mocha
# process whose integration and e2e suites share one 2-cluster ClusterSet (test/support/clusterset.ts; root hooks from
# .mocharc.json stop it at the end). When a test fails the ClusterSet's component logs are kept and their path is
# printed. `npm test -- FILE...` runs only those files (no lint or format check); `--lanes N` sets the number of lanes.
# The production image is built first (npm run image) so the end-to-end tests also run the processes from it.
set -euo pipefail
cd "$(dirname "$0")/.."
# Root's tools (setcap, iptables, sysctl, runc) live in sbin directories that a shell that is not a login shell, or a CI
# runner, may leave off PATH.
for d in /usr/local/sbin /usr/sbin /sbin; do case ":$PATH:" in *":$d:"*) ;; *) PATH="$PATH:$d" ;; esac; done
export PATH

# The production image for test/e2e/image.test.ts (hack/image/; as root it apt-get installs its tools; warm runs take
# seconds). Without root and without buildah it cannot be built: in CI (CI=true) that fails here, before the install,
# so a broken image build is never hidden behind a skipped test; a local run goes on and image.test.ts says it skipped
# (test/support/prerequisites.ts).
build_images=true
if [ "$EUID" != 0 ] && ! command -v buildah >/dev/null 2>&1; then
  case "${CI:-}" in
    true | TRUE | True | 1) echo "[test] CI=${CI}: cannot build the images (not root and no buildah on PATH); install buildah or run as root" >&2; exit 1 ;;
  esac
  echo "[test] SKIPPING the image build (not root and no buildah): test/e2e/image.test.ts will be skipped; in CI this fails" >&2
  build_images=false
fi
# Lint and format check first (docs/testing.md "Lint and format"): a finding fails the run before the testbed, the image
# and the lanes. A run of chosen files (`npm test -- FILE...`) leaves them out; `npm run lint` and
# `npm run format:check` run them alone.
all_files=true
for arg in "$@"; do case "$arg" in *.ts) all_files=false ;; esac; done
if [ "$all_files" = true ]; then
  npm run -s lint || { echo "[test] lint failed: fix the findings above (\`npm run lint\` shows them again; \`npx eslint --fix .\` fixes some)" >&2; exit 1; }
  npm run -s format:check -- --reporter=summary || { echo "[test] files not formatted as biome.json says (listed above): run \`npm run format\`" >&2; exit 1; }
fi
bash hack/install-testbed.sh
if [ "$build_images" = true ]; then
  bash hack/image/build.sh >/dev/null
fi
npx tsc -p tsconfig.json

# Unit, integration and end-to-end files in parallel lanes, each lane with its own ClusterSet (hack/test-lanes.ts).
exec node hack/test-lanes.ts "$@"
