#!/usr/bin/env bash
# End-to-end test of `ceiling k8s --apply` on a real single-node Kubernetes
# cluster, built and started here, with no registry and no network beyond
# the machine:
#
#   - the Kubernetes binaries (kube-apiserver, kube-controller-manager,
#     kube-scheduler, kubelet, kubectl) built from the Go module proxy into
#     a cache, only when missing (build-kubernetes.sh);
#   - etcd (Debian's etcd-server), containerd and runc (Debian's), started
#     by this script, in a network namespace and a mount namespace of its
#     own: the control plane listens on that namespace's loopback, the pods
#     get network namespaces of their own joined to a bridge in it (the
#     CNI plugin of e2e/), and nothing is added to the host's interfaces;
#   - ceiling's image made FROM scratch from the repository's own binary,
#     and two small images (the pods' pause process, a target that counts
#     what it receives), imported into containerd;
#   - a stand-in for the cluster's DNS (pod and Service names from the
#     EndpointSlices); no CoreDNS, no kube-proxy, no NetworkPolicy
#     enforcement.
#
# Then it runs the scenarios below against a namespace that enforces the
# restricted Pod Security Standard, checks each against the truth, prints
# the figures and writes a JSON summary (its path is printed), and stops
# everything it started, by pid, whatever happened.
#
#   1. 3 agents at a fixed rate against the target pod: exit 0; the merged
#      sent and completed equal the target's own count (less the agents'
#      preflight requests, one each); the p50 within 1 ms of one generator
#      against the same target; every object deleted.
#   2. Pod Security restricted is enforced (a control pod with
#      runAsNonRoot: false is refused) and every pod of the runs admitted.
#   3. SIGINT during a run: exit 130, every object deleted.
#   4. `timeout 60 ceiling k8s --apply` expiring: every object deleted.
#   5. A target the pods cannot reach (a name that does not resolve):
#      exit 3 with the agents' reason (the lookup failed), objects deleted.
#   6. A result of more than 30 MB: fetched whole from the coordinator,
#      its SHA-256 checked, equal to the coordinator's file.
#
# Exit status: 0 passed; 1 failed; 77 skipped (said loudly): the machine
# cannot run it (not root, no namespaces, containerd or the cluster would
# not start). A failure of ceiling itself is a failure, never a skip.
#
#   test/k8s/e2e.sh                    # cache: $CEILING_K8S_CACHE or ~/.cache/ceiling-k8s
#   CEILING_E2E_OUT=/tmp/e2e test/k8s/e2e.sh
#   CEILING_E2E_SCENARIOS="1 6" test/k8s/e2e.sh   # some scenarios only (a developer's shortcut)
set -euo pipefail

skip_status=77
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
namespace="ceiling-e2e"

say() { printf '== e2e: %s\n' "$*"; }
skip() {
  printf '\n%s\nSKIPPED: the Kubernetes end-to-end test cannot run on this machine: %s\n%s\n\n' \
    '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!' "$*" \
    '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!' >&2
  exit "$skip_status"
}
fail() {
  printf '\nFAILED: %s\n' "$*" >&2
  exit 1
}

