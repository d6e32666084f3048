# Herald's container image: docker build -t herald . && docker run -p 8080:8080 -v herald:/data herald
# The first start prints the API key and the owner's setup link (docker logs). docs/operations.md,
# "Containers", has the rest: compose.yaml with PostgreSQL, backups, upgrades.

# Build: dependencies, the console and the server compiled, then development packages dropped.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY . .
# A registry reached through a TLS-intercepting proxy needs its CA: pass it as a build secret
# (docker build --secret id=npm_ca,src=/path/ca.pem); it is never part of an image.
RUN --mount=type=secret,id=npm_ca,required=false \
    if [ -f /run/secrets/npm_ca ]; then \
      export npm_config_cafile=/run/secrets/npm_ca NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; \
    fi; \
    npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

# Run: the build only, as an unprivileged user, data in a volume.
FROM node:24-bookworm-slim
RUN groupadd --system --gid 10001 herald \
 && useradd --system --uid 10001 --gid herald --home-dir /data --no-create-home herald \
 && mkdir -p /data && chown herald:herald /data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules/
COPY --from=build /app/dist dist/
COPY --from=build /app/web/dist web/dist/
COPY --from=build /app/scripts/run.mjs /app/scripts/check-node.cjs scripts/
ENV NODE_ENV=production \
    HERALD_DATA_DIR=/data \
    HERALD_HOST=0.0.0.0 \
    HERALD_PORT=8080 \
    HERALD_LOG_FORMAT=json
USER herald
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HERALD_PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node runs as PID 1: Herald handles SIGTERM itself (drain, then PostgreSQL's clean shutdown).
STOPSIGNAL SIGTERM
CMD ["node", "dist/server/src/main.js"]
