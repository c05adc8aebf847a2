#!/usr/bin/env bash
# A real Apache Cassandra 5.0 on this machine, from Maven Central jars: no Docker, no tarball.
#
#   scripts/cassandra.sh install                    resolve cassandra-all and its deps (idempotent)
#   scripts/cassandra.sh start [--nodes N] [--auth] [--tls] [--heap SIZE] [--timeout SECS]
#   scripts/cassandra.sh stop [NODE]                stop every node (or one), SIGTERM then SIGKILL
#   scripts/cassandra.sh kill NODE                  SIGKILL one node (fault tests)
#   scripts/cassandra.sh status                     one line per node; exit 0 only if all are up
#   scripts/cassandra.sh add [--token T] [--heap SIZE] [--timeout SECS]
#                                                   bootstrap one more node into the running
#                                                   cluster (next address; default token: the
#                                                   middle of the widest gap in the ring)
#   scripts/cassandra.sh decommission NODE          stream NODE's data away, leave the ring, stop
#   scripts/cassandra.sh nodetool NODE ARGS...      Cassandra's nodetool against NODE (JMX)
#   scripts/cassandra.sh logs [NODE] [LINES]        the last lines of a node's log (default node 1)
#   scripts/cassandra.sh wipe                       stop, then delete all node state
#
# Nodes listen on 127.0.0.1, 127.0.0.2, ... with the usual ports (CQL 9042, storage 7000);
# DOPPIO_CASSANDRA_FIRST_IP=K moves node 1 to 127.0.0.K (node i to 127.0.0.(K+i-1)), so that a
# second, independent cluster (another state directory) can run beside the first one:
# scripts/cassandra-auth.sh uses that for the authentication tests.
# State (yaml, data, logs, pids) lives in $DOPPIO_CASSANDRA_STATE (default: .cassandra/ in the
# repository, git-ignored); the jar cache in $DOPPIO_CACHE (default: ~/.cache/doppio).
# With --auth, PasswordAuthenticator is on and the test user is cassandra / cassandra.
# With --tls, the native port speaks TLS only (client_encryption_options enabled, not
# optional): a CA and each node's certificate (IP SAN of the node, valid 825 days) are made with
# openssl in $STATE/tls/ (ca.pem is the file clients trust); nothing is downloaded.
# DOPPIO_CASSANDRA_RACKS=r1,r1,r2 places node i in the i-th rack of data center
# "datacenter1" (GossipingPropertyFileSnitch); without it every node uses SimpleSnitch
# (datacenter1, rack1). Racks are fixed at a node's first boot, like tokens.
# Each node serves JMX on loopback, port 7200 + the last octet of its address (7201 for
# 127.0.0.1), which `nodetool` and `decommission` use (NodeTool from the same jars).
# DOPPIO_CASSANDRA_EXTRA_YAML: lines appended to each node's cassandra.yaml when it starts
# (e.g. the overload test's native_transport_max_requests_per_second).
set -euo pipefail

CASSANDRA_VERSION=5.0.6
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${DOPPIO_CACHE:-$HOME/.cache/doppio}/cassandra-$CASSANDRA_VERSION
STATE=${DOPPIO_CASSANDRA_STATE:-$ROOT/.cassandra}
CLASSPATH_FILE=$CACHE/classpath.txt
CQL_PORT=9042
FIRST_IP=${DOPPIO_CASSANDRA_FIRST_IP:-1}
[[ "$FIRST_IP" =~ ^[1-9][0-9]?$ ]] || { echo "DOPPIO_CASSANDRA_FIRST_IP must be 1 to 99" >&2; exit 1; }
# Clusters on other addresses get their own name, so they can never gossip with this one.
CLUSTER_NAME=doppio-test
[ "$FIRST_IP" = 1 ] || CLUSTER_NAME=doppio-test-$FIRST_IP
RACKS=${DOPPIO_CASSANDRA_RACKS:-}

