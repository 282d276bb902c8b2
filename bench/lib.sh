# shellcheck shell=bash
# bench/lib.sh — shared by the bench/*.sh scripts; source it, do
# not run it. It defines functions only and changes no shell options.
#
# The caller sets, before calling them:
#   OUT      the output folder (bench/out), relative to the repository root
#   GEN_CPU  the core the generator is pinned to
# and defines log (a progress line on stderr).

# ---------------------------------------------------------------------------
# CPU measurement.
#
# We want the user+sys CPU time of the generator process alone (all its
# threads), not of the target and not of the calling script. Reading
# utime+stime from /proc/PID/stat only works while the process exists and is
# in clock ticks (10 ms), so reading it "just before exit" is racy and
# coarse. GNU time (/usr/bin/time) is often not installed and prints only
# 10 ms resolution.
#
# Instead a tiny python3 wrapper forks the generator, waits for it with
# wait4(2) and records the rusage the kernel hands back for that exact child:
# user and system time of all its threads, in microseconds, taken after the
# process has fully exited, so nothing is missed and nothing is raced. The
# wrapper's own CPU (python start-up) is not included: rusage of a child
# covers only that child. `taskset -c N cmd` execs cmd, so the child is the
# generator itself.
#
# The wrapper writes "user_s sys_s wall_s exit_code" to PREFIX.cpu and exits
# with the generator's exit code (128+signal if it was killed). It also
# copies the per-CPU lines of /proc/stat just before the fork and just after
# the wait to PREFIX.stat0 / PREFIX.stat1, so the report can tell whether
# something else ran on the generator's core, and writes the child's pid to
# PREFIX.pid as soon as it has forked.
#
# Memory: with CPURUN_SAMPLE=SECONDS in its environment the wrapper polls
# the child instead of blocking in wait4, reading VmRSS and VmHWM from
# /proc/PID/status every SECONDS while it runs. Either way it writes
# "max_vmrss_kb last_vmhwm_kb ru_maxrss_kb samples" to PREFIX.rss (0 for
# what it did not see), and each sample as "seconds_since_start vmrss_kb"
# to PREFIX.rsslog, so a report can tell a transient peak from what is held. ru_maxrss is the kernel's peak resident set of the
# child as wait4 returns it; on Linux it is carried across exec, so it is at
# least the RSS of the forked python (about 10 MB) even if the generator
# used less. Sampling costs the child nothing: it is read from outside.
# ---------------------------------------------------------------------------