if [ "${1:-}" != "--inside" ]; then
  # On the host: check what the test needs, build what it runs, then run
  # the rest in a network and a mount namespace of its own.
  [ "$(id -u)" -eq 0 ] || skip "it needs root (network namespaces, containerd, a kubelet); run as root"
  for c in etcd containerd containerd-shim-runc-v2 runc ctr ip nsenter unshare curl timeout; do
    command -v "$c" >/dev/null 2>&1 ||
      skip "$c is missing (apt-get install etcd-server containerd runc iproute2 util-linux curl coreutils)"
  done
  unshare --mount --net --propagation private true 2>/dev/null ||
    skip "cannot make network and mount namespaces here (unshare --mount --net)"
  out="${CEILING_E2E_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/ceiling-k8s-e2e.XXXXXX")}"
  mkdir -p "$out"
  bin="$(K8S_VERSION="${K8S_VERSION:-v1.37.2}" "$here/build-kubernetes.sh")" || fail "building Kubernetes failed"
  say "Kubernetes binaries: $bin"
  mkdir -p "$out/bin"
  (cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/bin/ceiling" ./cmd/ceiling) || fail "building ceiling failed"
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/bin/e2e" ./e2e) || fail "building the test's helper failed"
  export CEILING_E2E_K8S_BIN="$bin"
  exec unshare --mount --net --propagation private -- "$0" --inside "$out"
fi

# ---------------------------------------------------------------------------
# Inside the namespaces: the node.
out="$2"
work="$out/cluster"
k8s="$CEILING_E2E_K8S_BIN"
ceiling="$out/bin/ceiling"
helper="$out/bin/e2e"
rm -rf "$work"
mkdir -p "$work"/{etcd,containerd/root,containerd/state,cni/bin,cni/conf,cni/data,kubelet,pod-logs,logs,plans,results}
started=()     # pids of what this script started, stopped in reverse
summary="$out/summary.json"
kubeconfig="$work/kubeconfig"
kubectl=("$k8s/kubectl" --kubeconfig "$kubeconfig")
begin=$(date +%s)

names=()       # and their names
# Folders containerd and runc make outside the work folder, in the host's
# file systems: those that this run makes are removed at its end.
host_dirs=(/run/netns /run/containerd/s /run/containerd/runc/k8s.io /run/containerd/runc /run/containerd /sys/fs/cgroup/*/k8s.io /sys/fs/cgroup/k8s.io)
made=()
for d in "${host_dirs[@]}"; do
  [ -e "$d" ] || made+=("$d")
done
# start NAME CMD...: runs CMD in the background, its output in logs/NAME.log.
start() {
  local name="$1"
  shift
  "$@" >"$work/logs/$name.log" 2>&1 &
  started+=("$!")
  names+=("$name")
}

# ours lists the pids of the processes left in this network namespace,
# which only this test uses: containerd's shims, reparented when
# containerd stopped. The script's own subshells and their children are
# left out.
ours() {
  local me pid ppid gppid
  me="$(readlink /proc/$$/ns/net)"
  for pid in /proc/[0-9]*; do
    pid="${pid#/proc/}"
    [ "$pid" = "$$" ] && continue
    [ "$(readlink "/proc/$pid/ns/net" 2>/dev/null)" = "$me" ] || continue
    ppid="$(cut -d' ' -f4 "/proc/$pid/stat" 2>/dev/null)" || continue
    gppid="$(cut -d' ' -f4 "/proc/$ppid/stat" 2>/dev/null)"
    [ "$ppid" = "$$" ] || [ "$gppid" = "$$" ] && continue
    printf '%s\n' "$pid"
  done
}

# stop_tasks kills every container containerd runs for the kubelet (the
# pods' processes, in their own network namespaces) and removes them.
stop_tasks() {
  local c=(ctr --address "$sock" -n k8s.io) t
  for t in $("${c[@]}" tasks ls -q 2>/dev/null); do
    "${c[@]}" tasks kill -a -s SIGKILL "$t" >/dev/null 2>&1
  done
  sleep 1
  for t in $("${c[@]}" tasks ls -q 2>/dev/null); do
    "${c[@]}" tasks rm -f "$t" >/dev/null 2>&1
  done
  for t in $("${c[@]}" containers ls -q 2>/dev/null); do
    "${c[@]}" containers rm "$t" >/dev/null 2>&1
  done
}

cleanup() {
  local status=$? pid i left
  trap - EXIT INT TERM
  set +e
  say "stopping everything this test started"
  if [ -s "$kubeconfig" ] && [ -n "${apiserver_up:-}" ]; then
    timeout 60 "${kubectl[@]}" delete namespace "$namespace" --wait=true --timeout=50s >/dev/null 2>&1
  fi
  # Reverse order: the kubelet and containerd before the control plane;
  # the containers before containerd.
  for ((i = ${#started[@]} - 1; i >= 0; i--)); do
    [ "${names[$i]}" = containerd ] && stop_tasks
    kill -TERM "${started[$i]}" 2>/dev/null
    for _ in $(seq 50); do kill -0 "${started[$i]}" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "${started[$i]}" 2>/dev/null
    wait "${started[$i]}" 2>/dev/null
  done
  # What containerd started (its shims), by pid: every process left in
  # this network namespace is this test's.
  for _ in 1 2 3; do
    left="$(ours)"
    [ -z "$left" ] && break
    for pid in $left; do kill -KILL "$pid" 2>/dev/null; done
    sleep 0.5
  done
  left="$(ours)"
  [ -n "$left" ] && echo "e2e: processes left: $left" >&2
  # The mounts (containerd's snapshots, the kubelet's volumes, the pods'
  # network namespaces) are this mount namespace's: they go with it. The
  # folders it made on the host's file systems (empty now) go too.
  for d in "${made[@]}"; do
    for i in $d; do
      [ -d "$i" ] || continue
      umount -R "$i" 2>/dev/null # a mount of this namespace only
      rmdir "$i" 2>/dev/null
    done
  done
  # The kubelet's and containerd's own mounts under the work folder (this
  # mount namespace's only), so that it can be removed now.
  awk -v w="$work/" 'index($5, w) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null; done
  if [ "$status" -ne 0 ] && [ "$status" -ne "$skip_status" ]; then
    echo "e2e: the logs of the cluster are in $work/logs" >&2
  else
    rm -rf "$work/containerd" "$work/kubelet" "$work/etcd" "$work"/*.tar "$work/results/big.json" "$work/pod-logs"
  fi
  say "done in $(($(date +%s) - begin)) s"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for SECONDS CMD...: retries CMD every half second, for up to SECONDS.
wait_for() {
  local secs="$1"
  shift
  for _ in $(seq $((secs * 2))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  return 1
}

# --- the node's network: loopback and the pods' bridge ---------------------
ip link set lo up
ip link add cni0 type bridge
ip addr add 10.244.0.1/24 dev cni0
ip link set cni0 up
node_ip=10.244.0.1

# --- the control plane -------------------------------------------------------
"$helper" certs "$work"
start etcd etcd --name e2e --data-dir "$work/etcd" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster e2e=http://127.0.0.1:2380
wait_for 30 curl -sf http://127.0.0.1:2379/health || skip "etcd did not start: $(tail -5 "$work/logs/etcd.log")"
start kube-apiserver "$k8s/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=6443 --endpoint-reconciler-type=none \
  --tls-cert-file="$work/apiserver.crt" --tls-private-key-file="$work/apiserver.key" --cert-dir="$work/apiserver" \
  --token-auth-file="$work/tokens.csv" --authorization-mode=RBAC --enable-priority-and-fairness=false \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$work/sa.pub" --service-account-signing-key-file="$work/sa.key" \
  --service-cluster-ip-range=10.96.0.0/16 --kubelet-preferred-address-types=InternalIP --profiling=false
token="$(cat "$work/token")"
wait_for 90 curl -sf --cacert "$work/ca.crt" -H "Authorization: Bearer $token" https://127.0.0.1:6443/readyz ||
  skip "kube-apiserver did not start: $(tail -5 "$work/logs/kube-apiserver.log")"
apiserver_up=1
start kube-controller-manager "$k8s/kube-controller-manager" --kubeconfig="$kubeconfig" --leader-elect=false \
  --bind-address=127.0.0.1 --service-account-private-key-file="$work/sa.key" --root-ca-file="$work/ca.crt" \
  --use-service-account-credentials=false --profiling=false
start kube-scheduler "$k8s/kube-scheduler" --kubeconfig="$kubeconfig" --leader-elect=false --bind-address=127.0.0.1 --profiling=false
k8s_version="$("${kubectl[@]}" version -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -1)"
say "Kubernetes $k8s_version: control plane up in $(($(date +%s) - begin)) s"

# --- containerd, the CNI plugin, the images ---------------------------------
cp "$helper" "$work/cni/bin/e2e-cni"
cp "$helper" "$work/cni/bin/loopback"
cat >"$work/cni/conf/10-e2e.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "e2e", "plugins": [
  {"type": "e2e-cni", "bridge": "cni0", "subnet": "10.244.0.0/24", "gateway": "$node_ip", "dataDir": "$work/cni/data"}]}
EOF
sock="$work/containerd/containerd.sock"
cat >"$work/containerd/config.toml" <<EOF
version = 2
root = "$work/containerd/root"
state = "$work/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[debug]
  address = "$sock.debug"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/library/ceiling-e2e-pause:1"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "10010"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$work/cni/bin"
    conf_dir = "$work/cni/conf"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
EOF
start containerd containerd --config "$work/containerd/config.toml"
wait_for 30 ctr --address "$sock" version || skip "containerd did not start: $(tail -5 "$work/logs/containerd.log")"
ctr_images=(ctr --address "$sock" -n k8s.io images import)
"$helper" image "$work/pause.tar" docker.io/library/ceiling-e2e-pause:1 /e2e,pause "$helper:/e2e"
"$helper" image "$work/target.tar" docker.io/library/ceiling-e2e-target:1 /e2e,target "$helper:/e2e"
# ceiling's image: the repository's binary alone, FROM scratch, as the
# Dockerfile's (distroless: no shell) runs it, user 65532.
"$helper" image "$work/ceiling.tar" docker.io/library/ceiling:e2e /ceiling "$ceiling:/ceiling"
for i in pause target ceiling; do
  "${ctr_images[@]}" "$work/$i.tar" >/dev/null || fail "cannot import the $i image into containerd"
done

# --- the kubelet ------------------------------------------------------------
cat >"$work/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failCgroupV1: false
failSwapOn: false
evictionHard: {}
clusterDNS: ["$node_ip"]
clusterDomain: cluster.local
resolvConf: ""
podLogsDir: "$work/pod-logs"
containerRuntimeEndpoint: "unix://$sock"
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
start kubelet "$k8s/kubelet" --config="$work/kubelet/config.yaml" --kubeconfig="$kubeconfig" \
  --root-dir="$work/kubelet/root" --cert-dir="$work/kubelet/pki" --hostname-override=e2e-node --node-ip=127.0.0.1
wait_for 90 "${kubectl[@]}" get node e2e-node || skip "the kubelet did not register its node: $(tail -5 "$work/logs/kubelet.log")"
# A node on loopback gets no address: the API server reaches the kubelet
# (logs) at the one patched in.
"${kubectl[@]}" get node e2e-node -o jsonpath='{.status.addresses}' | grep -q InternalIP ||
  "${kubectl[@]}" patch node e2e-node --subresource=status --type=merge \
    -p '{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"},{"type":"Hostname","address":"e2e-node"}]}}' >/dev/null
"${kubectl[@]}" wait --for=condition=Ready node/e2e-node --timeout=90s >/dev/null ||
  skip "the node did not become ready: $(tail -5 "$work/logs/kubelet.log")"

# --- the DNS stand-in, the namespace ----------------------------------------
start dns "$helper" dns -listen "$node_ip:53" -ca "$work/ca.crt" -token-file "$work/token"
"${kubectl[@]}" create namespace "$namespace" >/dev/null
"${kubectl[@]}" label namespace "$namespace" pod-security.kubernetes.io/enforce=restricted \
  pod-security.kubernetes.io/enforce-version=latest >/dev/null
wait_for 60 "${kubectl[@]}" -n "$namespace" get serviceaccount default ||
  fail "the controller manager did not make the namespace's service account"
say "cluster up in $(($(date +%s) - begin)) s: $("${kubectl[@]}" get node e2e-node --no-headers)"

# --- the target -------------------------------------------------------------
"${kubectl[@]}" -n "$namespace" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: target, labels: {app: target}}
spec:
  automountServiceAccountToken: false
  enableServiceLinks: false
  securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: target
    image: docker.io/library/ceiling-e2e-target:1
    imagePullPolicy: Never
    ports: [{name: http, containerPort: 8080}]
    securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
---
apiVersion: v1
kind: Service
metadata: {name: target}
spec:
  clusterIP: None
  selector: {app: target}
  ports: [{name: http, port: 8080}]
EOF
"${kubectl[@]}" -n "$namespace" wait --for=condition=Ready pod/target --timeout=120s >/dev/null ||
  fail "the target pod did not start: $("${kubectl[@]}" -n "$namespace" describe pod target | tail -15)"
target_ip="$("${kubectl[@]}" -n "$namespace" get pod target -o jsonpath='{.status.podIP}')"
target_url="http://target.$namespace.svc.cluster.local:8080"
say "target pod at $target_ip ($target_url)"
count() { curl -sf "http://$target_ip:8080/count"; }
reset() { curl -sf -X POST "http://$target_ip:8080/reset" >/dev/null; }

# objects_left NAME: how many objects of the run NAME remain (pods too).
objects_left() {
  "${kubectl[@]}" -n "$namespace" get jobs,pods,services,secrets,networkpolicies \
    -l "app.kubernetes.io/instance=$1" --no-headers 2>/dev/null | grep -c . || true
}
none_left() { [ "$(objects_left "$1")" -eq 0 ]; }
# gone NAME: waits for every object of the run NAME to be deleted (the
# pods go after their Jobs), and fails otherwise.
gone() {
  wait_for 60 none_left "$1" ||
    fail "objects of run $1 were left: $("${kubectl[@]}" -n "$namespace" get jobs,pods,services,secrets,networkpolicies -l "app.kubernetes.io/instance=$1" --no-headers)"
}

# plan FILE RATE STEP TARGET [EXTRA]: writes a plan.
plan() {
  cat >"$work/plans/$1" <<EOF
target: $4
load: {rates: [$2], step: $3, warmup: 0s}
scenarios:
  - request: {url: /}
${5:-}
EOF
}

# k8s_args: the flags of ceiling k8s --apply in this cluster: 3 agents,
# small enough for its two cores.
k8s_args() {
  echo "--agents" 3 --image docker.io/library/ceiling:e2e --cpu 500m --memory 256Mi --namespace "$namespace" \
    --kubeconfig "$kubeconfig" --agents-timeout 2m --apply --wide
}

# scenario N: whether scenario N is to run ($CEILING_E2E_SCENARIOS; all by default).
scenario() { [[ " ${CEILING_E2E_SCENARIOS:-1 2 3 4 5 6} " == *" $1 "* ]]; }
agents=0 sent=0 completed=0 target_count=0 preflights=0 p50_ms=0 one_p50_ms=0 big_bytes=0

# --- 1. 3 agents against the target, checked against its count ------------
if scenario 1; then
say "1. one generator, then 3 agents, at 150/s for 10 s against the target pod"
plan one.yaml 150 10s "http://$target_ip:8080"
plan three.yaml 150 10s "$target_url"
# busy FILE: the run's generator could not hold its rate. This machine is
# shared: a generator starved of CPU at 150/s is the machine's, not
# ceiling's failure. The pair is tried again; when the machine stays that
# busy, the counts are still checked, and the test ends as skipped (77),
# loudly, unless something else failed.
busy() { grep -q "GENERATOR LIMITED" "$1"; }
starved=""
for attempt in 1 2 3 4; do
  if [ "$attempt" -gt 1 ]; then
    say "the machine was too busy for the comparison (above): once more in 30 s"
    sleep 30
  fi
  starved=""
  reset
  rc=0
  "$ceiling" run "$work/plans/one.yaml" --out "$work/results/one.json" --quiet >"$work/logs/one.out" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    { [ "$rc" -eq 1 ] && busy "$work/logs/one.out"; } || fail "one generator against the target exited $rc: $(tail -20 "$work/logs/one.out")"
    starved="one generator"
  fi
  read -r _ _ one_p50_ms _ _ _ < <("$helper" figures "$work/results/one.json")
  reset
  rc=0
  # shellcheck disable=SC2046
  "$ceiling" k8s "$work/plans/three.yaml" $(k8s_args) --name three --out "$work/results/three.json" \
    >"$work/logs/three.out" 2>&1 || rc=$?
  cat "$work/logs/three.out"
  target_count="$(count)"
  gone three
  if [ "$rc" -ne 0 ]; then
    { [ "$rc" -eq 1 ] && busy "$work/logs/three.out"; } || fail "ceiling k8s --apply with 3 agents exited $rc, want 0"
    starved="${starved:+$starved and }the agents"
  fi
  read -r sent completed p50_ms agents _ _ < <("$helper" figures "$work/results/three.json")
  [ -z "$starved" ] && break
done
preflights=$agents
printf '\nKubernetes %s, one node: %d agents and a coordinator ran (%s pods)\n' "$k8s_version" "$agents" "$((agents + 1))"
printf 'merged: sent %d, completed %d; the target counted %d = %d + %d preflight requests (one an agent)\n' \
  "$sent" "$completed" "$target_count" "$((target_count - preflights))" "$preflights"
printf 'p50: 3 agents %.3f ms, one generator %.3f ms\n\n' "$p50_ms" "$one_p50_ms"
[ "$agents" -eq 3 ] || fail "the result names $agents agents, want 3"
[ "$sent" -eq "$completed" ] || fail "sent $sent, completed $completed: want them equal"
[ "$sent" -eq "$((target_count - preflights))" ] || fail "the merged result sent $sent, the target counted $target_count less $preflights preflights"
if [ -z "$starved" ]; then
  awk -v a="$p50_ms" -v b="$one_p50_ms" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1.0) }' ||
    fail "p50 of 3 agents $p50_ms ms, of one generator $one_p50_ms ms: more than 1 ms apart"
else
  say "WARNING: $starved could not hold 150/s four times in a row: this machine is too busy to judge the exit code and the p50s"
fi
fi

# --- 2. Pod Security restricted, live ---------------------------------------
if scenario 2; then
say "2. Pod Security restricted: a control pod with runAsNonRoot: false is refused"
# The control is the target's pod, which is admitted, with only
# runAsNonRoot: false: refused for that alone, the check is live.
if control="$("${kubectl[@]}" -n "$namespace" apply -f - 2>&1 <<EOF
apiVersion: v1
kind: Pod
metadata: {name: control}
spec:
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: false, runAsUser: 65532, runAsGroup: 65532, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: control
    image: docker.io/library/ceiling-e2e-target:1
    imagePullPolicy: Never
    securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
EOF
)"; then
  "${kubectl[@]}" -n "$namespace" delete pod control --wait=false >/dev/null 2>&1
  fail "a pod with runAsNonRoot: false was admitted in a namespace that enforces restricted: $control"
fi
echo "$control" | grep -q 'violates PodSecurity "restricted.*runAsNonRoot' || fail "the control pod was refused, but not for runAsNonRoot by Pod Security: $control"
echo "refused: $control"
refused="$("${kubectl[@]}" -n "$namespace" get events --field-selector reason=FailedCreate --no-headers 2>/dev/null | grep -c PodSecurity || true)"
[ "$refused" -eq 0 ] || fail "$refused pods of the runs were refused by Pod Security"
fi

# --- 3. SIGINT during the run -------------------------------------------------
if scenario 3; then
say "3. SIGINT during a run: exit 130, every object deleted"
plan int.yaml 20 60s "$target_url"
# shellcheck disable=SC2046
"$ceiling" k8s "$work/plans/int.yaml" $(k8s_args) --name int --out "$work/results/int.json" >"$work/logs/int.out" 2>&1 &
pid=$!
coordinator_runs() {
  "${kubectl[@]}" -n "$namespace" get pods -l app.kubernetes.io/instance=int,app.kubernetes.io/component=coordinator \
    -o jsonpath='{.items[*].status.phase}' | grep -q Running
}
wait_for 120 coordinator_runs || fail "the coordinator of the interrupted run did not start: $(tail "$work/logs/int.out")"
sleep 8 # its agents found, the step under way
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
tail -5 "$work/logs/int.out"
[ "$rc" -eq 130 ] || fail "ceiling k8s --apply after SIGINT exited $rc, want 130"
gone int
fi

# --- 4. timeout 60 -----------------------------------------------------------
if scenario 4; then
say "4. timeout 60 ceiling k8s --apply on a longer run: every object deleted"
plan timeout.yaml 20 120s "$target_url"
rc=0
# shellcheck disable=SC2046
timeout 60 "$ceiling" k8s "$work/plans/timeout.yaml" $(k8s_args) --name timeout --out "$work/results/timeout.json" \
  >"$work/logs/timeout.out" 2>&1 || rc=$?
tail -5 "$work/logs/timeout.out"
[ "$rc" -eq 124 ] || fail "timeout 60 ceiling k8s --apply exited $rc, want 124 (timed out)"
grep -q "aborted" "$work/logs/timeout.out" && fail "ceiling took timeout's SIGTERM as an abort"
gone timeout
fi

# --- 5. a target the pods cannot reach ---------------------------------------
if scenario 5; then
say "5. a target whose name does not resolve: exit 3 with the agents' reason"
plan unreachable.yaml 20 10s "http://nowhere.$namespace.svc.cluster.local:8080"
rc=0
# shellcheck disable=SC2046
"$ceiling" k8s "$work/plans/unreachable.yaml" $(k8s_args) --name unreachable --out "$work/results/unreachable.json" \
  >"$work/logs/unreachable.out" 2>&1 || rc=$?
tail -8 "$work/logs/unreachable.out"
[ "$rc" -eq 3 ] || fail "ceiling k8s --apply against an unreachable target exited $rc, want 3"
grep -q "the lookup of nowhere.$namespace.svc.cluster.local failed" "$work/logs/unreachable.out" ||
  fail "the error does not give the agents' reason (the lookup failed)"
gone unreachable
fi

# --- 6. a result of more than 30 MB ------------------------------------------
if scenario 6; then
say "6. a result of more than 30 MB (10,000 long series of the target's metrics a step), fetched whole"
metrics="$(seq -s, -f 'e2e_gauge_%g' 0 9)"
cat >"$work/plans/big.yaml" <<EOF
target: $target_url
load: {rates: [20, 20, 20, 20, 20, 20, 20, 20, 20], step: 4s, warmup: 0s}
monitor:
  prometheus: {url: '$target_url/metrics', metrics: [$metrics]}
scenarios:
  - request: {url: /}
EOF
rc=0
started_big=$(date +%s)
# shellcheck disable=SC2046
"$ceiling" k8s "$work/plans/big.yaml" $(k8s_args) --cpu= --name big --out "$work/results/big.json" \
  >"$work/logs/big.out" 2>&1 || rc=$?
big_s=$(($(date +%s) - started_big))
grep -E "fetched result.json|holding result.json|cannot fetch|damaged" "$work/logs/big.out" || true
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "ceiling k8s --apply of the large result exited $rc: $(tail -20 "$work/logs/big.out")"
big_bytes=$(stat -c %s "$work/results/big.json")
big_sum=$(sha256sum "$work/results/big.json" | cut -d' ' -f1)
grep -q "fetched result.json from pod .*: $big_bytes bytes, SHA-256 $big_sum verified" "$work/logs/big.out" ||
  fail "result.json ($big_bytes bytes, SHA-256 $big_sum) is not the file the coordinator held"
[ "$big_bytes" -ge $((30 << 20)) ] || fail "the large result has $big_bytes bytes, want 30 MiB or more"
printf 'large result: %d bytes fetched whole, SHA-256 %s verified, in a run of %d s\n' "$big_bytes" "$big_sum" "$big_s"
gone big
fi

# --- summary -----------------------------------------------------------------
left=0
for name in three int timeout unreachable big; do
  left=$((left + $(objects_left "$name")))
done
cat >"$summary" <<EOF
{
  "kubernetes_version": "$k8s_version",
  "agents": $agents,
  "pods": $((agents + 1)),
  "sent": $sent,
  "completed": $completed,
  "target_count": $target_count,
  "preflight_requests": $preflights,
  "p50_ms": $p50_ms,
  "one_generator_p50_ms": $one_p50_ms,
  "large_result_bytes": $big_bytes,
  "objects_left": $left,
  "generator_limited": "${starved:-}",
  "seconds": $(($(date +%s) - begin))
}
EOF
cat "$summary"
say "summary: $summary"
[ "$left" -eq 0 ] || fail "$left objects left"
if [ -n "${starved:-}" ]; then
  skip "every scenario passed, but scenario 1's exit code and p50s could not be judged: $starved could not hold 150/s (GENERATOR LIMITED) four times, 30 s apart, on this busy machine"
fi
say "passed"