log() { printf '[cassandra.sh] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

apt_updated=
apt_install() {
    if [ -z "$apt_updated" ]; then
        as_root apt-get update -q >&2
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends "$@" >&2
}

java_major() {
    java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1
}

# Cassandra 5.0 runs on Java 11 or 17; we use 17. Install it and Maven from Debian if missing.
ensure_java_and_maven() {
    if ! command -v java >/dev/null 2>&1 || [ "$(java_major)" != 17 ]; then
        if [ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/java ]; then
            export PATH=/usr/lib/jvm/java-17-openjdk-amd64/bin:$PATH
        else
            log "installing Java 17 from Debian's packages"
            apt_install openjdk-17-jre-headless
            export PATH=/usr/lib/jvm/java-17-openjdk-amd64/bin:$PATH
        fi
    fi
    if ! command -v mvn >/dev/null 2>&1; then
        log "installing Maven from Debian's packages"
        apt_install maven
    fi
}

classpath_complete() {
    [ -s "$CLASSPATH_FILE" ] || return 1
    local jar
    while IFS= read -r jar; do
        [ -f "$jar" ] || return 1
    done < <(tr ':' '\n' <"$CLASSPATH_FILE")
}

cmd_install() {
    ensure_java_and_maven
    if classpath_complete; then
        log "cassandra-all $CASSANDRA_VERSION already installed ($(tr ':' '\n' <"$CLASSPATH_FILE" | wc -l) jars)"
        return 0
    fi
    mkdir -p "$CACHE"
    cat >"$CACHE/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>doppio.local</groupId>
  <artifactId>cassandra-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>$CASSANDRA_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
    log "resolving org.apache.cassandra:cassandra-all:$CASSANDRA_VERSION from Maven Central"
    local attempt
    for attempt in 1 2 3; do
        if (cd "$CACHE" && mvn -B -q dependency:build-classpath \
            -Dmdep.outputFile="$CLASSPATH_FILE.tmp" -Dmdep.includeScope=runtime >&2); then
            mv "$CLASSPATH_FILE.tmp" "$CLASSPATH_FILE"
            classpath_complete || die "classpath written but jars are missing"
            log "installed: $(tr ':' '\n' <"$CLASSPATH_FILE" | wc -l) jars"
            return 0
        fi
        log "maven failed (attempt $attempt), retrying"
        sleep $((attempt * 5))
    done
    die "could not resolve cassandra-all from Maven Central"
}

node_dir() { echo "$STATE/node$1"; }
node_addr() { echo "127.0.0.$((FIRST_IP + $1 - 1))"; }
node_jmx_port() { echo "$((7200 + FIRST_IP + $1 - 1))"; }
# A node that left the ring (decommission) keeps its directory (logs) with this marker.
node_left() { [ -f "$(node_dir "$1")/left" ]; }
node_pid() {
    local f
    f="$(node_dir "$1")/pid"
    [ -f "$f" ] && cat "$f"
}
pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
known_nodes() {
    local d
    for d in "$STATE"/node*; do
        [ -d "$d" ] && echo "${d##*/node}"
    done | sort -n
}

# The rack of node i from DOPPIO_CASSANDRA_RACKS (empty: SimpleSnitch).
node_rack() {
    [ -n "$RACKS" ] || return 0
    local racks
    IFS=, read -r -a racks <<<"$RACKS"
    echo "${racks[$(($1 - 1))]:-${racks[-1]}}"
}

# Evenly spaced Murmur3 tokens: node i of n gets -2^63 + (i-1) * 2^64/n.
node_token() {
    local i=$1 n=$2 t step k
    t=$((-9223372036854775807 - 1))
    step=$((9223372036854775807 / n * 2))
    for ((k = 1; k < i; k++)); do t=$((t + step)); done
    echo "$t"
}

# The test CA (made once per state directory) and node i's key and certificate, signed by
# it, with the node's IP address as subject alternative name. Cassandra 5.0 reads them as PEM
# (PEMBasedSslContextFactory): one file holding the unencrypted PKCS#8 key and the chain.
make_tls_material() {
    local i=$1 tls addr
    tls="$STATE/tls"
    addr=$(node_addr "$i")
    command -v openssl >/dev/null 2>&1 || apt_install openssl
    mkdir -p "$tls"
    if [ ! -s "$tls/ca.pem" ] || [ ! -s "$tls/ca.key" ]; then
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout "$tls/ca.key" -out "$tls/ca.pem" -days 825 \
            -subj "/CN=doppio test CA $CLUSTER_NAME" >/dev/null 2>&1 || die "openssl: cannot make the CA"
        log "made the test CA $tls/ca.pem"
    fi
    if [ ! -s "$tls/node$i.bundle.pem" ]; then
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout "$tls/node$i.key" -out "$tls/node$i.csr" -subj "/CN=$addr" >/dev/null 2>&1 ||
            die "openssl: cannot make node $i's key"
        printf 'subjectAltName=IP:%s\nextendedKeyUsage=serverAuth\n' "$addr" >"$tls/node$i.ext"
        openssl x509 -req -in "$tls/node$i.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" \
            -CAcreateserial -days 825 -extfile "$tls/node$i.ext" -out "$tls/node$i.pem" >/dev/null 2>&1 ||
            die "openssl: cannot sign node $i's certificate"
        cat "$tls/node$i.key" "$tls/node$i.pem" >"$tls/node$i.bundle.pem"
        log "made node $i's certificate for IP $addr ($tls/node$i.pem)"
    fi
}

write_node_config() {
    local i=$1 n=$2 auth=$3 tls=${4:-0} bootstrap=${5:-false} dir addr token
    dir=$(node_dir "$i")
    addr=$(node_addr "$i")
    # A node added to a running cluster keeps the token it joined with (`add`).
    token=$(cat "$dir/token" 2>/dev/null || node_token "$i" "$n")
    mkdir -p "$dir"/{data,commitlog,saved_caches,hints,cdc_raw,logs,triggers}
    local authenticator=AllowAllAuthenticator authorizer=AllowAllAuthorizer snitch=SimpleSnitch rack
    rack=$(node_rack "$i")
    if [ -n "$rack" ]; then
        snitch=GossipingPropertyFileSnitch
        printf 'dc=datacenter1\nrack=%s\n' "$rack" >"$dir/cassandra-rackdc.properties"
    fi
    if [ "$auth" = 1 ]; then
        authenticator=PasswordAuthenticator
        authorizer=CassandraAuthorizer
    fi
    cat >"$dir/cassandra.yaml" <<EOF
# Written by scripts/cassandra.sh for node $i of $n. Edits are overwritten on start.
cluster_name: $CLUSTER_NAME
num_tokens: 1
initial_token: $token
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
auto_bootstrap: $bootstrap
commitlog_sync: periodic
commitlog_sync_period: 10000ms
data_file_directories:
  - $dir/data
commitlog_directory: $dir/commitlog
saved_caches_directory: $dir/saved_caches
hints_directory: $dir/hints
cdc_raw_directory: $dir/cdc_raw
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "$(node_addr 1):7000"
listen_address: $addr
rpc_address: $addr
storage_port: 7000
native_transport_port: $CQL_PORT
start_native_transport: true
endpoint_snitch: $snitch
authenticator: $authenticator
authorizer: $authorizer
role_manager: CassandraRoleManager
concurrent_compactors: 1
# Small machine, test workloads: keep background work and memory modest.
key_cache_size: 16MiB
counter_cache_size: 8MiB
materialized_views_enabled: true
user_defined_functions_enabled: true
EOF
    if [ "$tls" = 1 ]; then
        make_tls_material "$i"
        cat >>"$dir/cassandra.yaml" <<EOF
# --tls: the native port speaks TLS only (a plaintext client is refused).
client_encryption_options:
  enabled: true
  optional: false
  ssl_context_factory:
    class_name: org.apache.cassandra.security.PEMBasedSslContextFactory
  keystore: $STATE/tls/node$i.bundle.pem
  require_client_auth: false
EOF
    fi
    if [ -n "${DOPPIO_CASSANDRA_EXTRA_YAML:-}" ]; then
        printf '# DOPPIO_CASSANDRA_EXTRA_YAML:\n%s\n' "$DOPPIO_CASSANDRA_EXTRA_YAML" >>"$dir/cassandra.yaml"
    fi
    cat >"$dir/logback.xml" <<'EOF'
<configuration>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="STDOUT"/></root>
</configuration>
EOF
}

JVM17_FLAGS=(
    -Djdk.attach.allowAttachSelf=true
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
    --add-exports java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
    --add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED
    --add-exports java.rmi/sun.rmi.server=ALL-UNNAMED
    --add-exports java.sql/java.sql=ALL-UNNAMED
    --add-exports java.base/java.lang.ref=ALL-UNNAMED
    --add-exports jdk.unsupported/sun.misc=ALL-UNNAMED
    --add-opens java.base/java.lang.module=ALL-UNNAMED
    --add-opens java.base/jdk.internal.loader=ALL-UNNAMED
    --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
    --add-opens java.base/jdk.internal.reflect=ALL-UNNAMED
    --add-opens java.base/jdk.internal.math=ALL-UNNAMED
    --add-opens java.base/jdk.internal.module=ALL-UNNAMED
    --add-opens java.base/jdk.internal.util.jar=ALL-UNNAMED
    --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED
    --add-opens java.base/java.io=ALL-UNNAMED
    --add-opens java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/java.util=ALL-UNNAMED
    -Dio.netty.tryReflectionSetAccessible=true
)

launch_node() {
    local i=$1 n=$2 heap=$3 ring_delay=${4:-1000} dir
    dir=$(node_dir "$i")
    local gossip=()
    if [ "$n" -gt 1 ]; then
        gossip=(-Dcassandra.ring_delay_ms="$ring_delay")
    fi
    if [ -f "$dir/cassandra-rackdc.properties" ]; then
        gossip+=(-Dcassandra-rackdc.properties="file://$dir/cassandra-rackdc.properties")
    fi
    # setsid: the node outlives this script and is not hit by its terminal's signals.
    # -Ddoppio.node marks the process as ours, so `stop` can find strays by command line.
    setsid java \
        -Xms"$heap" -Xmx"$heap" -Xss512k -XX:+UseG1GC -XX:+HeapDumpOnOutOfMemoryError -XX:+ExitOnOutOfMemoryError \
        -XX:HeapDumpPath="$dir/logs" -XX:ErrorFile="$dir/logs/hs_err_%p.log" \
        -XX:ActiveProcessorCount="$(nproc)" \
        "${JVM17_FLAGS[@]}" \
        -Djava.net.preferIPv4Stack=true \
        -Dcassandra.config="file://$dir/cassandra.yaml" \
        -Dlogback.configurationFile="$dir/logback.xml" \
        -Dcassandra.logdir="$dir/logs" \
        -Dcassandra.triggers_dir="$dir/triggers" \
        -Dcassandra.storagedir="$dir/data" \
        -Dcassandra-foreground=yes \
        -Dcassandra.skip_wait_for_gossip_to_settle=0 \
        -Dcassandra.superuser_setup_delay_ms=0 \
        -Dcassandra.disable_auth_caches_remote_configuration=true \
        "${gossip[@]}" \
        -Dcassandra.jmx.local.port="$(node_jmx_port "$i")" \
        -Ddoppio.node="$dir" \
        -cp "$(cat "$CLASSPATH_FILE")" \
        org.apache.cassandra.service.CassandraDaemon \
        >"$dir/logs/system.log" 2>&1 </dev/null &
    echo $! >"$dir/pid"
}

wait_for_node() {
    local i=$1 timeout=$2 dir addr pid start
    dir=$(node_dir "$i")
    addr=$(node_addr "$i")
    pid=$(node_pid "$i")
    start=$SECONDS
    while ! port_open "$addr" "$CQL_PORT"; do
        if ! pid_alive "$pid"; then
            log "node $i (pid $pid) died during start-up; its errors, then the last lines of $dir/logs/system.log:"
            grep -E "^(ERROR|WARN)|Exception" "$dir/logs/system.log" | tail -n 20 >&2 || true
            tail -n 15 "$dir/logs/system.log" >&2 || true
            return 1
        fi
        if ((SECONDS - start > timeout)); then
            log "node $i did not answer on $addr:$CQL_PORT within ${timeout}s; last lines of its log:"
            tail -n 40 "$dir/logs/system.log" >&2 || true
            return 1
        fi
        sleep 1
    done
    log "node $i up: CQL on $addr:$CQL_PORT after $((SECONDS - start))s (pid $pid)"
}

cmd_start() {
    local nodes=1 auth=0 tls=0 heap="" timeout=240
    while [ $# -gt 0 ]; do
        case "$1" in
        --nodes) nodes=${2:?--nodes needs a number}; shift 2 ;;
        --auth) auth=1; shift ;;
        --tls) tls=1; shift ;;
        --heap) heap=${2:?--heap needs a size such as 1G}; shift 2 ;;
        --timeout) timeout=${2:?--timeout needs seconds}; shift 2 ;;
        *) die "start: unknown option $1" ;;
        esac
    done
    [[ "$nodes" =~ ^[1-9]$ ]] || die "--nodes must be 1 to 9"
    if [ -z "$heap" ]; then
        if [ "$nodes" = 1 ]; then heap=1G; else heap=768M; fi
    fi
    cmd_install
    # Tokens and peers are fixed at a node's first boot: a state written for another cluster
    # size cannot be reused, so it is wiped (it only ever holds test data).
    if [ -f "$STATE/nodes" ] && [ "$(cat "$STATE/nodes")" != "$nodes" ]; then
        log "state is for a $(cat "$STATE/nodes")-node cluster, $nodes requested: wiping it"
        cmd_wipe
    fi
    mkdir -p "$STATE"
    echo "$nodes" >"$STATE/nodes"
    local i pid
    for ((i = 1; i <= nodes; i++)); do
        if node_left "$i"; then
            log "node $i left the ring (decommissioned): not started"
            continue
        fi
        pid=$(node_pid "$i" || true)
        if pid_alive "$pid"; then
            log "node $i already running (pid $pid)"
            wait_for_node "$i" "$timeout" || exit 1
            continue
        fi
        write_node_config "$i" "$nodes" "$auth" "$tls"
        echo "$auth" >"$(node_dir "$i")/auth"
        echo "$tls" >"$(node_dir "$i")/tls"
        log "starting node $i of $nodes on $(node_addr "$i") (heap $heap$([ "$auth" = 1 ] && echo ', auth on')$([ "$tls" = 1 ] && echo ', TLS only'))"
        launch_node "$i" "$nodes" "$heap"
        wait_for_node "$i" "$timeout" || exit 1
    done
    if [ "$nodes" -gt 1 ]; then
        wait_for_gossip "$nodes" "$timeout" || exit 1
    fi
}

