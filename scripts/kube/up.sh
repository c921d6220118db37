#!/usr/bin/env bash
# Brings up a real two-node Kubernetes cluster on this machine for the
# kube engine's end-to-end test, following docs/kubernetes.md and the
# recipe in shared/docs/kubernetes-test-cluster.md:
#
#   netns cnbk-cp : etcd, kube-apiserver (10.77.0.1:6443), controller
#                   manager, scheduler, and bridge br0 (the "switch")
#   netns cnbk-n1 : containerd + kubelet + kube-proxy, eth1 10.77.0.11,
#                   pods 10.244.1.0/24 on cni0 (bridge plugin), label iperf=server
#   netns cnbk-n2 : the same, eth1 10.77.0.12, pods 10.244.2.0/24, iperf=client
#
# Pod networking between nodes: static routes (bridge + host-gw style).
# The host's own network is not touched; reach the API from the cnbk-cp
# namespace (scripts/kube/exec.sh CMD runs CMD there with KUBECONFIG set).
#
# Usage: scripts/kube/up.sh CNIBENCH_BINARY
# Needs root, Debian packages etcd-server containerd runc
# containernetworking-plugins iptables openssl curl, and Go (for the
# Kubernetes binaries, built once into the cache by build-binaries.sh).
# Works under cgroup v1 (a node cgroup in every hierarchy) and under the
# unified hierarchy alone (cgroup v2: one /sys/fs/cgroup/NODE); see cgroup.sh.
# On failure half a cluster may be up: scripts/kube/down.sh removes it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
. "$here/cgroup.sh"
CNIBENCH=${1:?usage: up.sh CNIBENCH_BINARY}
CNIBENCH=$(readlink -f "$CNIBENCH")

log() { echo "up: $(date +%T) $*"; }
[[ $(id -u) == 0 ]] || { echo "up: needs root" >&2; exit 2; }
need() { command -v "$1" >/dev/null || { echo "up: $1 is missing (apt-get install $2)" >&2; exit 2; }; }
need etcd etcd-server; need containerd containerd; need runc runc; need openssl openssl; need curl curl
need iptables iptables; need ctr containerd; need sysctl procps; need nsenter util-linux; need timeout coreutils
[[ -x /usr/lib/cni/bridge ]] || { echo "up: /usr/lib/cni/bridge missing (apt-get install containernetworking-plugins)" >&2; exit 2; }
[[ -x $CNIBENCH ]] || { echo "up: $CNIBENCH is not an executable cnibench binary" >&2; exit 2; }
if ip netns list | grep -qw "$CP_NS"; then
	echo "up: $CP_NS exists: a cluster is up (scripts/kube/down.sh first)" >&2
	exit 2
fi

"$here/build-binaries.sh" "$CACHE"
mkdir -p "$STATE"/{pki,logs} "$RUNDIR"

# --- certificates -----------------------------------------------------------
pki="$STATE/pki"
if [[ ! -f $pki/ca.crt ]]; then
	log "certificates"
	openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=cnibench-test-ca" \
		-keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
	cert() { # name CN O [SANs]
		local name=$1 cn=$2 o=$3 san=${4:-}
		local subj="/CN=$cn"; [[ -n $o ]] && subj="/O=$o/CN=$cn"
		openssl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$pki/$name.key" -out "$pki/$name.csr" 2>/dev/null
		local ext="$pki/$name.ext"
		{
			echo "basicConstraints=CA:FALSE"
			echo "keyUsage=critical,digitalSignature,keyEncipherment"
			echo "extendedKeyUsage=serverAuth,clientAuth"
			[[ -n $san ]] && echo "subjectAltName=$san"
		} >"$ext"
		openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
			-days 3650 -extfile "$ext" -out "$pki/$name.crt" 2>/dev/null
	}
	cert apiserver kube-apiserver "" "IP:$SERVICE_IP,IP:$CP_IP,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
	cert apiserver-kubelet kube-apiserver-kubelet-client system:masters
	cert admin admin system:masters
	cert controller-manager system:kube-controller-manager ""
	cert scheduler system:kube-scheduler ""
	cert proxy system:kube-proxy ""
	for n in "${NODES[@]}"; do cert "$n" "system:node:$n" system:nodes "IP:${NODE_IP[$n]},DNS:$n"; done
	openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
	openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
fi
kubeconfig() { # name user
	cat >"$pki/$1.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: cnibench-test
  cluster: {certificate-authority: $pki/ca.crt, server: "https://$CP_IP:6443"}
users:
- name: $2
  user: {client-certificate: $pki/$1.crt, client-key: $pki/$1.key}
contexts:
- name: cnibench-test
  context: {cluster: cnibench-test, user: $2}
current-context: cnibench-test
KC
}
kubeconfig admin admin
kubeconfig controller-manager system:kube-controller-manager
kubeconfig scheduler system:kube-scheduler
kubeconfig proxy system:kube-proxy
for n in "${NODES[@]}"; do kubeconfig "$n" "system:node:$n"; done

