# A real Prometheus server (Debian's package) for the scripts that check a cluster's
# /metrics with it (Scripts/test-prometheus, Scripts/test-end-to-end). Sourced by a
# script that records the PIDs it starts and stops them itself.
#
# prometheus_via: a command prefix the server and every query run under (empty: this
# namespace; e.g. (ip netns exec NS) for a server on a machine of Scripts/lib/machines.sh).
prometheus_via=()

# prometheus_install: true when `prometheus` is here, after installing Debian's package
# when it is missing (as root, with apt-get); otherwise says why on stderr and is false.
prometheus_install() {
  if ! command -v prometheus > /dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus > /dev/null 2>&1 || true
    fi
  fi
  if ! command -v prometheus > /dev/null; then
    echo "no prometheus here, and Debian's package could not be installed (apt-get install prometheus)" >&2
    return 1
  fi
  if ! command -v curl > /dev/null; then echo "no curl here (Debian package curl)" >&2; return 1; fi
}

# prometheus_config FILE TOKEN_FILE TARGET...: a configuration scraping every TARGET
# (HOST:PORT) each second, with the dashboard token in TOKEN_FILE as a bearer token, as
# Docs/metrics.md's scrape configuration does; job name `spokes`.
prometheus_config() {
  local file=$1 token=$2 targets
  shift 2
  targets=$(printf "'%s', " "$@")
  cat > "$file" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: spokes
    authorization: {type: Bearer, credentials_file: $token}
    static_configs:
      - targets: [${targets%, }]
EOF
}

# prometheus_start CONFIG WORK PORT: the server on 127.0.0.1:PORT (its data and log in
# WORK), in the background; its PID in prometheus_pid. Waits until it is ready (at most
# 20 s); false, saying why on stderr, otherwise.
prometheus_start() {
  local config=$1 work=$2 port=$3 deadline=$((SECONDS + 20))
  prometheus_address=127.0.0.1:$port
  ${prometheus_via[@]+"${prometheus_via[@]}"} prometheus --config.file="$config" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="$prometheus_address" > "$work/prometheus.out" 2> "$work/prometheus.log" &
  prometheus_pid=$!
  until ${prometheus_via[@]+"${prometheus_via[@]}"} curl -fsS --max-time 2 "http://$prometheus_address/-/ready" > /dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ] || ! kill -0 "$prometheus_pid" 2> /dev/null; then
      echo "prometheus was not ready within 20 s: $(tail -3 "$work/prometheus.log")" >&2
      return 1
    fi
    sleep 0.1
  done
}

# prometheus_query QUERY: the query API's answer, one line per series: its labels'
# values (sorted by name) then its value; nothing when there is no series yet.
prometheus_query() {
  ${prometheus_via[@]+"${prometheus_via[@]}"} curl -fsS --max-time 5 "http://$prometheus_address/api/v1/query" --data-urlencode "query=$1" \
    | python3 -c '
import json, sys
for series in json.load(sys.stdin)["data"]["result"]:
    print(" ".join([value for _, value in sorted(series["metric"].items())] + [series["value"][1]]))'
}

# prometheus_wait QUERY VALUE SECONDS: until the query's one value is VALUE (at most
# SECONDS); false, saying the last answer on stderr, otherwise.
prometheus_wait() {
  local deadline=$((SECONDS + $3)) answer
  while true; do
    answer=$(prometheus_query "$1" 2> /dev/null)
    [ "$answer" = "$2" ] && return 0
    if [ $SECONDS -ge $deadline ]; then echo "Prometheus: '$1' is '$answer', not '$2', after $3 s" >&2; return 1; fi
    sleep 0.2
  done
}
