#!/bin/bash
# Grafana's ClickHouse user: SELECT on the sessionhouse database and nothing else, as the
# plugin's documentation recommends (Grafana runs any SQL a dashboard holds). readonly = 2
# still lets the plugin set max_execution_time per query. Run by the clickhouse-server image
# once, on the first start of an empty data volume (/docker-entrypoint-initdb.d).
set -euo pipefail

# The password as a ClickHouse string literal: backslashes and quotes escaped.
password=${GRAFANA_CLICKHOUSE_PASSWORD//\\/\\\\}
password=${password//\'/\\\'}

clickhouse client --user "${CLICKHOUSE_USER}" --password "${CLICKHOUSE_PASSWORD}" --multiquery <<SQL
CREATE DATABASE IF NOT EXISTS \`${CLICKHOUSE_DB}\`;
CREATE USER IF NOT EXISTS \`${GRAFANA_CLICKHOUSE_USER}\` IDENTIFIED WITH sha256_password BY '${password}' SETTINGS readonly = 2;
GRANT SELECT ON \`${CLICKHOUSE_DB}\`.* TO \`${GRAFANA_CLICKHOUSE_USER}\`;
SQL
