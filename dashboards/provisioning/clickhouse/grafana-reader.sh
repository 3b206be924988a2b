#!/bin/bash
# Grafana's ClickHouse user. Grafana runs whatever SQL a dashboard holds, so the user can only
# read, and only the sessionhouse database:
#   - settings profile `<user>_profile`: readonly = 1, so no writes, no DDL and no settings
#     changes, except the settings a reader may set, exactly those of READER_SETTINGS
#     (src/warehouse/reader-settings.ts, each with its reason; a test fails while the two
#     differ), marked CHANGEABLE_IN_READONLY (needs
#     access_control_improvements.settings_constraints_replace_previous, set by
#     access-control.xml): max_execution_time, which the plugin sets on every query (its query
#     timeout), within 1..300 s, enable_http_compression (a compressed answer) and the row
#     groups of a Parquet answer (archive export), and distributed_product_mode, which readers send
#     on a cluster whose tables are distributed;
#     a query gets 60 s and 4 GB of memory at most, and a result of more
#     than 1,000,000 rows or 1 GiB fails whole (TOO_MANY_ROWS_OR_BYTES) rather than arriving cut;
#   - SELECT on the database, except the `raw` columns of sessions, dead_letters, the entity
#     streams' tables and the views that show them (the records as received, with whatever
#     the control plane sent). An administrator who wants
#     Grafana to read them grants them: GRANT SELECT(raw) ON <db>.sessions TO <user>.
# With READER_CLICKHOUSE_USER and READER_CLICKHOUSE_PASSWORD set, also the user of the CLI's read
# commands (status, query, report, export, windows list, hold list, detect run, doctor) for
# auditors and analysts: profile `<reader>_profile`, readonly = 1 with the same settings
# CHANGEABLE_IN_READONLY and no other (the read commands ask for none beyond them), no cap on a
# result's size (an export or a report reads whole months), and SELECT on the database,
# its raw columns included (the OCSF and ECS exports carry the record as received).
# Run by the clickhouse-server image once, on the first start of an empty data volume
# (/docker-entrypoint-initdb.d). Every statement can run again: on an older volume, run
#   docker compose exec clickhouse bash /docker-entrypoint-initdb.d/10-grafana-reader.sh
set -euo pipefail

# Names as ClickHouse identifiers (backquoted, backslashes and backquotes escaped), the password
# as a string literal (backslashes and quotes escaped).
ident() {
  local s=${1//\\/\\\\}
  printf '`%s`' "${s//\`/\\\`}"
}
literal() {
  local s=${1//\\/\\\\}
  printf "'%s'" "${s//\'/\\\'}"
}
db=$(ident "${CLICKHOUSE_DB}")
user=$(ident "${GRAFANA_CLICKHOUSE_USER}")
profile=$(ident "${GRAFANA_CLICKHOUSE_USER}_profile")
password=$(literal "${GRAFANA_CLICKHOUSE_PASSWORD}")

clickhouse client --user "${CLICKHOUSE_USER}" --password "${CLICKHOUSE_PASSWORD}" --multiquery <<SQL
CREATE DATABASE IF NOT EXISTS ${db};
CREATE SETTINGS PROFILE OR REPLACE ${profile} SETTINGS readonly = 1 CONST, max_execution_time = 60 MIN 1 MAX 300 CHANGEABLE_IN_READONLY, enable_http_compression CHANGEABLE_IN_READONLY, output_format_parquet_row_group_size CHANGEABLE_IN_READONLY, output_format_parquet_row_group_size_bytes CHANGEABLE_IN_READONLY, distributed_product_mode CHANGEABLE_IN_READONLY, max_memory_usage = 4000000000 CONST, max_result_rows = 1000000 CONST, max_result_bytes = 1073741824 CONST, result_overflow_mode = 'throw' CONST;
CREATE USER IF NOT EXISTS ${user} IDENTIFIED WITH sha256_password BY ${password};
ALTER USER ${user} IDENTIFIED WITH sha256_password BY ${password} SETTINGS PROFILE ${profile};
REVOKE ALL ON *.* FROM ${user};
GRANT SELECT ON ${db}.* TO ${user};
REVOKE SELECT(raw) ON ${db}.sessions FROM ${user};
REVOKE SELECT(raw) ON ${db}.dead_letters FROM ${user};
REVOKE SELECT(raw) ON ${db}.cloud_integrations FROM ${user};
REVOKE SELECT(raw) ON ${db}.cloud_integrations_history FROM ${user};
REVOKE SELECT(raw) ON ${db}.inventory_columns FROM ${user};
REVOKE SELECT(raw) ON ${db}.inventory_columns_history FROM ${user};
REVOKE SELECT(raw) ON ${db}.native_user_identity_links FROM ${user};
REVOKE SELECT(raw) ON ${db}.native_user_identity_links_history FROM ${user};
REVOKE SELECT(raw) ON ${db}.native_users FROM ${user};
REVOKE SELECT(raw) ON ${db}.native_users_history FROM ${user};
REVOKE SELECT(raw) ON ${db}.policy_suspensions FROM ${user};
REVOKE SELECT(raw) ON ${db}.policy_suspensions_latest FROM ${user};
REVOKE SELECT(raw) ON ${db}.sessions_enriched FROM ${user};
REVOKE SELECT(raw) ON ${db}.user_devices FROM ${user};
REVOKE SELECT(raw) ON ${db}.user_devices_history FROM ${user};
REVOKE SELECT(raw) ON ${db}.users FROM ${user};
REVOKE SELECT(raw) ON ${db}.users_history FROM ${user};
SQL

if [ -n "${READER_CLICKHOUSE_USER:-}" ]; then
  reader=$(ident "${READER_CLICKHOUSE_USER}")
  reader_profile=$(ident "${READER_CLICKHOUSE_USER}_profile")
  reader_password=$(literal "${READER_CLICKHOUSE_PASSWORD:?set READER_CLICKHOUSE_PASSWORD with READER_CLICKHOUSE_USER}")
  clickhouse client --user "${CLICKHOUSE_USER}" --password "${CLICKHOUSE_PASSWORD}" --multiquery <<SQL
CREATE SETTINGS PROFILE OR REPLACE ${reader_profile} SETTINGS readonly = 1 CONST, max_execution_time CHANGEABLE_IN_READONLY, enable_http_compression CHANGEABLE_IN_READONLY, output_format_parquet_row_group_size CHANGEABLE_IN_READONLY, output_format_parquet_row_group_size_bytes CHANGEABLE_IN_READONLY, distributed_product_mode CHANGEABLE_IN_READONLY;
CREATE USER IF NOT EXISTS ${reader} IDENTIFIED WITH sha256_password BY ${reader_password};
ALTER USER ${reader} IDENTIFIED WITH sha256_password BY ${reader_password} SETTINGS PROFILE ${reader_profile};
REVOKE ALL ON *.* FROM ${reader};
GRANT SELECT ON ${db}.* TO ${reader};
SQL
fi
