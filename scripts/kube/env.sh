# Shared settings of the two-node test cluster (sourced by up.sh, down.sh).
KUBE_VERSION=${KUBE_VERSION:-v1.33.13}
CACHE=${CNIBENCH_KUBE_CACHE:-/var/cache/cnibench-kube}
BIN="$CACHE/bin/$KUBE_VERSION"
STATE=${CNIBENCH_KUBE_STATE:-/var/lib/cnibench-kube}
RUNDIR=${CNIBENCH_KUBE_RUN:-/run/cnibench-kube}
CP_NS=cnbk-cp          # control plane + the "switch" (bridge br0)
CP_IP=10.77.0.1
NODES=(cnbk-n1 cnbk-n2)
declare -A NODE_IP=([cnbk-n1]=10.77.0.11 [cnbk-n2]=10.77.0.12)
declare -A NODE_PODCIDR=([cnbk-n1]=10.244.1.0/24 [cnbk-n2]=10.244.2.0/24)
declare -A NODE_LABEL=([cnbk-n1]=iperf=server [cnbk-n2]=iperf=client)
SERVICE_CIDR=10.96.0.0/16
SERVICE_IP=10.96.0.1
CLUSTER_CIDR=10.244.0.0/16
IMAGE=${CNIBENCH_KUBE_IMAGE:-docker.io/cnibench/cnibench:e2e}
PAUSE_IMAGE=docker.io/cnibench/pause:e2e
KUBECONFIG_ADMIN="$STATE/pki/admin.kubeconfig"
