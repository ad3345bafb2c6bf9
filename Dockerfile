# mcpbridge as a container: a static binary on distroless, run as non-root.
#
#   docker build -t mcpbridge .
#   docker run --rm -p 7410:7410 -e MCPBRIDGE_TOKEN=… mcpbridge
#
# The image has no shell and no language runtime: it suits Streamable HTTP
# backends (transport: streamable-http) and the built-in demo server. For
# stdio servers, build FROM an image that has their runtime (node for npx,
# python for uvx) and copy /mcpbridge into it; keep USER non-root, and run
# it with an init (docker run --init, or tini): as PID 1 mcpbridge reaps
# its own children only, not their orphans.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO off: a static binary that needs no libc in the final image.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/mcpbridge ./cmd/mcpbridge

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcpbridge /mcpbridge
# nonroot (65532) from the base image: no root, no shell.
USER 65532:65532
EXPOSE 7410 9464
# A non-loopback address needs the token (--token-env); /metrics also on
# its own port for the scraper. Override the config with --config or
# MCPBRIDGE_CONFIG (the Kubernetes manifests mount a ConfigMap).
ENTRYPOINT ["/mcpbridge"]
CMD ["serve", "--http", "0.0.0.0:7410", "--stateless", "--token-env", "MCPBRIDGE_TOKEN", "--metrics-addr", "0.0.0.0:9464", "--log-format", "json"]
