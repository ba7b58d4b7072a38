#!/usr/bin/env bash
# End-to-end benchmark of examples/relay (not run by CI). It builds the relay
# and bench/relay/tools, runs each scenario for a fixed time with loggen as
# the load generator, and prints events/s, CPU seconds, peak RSS and loss:
#
#   a        syslog TCP -> archive                         (relay and rsyslog)
#   b        syslog TCP -> 3 routes + GeoIP -> HEC gzip + archive
#            (load from "tools send", as fast as it goes or at B_RATE
#            events/s; or loggen -R with B_LOADGEN=loggen); B_SPOOL_MODE
#            sets the spool mode (always, the default, or on_failure)
#   c        syslog UDP -> archive at 2 x UDP_RATE (125000) datagrams/s from
#            loggen, or with C_LOADGEN=tools from "tools udpsend" (sendmmsg;
#            loggen sends at most about 216 k datagrams/s here)
#   d        syslog UDP at 50 k ev/s -> HEC that answers 503 for D_OUTAGE (60) s,
#            then recovers: drops, spool bytes, replay rate, time to drain;
#            D_TIMELINE=file keeps the per-second timeline (bench/results format)
#   e        syslog TCP at 20 k ev/s -> HEC; HEC goes down, the relay is killed
#            with SIGKILL 1 s later (inside the in-memory retry budget) and
#            restarted with HEC back: lost and duplicated events per spool mode
#   m        syslog TCP -> HEC (gzip), as fast as possible, spool mode always
#            vs on_failure: the cost of write-ahead spooling in events per
#            CPU-second (scenario a has no network destination to spool for)
#   h        HEC input -> archive: gzipped requests of 100 events from 4
#            connections (tools hecsend), each answered once archived;
#            events/s and events per relay CPU-second
#   r        rsyslog (fed by tools send as fast as it goes) -> relay -> archive,
#            over plain TCP syslog (omfwd, octet-counted) and over RELP
#            (omrelp, window 128, each frame answered once archived):
#            events/s until everything is archived and relay CPU per event;
#            their ratio is the cost of acknowledgement
#   o        OTLP in -> archive: gzipped export requests of 100 log records
#            from O_CONNS (4) connections (tools otlpsend), over OTLP/HTTP
#            (protobuf) and OTLP/gRPC, each answered once archived; events
#            per relay CPU-second. Then the same load into the OTel
#            Collector's otlpreceiver with a counting consumer (tools
#            otelcol), side by side: events per Collector CPU-second
#   s        Sentinel: 1.2 KB RFC 5424 syslog (tools biglines: application,
#            web, audit and kubelet logs that gzip shrinks about 3x) over TCP
#            -> relay -> Syslog table, then 1.2 KB CEF firewall records ->
#            CommonSecurityLog, through a Logs Ingestion stand-in (tools dcr:
#            token endpoint, gzip JSON rows, 204), as fast as it goes:
#            events per relay CPU-second, JSON and wire bytes per row.
#            S_SPOOL_MODE (always, the default, or on_failure); S_LEVEL sets
#            the destination's compression_level (default: the relay's);
#            S_RATE paces the load (events/s; 0, the default, is as fast as
#            it goes, which builds a backlog that the spool takes on disk
#            even with on_failure)
#   sf       FortiGate key=value -> CommonSecurityLog against CEF -> CommonSecurityLog:
#            scenario s with 1.2 KB FortiOS traffic and UTM logs (tools biglines
#            -kind fortigate) through a route with {type: vendor, name: fortigate},
#            alternating with scenario s's CEF lines, SF_RUNS (5) pairs:
#            events per relay CPU-second of each, run after run
#   so       Sentinel outage: scenario s's destination unreachable for
#            SO_OUTAGE (60) s while lines arrive at SO_RATE (5000) events/s,
#            then up: spool bytes per event against wire bytes per row, and
#            the backlog's drain rate
#   idle     the default config with no traffic: share of a core used over
#            IDLE_SECONDS (default 60), from /proc
#
# Each scenario also prints the receive -> delivered latency (p50, p99) per
# destination from relay_destination_latency_seconds. RELAY_CPUPROFILE=path
# writes a CPU profile per scenario to path.<scenario>. Scenarios a and c
# print the relay's reads (bytes or datagrams per read) and a its archive's
# bytes per write(2), from its metrics. SYSCALLS=1 counts the system calls
# of the relay (and of rsyslog in a) during the load with perf stat
# (tracepoints; needs perf and root) and prints them per event. A_IDLE=N
# opens N idle connections to the relay in scenario a before the load (one
# line each, then quiet; tools idle) and prints its RSS with them at rest.
# A_SOURCES=1 turns on per-source statistics (sources: {enabled: true},
# the defaults) in scenario a.
# A_TAP=1 turns the operator API on in scenario a and keeps a `relay tap`
# open at destination:archive sampling 1 in 100 during the load (its
# events go to a file; the line reports how many it printed).
# RELAY_ROOT=dir builds the relay from another checkout of the repository
# (e.g. git archive of an earlier commit), for before/after runs with the
# same tools and scenarios.
# Usage: bench/relay/run.sh [seconds] [scenario...]     (default: 10 a b c)
# rsyslog is taken from its Debian package, unpacked beside the run (it
# conflicts with syslog-ng-core in apt): set RSYSLOG_ROOT to a directory
# holding the unpacked rsyslog, libestr0 and libfastjson4 packages, or let
# the script fetch them with apt-get download.
set -euo pipefail
DUR=${1:-10}
shift || true
SCEN=${*:-a b c}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/relay-bench.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
tck=$(getconf CLK_TCK)

echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(go version | cut -d' ' -f3)"
go -C "${RELAY_ROOT:-$root}/examples" build -o "$work/relay" ./relay
go -C "$root/bench" build -o "$work/tools" ./relay/tools

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_s() { awk -v t="$tck" '{printf "%.2f", ($14+$15)/t}' "/proc/$1/stat"; }
cpu_split() { awk -v t="$tck" '{printf "user=%.2fs sys=%.2fs", $14/t, $15/t}' "/proc/$1/stat"; }
rss_now_mb() { awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$1/status"; }
# syscalls_start PID: count PID's system calls (SYSCALLS=1) until syscalls_stop.
syscalls_start() {
	[ -n "${SYSCALLS:-}" ] || return 0
	perf stat -x, -o "$work/perf.$1" -p "$1" -e raw_syscalls:sys_enter,syscalls:sys_enter_read,syscalls:sys_enter_recvfrom,syscalls:sys_enter_recvmmsg,syscalls:sys_enter_write,syscalls:sys_enter_futex,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_nanosleep,context-switches &
	perfpid=$!
}
# syscalls_stop PID EVENTS: stop counting and print the counts per event.
syscalls_stop() {
	[ -n "${SYSCALLS:-}" ] || return 0
	kill -INT "$perfpid"
	wait "$perfpid" || true
	awk -F, -v n="$2" '$1 ~ /^[0-9]+$/ && $1 > 0 {
		name = $3; sub(/^(raw_)?syscalls:sys_enter_?/, "", name); if (name == "") name = "all"
		printf "  %s=%d (%.4f/event)", name, $1, $1 / n } END { print "" }' "$work/perf.$1"
}
rss_mb() { awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$1/status"; }
metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v m="$2" 'index($0, m) == 1 {s += $NF} END {printf "%d", s}'; }
loggen_count() { grep -o 'count=[0-9]*' "$1" | tail -1 | cut -d= -f2; }
# wait_for CMD TARGET: poll until CMD prints TARGET (or 60 s pass).
wait_for() {
	for _ in $(seq 600); do
		[ "$($1)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# wait_stable CMD: poll until CMD's output has not changed for 1 s (60 s max).
wait_stable() {
	local prev=-1 cur same=0
	for _ in $(seq 600); do
		cur=$($1)
		if [ "$cur" = "$prev" ]; then same=$((same + 1)); else same=0; fi
		[ "$same" -ge 10 ] && return 0
		prev=$cur
		sleep 0.1
	done
}

report() { # name sent delivered cpu rss drops
	local name=$1 sent=$2 got=$3 cpu=$4 rss=$5 drops=${6:-0}
	awk -v n="$name" -v s="$sent" -v g="$got" -v c="$cpu" -v r="$rss" -v d="$drops" -v t="$DUR" 'BEGIN {
		printf "%-28s sent=%d delivered=%d loss=%d drops=%d rate=%.0f ev/s cpu=%.2fs ev/cpu-s=%.0f peak_rss=%dMB\n",
			n, s, g, s-g, d, s/t, c, (c > 0 ? g/c : 0), r }'
}

start_relay() { # dir config -> sets rpid
	"$work/relay" ${RELAY_CPUPROFILE:+-cpuprofile "$RELAY_CPUPROFILE.$(basename "$1")"} -config "$2" >"$1/relay.log" 2>&1 &
	rpid=$!
	pids+=("$rpid")
	for _ in $(seq 100); do grep -q "relay started" "$1/relay.log" && return 0; sleep 0.05; done
	cat "$1/relay.log"
	return 1
}

# latency MPORT DEST: p50 and p99 of relay_destination_latency_seconds for
# DEST, interpolated within buckets as Prometheus' histogram_quantile does.
latency() {
	curl -s "http://127.0.0.1:$1/metrics" | awk -v d="destination=\"$2\"" '
		index($0, "relay_destination_latency_seconds_bucket{") == 1 && index($0, d) {
			match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5)
			n++; ub[n] = (le == "+Inf" ? 1e99 : le + 0); cum[n] = $NF + 0 }
		function q(p,   t, i, lo, c0) {
			t = p * cum[n]; lo = 0; c0 = 0
			for (i = 1; i <= n; i++) {
				if (cum[i] >= t) {
					if (ub[i] == 1e99) return lo
					return lo + (ub[i] - lo) * (cum[i] > c0 ? (t - c0) / (cum[i] - c0) : 0)
				}
				lo = ub[i]; c0 = cum[i]
			}
		}
		END { dn = substr(d, 14, length(d) - 14)
			if (n == 0 || cum[n] == 0) { print "  latency to " dn ": none"; exit }
			printf "  latency to %s: p50=%.1fms p99=%.1fms (%d events)\n", dn, q(0.5) * 1000, q(0.99) * 1000, cum[n] }'
}

stop_relay() {
	kill -TERM "$rpid"
	wait "$rpid" || true
}