# Every node must see every other node UP through gossip before a cluster counts as
# started: node 1's view alone is not enough, since the last node to start answers CQL a
# second or two before it has gossiped with the others, and a schema change it coordinates
# then waits for no peer (it lists none) and reaches the others late.
wait_for_gossip() {
    local n=$1 timeout=$2 start=$SECONDS i j view missing
    while :; do
        missing=""
        for ((j = 1; j <= n; j++)); do
            node_left "$j" && continue
            view=$(gossip_view "$j")
            for ((i = 1; i <= n; i++)); do
                [ "$i" = "$j" ] && continue
                node_left "$i" && continue
                grep -qx "$(node_addr "$i") UP" <<<"$view" ||
                    missing="$missing $(node_addr "$j")->$(node_addr "$i")"
            done
        done
        [ -z "$missing" ] && { log "all $n nodes see each other up"; return 0; }
        if ((SECONDS - start > timeout)); then
            log "not seen as up after ${timeout}s (seer->seen):$missing"
            return 1
        fi
        sleep 1
    done
}

# Node $1's view of its peers, a line `ADDRESS UP|DOWN` each: the last gossip verdict on
# each in its log since its gossip last started (a verdict from an earlier boot is not its
# view). Nothing when it has no log.
gossip_view() {
    awk '
        /Starting up server gossip/ { split("", seen) }
        /InetAddress \/[0-9.]+:7000 is now (UP|DOWN)/ {
            for (f = 1; f <= NF; f++) if ($f ~ /^\/[0-9.]+:7000$/) a = substr($f, 2)
            sub(/:7000$/, "", a); seen[a] = $NF
        }
        END { for (a in seen) print a, seen[a] }' "$(node_dir "$1")/logs/system.log" 2>/dev/null
}

