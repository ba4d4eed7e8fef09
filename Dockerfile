# compactd image: `docker build -t compactd .` then `docker run compactd start|api|worker|migrate|llm-sim`.
# The service runs its TypeScript sources through tsx (a runtime dependency), so there is no
# compile step: the first stage installs the locked dependencies, the second carries them
# into a slim image with the sources only.

FROM node:20-bookworm AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The postinstall step (patch-package) applies these fixes to locked dependencies.
COPY patches ./patches
# Exactly the lockfile, runtime dependencies only. The full image has the toolchain in case
# a native optional dependency has no prebuilt binary for the platform.
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node package.json tsconfig.json ./
COPY --chown=node:node bin ./bin
COPY --chown=node:node src ./src
COPY --chown=node:node migrations ./migrations
# The sample session `compactd demo` falls back to when the shared transcripts are absent.
COPY --chown=node:node test/fixtures/transcripts ./test/fixtures/transcripts
USER node
# Inside a container the API must listen beyond loopback.
ENV HOST=0.0.0.0
EXPOSE 8080
ENTRYPOINT ["node", "bin/compactd.mjs"]
CMD ["start"]