scenario_a() {
	local d=$work/a port mport
	mkdir -p "$d"
	port=$(freeport)
	mport=$(freeport)
	cat >"$d/relay.yaml" <<EOF
inputs:
  syslog_tcp:
    - name: tcp
      listen: 127.0.0.1:$port
destinations:
  archive: {type: archive, dir: $d/archive, format: raw}
routes:
  - {name: all, final: true, destinations: [archive]}
spool: {dir: $d/spool}
dead_letter: {dir: $d/dl}
metrics: {listen: 127.0.0.1:$mport}
EOF
	if [ -n "${A_SOURCES:-}" ]; then # per-source statistics on, at their defaults
		echo "sources: {enabled: true}" >>"$d/relay.yaml"
	fi
	if [ -n "${A_TAP:-}" ]; then # the API on, for a tap during the load
		echo "api: {enabled: true}" >>"$d/relay.yaml"
	fi
	start_relay "$d" "$d/relay.yaml"
	local tpid=""
	if [ -n "${A_TAP:-}" ]; then
		"$work/relay" tap -addr "127.0.0.1:$mport" -at destination:archive -sample 100 >"$d/tap.txt" 2>&1 &
		tpid=$!
		pids+=("$tpid")
		wait_for "metric $mport relay_tap_subscribers{point=\"destination:archive\"}" 1 || true
	fi
	local idle=${A_IDLE:-0} ipid rest=""
	if [ "$idle" -gt 0 ]; then
		"$work/tools" idle -addr "127.0.0.1:$port" -conns "$idle" >"$d/idle.txt" 2>&1 &
		ipid=$!
		pids+=("$ipid")
		wait_for "metric $mport relay_destination_delivered_events_total" "$idle" || true
		rest=$(rss_now_mb "$rpid")
	fi
	syscalls_start "$rpid"
	loggen --inet --stream --active-connections 2 --rate 1000000 --interval "$DUR" -Q 127.0.0.1 "$port" >"$d/loggen.txt" 2>&1
	local sent
	sent=$(loggen_count "$d/loggen.txt")
	wait_for "metric $mport relay_destination_delivered_events_total" $((sent + idle)) || true
	syscalls_stop "$rpid" "$sent"
	local cpu rss split
	cpu=$(cpu_s "$rpid")
	split=$(cpu_split "$rpid")
	rss=$(rss_mb "$rpid")
	local lat reads rbytes writes wbytes
	lat=$(latency "$mport" archive)
	reads=$(metric "$mport" 'relay_input_reads_total{input="tcp"}')
	rbytes=$(metric "$mport" 'relay_input_read_bytes_total{input="tcp"}')
	writes=$(metric "$mport" 'relay_archive_writes_total{destination="archive"}')
	wbytes=$(metric "$mport" 'relay_archive_written_bytes_total{destination="archive"}')
	[ "$idle" -gt 0 ] && kill "$ipid" 2>/dev/null
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	stop_relay
	report "a relay tcp->archive" "$sent" $(($(cat "$d"/archive/* | wc -l) - idle)) "$cpu" "$rss"
	awk -v s="$split" -v r="$reads" -v rb="$rbytes" -v w="$writes" -v wb="$wbytes" -v n="$sent" 'BEGIN {
		printf "  %s; reads=%d (%.0f bytes, %.1f events per read); archive writes=%d (%.0f bytes per write)\n",
			s, r, (r > 0 ? rb / r : 0), (r > 0 ? n / r : 0), w, (w > 0 ? wb / w : 0) }'
	[ "$idle" -gt 0 ] && echo "  $idle idle connections open: RSS at rest with them ${rest} MB, peak under load ${rss} MB"
	[ -n "$tpid" ] && echo "  tap at destination:archive, 1 in 100: $(wc -l <"$d/tap.txt") events printed"
	echo "$lat"
}

rsyslog_root() {
	if [ -n "${RSYSLOG_ROOT:-}" ]; then echo "$RSYSLOG_ROOT"; return; fi
	local r=$work/rsyslog
	mkdir -p "$r"
	(cd "$r" && apt-get download rsyslog rsyslog-relp librelp0 libestr0 libfastjson4 liblognorm5 >/dev/null 2>&1 && for p in *.deb; do dpkg-deb -x "$p" root; done)
	echo "$r/root"
}

scenario_a_rsyslog() {
	local d=$work/ar port rr
	mkdir -p "$d/work"
	port=$(freeport)
	rr=$(rsyslog_root)
	cat >"$d/rsyslog.conf" <<EOF
global(workDirectory="$d/work")
module(load="imtcp")
input(type="imtcp" address="127.0.0.1" port="$port")
template(name="msgonly" type="string" string="%msg:2:\$%\n")
action(type="omfile" file="$d/out.log" template="msgonly")
EOF
	LD_LIBRARY_PATH=$rr/usr/lib/x86_64-linux-gnu "$rr/usr/sbin/rsyslogd" -n -f "$d/rsyslog.conf" -i "$d/pid" \
		-M "$rr/usr/lib/x86_64-linux-gnu/rsyslog" >"$d/rsyslog.log" 2>&1 &
	local p=$!
	pids+=("$p")
	for _ in $(seq 100); do [ -s "$d/pid" ] && break; sleep 0.05; done
	sleep 0.5 # rsyslog has no readiness signal; its listener opens after the pid file
	syscalls_start "$p"
	loggen --inet --stream --active-connections 2 --rate 1000000 --interval "$DUR" -Q 127.0.0.1 "$port" >"$d/loggen.txt" 2>&1
	local sent
	sent=$(loggen_count "$d/loggen.txt")
	wait_for "lines $d/out.log" "$sent" || true
	syscalls_stop "$p" "$sent"
	local cpu rss split
	cpu=$(cpu_s "$p")
	split=$(cpu_split "$p")
	rss=$(rss_mb "$p")
	kill -TERM "$p"
	wait "$p" || true
	report "a rsyslog imtcp->omfile" "$sent" "$(lines "$d/out.log")" "$cpu" "$rss"
	echo "  $split"
}
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }

scenario_b() {
	local d=$work/b port mport hport
	mkdir -p "$d"
	port=$(freeport)
	mport=$(freeport)
	hport=$(freeport)
	"$work/tools" mkgeo -dir "$d" -networks 20000
	"$work/tools" lines -n 100000 >"$d/lines.txt"
	"$work/tools" hec -listen "127.0.0.1:$hport" -token bench-token >"$d/hec.txt" 2>&1 &
	local hpid=$!
	pids+=("$hpid")
	cat >"$d/relay.yaml" <<EOF
inputs:
  syslog_tcp:
    - name: tcp
      listen: 127.0.0.1:$port
destinations:
  archive: {type: archive, dir: $d/archive, format: raw}
  hec: {type: hec, url: "http://127.0.0.1:$hport", token: bench-token, gzip: true}
routes:
  - name: auth
    filter: 'Failed password|sshd'
    final: true
    pipeline:
      - {type: geoip, city_db: $d/GeoLite2-City.mmdb, asn_db: $d/GeoLite2-ASN.mmdb}
    destinations: [hec, archive]
  - name: firewall
    filter: '(?i)ufw block|deny|drop'
    final: true
    pipeline:
      - {type: geoip, city_db: $d/GeoLite2-City.mmdb, asn_db: $d/GeoLite2-ASN.mmdb}
    destinations: [hec, archive]
  - name: all
    final: true
    destinations: [hec, archive]
spool: {dir: $d/spool, mode: ${B_SPOOL_MODE:-always}}
dead_letter: {dir: $d/dl}
metrics: {listen: 127.0.0.1:$mport}
EOF
	start_relay "$d" "$d/relay.yaml"
	if [ "${B_LOADGEN:-tools}" = loggen ]; then
		loggen --inet --stream --active-connections 2 --rate 1000000 --interval "$DUR" -Q -R "$d/lines.txt" -l -d \
			127.0.0.1 "$port" >"$d/loggen.txt" 2>&1
	else # loggen's file reader tops out near 110 k lines/s here: replay with a cheaper sender
		"$work/tools" send -addr "127.0.0.1:$port" -file "$d/lines.txt" -duration "${DUR}s" -conns 2 -rate "${B_RATE:-0}" >"$d/loggen.txt" 2>&1
	fi
	local sent
	sent=$(loggen_count "$d/loggen.txt")
	wait_for "metric $mport relay_destination_delivered_events_total{destination=\"hec\"" "$sent" || true
	local cpu rss
	cpu=$(cpu_s "$rpid")
	rss=$(rss_mb "$rpid")
	local geo lat
	geo=$(metric "$mport" 'relay_destination_delivered_events_total{destination="hec"')
	lat=$(latency "$mport" hec; latency "$mport" archive)
	stop_relay
	local hec
	hec=$(curl -s "http://127.0.0.1:$hport/count" | cut -d' ' -f1)
	report "b relay tcp->3 routes+geoip->hec+archive (${B_LOADGEN:-tools})" "$sent" "$hec" "$cpu" "$rss"
	echo "  archive lines: $(cat "$d"/archive/* | wc -l), hec delivered (ledger): $geo"
	echo "$lat"
}

scenario_c() {
	local d=$work/c port mport
	mkdir -p "$d"
	port=$(freeport)
	mport=$(freeport)
	cat >"$d/relay.yaml" <<EOF
inputs:
  syslog_udp:
    - name: udp
      listen: 127.0.0.1:$port
      read_buffer: 32MiB
      readers: ${UDP_READERS:-2}
  syslog_tcp: []
workers:
  ring_size: 65536
destinations:
  archive: {type: archive, dir: $d/archive, format: raw}
routes:
  - {name: all, final: true, destinations: [archive]}
spool: {dir: $d/spool}
dead_letter: {dir: $d/dl}
metrics: {listen: 127.0.0.1:$mport}
EOF
	start_relay "$d" "$d/relay.yaml"
	local before after
	before=$(awk '/^Udp:/ {n++} /^Udp:/ && n == 2 {print $6}' /proc/net/snmp)
	syscalls_start "$rpid"
	if [ "${C_LOADGEN:-loggen}" = tools ]; then
		"$work/tools" udpsend -addr "127.0.0.1:$port" -rate "$((2 * ${UDP_RATE:-125000}))" -duration "${DUR}s" -conns 2 >"$d/loggen.txt" 2>&1
	else
		loggen --inet --dgram --active-connections 2 --rate "${UDP_RATE:-125000}" --interval "$DUR" -Q 127.0.0.1 "$port" >"$d/loggen.txt" 2>&1
	fi
	local sent
	sent=$(loggen_count "$d/loggen.txt")
	wait_stable "metric $mport relay_destination_delivered_events_total"
	syscalls_stop "$rpid" "$sent"
	after=$(awk '/^Udp:/ {n++} /^Udp:/ && n == 2 {print $6}' /proc/net/snmp)
	local cpu rss qf
	cpu=$(cpu_s "$rpid")
	rss=$(rss_mb "$rpid")
	qf=$(metric "$mport" 'relay_dropped_events_total{reason="queue_full"}')
	local lat reads
	lat=$(latency "$mport" archive)
	reads=$(metric "$mport" 'relay_input_reads_total{input="udp"}')
	stop_relay
	report "c relay udp->archive (${UDP_READERS:-2} readers)" "$sent" "$(cat "$d"/archive/* | wc -l)" "$cpu" "$rss" "$qf"
	awk -v r="$reads" -v n="$sent" 'BEGIN { printf "  recvmmsg calls=%d (%.1f datagrams per call)\n", r, (r > 0 ? n / r : 0) }' 
	echo "  kernel UDP receive-buffer errors during the run: $((after - before)); relay queue_full drops: $qf;" \
		"SO_RCVBUF granted: $(cat /proc/sys/net/core/rmem_max) max"
	echo "$lat"
}

# scenario_idle: the default config (no file: listens on 127.0.0.1:5514
# UDP and TCP, archives to ./data), no traffic; CPU over IDLE_SECONDS after
# a 2 s settle. Target: at most 0.3 % of a core.
scenario_idle() {
	local d=$work/idle secs=${IDLE_SECONDS:-60}
	mkdir -p "$d"
	(cd "$d" && "$work/relay" >"$d/relay.log" 2>&1) &
	local p=$!
	pids+=("$p")
	for _ in $(seq 100); do grep -q "relay started" "$d/relay.log" && break; sleep 0.05; done
	local rp
	rp=$(pgrep -P "$p" -x relay || echo "$p")
	sleep 2
	local t0 t1
	t0=$(awk '{print $14+$15}' "/proc/$rp/stat")
	sleep "$secs"
	t1=$(awk '{print $14+$15}' "/proc/$rp/stat")
	kill -TERM "$rp" 2>/dev/null || true
	wait "$p" || true
	awk -v a="$t0" -v b="$t1" -v t="$tck" -v s="$secs" 'BEGIN {
		printf "idle relay (default config)   cpu=%.2fs over %ds = %.3f%% of a core\n", (b-a)/t, s, 100*(b-a)/t/s }'
}

start_hec() { # dir -> sets hport, hpid
	hport=$(freeport)
	"$work/tools" hec -listen "127.0.0.1:$hport" -token bench-token -unique >"$1/hec.txt" 2>&1 &
	hpid=$!
	pids+=("$hpid")
	for _ in $(seq 100); do curl -s "http://127.0.0.1:$hport/count" >/dev/null && return 0; sleep 0.05; done
	return 1
}
hec_count() { curl -s "http://127.0.0.1:$hport/count" | cut -d' ' -f"${1:-1}"; }
now_s() { date +%s.%N; }
hec_config() { # dir port mport mode
	cat <<EOF
inputs:
  syslog_udp:
    - name: udp
      listen: 127.0.0.1:$2
      read_buffer: 32MiB
  syslog_tcp:
    - name: tcp
      listen: 127.0.0.1:$2
destinations:
  hec: {type: hec, url: "http://127.0.0.1:$hport", token: bench-token}
routes:
  - {name: all, final: true, destinations: [hec]}
spool: {dir: $1/spool, mode: $4, max_size: 4GiB}
dead_letter: {dir: $1/dl}
metrics: {listen: 127.0.0.1:$3}
EOF
}

scenario_d() {
	local d=$work/d port mport out=${D_OUTAGE:-60} mode=${D_MODE:-always}
	mkdir -p "$d"
	port=$(freeport)
	mport=$(freeport)
	start_hec "$d"
	hec_config "$d" "$port" "$mport" "$mode" >"$d/relay.yaml"
	start_relay "$d" "$d/relay.yaml"
	curl -s -X POST "http://127.0.0.1:$hport/down"
	local before after
	before=$(awk '/^Udp:/ {n++} /^Udp:/ && n == 2 {print $6}' /proc/net/snmp)
	loggen --inet --dgram --rate 50000 --interval $((out + 10)) -Q 127.0.0.1 "$port" >"$d/loggen.txt" 2>&1 &
	local lpid=$!
	# Timeline for bench/results/outage-timeline.tsv: one sample a second.
	local t_start
	t_start=$(now_s)
	{
		echo "# outage: 0 $out"
		printf 't_s\tin\tdelivered\tspool_backlog\n'
		while :; do
			printf '%s\t%s\t%s\t%s\n' "$(awk -v a="$t_start" -v b="$(now_s)" 'BEGIN {printf "%.1f", b - a}')" \
				"$(metric "$mport" relay_input_received_events_total)" \
				"$(metric "$mport" 'relay_destination_delivered_events_total{destination="hec"')" \
				"$(metric "$mport" 'relay_spool_events{destination="hec"}')"
			sleep 1
		done
	} >"$d/timeline.tsv" &
	local tpid=$!
	pids+=("$tpid")
	sleep "$out"
	local sbytes sevents
	sbytes=$(metric "$mport" 'relay_spool_bytes{destination="hec"}')
	sevents=$(metric "$mport" 'relay_spool_events{destination="hec"}')
	curl -s -X POST "http://127.0.0.1:$hport/up"
	local t0 t1 first=""
	t0=$(now_s)
	for _ in $(seq 100); do
		[ "$(hec_count)" -gt 0 ] && first=$(now_s) && break
		sleep 0.05
	done
	wait "$lpid"
	local sent
	sent=$(loggen_count "$d/loggen.txt")
	for _ in $(seq 1200); do
		[ "$(metric "$mport" 'relay_spool_events{destination="hec"}')" = 0 ] &&
			[ "$(metric "$mport" 'relay_destination_delivered_events_total{destination="hec"')" -ge "$(metric "$mport" relay_destination_events_total)" ] && break
		sleep 0.1
	done
	t1=$(now_s)
	sleep 2
	kill "$tpid" 2>/dev/null || true
	[ -n "${D_TIMELINE:-}" ] && cp "$d/timeline.tsv" "$D_TIMELINE"
	after=$(awk '/^Udp:/ {n++} /^Udp:/ && n == 2 {print $6}' /proc/net/snmp)
	local cpu rss drops
	cpu=$(cpu_s "$rpid")
	rss=$(rss_mb "$rpid")
	drops=$(metric "$mport" 'relay_dropped_events_total')
	stop_relay
	DUR=$((out + 10)) report "d udp 50k/s, hec 503 ${out}s ($mode)" "$sent" "$(hec_count)" "$cpu" "$rss" "$drops"
	awk -v sb="$sbytes" -v se="$sevents" -v a="$t0" -v b="$t1" -v f="${first:-0}" -v k=$((after - before)) 'BEGIN {
		printf "  at recovery: spool %d events, %.1f MiB; first delivery %.2f s and backlog drained %.1f s after recovery (%.0f ev/s of backlog, live traffic behind it); kernel UDP drops %d\n",
			se, sb / 1048576, (f > 0 ? f - a : -1), b - a, (b - a > 0 ? se / (b - a) : 0), k }'
}

scenario_e() { # mode
	local mode=$1 d=$work/e-$1 port mport
	mkdir -p "$d"
	port=$(freeport)
	mport=$(freeport)
	start_hec "$d"
	hec_config "$d" "$port" "$mport" "$mode" >"$d/relay.yaml"
	start_relay "$d" "$d/relay.yaml"
	"$work/tools" seq -addr "127.0.0.1:$port" -rate 20000 -duration 30s >"$d/seq.txt" 2>&1 &
	local spid=$!
	sleep 5
	curl -s -X POST "http://127.0.0.1:$hport/down"
	sleep 1
	kill -KILL "$rpid"
	wait "$rpid" 2>/dev/null || true
	wait "$spid" || true
	local sent
	sent=$(grep -o 'count=[0-9]*' "$d/seq.txt" | cut -d= -f2)
	curl -s -X POST "http://127.0.0.1:$hport/up"
	start_relay "$d" "$d/relay.yaml"
	wait_stable "metric $mport relay_destination_delivered_events_total"
	stop_relay
	local got uniq
	got=$(hec_count 1)
	uniq=$(hec_count 4)
	echo "e kill -9 1 s into a HEC outage, spool mode $mode: sent=$sent delivered=$got distinct=$uniq lost=$((sent - uniq)) duplicated=$((got - uniq))"
}

scenario_m() { # mode
	local mode=$1 d=$work/m-$1 port mport
	mkdir -p "$d"
	port=$(freeport)
	mport=$(freeport)
	start_hec "$d"
	"$work/tools" lines -n 100000 >"$d/lines.txt"
	hec_config "$d" "$port" "$mport" "$mode" >"$d/relay.yaml"
	start_relay "$d" "$d/relay.yaml"
	"$work/tools" send -addr "127.0.0.1:$port" -file "$d/lines.txt" -duration "${DUR}s" -conns 2 >"$d/loggen.txt" 2>&1
	local sent
	sent=$(loggen_count "$d/loggen.txt")
	wait_for "metric $mport relay_destination_delivered_events_total" "$sent" || true
	local cpu rss
	cpu=$(cpu_s "$rpid")
	rss=$(rss_mb "$rpid")
	stop_relay
	report "m relay tcp->hec ($mode)" "$sent" "$(hec_count)" "$cpu" "$rss"
}

scenario_h() {
	local d=$work/h port mport
	mkdir -p "$d"
	port=$(freeport)
	mport=$(freeport)
	cat >"$d/relay.yaml" <<EOF
inputs:
  hec:
    - name: hec
      listen: 127.0.0.1:$port
      tokens: [{name: bench, token: bench-token}]
destinations:
  archive: {type: archive, dir: $d/archive, format: raw}
routes:
  - {name: all, final: true, destinations: [archive]}
spool: {dir: $d/spool}
dead_letter: {dir: $d/dl}
metrics: {listen: 127.0.0.1:$mport}
EOF
	start_relay "$d" "$d/relay.yaml"
	"$work/tools" hecsend -url "http://127.0.0.1:$port/services/collector/event" -token bench-token \
		-conns "${H_CONNS:-4}" -duration "${DUR}s" >"$d/send.txt" 2>&1
	local sent cpu rss
	sent=$(loggen_count "$d/send.txt")
	cpu=$(cpu_s "$rpid")
	rss=$(rss_mb "$rpid")
	stop_relay
	report "h relay hec(gzip,100/req)->archive" "$sent" "$(cat "$d"/archive/* | wc -l)" "$cpu" "$rss"
	grep -o 'refused=[0-9]*' "$d/send.txt"
}

# scenario_r PROTO (relp|tcp): rsyslog imtcp -> omrelp or omfwd -> relay -> archive.
scenario_r() {
	local proto=$1 d=$work/r-$1 port mport rin rr
	mkdir -p "$d/work"
	port=$(freeport)
	mport=$(freeport)
	rin=$(freeport)
	rr=$(rsyslog_root)
	local input action
	if [ "$proto" = relp ]; then
		input="  relp:
    - {name: in, listen: 127.0.0.1:$port}"
		action="module(load=\"omrelp\")
action(type=\"omrelp\" target=\"127.0.0.1\" port=\"$port\" windowSize=\"128\" template=\"RSYSLOG_SyslogProtocol23Format\"
	action.resumeRetryCount=\"-1\" action.resumeInterval=\"1\" queue.type=\"LinkedList\" queue.size=\"5000000\")"
	else
		input="  syslog_tcp:
    - {name: in, listen: 127.0.0.1:$port}"
		action="action(type=\"omfwd\" target=\"127.0.0.1\" port=\"$port\" protocol=\"tcp\" TCP_Framing=\"octet-counted\" template=\"RSYSLOG_SyslogProtocol23Format\"
	action.resumeRetryCount=\"-1\" action.resumeInterval=\"1\" queue.type=\"LinkedList\" queue.size=\"5000000\")"
	fi
	cat >"$d/relay.yaml" <<EOF
inputs:
$input
destinations:
  archive: {type: archive, dir: $d/archive, format: raw}
routes:
  - {name: all, final: true, destinations: [archive]}
spool: {dir: $d/spool}
dead_letter: {dir: $d/dl}
metrics: {listen: 127.0.0.1:$mport}
EOF
	start_relay "$d" "$d/relay.yaml"
	cat >"$d/rsyslog.conf" <<EOF
global(workDirectory="$d/work")
main_queue(queue.size="5000000")
module(load="imtcp")
input(type="imtcp" address="127.0.0.1" port="$rin")
$action
EOF
	LD_LIBRARY_PATH=$rr/usr/lib/x86_64-linux-gnu "$rr/usr/sbin/rsyslogd" -n -f "$d/rsyslog.conf" -i "$d/pid" \
		-M "$rr/usr/lib/x86_64-linux-gnu/rsyslog" >"$d/rsyslog.log" 2>&1 &
	local p=$!
	pids+=("$p")
	for _ in $(seq 100); do [ -s "$d/pid" ] && break; sleep 0.05; done
	sleep 0.5 # rsyslog has no readiness signal; its listener opens after the pid file
	"$work/tools" lines -n 100000 >"$d/lines.txt"
	local t0 t1 sent
	t0=$(date +%s.%N)
	"$work/tools" send -addr "127.0.0.1:$rin" -file "$d/lines.txt" -duration "${DUR}s" -conns 1 >"$d/send.txt" 2>&1
	sent=$(loggen_count "$d/send.txt")
	wait_for "metric $mport relay_destination_delivered_events_total" "$sent" || true
	t1=$(date +%s.%N)
	local cpu rss rcpu got
	cpu=$(cpu_s "$rpid")
	rss=$(rss_mb "$rpid")
	rcpu=$(cpu_s "$p")
	got=$(metric "$mport" relay_destination_delivered_events_total)
	stop_relay
	kill -TERM "$p"
	wait "$p" || true
	awk -v n="r rsyslog -$proto-> relay->archive" -v s="$sent" -v g="$got" -v c="$cpu" -v rc="$rcpu" -v r="$rss" -v t0="$t0" -v t1="$t1" 'BEGIN {
		printf "%-34s sent=%d archived=%d rate=%.0f ev/s (until archived) relay_cpu=%.2fs cpu_ns/ev=%.0f ev/cpu-s=%.0f rsyslog_cpu=%.2fs peak_rss=%dMB\n",
			n, s, g, s/(t1-t0), c, (g > 0 ? c*1e9/g : 0), (c > 0 ? g/c : 0), rc, r }'
}

# scenario_o PROTO (http|grpc): tools otlpsend -> relay otlp input -> archive,
# then the same load into the Collector's otlpreceiver (tools otelcol).
scenario_o() {
	local proto=$1 d=$work/o-$1 hport gport mport cport
	mkdir -p "$d"
	hport=$(freeport)
	gport=$(freeport)
	mport=$(freeport)
	cport=$(freeport)
	local target=$hport
	[ "$proto" = grpc ] && target=$gport
	cat >"$d/relay.yaml" <<EOF
inputs:
  otlp:
    - {name: otlp, http_listen: 127.0.0.1:$hport, grpc_listen: 127.0.0.1:$gport}
destinations:
  archive: {type: archive, dir: $d/archive, format: raw}
routes:
  - {name: all, final: true, destinations: [archive]}
spool: {dir: $d/spool}
dead_letter: {dir: $d/dl}
metrics: {listen: 127.0.0.1:$mport}
EOF
	start_relay "$d" "$d/relay.yaml"
	"$work/tools" otlpsend -addr "127.0.0.1:$target" -proto "$proto" -conns "${O_CONNS:-4}" -duration "${DUR}s" >"$d/send.txt" 2>&1
	local sent cpu rss
	sent=$(loggen_count "$d/send.txt")
	cpu=$(cpu_s "$rpid")
	rss=$(rss_mb "$rpid")
	stop_relay
	report "o relay otlp-$proto(100/req)->archive" "$sent" "$(cat "$d"/archive/* | wc -l)" "$cpu" "$rss"

	"$work/tools" otelcol -http "127.0.0.1:$hport" -grpc "127.0.0.1:$gport" -count "127.0.0.1:$cport" >"$d/otelcol.log" 2>&1 &
	local cpid=$!
	pids+=("$cpid")
	for _ in $(seq 100); do grep -q ready "$d/otelcol.log" && break; sleep 0.05; done
	"$work/tools" otlpsend -addr "127.0.0.1:$target" -proto "$proto" -conns "${O_CONNS:-4}" -duration "${DUR}s" >"$d/send-col.txt" 2>&1
	sent=$(loggen_count "$d/send-col.txt")
	cpu=$(cpu_s "$cpid")
	rss=$(rss_mb "$cpid")
	local got
	got=$(curl -s "http://127.0.0.1:$cport/count")
	kill -TERM "$cpid"
	wait "$cpid" || true
	report "o otelcol otlp-$proto(100/req)->count" "$sent" "$got" "$cpu" "$rss"
}

# scenario_s KIND (syslog|cef): tools send -> relay -> tools dcr.
scenario_s() {
	local kind=$1 d=$work/s-$1 port mport dport table stream mode=${S_SPOOL_MODE:-always} steps=""
	rm -rf "$d"
	mkdir -p "$d"
	port=$(freeport)
	mport=$(freeport)
	dport=$(freeport)
	case $kind in
	cef) table=common_security_log stream=Microsoft-CommonSecurityLog ;;
	fortigate) table=common_security_log stream=Microsoft-CommonSecurityLog steps=", pipeline: [{type: vendor, name: fortigate}]" ;;
	*) table=syslog stream=Microsoft-Syslog ;;
	esac
	"$work/tools" biglines -n 50000 -kind "$kind" >"$d/lines.txt"
	"$work/tools" dcr -listen "127.0.0.1:$dport" >"$d/dcr.txt" 2>&1 &
	local dpid=$!
	pids+=("$dpid")
	for _ in $(seq 100); do curl -s "http://127.0.0.1:$dport/count" >/dev/null && break; sleep 0.05; done
	cat >"$d/relay.yaml" <<EOF
inputs:
  syslog_tcp:
    - name: tcp
      listen: 127.0.0.1:$port
destinations:
  sentinel:
    type: sentinel
    table: $table
    endpoint: http://127.0.0.1:$dport
    authority_host: http://127.0.0.1:$dport
    dcr_immutable_id: dcr-0123456789abcdef0123456789abcdef
    tenant_id: 72f988bf-86f1-41af-91ab-2d7cd011db47
    client_id: 2b7e1f0c-1111-2222-3333-444455556666
    client_secret: bench-secret
${S_LEVEL:+    compression_level: $S_LEVEL}
routes:
  - {name: all, final: true, destinations: [sentinel]$steps}
spool: {dir: $d/spool, mode: $mode, max_size: 4GiB}
dead_letter: {dir: $d/dl}
metrics: {listen: 127.0.0.1:$mport}
EOF
	start_relay "$d" "$d/relay.yaml"
	"$work/tools" send -addr "127.0.0.1:$port" -file "$d/lines.txt" -duration "${DUR}s" -conns 2 -rate "${S_RATE:-0}" >"$d/loggen.txt" 2>&1
	local sent
	sent=$(loggen_count "$d/loggen.txt")
	wait_for "metric $mport relay_destination_delivered_events_total" "$sent" || true
	local cpu rss split lat
	cpu=$(cpu_s "$rpid")
	split=$(cpu_split "$rpid")
	rss=$(rss_mb "$rpid")
	lat=$(latency "$mport" sentinel)
	stop_relay
	local rows reqs wire raw
	read -r rows reqs wire raw < <(curl -s "http://127.0.0.1:$dport/count?stream=$stream")
	report "s relay tcp->sentinel $table ($kind, $mode, level ${S_LEVEL:-default})" "$sent" "$rows" "$cpu" "$rss"
	awk -v s="$split" -v n="$rows" -v q="$reqs" -v w="$wire" -v r="$raw" -v l="$(stat -c%s "$d/lines.txt")" -v k="$(wc -l <"$d/lines.txt")" 'BEGIN {
		printf "  %s; input %.0f bytes/line; %d requests, %.0f rows each; per row %.0f JSON bytes, %.0f wire bytes (%.2fx)\n",
			s, l / k, q, (q > 0 ? n / q : 0), (n > 0 ? r / n : 0), (n > 0 ? w / n : 0), (w > 0 ? r / w : 0) }'
	echo "$lat"
}

# scenario_so KIND (syslog|cef): the Sentinel destination of scenario s
# cannot be reached (nothing listens at its endpoint) while 1.2 KB lines
# arrive at SO_RATE (5000) events/s for SO_OUTAGE (60) s; then the Logs
# Ingestion stand-in starts: spool bytes per event at the end of the
# outage against the wire bytes per row of the drain, and the drain rate
# of the backlog (events/s from the stand-in's start until the last
# spooled event is delivered).
scenario_so() {
	local kind=$1 d=$work/so-$1 port mport dport table stream mode=${S_SPOOL_MODE:-always} rate=${SO_RATE:-5000} out=${SO_OUTAGE:-60}
	mkdir -p "$d"
	port=$(freeport)
	mport=$(freeport)
	dport=$(freeport)
	if [ "$kind" = cef ]; then table=common_security_log stream=Microsoft-CommonSecurityLog; else table=syslog stream=Microsoft-Syslog; fi
	"$work/tools" biglines -n 50000 -kind "$kind" >"$d/lines.txt"
	cat >"$d/relay.yaml" <<EOF
inputs:
  syslog_tcp:
    - name: tcp
      listen: 127.0.0.1:$port
destinations:
  sentinel:
    type: sentinel
    table: $table
    endpoint: http://127.0.0.1:$dport
    authority_host: http://127.0.0.1:$dport
    dcr_immutable_id: dcr-0123456789abcdef0123456789abcdef
    tenant_id: 72f988bf-86f1-41af-91ab-2d7cd011db47
    client_id: 2b7e1f0c-1111-2222-3333-444455556666
    client_secret: bench-secret
${S_LEVEL:+    compression_level: $S_LEVEL}
routes:
  - {name: all, final: true, destinations: [sentinel]}
spool: {dir: $d/spool, mode: $mode, max_size: 8GiB}
dead_letter: {dir: $d/dl}
metrics: {listen: 127.0.0.1:$mport}
EOF
	start_relay "$d" "$d/relay.yaml"
	"$work/tools" send -addr "127.0.0.1:$port" -file "$d/lines.txt" -duration "${out}s" -conns 2 -rate "$rate" >"$d/loggen.txt" 2>&1
	local sent
	sent=$(loggen_count "$d/loggen.txt")
	wait_for "metric $mport relay_input_received_events_total" "$sent" || true
	wait_stable "metric $mport relay_spool_bytes"
	local sbytes sevents cpu0
	sbytes=$(metric "$mport" 'relay_spool_bytes{destination="sentinel"}')
	sevents=$(metric "$mport" 'relay_spool_events{destination="sentinel"}')
	cpu0=$(cpu_s "$rpid")
	"$work/tools" dcr -listen "127.0.0.1:$dport" >"$d/dcr.txt" 2>&1 &
	pids+=("$!")
	local t0 t1
	t0=$(now_s)
	for _ in $(seq 3000); do
		[ "$(metric "$mport" relay_destination_delivered_events_total)" -ge "$sent" ] && break
		sleep 0.1
	done
	t1=$(now_s)
	local cpu
	cpu=$(cpu_s "$rpid")
	stop_relay
	local rows reqs wire raw
	read -r rows reqs wire raw < <(curl -s "http://127.0.0.1:$dport/count?stream=$stream")
	awk -v n="$table" -v s="$sent" -v g="$rows" -v sb="$sbytes" -v se="$sevents" -v w="$wire" -v r="$raw" -v a="$t0" -v b="$t1" -v c0="$cpu0" -v c="$cpu" -v o="$out" -v q="$rate" 'BEGIN {
		printf "so sentinel %s unreachable %ds at %d ev/s: sent=%d delivered=%d loss=%d\n", n, o, q, s, g, s - g
		printf "  spool %d events in %.1f MiB: %.0f B/event; wire %.0f B/row (spool/wire %.2fx); JSON %.0f B/row\n",
			se, sb / 1048576, (se > 0 ? sb / se : 0), (g > 0 ? w / g : 0), (g > 0 && w > 0 && se > 0 ? (sb / se) / (w / g) : 0), (g > 0 ? r / g : 0)
		printf "  backlog drained in %.1f s: %.0f ev/s; relay CPU %.2f s during the outage, %.2f s draining (%.0f ev/cpu-s)\n",
			b - a, (b - a > 0 ? se / (b - a) : 0), c0, c - c0, (c - c0 > 0 ? se / (c - c0) : 0) }'
}

for s in $SCEN; do
	case $s in
	a) scenario_a; scenario_a_rsyslog ;;
	b) scenario_b ;;
	c) scenario_c ;;
	d) scenario_d ;;
	e) scenario_e always; scenario_e on_failure ;;
	m) scenario_m always; scenario_m on_failure ;;
	h) scenario_h ;;
	r) scenario_r tcp; scenario_r relp ;;
	o) scenario_o http; scenario_o grpc ;;
	s) scenario_s syslog; scenario_s cef ;;
	so) scenario_so syslog; scenario_so cef ;;
	sf) for _ in $(seq "${SF_RUNS:-5}"); do scenario_s cef; scenario_s fortigate; done ;;
	idle) scenario_idle ;;
	*) echo "unknown scenario $s" >&2; exit 2 ;;
	esac
done
