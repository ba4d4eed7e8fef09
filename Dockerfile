# compactd image: `docker build -t compactd .` then `docker run compactd start|api|worker|migrate|llm-sim`.
# Three stages: `build` compiles src/ to dist/ with the dev dependencies, `deps` installs the
# runtime dependencies alone, and the slim runtime image carries both plus the files read
# at run time (migrations, the demo's sample session). No TypeScript runs in the image.
# Both installs skip lifecycle scripts: the project's `prepare` (the build) would run before
# the sources are copied, and the one runtime dependency with an install script
# (msgpackr-extract) only compiles when its prebuilt binary is missing. The runtime install
# applies patches/ itself (what the skipped postinstall would do).

FROM node:22-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# the build's second step copies the inspector's script and stylesheet into dist/
COPY scripts/copy-inspector-assets.mjs ./scripts/
RUN npm run build

FROM node:22-bookworm AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Exactly the lockfile, runtime dependencies only; then the fixes in patches/ (the postinstall
# step a plain `npm ci` would run; patch-package is a runtime dependency).
COPY patches ./patches
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npx patch-package --error-on-fail

FROM node:22-bookworm-slim AS runtime
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node package.json ./
COPY --chown=node:node bin ./bin
COPY --chown=node:node migrations ./migrations
COPY --chown=node:node samples ./samples
USER node
# Inside a container the API must listen beyond loopback.
ENV HOST=0.0.0.0
EXPOSE 8080
ENTRYPOINT ["node", "bin/compactd.mjs"]
CMD ["start"]
