# One image for all three apps (and the migrate job). The app is chosen at run time:
#   docker build -t ask-service .
#   docker run ask-service                                        # APP=api-gateway (default)
#   docker run -e APP=retrieval-worker ask-service
#   docker run ask-service node tools/run-ts.js apps/synthesis-worker/src/main.ts
#   docker run ask-service npm run migrate
# `docker build --build-arg APP=synthesis-worker` bakes another default in.
#
# The apps have no build step: tools/run-ts.js compiles the TypeScript with SWC as it is required, so
# the image keeps the devDependencies (@swc/core, @swc-node/register) that do that. Only the dashboard
# is bundled (Vite) at build time.
FROM node:20-bookworm-slim

WORKDIR /app

# Dependencies first, so a source change does not reinstall them. Full `npm ci` (not --omit=dev):
# run-ts.js needs @swc-node/register at run time.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund && npm cache clean --force

COPY . .
# The dashboard the gateway serves at `/` (apps/dashboard/dist).
RUN npx nx run dashboard:build --skip-nx-cache

ARG APP=api-gateway
ENV APP=${APP} \
    NX_DAEMON=false

USER node

# Gateway HTTP port; the workers' health/metrics ports are 3101 (retrieval) and 3102 (synthesis).
EXPOSE 3000 3101 3102

CMD ["sh", "-c", "exec node tools/run-ts.js \"apps/${APP}/src/main.ts\""]
