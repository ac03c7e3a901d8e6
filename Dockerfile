# syntax=docker/dockerfile:1
#
# The fleetform image: `docker build -t fleetform --build-arg VERSION=v1.2.3 .`
# It runs `fleetform serve` by default (see docs/serve.md); any other command works too:
# `docker run --rm fleetform version`.

ARG GO_VERSION=1.27.3
ARG ALPINE_VERSION=3.22

# Build stage: a static binary (CGO_ENABLED=0: the SQLite driver, modernc.org/sqlite, is
# pure Go), cross-compiled on the build machine's platform for the target's.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ENV GOTOOLCHAIN=local
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG TARGETOS
ARG TARGETARCH
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w -X github.com/fleetform/fleetform/internal/cli.version=${VERSION}" -o /out/fleetform ./cmd/fleetform

# Runtime stage: Alpine, not distroless or scratch. fleetform writes to GitOps repositories
# with the git CLI, and git over HTTPS needs its remote helpers, libcurl and CA certificates:
# distroless and scratch images have no git, and there is no maintained static git to copy
# into them. Alpine's git is small and patched with the
# distribution. tini runs as PID 1: it forwards SIGTERM to fleetform (which finishes the
# apply in flight) and reaps the git helpers a cancelled git leaves behind. The image has no
# SSH client: it reaches repositories over HTTPS with tokens (docs/security.md).
FROM alpine:${ALPINE_VERSION}
ARG VERSION=dev
LABEL org.opencontainers.image.title="fleetform" \
      org.opencontainers.image.description="Fleet workload and configuration management, the GitOps way" \
      org.opencontainers.image.source="https://github.com/fleetform/fleetform" \
      org.opencontainers.image.version="${VERSION}"
RUN apk add --no-cache ca-certificates git tini \
    && addgroup -S -g 65532 fleetform \
    && adduser -S -D -H -u 65532 -G fleetform -h /data -s /sbin/nologin fleetform \
    && mkdir -p /data \
    && chown 65532:65532 /data \
    && chmod 0700 /data
COPY --from=build /out/fleetform /usr/local/bin/fleetform
# HOME is the data folder: git and the cache of the other commands write under it, and the
# rest of the file system may be read-only.
ENV HOME=/data
WORKDIR /data
VOLUME ["/data"]
USER 65532:65532
EXPOSE 8080
# /healthz answers as soon as the process serves; Kubernetes ignores HEALTHCHECK and uses the
# chart's probes on /healthz and /readyz instead. The check assumes the default --addr.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/sbin/tini", "--", "/usr/local/bin/fleetform"]
CMD ["serve", "--addr", "0.0.0.0:8080", "--data-dir", "/data"]
