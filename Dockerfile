# syntax=docker/dockerfile:1
# One image for both processes of mcs-cloudmap; the Deployments choose the process (kustomize/base):
#   node dist/src/webhook/main.js  admission and conversion webhook server
#   node dist/src/worker/main.js   reconcile worker
#   node dist/src/cli/main.js      the `mcs-cloudmap status` command (the default command)
#
# Build and push (docs/install.md):
#   docker build -t <registry>/mcs-cloudmap:0.1.0 .
#   docker push <registry>/mcs-cloudmap:0.1.0
# then set the image in your overlay: `kustomize edit set image mcs-cloudmap=<registry>/mcs-cloudmap:0.1.0`.
# Without a Docker engine or registry, `npm run image` builds the same final stage (hack/image/build.sh).
ARG NODE_IMAGE=node:24-bookworm-slim

# Compiles TypeScript to dist/ (tsc and the other dev dependencies stay in this stage).
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Production dependencies only; none of them needs an install script.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
# The image's unprivileged `node` user, by number so runAsNonRoot can verify it.
USER 1000:1000
CMD ["node", "dist/src/cli/main.js", "--help"]
