# syntax=docker/dockerfile:1
# The exporter as an image: compiled with the full tree, run with production dependencies
# only. The embedded engine (chdb, an optional dependency) stays out of the runtime image: in
# a container the exporter talks to a ClickHouse server (CLICKHOUSE_URL).
#
#   docker build -t sessionhouse:0.1.0 .
#   docker run --rm sessionhouse:0.1.0 --help
#
# The variant that keeps the embedded engine, for a trial on a volume (about 500 MB more; the
# Kubernetes overlay deploy/kubernetes/overlays/embedded runs it):
#
#   docker build --build-arg WITH_EMBEDDED=true -t sessionhouse:0.1.0-embedded .
#
# The variant that also prints compliance reports as PDF carries Debian's Chromium (about
# 300 MB more):
#
#   docker build --build-arg WITH_CHROMIUM=true -t sessionhouse:0.1.0-chromium .

# One Node.js release for both stages: package.json asks for >= 20.19.
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are copied. Optional
# dependencies stay: the compiler resolves the types of chdb's dynamic import.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
# true: Debian's Chromium and a font, for `sessionhouse report` to write report.pdf.
ARG WITH_CHROMIUM=false
# true: the optional dependencies too, which are the embedded engine (chdb and its library).
ARG WITH_EMBEDDED=false
ENV NODE_ENV=production
WORKDIR /app
RUN if [ "$WITH_CHROMIUM" = "true" ]; then \
      apt-get update \
      && apt-get install -y --no-install-recommends chromium fonts-dejavu-core \
      && rm -rf /var/lib/apt/lists/*; \
    fi
COPY package.json package-lock.json ./
# The production tree only: no dev dependencies, no optional ones (chdb) unless WITH_EMBEDDED,
# no install scripts (`prepare` needs the compiler, which is a dev dependency; chdb's library
# comes prebuilt in its platform package).
RUN if [ "$WITH_EMBEDDED" = "true" ]; then omit_optional=""; else omit_optional="--omit=optional"; fi \
    && npm ci --omit=dev $omit_optional --ignore-scripts --no-audit --no-fund \
    && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY migrations ./migrations
COPY detections ./detections
# The image's own unprivileged user, node, by its number: Kubernetes' runAsNonRoot can check a
# number only. Nothing under /app is writable by it, and the exporter writes nothing outside
# the directories it is given (the embedded data directory, report directories) and the
# temporary directory, so the root file system may be read-only (deploy/kubernetes does so).
USER 1000:1000
# /healthz, /readyz and /metrics of `sessionhouse run` (SESSIONHOUSE_OPS_HOST must be 0.0.0.0
# to reach them from outside the container).
EXPOSE 9464
ENTRYPOINT ["node", "bin/sessionhouse.js"]
CMD ["run"]
