# The kube engine's image: cnibench (controller, node agent and exec shim)
# plus the workload tools. For clusters without a registry, build the same
# image as a tarball instead: `cnibench kube image --out cnibench.tar`.
#
#   docker build -t registry.example.com/cnibench:v0 .
#   docker push registry.example.com/cnibench:v0
#   cnibench run rps-rfs --engine kube --image registry.example.com/cnibench:v0
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/cnibench ./cmd/cnibench

FROM debian:bookworm-slim
# iptables ships iptables-legacy-save and iptables-nft-save beside the
# default iptables-save: the agent reads the backend holding a node's rules.
RUN apt-get update \
 && apt-get install -y --no-install-recommends iperf3 sockperf qperf apache2-utils nginx-light \
      util-linux coreutils ethtool iptables nftables iproute2 linux-perf \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/cnibench /usr/local/bin/cnibench
CMD ["/usr/local/bin/cnibench", "agent", "pause"]