# write_cpurun PATH: writes the wrapper described above to PATH.
write_cpurun() {
	cat >"$1" <<'PY'
import os, signal, sys, time
prefix, cmd = sys.argv[1], sys.argv[2:]
sample = float(os.environ.get("CPURUN_SAMPLE") or 0)

def snapshot(path):
    with open("/proc/stat") as src, open(path, "w") as dst:
        dst.writelines(l for l in src if l.startswith("cpu") and l[3].isdigit())

def status_kb(pid):
    """VmRSS and VmHWM of pid in kB, or None once it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/status") as f:
            vals = {k: int(v.split()[0]) for k, v in (l.split(":", 1) for l in f)
                    if k in ("VmRSS", "VmHWM")}
    except (OSError, ValueError):
        return None
    return (vals["VmRSS"], vals["VmHWM"]) if len(vals) == 2 else None

snapshot(prefix + ".stat0")
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    except OSError as e:
        print(f"cpurun: {cmd[0]}: {e}", file=sys.stderr)
    os._exit(127)
# Ctrl-C reaches the generator too (same process group); stay alive to
# record whatever it used before it stopped.
signal.signal(signal.SIGINT, signal.SIG_IGN)
with open(prefix + ".pid", "w") as f:
    f.write(f"{pid}\n")
max_rss = last_hwm = samples = 0
series = []
if sample > 0:
    while True:
        got, status, ru = os.wait4(pid, os.WNOHANG)
        if got == pid:
            break
        kb = status_kb(pid)
        if kb:
            max_rss, last_hwm, samples = max(max_rss, kb[0]), max(last_hwm, kb[1]), samples + 1
            series.append(f"{time.monotonic() - t0:.2f} {kb[0]}\n")
        time.sleep(sample)
else:
    _, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
snapshot(prefix + ".stat1")
code = os.waitstatus_to_exitcode(status)
code = 128 - code if code < 0 else code
with open(prefix + ".cpu", "w") as f:
    f.write(f"{ru.ru_utime:.6f} {ru.ru_stime:.6f} {wall:.6f} {code}\n")
with open(prefix + ".rss", "w") as f:
    f.write(f"{max_rss} {last_hwm} {ru.ru_maxrss} {samples}\n")
if sample > 0:
    with open(prefix + ".rsslog", "w") as f:
        f.writelines(series)
sys.exit(code)
PY
}

# measure NAME CMD... : runs CMD pinned to $GEN_CPU through $CPURUN (which
# write_cpurun must have written), stdout+stderr to $OUT/NAME.log, CPU
# figures to $OUT/NAME.cpu, memory to $OUT/NAME.rss (and .rsslog when
# sampling; /proc/stat
# snapshots to $OUT/NAME.stat0 and .stat1). Never fails the script; the exit
# code is in the .cpu file and reported in the table.
measure() {
	local name="$1"
	shift
	local rc=0
	rm -f "$OUT/$name.cpu" "$OUT/$name.rss" "$OUT/$name.rsslog" "$OUT/$name.pid" "$OUT/$name.stat0" "$OUT/$name.stat1"
	python3 "$CPURUN" "$OUT/$name" taskset -c "$GEN_CPU" "$@" >"$OUT/$name.log" 2>&1 || rc=$?
	if ((rc != 0)); then
		log "$name exited with status $rc (see $OUT/$name.log); reporting what it produced"
	fi
	if [[ ! -s "$OUT/$name.cpu" ]]; then
		echo "0 0 0 $rc" >"$OUT/$name.cpu"
	fi
	if [[ ! -s "$OUT/$name.rss" ]]; then
		echo "0 0 0 0" >"$OUT/$name.rss"
	fi
}

# write_nginx_conf DIR PORT WRITER [LOCATIONS]: a private nginx's config in
# DIR/nginx.conf (its pid file, error log and temp paths under DIR too, so
# nothing needs /var/lib/nginx): one worker, no access log, keep-alive
# connections reused (practically) forever, listening on 127.0.0.1:PORT, `/`
# answering a fixed 3-byte body so that the server does as little as
# possible, and LOCATIONS (nginx text) beside it. WRITER names the script in
# the file's first line.
write_nginx_conf() {
	local dir="$1" port="$2" writer="$3" locations="${4:-}"
	mkdir -p "$dir/tmp"
	cat >"$dir/nginx.conf" <<EOF
# Written by $writer; rewritten on every run.
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
worker_rlimit_nofile 20000;

events {
    # Generous: an open-model generator opens one connection per request in
    # flight, so a stall can briefly need thousands.
    worker_connections 16384;
}

http {
    access_log off;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;

    server {
        listen 127.0.0.1:$port;
        location / {
            default_type text/plain;
            return 200 "ok\n";
        }
$locations
    }
}
EOF
}

# start_nginx NGINX DIR PORT CPU: starts the nginx binary NGINX with the
# config write_nginx_conf wrote in DIR, in the background (daemon off),
# pinned to CPU, and sets NGINX_PID to its master; false, with a line on
# stderr naming the error log, when it exits or does not listen on PORT
# within 5 s. -e: the error log used before the config is read (so nothing
# goes to /var/log/nginx); -p: the prefix of any relative path.
start_nginx() {
	local nginx="$1" dir="$2" port="$3" cpu="$4"
	taskset -c "$cpu" "$nginx" -p "$dir/" -e "$dir/error.log" -c "$dir/nginx.conf" &
	NGINX_PID=$!
	for _ in $(seq 50); do
		port_in_use "$port" && return 0
		if ! kill -0 "$NGINX_PID" 2>/dev/null; then
			echo "nginx exited at start-up; see $dir/error.log" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "nginx does not answer on port $port; see $dir/error.log" >&2
	return 1
}

# port_in_use PORT: true when something accepts TCP on 127.0.0.1:PORT.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port PORT: prints PORT, or the first free port after it (100 tries).
free_port() {
	local port="$1" tries
	for ((tries = 0; tries < 100; tries++)); do
		port_in_use "$port" || {
			echo "$port"
			return 0
		}
		port=$((port + 1))
	done
	return 1
}

# machine_info: sets CPU_MODEL and KERNEL for the report.
# shellcheck disable=SC2034 # read by the caller
machine_info() {
	CPU_MODEL="$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^model name[[:space:]]*:[[:space:]]*//' || true)"
	[[ -n "$CPU_MODEL" ]] || CPU_MODEL="$(uname -m)"
	KERNEL="$(uname -sr)"
}
