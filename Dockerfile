# syntax=docker/dockerfile:1
#
# ceiling's image: the one static binary on distroless, run as a non-root
# user (65532, distroless' "nonroot"). It is both the agent
# (`ceiling agent --listen :7070 ...`) and the coordinator (`ceiling run
# --agents ...`) of `ceiling k8s`; see docs/distributed.md.
#
#   docker build -t ceiling:dev .
#   docker build -t registry.example/ceiling:v1.2.3 --build-arg VERSION=v1.2.3 .
#   docker buildx build --platform linux/amd64,linux/arm64 -t registry.example/ceiling:v1.2.3 --push .

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY cmd ./cmd
COPY internal ./internal
ARG TARGETOS TARGETARCH VERSION=""
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X github.com/ceiling-dev/ceiling/internal/cli.Version=$VERSION" \
    -o /out/ceiling ./cmd/ceiling

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ceiling /ceiling
# Numeric, so that Kubernetes can check runAsNonRoot.
USER 65532:65532
EXPOSE 7070
ENTRYPOINT ["/ceiling"]
