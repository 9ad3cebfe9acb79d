#!/usr/bin/env bash
# The whole test suite: installs the testbed binaries (cached outside the repository), type-checks, then runs
# unit, integration and end-to-end tests. Component logs of failed tests are kept and their path printed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash hack/install-testbed.sh
npx tsc -p tsconfig.json
npx mocha 'test/unit/**/*.test.ts' 'test/integration/**/*.test.ts' 'test/e2e/**/*.test.ts'