# --- network namespaces -----------------------------------------------------
log "network namespaces"
ip netns add "$CP_NS"
ip -n "$CP_NS" link set lo up
ip -n "$CP_NS" link add br0 type bridge
ip -n "$CP_NS" addr add "$CP_IP/24" dev br0
ip -n "$CP_NS" link set br0 up
ip netns exec "$CP_NS" sysctl -qw net.ipv4.ip_forward=1
for n in "${NODES[@]}"; do
	ip netns add "$n"
	ip -n "$n" link set lo up
	ip -n "$CP_NS" link add "$n" type veth peer name eth1 netns "$n"
	ip -n "$CP_NS" link set "$n" master br0 up
	ip -n "$n" addr add "${NODE_IP[$n]}/24" dev eth1
	ip -n "$n" link set eth1 up
	ip -n "$n" route add default via "$CP_IP"
	ip netns exec "$n" sysctl -qw net.ipv4.ip_forward=1
	# Pin a read-write sysfs of the node's namespace in the host's mount
	# namespace before any container exists: sysfs keeps one superblock
	# per network namespace, and the first (read-only) mount by a
	# host-network container would otherwise make it read-only for the
	# node agent too. On a real node the host's /sys is that mount.
	mkdir -p "$STATE/$n/sysfs"
	nsenter --net="/var/run/netns/$n" mount -t sysfs sysfs "$STATE/$n/sysfs"
	ip -n "$CP_NS" route add "${NODE_PODCIDR[$n]}" via "${NODE_IP[$n]}"
	for m in "${NODES[@]}"; do
		[[ $m == "$n" ]] || ip -n "$n" route add "${NODE_PODCIDR[$m]}" via "${NODE_IP[$m]}"
	done
done

start() { # name netns cmd...: runs in the background, logs and pid under STATE/RUNDIR
	local name=$1 ns=$2; shift 2
	if [[ -n $ns ]]; then
		setsid nsenter --net="/var/run/netns/$ns" "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null &
	else
		setsid "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null &
	fi
	echo $! >"$RUNDIR/$name.pid"
}

# --- control plane ----------------------------------------------------------
log "etcd"
rm -rf "$STATE/etcd"
start etcd "$CP_NS" etcd --name cnbk --data-dir "$STATE/etcd" \
	--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
	--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
	--initial-cluster cnbk=http://127.0.0.1:2380
log "kube-apiserver"
start kube-apiserver "$CP_NS" "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
	--bind-address=0.0.0.0 --secure-port=6443 --advertise-address="$CP_IP" \
	--service-cluster-ip-range="$SERVICE_CIDR" --client-ca-file="$pki/ca.crt" \
	--tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
	--kubelet-client-certificate="$pki/apiserver-kubelet.crt" --kubelet-client-key="$pki/apiserver-kubelet.key" \
	--kubelet-preferred-address-types=InternalIP \
	--service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
	--service-account-issuer=https://kubernetes.default.svc \
	--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --allow-privileged=true
api() { ip netns exec "$CP_NS" curl -fsS --max-time 5 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "https://$CP_IP:6443$1" "${@:2}"; }
for i in $(seq 1 240); do
	if api /readyz >/dev/null 2>&1; then break; fi
	if ! kill -0 "$(cat "$RUNDIR/kube-apiserver.pid")" 2>/dev/null; then
		echo "up: kube-apiserver exited:" >&2; tail -20 "$STATE/logs/kube-apiserver.log" >&2; exit 1
	fi
	sleep 0.5
done
api /readyz >/dev/null
log "apiserver ready"
start kube-controller-manager "$CP_NS" "$BIN/kube-controller-manager" --kubeconfig="$pki/controller-manager.kubeconfig" \
	--use-service-account-credentials --leader-elect=false --root-ca-file="$pki/ca.crt" \
	--service-account-private-key-file="$pki/sa.key" --cluster-signing-cert-file="$pki/ca.crt" \
	--cluster-signing-key-file="$pki/ca.key" --service-cluster-ip-range="$SERVICE_CIDR"
start kube-scheduler "$CP_NS" "$BIN/kube-scheduler" --kubeconfig="$pki/scheduler.kubeconfig" --leader-elect=false

# --- images -----------------------------------------------------------------
log "images"
mkdir -p "$STATE/images"
"$CNIBENCH" kube image --out "$STATE/images/cnibench.tar" --tag "$IMAGE" --binary "$CNIBENCH"
"$CNIBENCH" kube image --out "$STATE/images/pause.tar" --tag "$PAUSE_IMAGE" --binary "$CNIBENCH" --tool iperf3

