# syntax=docker/dockerfile:1
# Node.js: the `image` release of scripts/node-versions, the line CI runs the whole suite on
# (test/deploy-files.e2e-spec.ts checks that every FROM names it).

# --- build: full dependencies, compile TypeScript and the API reference page to dist/ ---------------
FROM node:26.12.1-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
COPY migrations ./migrations
# scripts/api-reference.ts writes the API reference page (dist/api-reference/) with Redocly, a
# build-time tool: the runtime stage gets the page, not the tool.
COPY scripts ./scripts
COPY redocly.yaml ./
RUN npm run build

# --- runtime: production dependencies and the compiled dist/ only, as the unprivileged node user ---
FROM node:26.12.1-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
# Liveness only: readiness (PostgreSQL + Redis) is for the orchestrator's routing decisions.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Runs dist/ without migrating; the compose file runs migrations as a one-shot service first.
# A young generation of up to 64 MB a semi-space (V8's default follows the heap limit: 16 MB on
# Node 20, 32 on Node 26 with a 4 GB heap): with less, a worker draining a backlog slowed other
# clients' reads on a two-core host (docs/performance.md).
CMD ["node", "--max-semi-space-size=64", "dist/src/main.js"]
