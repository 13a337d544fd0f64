# syntax=docker/dockerfile:1
# One Node.js release for both stages, pinned to the patch version (for a reproducible production image, pin the
# digest as well: node:20.20.2-bookworm-slim@sha256:<digest from `docker buildx imagetools inspect`>).
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

# Build stage: native modules (better-sqlite3) need a compiler; the result is pruned to production packages and
# the compiled addon alone (scripts/prune-native-builds.sh), so no build tree reaches the final image.
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && sh scripts/prune-native-builds.sh node_modules \
 && node scripts/write-module-map.js

# Runtime stage: git (repositories are real git repositories on disk), a non-root user, data in a volume.
FROM ${NODE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Set ROOT_URL to the address people and clients use (every absolute URL in the API comes from it).
ENV NODE_ENV=production \
    DATA_DIR=/data \
    PORT=3000
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/assets ./assets
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000 2222
HEALTHCHECK --interval=30s --timeout=3s --start-period=30s CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/api/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--max-semi-space-size=24", "dist/src/main.js"]