stop_node() {
    local i=$1 signal=${2:-TERM} pid dir k
    dir=$(node_dir "$i")
    pid=$(node_pid "$i" || true)
    if pid_alive "$pid"; then
        kill "-$signal" "$pid" 2>/dev/null || true
        for ((k = 0; k < 60; k++)); do
            pid_alive "$pid" || break
            sleep 0.5
        done
        if pid_alive "$pid"; then
            log "node $i (pid $pid) ignored SIG$signal for 30s; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            sleep 0.5
        fi
        log "node $i stopped (pid $pid, SIG$signal)"
    fi
    rm -f "$dir/pid"
}

cmd_stop() {
    if [ $# -gt 0 ]; then
        [ -d "$(node_dir "$1")" ] || die "no node $1"
        stop_node "$1"
        return
    fi
    local i
    for i in $(known_nodes); do stop_node "$i"; done
    # Strays: any JVM of ours whose pid file was lost.
    local strays
    strays=$(pgrep -f -- "-Ddoppio.node=$STATE/node" || true)
    if [ -n "$strays" ]; then
        log "stopping stray nodes: $strays"
        kill -KILL $strays 2>/dev/null || true
    fi
}

cmd_kill() {
    local i=${1:?kill needs a node number}
    [ -d "$(node_dir "$i")" ] || die "no node $i"
    local pid
    pid=$(node_pid "$i" || true)
    pid_alive "$pid" || die "node $i is not running"
    kill -KILL "$pid"
    rm -f "$(node_dir "$i")/pid"
    log "node $i killed (pid $pid, SIGKILL)"
}

cmd_status() {
    local i pid addr all_up=0 any=0 state
    for i in $(known_nodes); do
        any=1
        pid=$(node_pid "$i" || true)
        addr=$(node_addr "$i")
        if node_left "$i"; then
            state="LEFT (decommissioned)"
        elif pid_alive "$pid" && port_open "$addr" "$CQL_PORT"; then
            state=UP
        elif pid_alive "$pid"; then
            state="STARTING (process alive, CQL port closed)"
            all_up=1
        else
            state=DOWN
            all_up=1
        fi
        local auth=off tls=off
        [ "$(cat "$(node_dir "$i")/auth" 2>/dev/null)" = 1 ] && auth=on
        [ "$(cat "$(node_dir "$i")/tls" 2>/dev/null)" = 1 ] && tls=on
        printf 'node%s  %-10s  pid %-8s  auth %-3s  tls %-3s  %s\n' "$i" "$addr" "${pid:--}" "$auth" "$tls" "$state"
    done
    if [ "$any" = 0 ]; then
        echo "no nodes (state directory $STATE is empty)"
        return 1
    fi
    # With several nodes, node 1's own view of its peers: the last gossip verdict on each.
    local log1
    log1="$(node_dir 1)/logs/system.log"
    if [ "$(known_nodes | wc -l)" -gt 1 ] && pid_alive "$(node_pid 1 || true)" && [ -f "$log1" ]; then
        printf 'gossip seen by node1: %s\n' "$(gossip_view 1 | awk '{ printf "%s %s  ", $1, $2 }')"
    fi
    return $all_up
}

# Runs Cassandra's NodeTool (same jars) against node $1's JMX port.
cmd_nodetool() {
    local i=${1:?nodetool needs a node number}
    shift
    [ -d "$(node_dir "$i")" ] || die "no node $i"
    ensure_java_and_maven
    classpath_complete || die "Cassandra is not installed (scripts/cassandra.sh install)"
    java -Xmx128m "${JVM17_FLAGS[@]}" -Dlogback.configurationFile="$(node_dir "$i")/logback.xml" \
        -cp "$(cat "$CLASSPATH_FILE")" org.apache.cassandra.tools.NodeTool \
        -h 127.0.0.1 -p "$(node_jmx_port "$i")" "$@"
}

# The tokens of the nodes in the ring (one per node, num_tokens 1), sorted.
ring_tokens() {
    local i dir
    for i in $(known_nodes); do
        node_left "$i" && continue
        dir=$(node_dir "$i")
        sed -n 's/^initial_token: //p' "$dir/cassandra.yaml" 2>/dev/null
    done | sort -n
}

# The middle of the widest gap between consecutive tokens of the ring (the gap from the
# last token round to the first included), in Murmur3's signed 64-bit range. Gaps are
# compared in quarters so that nothing overflows; the middle wraps round the ring the way
# bash's 64-bit arithmetic does.
widest_gap_middle() {
    local t=() n k a q best_a=0 best_q=-1
    mapfile -t t < <(ring_tokens)
    n=${#t[@]}
    if [ "$n" = 0 ]; then
        echo 0
        return
    fi
    for ((k = 0; k < n; k++)); do
        a=${t[k]}
        if ((k + 1 < n)); then
            q=$((t[k + 1] / 4 - a / 4))
        else
            q=$((t[0] / 4 + 4611686018427387904 - a / 4))
        fi
        if ((q > best_q)); then
            best_q=$q
            best_a=$a
        fi
    done
    echo $((best_a + 2 * best_q))
}

# Bootstraps node n+1 into the running cluster: it streams its share of the data from the
# others (auto_bootstrap), then opens its CQL port; the cluster then counts n+1 nodes.
cmd_add() {
    local token="" heap=768M timeout=300
    while [ $# -gt 0 ]; do
        case "$1" in
        --token) token=${2:?--token needs a token}; shift 2 ;;
        --heap) heap=${2:?--heap needs a size such as 1G}; shift 2 ;;
        --timeout) timeout=${2:?--timeout needs seconds}; shift 2 ;;
        *) die "add: unknown option $1" ;;
        esac
    done
    [ -f "$STATE/nodes" ] || die "no cluster in $STATE: start one first"
    pid_alive "$(node_pid 1 || true)" || die "node 1 (the seed) is not running"
    local n i dir auth tls
    n=$(cat "$STATE/nodes")
    i=$((n + 1))
    [ "$i" -le 9 ] || die "a cluster has at most 9 nodes"
    [ -n "$token" ] || token=$(widest_gap_middle)
    [[ "$token" =~ ^-?[0-9]+$ ]] || die "--token must be an integer (Murmur3)"
    dir=$(node_dir "$i")
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "$token" >"$dir/token"
    auth=$(cat "$(node_dir 1)/auth" 2>/dev/null || echo 0)
    tls=$(cat "$(node_dir 1)/tls" 2>/dev/null || echo 0)
    write_node_config "$i" "$i" "$auth" "$tls" true
    echo "$auth" >"$dir/auth"
    echo "$tls" >"$dir/tls"
    echo "$i" >"$STATE/nodes"
    log "adding node $i on $(node_addr "$i") with token $token (bootstrap, heap $heap)"
    # A joining node waits RING_DELAY to learn the ring and the nodes it streams from; the 1 s
    # that a fresh test cluster starts with was too short once on a loaded machine (the node
    # gave up its bootstrap), so a joining node waits 10 s.
    launch_node "$i" "$i" "$heap" 10000
    wait_for_node "$i" "$timeout" || exit 1
}

