# perfgate's image: the GitHub Action (action.yml: runs.using docker, image
# Dockerfile, args [action]) and `docker build -t perfgate .` alike. A release's
# image, ghcr.io/perfgate/perfgate, is Dockerfile.release: the release's own
# binaries on this file's final stage, which it repeats line for line (a test
# in internal/github compares them: change both together).
#
# Two stages: a Go toolchain builds one static binary, and the final image is
# that binary on an empty base (scratch) with only the CA certificates it
# needs to reach the GitHub API over HTTPS and an empty /tmp. perfgate talks
# to Docker through the Engine API on /var/run/docker.sock (which the runner
# mounts into every container action), so no docker CLI, shell or libc is in
# the image. scripts/image-check.sh builds the final stage from a local static
# build and runs it, where the golang image cannot be pulled.

# --- build stage ---
FROM golang:1.26-bookworm AS build
ARG VERSION=dev
WORKDIR /src
# Modules first: this layer is reused until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/perfgate/perfgate/internal/version.Version=${VERSION}" \
      -o /out/perfgate ./cmd/perfgate \
 && mkdir -p /out/skel/tmp \
 && chmod 1777 /out/skel/tmp

# --- final stage ---
# (scripts/image-check.sh builds everything from this marker to the end of the
# file, with each `COPY --from=build` taken from a local context instead.)
FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="perfgate" \
      org.opencontainers.image.description="Gate pull requests on LLM-serving performance and quality" \
      org.opencontainers.image.source="https://github.com/perfgate/perfgate" \
      org.opencontainers.image.url="https://github.com/perfgate/perfgate" \
      org.opencontainers.image.documentation="https://github.com/perfgate/perfgate/blob/main/docs/action.md" \
      org.opencontainers.image.version="${VERSION}"
# CA certificates: the GitHub API (comments, PR lookups) is HTTPS.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# An empty /tmp, mode 1777 (scratch has no directories at all). It is copied
# as an entry of a directory, so its mode is kept as it is in the build stage.
COPY --from=build /out/skel/ /
COPY --from=build /out/perfgate /usr/local/bin/perfgate
# PATH: a process stack's command (`perfgate sim …`) is looked up here.
ENV PATH=/usr/local/bin
# No USER line: GitHub runs a container action as root (it passes no --user),
# and root is what can use the runner's /var/run/docker.sock and write to the
# mounted /github/workspace, /github/home and the GITHUB_OUTPUT and
# GITHUB_STEP_SUMMARY files. Outside Actions, `docker run --user` works too.
ENTRYPOINT ["/usr/local/bin/perfgate"]
