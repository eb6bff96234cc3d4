# Multi-stage build of drconsole: a cgo build (SQLite through
# mattn/go-sqlite3), statically linked, in a small non-root runtime image.
# It mirrors `make build`. No Docker engine runs where this project is
# developed, so this file has not been built here (see README).

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# sqlite_omit_load_extension drops dlopen so the static link is clean;
# netgo and osusergo keep net and os/user off glibc's NSS.
RUN CGO_ENABLED=1 go build -trimpath \
      -tags 'sqlite_omit_load_extension netgo osusergo' \
      -ldflags "-s -w -X main.version=${VERSION} -linkmode external -extldflags -static" \
      -o /out/drconsole . && \
    mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/drconsole /usr/local/bin/drconsole
# The SQLite database (offset-sync history, lag history) lives here: keep it
# on a volume so a restarted console still has what a failover needs. The
# directory is created owned by nonroot (65532): a new volume copies its
# owner, so the console can write there (set data_dir to it).
COPY --from=build --chown=65532:65532 /out/data /var/lib/drconsole
VOLUME ["/var/lib/drconsole"]
EXPOSE 8080
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/drconsole"]
CMD ["serve", "--config", "/etc/drconsole/drconsole.yaml"]