# --- nodes ------------------------------------------------------------------
for n in "${NODES[@]}"; do
	log "node $n"
	nd="$STATE/$n"
	rd="$RUNDIR/$n"
	mkdir -p "$nd"/{net.d,kubelet,pod-logs,ipam,containerd} "$rd"
	cat >"$nd/net.d/10-cnibench.conflist" <<CNI
{"cniVersion":"1.0.0","name":"cnibench-test","plugins":[
 {"type":"bridge","bridge":"cni0","isGateway":true,"ipMasq":false,"hairpinMode":true,
  "ipam":{"type":"host-local","ranges":[[{"subnet":"${NODE_PODCIDR[$n]}"}]],"routes":[{"dst":"0.0.0.0/0"}],"dataDir":"$nd/ipam"}},
 {"type":"portmap","capabilities":{"portMappings":true}}]}
CNI
	cat >"$nd/containerd.toml" <<CT
version = 2
root = "$nd/containerd"
state = "$rd/containerd"
[grpc]
  address = "$rd/containerd.sock"
[ttrpc]
  address = "$rd/containerd-ttrpc.sock"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # The pods' network namespaces under the node's run directory, not the
  # host's /var/run/netns where every containerd puts them: down.sh
  # removes what is there, and this cluster's are told from others'.
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$rd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$nd/net.d"
CT
	make_node_cgroups "$n" || { echo "up: cannot make $n's cgroups" >&2; exit 1; }
	start "containerd-$n" "$n" containerd --config "$nd/containerd.toml"
	for i in $(seq 1 60); do [[ -S $rd/containerd.sock ]] && break; sleep 0.5; done
	[[ -S $rd/containerd.sock ]] || { echo "up: $n's containerd did not listen in 30 s:" >&2; tail -20 "$STATE/logs/containerd-$n.log" >&2; exit 1; }
	# An import takes seconds; one stuck (a wedged containerd) must not
	# hold the suite until CI's own limit.
	for img in cnibench pause; do
		timeout 300 ctr --address "$rd/containerd.sock" -n k8s.io images import "$STATE/images/$img.tar" >/dev/null ||
			{ echo "up: importing $img.tar into $n's containerd failed or took over 300 s" >&2; exit 1; }
	done
	cat >"$nd/kubelet.yaml" <<KY
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  x509: {clientCAFile: $pki/ca.crt}
  webhook: {enabled: false}
  anonymous: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: /$n
containerRuntimeEndpoint: unix://$rd/containerd.sock
failSwapOn: false
podLogsDir: $nd/pod-logs
readOnlyPort: 0
serializeImagePulls: false
evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
tlsCertFile: $pki/$n.crt
tlsPrivateKeyFile: $pki/$n.key
KY
	start "kubelet-$n" "$n" "$BIN/kubelet" --config="$nd/kubelet.yaml" --kubeconfig="$pki/$n.kubeconfig" \
		--root-dir="$nd/kubelet" --hostname-override="$n" --node-ip="${NODE_IP[$n]}" \
		--node-labels="${NODE_LABEL[$n]}"
	cat >"$nd/kube-proxy.yaml" <<KP
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $pki/proxy.kubeconfig}
mode: iptables
clusterCIDR: $CLUSTER_CIDR
hostnameOverride: $n
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
conntrack: {maxPerCore: 0, min: 0}
KP
	start "kube-proxy-$n" "$n" "$BIN/kube-proxy" --config="$nd/kube-proxy.yaml"
done

# --- wait for the nodes -----------------------------------------------------
for i in $(seq 1 240); do
	ok=$(api /api/v1/nodes 2>/dev/null | tr -d ' \n' | grep -o '"type":"Ready","status":"True"' | wc -l || true)
	[[ $ok == "${#NODES[@]}" ]] && break
	sleep 0.5
done
[[ $ok == "${#NODES[@]}" ]] || { echo "up: nodes not Ready:" >&2; tail -30 "$STATE/logs/kubelet-${NODES[0]}.log" >&2; exit 1; }
# The run's namespace (the test runs as admin), at the Pod Security level
# `cnibench kube manifests --rbac` gives it: workload pods are never
# privileged.
api /api/v1/namespaces -X POST -H 'Content-Type: application/json' \
	-d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"cnibench","labels":{"pod-security.kubernetes.io/enforce":"baseline","pod-security.kubernetes.io/warn":"baseline"}}}' >/dev/null 2>&1 || true
log "cluster up: KUBECONFIG=$KUBECONFIG_ADMIN (from netns $CP_NS)"