# Decommissions node $1: it streams its ranges to the nodes that take them over and leaves
# the ring (NodeTool's decommission, which returns when it is done); then its process is
# stopped and the node is marked as gone (`start` skips it, `status` says LEFT).
cmd_decommission() {
    local i=${1:?decommission needs a node number}
    [ -d "$(node_dir "$i")" ] || die "no node $i"
    node_left "$i" && die "node $i already left the ring"
    pid_alive "$(node_pid "$i" || true)" || die "node $i is not running"
    log "decommissioning node $i ($(node_addr "$i"))"
    local start=$SECONDS
    cmd_nodetool "$i" decommission || die "nodetool decommission of node $i failed"
    touch "$(node_dir "$i")/left"
    log "node $i left the ring after $((SECONDS - start))s"
    stop_node "$i"
}

cmd_logs() {
    local i=${1:-1} lines=${2:-100}
    local f
    f="$(node_dir "$i")/logs/system.log"
    [ -f "$f" ] || die "no log for node $i ($f)"
    tail -n "$lines" "$f"
}

cmd_wipe() {
    cmd_stop
    rm -rf "$STATE"
    log "wiped $STATE"
}

main() {
    local cmd=${1:-}
    [ $# -gt 0 ] && shift
    case "$cmd" in
    install) cmd_install ;;
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    kill) cmd_kill "$@" ;;
    status) cmd_status ;;
    add) cmd_add "$@" ;;
    decommission) cmd_decommission "$@" ;;
    nodetool) cmd_nodetool "$@" ;;
    logs) cmd_logs "$@" ;;
    wipe) cmd_wipe ;;
    *)
        sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        [ -z "$cmd" ] || [ "$cmd" = help ] || [ "$cmd" = --help ] || exit 2
        ;;
    esac
}

main "$@"
