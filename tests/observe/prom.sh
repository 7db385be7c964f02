# Debian's node_exporter and Prometheus for the observe tests, on free
# loopback ports, with their own temporary directory.
#
#   prom_start TEXTFILE_DIR RULE_FILE      node_exporter with only the
#                                          textfile collector and stat (its
#                                          node_boot_time_seconds, which the
#                                          rules compare with), Prometheus
#                                          scraping it and evaluating the
#                                          rules every second
#   prom_server_start RULE_FILE PORT...    Prometheus alone, scraping the
#                                          node_exporters on these loopback
#                                          ports
#   prom_query EXPR                        the result vector as JSON
#   prom_value EXPR                        the value of a one-element result
#   prom_wait EXPR AWK-TEST [TIMEOUT]      wait until the value v passes,
#                                          e.g. prom_wait 'x{node="a"}' 'v == 40e9'
#   prom_alert NAME NODE                   the alert's state (firing,
#                                          pending) for that node, or nothing
#   prom_stop                              stop both (by pid), drop the dir

prom_start() {
	local textfile=$1; shift
	PROM_DIR=$(mktemp -d /tmp/zs-prom.XXXXXX)
	NE_PORT=$(_free_port)
	prometheus-node-exporter --web.listen-address="127.0.0.1:$NE_PORT" \
		--collector.disable-defaults --collector.textfile --collector.stat \
		--collector.textfile.directory="$textfile" > "$PROM_DIR/node-exporter.log" 2>&1 &
	NE_PID=$!
	prom_server_start "$1" "$NE_PORT"
}

prom_server_start() {
	local rules=$1 port targets=''; shift
	[ -n "${PROM_DIR:-}" ] || PROM_DIR=$(mktemp -d /tmp/zs-prom.XXXXXX)
	PROM_PORT=$(_free_port)
	for port in "$@"; do targets="$targets\"127.0.0.1:$port\", "; done
	cat > "$PROM_DIR/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [ "$rules" ]
scrape_configs:
  - job_name: node
    static_configs:
      - targets: [ ${targets%, } ]
CONF
	prometheus --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$PROM_DIR/tsdb" \
		--web.listen-address="127.0.0.1:$PROM_PORT" > "$PROM_DIR/prometheus.log" 2>&1 &
	PROM_PID=$!
	for port in "$@"; do
		wait_for 30 curl -sf "http://127.0.0.1:$port/metrics" -o /dev/null || {
			diag "node_exporter on port $port did not come up"
			return 1
		}
	done
	wait_for 60 curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" -o /dev/null || {
		diag "Prometheus did not come up:" "$(tail -5 "$PROM_DIR"/*.log)"
		return 1
	}
}

prom_query() {
	curl -sf -G "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
		jq -c 'if .status == "success" then .data.result else error("query failed") end'
}

prom_value() {
	prom_query "$1" | jq -r 'if length == 1 then .[0].value[1] else empty end'
}

_prom_passes() {
	local v
	v=$(prom_value "$1")
	[ -n "$v" ] && awk -v v="$v" "BEGIN { exit !($2) }"
}

prom_wait() {
	wait_for "${3:-20}" _prom_passes "$1" "$2"
}

prom_alert() {
	curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/alerts" |
		jq -r --arg a "$1" --arg n "$2" '.data.alerts[] | select(.labels.alertname == $a and .labels.node == $n) | .state'
}

_prom_alert_is() { [ "$(prom_alert "$1" "$2")" = "$3" ]; }

prom_stop() {
	local pid
	[ -n "${PROM_DIR:-}" ] || return 0
	for pid in ${PROM_PID:-} ${NE_PID:-}; do
		kill "$pid" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	PROM_PID= NE_PID=
	if [ "${tap_failed:-0}" -gt 0 ]; then
		diag "Prometheus logs kept in $PROM_DIR"
	else
		rm -rf "$PROM_DIR"
	fi
}
