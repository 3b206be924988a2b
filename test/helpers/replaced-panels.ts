// The panels' queries as they were before a rewrite made them read less: the references the
// dashboard tests compare each rewritten panel with (the same rows on the same data).

/** The filter of each variable of the sessions dashboards, as the replaced queries wrote it. */
const FILTERS: Record<string, string> = {
  environment: `$__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)`,
  technology: `$__conditionalAll(resource_technology IN (SELECT decodeURLComponent(arrayJoin([\${technology:singlequote}]))), $technology)`,
  resource: `$__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${resource:singlequote}]))), $resource)`,
  user: `$__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)`,
  group: `$__conditionalAll(hasAny(user_groups, arrayMap(v -> decodeURLComponent(v), [\${group:singlequote}])), $group)`,
  connector: `$__conditionalAll(connector_name IN (SELECT decodeURLComponent(arrayJoin([\${connector:singlequote}]))), $connector)`,
  client_ip: `$__conditionalAll(client_ip_address IN (SELECT decodeURLComponent(arrayJoin([\${client_ip:singlequote}]))), $client_ip)`,
};

/** `AND <filter>` lines for the variables `names`, indented by `indent` spaces. */
function filters(indent: number, names: string[]): string {
  return names
    .map((n) => `${" ".repeat(indent)}AND ${FILTERS[n] ?? ""}`)
    .join("\n");
}

/** The rawSql each rewritten panel had, by dashboard uid and panel title. */
export const REPLACED_PANELS: {
  uid: string;
  title: string;
  /** A variable the comparison also picks one option of. */
  picks: string;
  sql: string;
}[] = [
  {
    uid: "sessionhouse-sensitive-inventory",
    title: "Labels changed in the range",
    picks: "inventory_label",
    // The versions that ended in the range joined on the id and the time to those that began.
    sql: `SELECT cur.valid_from AS changed_at,
       cur.resource_name AS resource_name,
       cur.path AS path,
       prev.data_labels AS labels_before,
       if(cur.is_deleted = 1, [], cur.data_labels) AS labels_after,
       if(cur.is_deleted = 1, 'removed', 'relabelled') AS change
FROM inventory_columns_history AS cur FINAL
INNER JOIN (SELECT id, valid_to, data_labels FROM inventory_columns_history FINAL WHERE valid_to IS NOT NULL AND $__timeFilter(valid_to)) AS prev
    ON prev.id = cur.id AND prev.valid_to = cur.valid_from
WHERE $__timeFilter(cur.valid_from)
  AND (cur.is_deleted = 1 OR prev.data_labels != cur.data_labels)
  AND $__conditionalAll(hasAny(arrayConcat(prev.data_labels, cur.data_labels), arrayMap(v -> decodeURLComponent(v), [\${inventory_label:singlequote}])), $inventory_label)
ORDER BY changed_at DESC, resource_name, path, cur.id
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-who-accessed-what",
    title: "Users × resources",
    picks: "resource",
    // Every pair of the range aggregated, then the newest 1000 by last access.
    sql: `SELECT user_key AS user,
       any(user_type) AS user_type,
       resource_name AS resource,
       any(resource_technology) AS technology,
       count() AS sessions,
       min(start_time) AS first_access,
       max(start_time) AS last_access,
       arraySlice(arraySort(groupUniqArray(native_username)), 1, 3) AS as_native_user,
       encodeURLComponent(user) AS user_url,
       encodeURLComponent(resource) AS resource_url
FROM sessions FINAL
WHERE $__timeFilter(start_time)
${filters(2, ["environment", "technology", "resource", "user", "group", "connector"])}
GROUP BY user, resource
ORDER BY last_access DESC
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-sessions-overview",
    title: "Sessions over time by technology",
    picks: "technology",
    // Every rolled-up day from session_rollups_daily, whatever the filters.
    sql: `SELECT time, resource_technology, sum(n) AS sessions
FROM (
  SELECT toStartOfInterval(toDateTime(start_time), toIntervalSecond(if($long_range, greatest($__interval_s, 86400), $__interval_s))) AS time, resource_technology, count() AS n
  FROM sessions FINAL
  WHERE $__timeFilter(start_time) AND toDate(start_time) IN (SELECT day FROM $range_days WHERE day NOT IN (SELECT day FROM $rolled_up_days WHERE $__conditionalAll(0, $group) AND $__conditionalAll(0, $client_ip) AND getSetting('additional_table_filters') = map()))
${filters(4, ["environment", "technology", "resource", "user", "group", "connector", "client_ip"])}
  GROUP BY time, resource_technology
  UNION ALL
  SELECT toStartOfInterval(toDateTime(day, 'UTC'), toIntervalSecond(greatest($__interval_s, 86400))) AS time, resource_technology, sum(sessions)
  FROM session_rollups_daily FINAL
  WHERE day IN (SELECT day FROM $rolled_up_days WHERE $__conditionalAll(0, $group) AND $__conditionalAll(0, $client_ip) AND getSetting('additional_table_filters') = map()) AND sessions > 0
${filters(4, ["environment", "technology", "resource", "user", "connector"])}
  GROUP BY time, resource_technology
)
GROUP BY time, resource_technology
ORDER BY time, resource_technology`,
  },
  {
    uid: "sessionhouse-who-accessed-what",
    title: "Groups × resources",
    picks: "resource",
    // Every session of the range, once under each group of its user.
    sql: `SELECT arrayJoin(user_groups) AS user_group,
       resource_name AS resource,
       count() AS sessions,
       uniq(user_key) AS users,
       min(start_time) AS first_access,
       max(start_time) AS last_access,
       encodeURLComponent(user_group) AS user_group_url,
       encodeURLComponent(resource) AS resource_url
FROM sessions FINAL
WHERE $__timeFilter(start_time) AND notEmpty(user_groups)
${filters(2, ["environment", "technology", "resource", "user", "group", "connector"])}
GROUP BY user_group, resource
ORDER BY sessions DESC, user_group, resource
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-sensitive-inventory",
    title: "Sessions on resources holding labelled data",
    picks: "inventory_label",
    // Every session of the range through sessions_enriched (its identity-link join included).
    sql: `SELECT resource_name,
       data_labels,
       count() AS sessions,
       uniqIf(person_id, person_id != '') AS persons,
       max(start_time) AS last_session
FROM sessions_enriched
WHERE $__timeFilter(start_time) AND notEmpty(data_labels)
  AND $__conditionalAll(hasAny(data_labels, arrayMap(v -> decodeURLComponent(v), [\${inventory_label:singlequote}])), $inventory_label)
GROUP BY resource_name, data_labels
ORDER BY sessions DESC, resource_name, data_labels
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-sessions-overview",
    title: "Client IP addresses",
    picks: "client_ip",
    // Every session of the range read from sessions FINAL.
    sql: `SELECT client_ip_address,
       count() AS sessions,
       uniq(user_key) AS users,
       arraySlice(arraySort(groupUniqArray(user_key)), 1, 5) AS some_users,
       min(start_time) AS first_seen,
       max(start_time) AS last_seen,
       encodeURLComponent(client_ip_address) AS client_ip_address_url
FROM sessions FINAL
WHERE $__timeFilter(start_time) AND client_ip_address != ''
${filters(2, ["environment", "technology", "resource", "user", "group", "connector", "client_ip"])}
GROUP BY client_ip_address
ORDER BY sessions DESC, client_ip_address
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-first-seen",
    title: "Machine accounts used by humans",
    picks: "resource",
    // The machine side from sessions FINAL, the human side from sessions, each over the range,
    // the human side narrowed to the machine side's addresses (a third read).
    sql: `SELECT m.user_key AS user,
       m.client_ip_address AS client_ip_address,
       h.humans AS humans_at_address,
       m.sessions AS sessions,
       m.resources AS resources,
       m.first_session AS first_session,
       m.last_session AS last_session,
       m.session_id AS session_id,
       encodeURLComponent(user) AS user_url,
       encodeURLComponent(client_ip_address) AS client_ip_address_url
FROM (
  SELECT user_key, client_ip_address, count() AS sessions, arraySlice(arraySort(groupUniqArray(resource_name)), 1, 5) AS resources,
         min(start_time) AS first_session, max(start_time) AS last_session, argMax(id, start_time) AS session_id
  FROM sessions FINAL
  WHERE $__timeFilter(start_time) AND user_type = 'machine' AND end_user_email = '' AND end_user_name = '' AND client_ip_address != ''
  AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
  AND $__conditionalAll(resource_technology IN (SELECT decodeURLComponent(arrayJoin([\${technology:singlequote}]))), $technology)
  AND $__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${resource:singlequote}]))), $resource)
  AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
  GROUP BY user_key, client_ip_address
) AS m
INNER JOIN (
  SELECT client_ip_address, arraySlice(arraySort(groupUniqArray(user_key)), 1, 5) AS humans
  FROM sessions
  WHERE $__timeFilter(start_time) AND user_type = 'human' AND client_ip_address != ''
    AND client_ip_address IN (
      SELECT client_ip_address FROM sessions
      WHERE $__timeFilter(start_time) AND user_type = 'machine' AND end_user_email = '' AND end_user_name = '' AND client_ip_address != ''
      AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
      AND $__conditionalAll(resource_technology IN (SELECT decodeURLComponent(arrayJoin([\${technology:singlequote}]))), $technology)
      AND $__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${resource:singlequote}]))), $resource)
      AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
    )
  GROUP BY client_ip_address
) AS h ON h.client_ip_address = m.client_ip_address
ORDER BY sessions DESC, user, client_ip_address
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-first-seen",
    title: "Accounts active again after a quiet spell",
    picks: "user",
    // Every day of each account active in the range, however old, in one sorted array, each day
    // paired with the one before.
    sql: `SELECT s.user_key AS user,
       s.user_type AS user_type,
       g.last_before AS last_seen_before,
       g.back_at AS back_at,
       intDiv(dateDiff('second', g.last_before, g.back_at), 86400) AS days_inactive,
       s.id AS session_id,
       encodeURLComponent(user) AS user_url
FROM sessions AS s
INNER JOIN (
  SELECT user_key, back.1 AS last_before, back.2 AS back_at
  FROM (
    SELECT user_key, arraySort(groupArray((first, last))) AS days
    FROM (
      SELECT user_key, first_start AS first, last_start AS last
      FROM user_active_days FINAL
      WHERE day <= toDate($__toTime)
        AND user_key IN (SELECT user_key FROM user_active_days WHERE day >= toDate($__fromTime) AND day <= toDate($__toTime))
        AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
    )
    GROUP BY user_key
  )
  ARRAY JOIN arrayFilter(x -> x.1 > toDateTime64(0, 3, 'UTC') AND x.2 >= $__fromTime AND x.2 <= $__toTime
                           AND dateDiff('second', x.1, x.2) >= toUInt32OrZero('\${inactive_days:percentencode}') * 86400,
                         arrayZip(arrayPushFront(arrayPopBack(days.2), toDateTime64(0, 3, 'UTC')), days.1)) AS back
  ORDER BY back_at DESC, user_key
  LIMIT 1000
) AS g ON s.user_key = g.user_key AND s.start_time = g.back_at
WHERE $__timeFilter(s.start_time)
ORDER BY back_at DESC, user, session_id
LIMIT 1 BY user, back_at
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-first-seen",
    title: "New user → resource pairs",
    picks: "resource",
    // Every session of the newest pairs from their first one on, read from sessions FINAL.
    sql: `WITH newest AS (
  SELECT user_key, resource_name, first_seen
  FROM user_resource_first_seen FINAL
  WHERE $__timeFilter(first_seen)
    AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
    AND $__conditionalAll(resource_name IN (SELECT resource_name FROM sessions WHERE $__timeFilter(start_time) AND resource_technology IN (SELECT decodeURLComponent(arrayJoin([\${technology:singlequote}])))), $technology)
    AND $__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${resource:singlequote}]))), $resource)
    AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
  ORDER BY first_seen DESC, user_key, resource_name
  LIMIT 1000)
SELECT user_key AS user,
       resource_name AS resource,
       any(resource_technology) AS technology,
       min(start_time) AS first_seen,
       count() AS sessions,
       argMin(id, start_time) AS session_id,
       encodeURLComponent(user) AS user_url,
       encodeURLComponent(resource) AS resource_url
FROM sessions FINAL
WHERE $__timeFilter(start_time)
  AND start_time >= (SELECT min(first_seen) FROM newest)
  AND $__conditionalAll(resource_technology IN (SELECT decodeURLComponent(arrayJoin([\${technology:singlequote}]))), $technology)
  AND (user_key, resource_name) IN (SELECT user_key, resource_name FROM newest)
GROUP BY user, resource
ORDER BY first_seen DESC, user, resource
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-sessions-overview",
    title: "Busiest users",
    picks: "user",
    // Every rolled-up day of the range read from session_rollups_daily, the others from sessions FINAL.
    sql: `SELECT user_key AS user,
       any(t) AS user_type,
       sum(n) AS sessions,
       uniqMerge(r) AS resources,
       sum(d) AS total_duration_ms,
       encodeURLComponent(user) AS user_url
FROM (
  SELECT user_key, any(user_type) AS t, count() AS n, uniqState(resource_name) AS r, sum(duration_ms) AS d
  FROM sessions FINAL
  WHERE $__timeFilter(start_time) AND toDate(start_time) IN (SELECT day FROM $range_days WHERE day NOT IN (SELECT day FROM $rolled_up_days WHERE $__conditionalAll(0, $group) AND $__conditionalAll(0, $client_ip) AND getSetting('additional_table_filters') = map()))
    AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
    AND $__conditionalAll(resource_technology IN (SELECT decodeURLComponent(arrayJoin([\${technology:singlequote}]))), $technology)
    AND $__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${resource:singlequote}]))), $resource)
    AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
    AND $__conditionalAll(hasAny(user_groups, arrayMap(v -> decodeURLComponent(v), [\${group:singlequote}])), $group)
    AND $__conditionalAll(connector_name IN (SELECT decodeURLComponent(arrayJoin([\${connector:singlequote}]))), $connector)
    AND $__conditionalAll(client_ip_address IN (SELECT decodeURLComponent(arrayJoin([\${client_ip:singlequote}]))), $client_ip)
  GROUP BY user_key
  UNION ALL
  SELECT user_key, any(user_type), sum(sessions), uniqState(resource_name), sum(duration_ms_sum)
  FROM session_rollups_daily FINAL
  WHERE day IN (SELECT day FROM $rolled_up_days WHERE $__conditionalAll(0, $group) AND $__conditionalAll(0, $client_ip) AND getSetting('additional_table_filters') = map()) AND sessions > 0
    AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
    AND $__conditionalAll(resource_technology IN (SELECT decodeURLComponent(arrayJoin([\${technology:singlequote}]))), $technology)
    AND $__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${resource:singlequote}]))), $resource)
    AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
    AND $__conditionalAll(connector_name IN (SELECT decodeURLComponent(arrayJoin([\${connector:singlequote}]))), $connector)
  GROUP BY user_key
)
GROUP BY user
ORDER BY sessions DESC, user
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-sessions-overview",
    title: "Busiest resources",
    picks: "resource",
    // Every rolled-up day of the range read from session_rollups_daily, the others from sessions FINAL.
    sql: `SELECT resource_name AS resource,
       any(t) AS technology,
       sum(n) AS sessions,
       uniqMerge(u) AS users,
       max(l) AS last_session,
       encodeURLComponent(resource) AS resource_url
FROM (
  SELECT resource_name, any(resource_technology) AS t, count() AS n, uniqState(user_key) AS u, max(start_time) AS l
  FROM sessions FINAL
  WHERE $__timeFilter(start_time) AND toDate(start_time) IN (SELECT day FROM $range_days WHERE day NOT IN (SELECT day FROM $rolled_up_days WHERE $__conditionalAll(0, $group) AND $__conditionalAll(0, $client_ip) AND getSetting('additional_table_filters') = map()))
    AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
    AND $__conditionalAll(resource_technology IN (SELECT decodeURLComponent(arrayJoin([\${technology:singlequote}]))), $technology)
    AND $__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${resource:singlequote}]))), $resource)
    AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
    AND $__conditionalAll(hasAny(user_groups, arrayMap(v -> decodeURLComponent(v), [\${group:singlequote}])), $group)
    AND $__conditionalAll(connector_name IN (SELECT decodeURLComponent(arrayJoin([\${connector:singlequote}]))), $connector)
    AND $__conditionalAll(client_ip_address IN (SELECT decodeURLComponent(arrayJoin([\${client_ip:singlequote}]))), $client_ip)
  GROUP BY resource_name
  UNION ALL
  SELECT resource_name, any(resource_technology), sum(sessions), uniqState(user_key), max(last_start_time)
  FROM session_rollups_daily FINAL
  WHERE day IN (SELECT day FROM $rolled_up_days WHERE $__conditionalAll(0, $group) AND $__conditionalAll(0, $client_ip) AND getSetting('additional_table_filters') = map()) AND sessions > 0
    AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
    AND $__conditionalAll(resource_technology IN (SELECT decodeURLComponent(arrayJoin([\${technology:singlequote}]))), $technology)
    AND $__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${resource:singlequote}]))), $resource)
    AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
    AND $__conditionalAll(connector_name IN (SELECT decodeURLComponent(arrayJoin([\${connector:singlequote}]))), $connector)
  GROUP BY resource_name
)
GROUP BY resource
ORDER BY sessions DESC, resource
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-sessions-overview",
    title: "Sessions started",
    picks: "technology",
    // Every rolled-up day of the range read from the daily rollups, the others from sessions FINAL.
    sql: `SELECT sum(n) AS sessions, uniqMerge(u) AS users, uniqMerge(r) AS resources
FROM (
  SELECT count() AS n, uniqState(toString(user_key)) AS u, uniqState(toString(resource_name)) AS r
  FROM sessions FINAL
  WHERE $__timeFilter(start_time) AND toDate(start_time) IN (SELECT day FROM $range_days WHERE day NOT IN (SELECT day FROM $rolled_up_days WHERE $__conditionalAll(0, $group) AND $__conditionalAll(0, $client_ip) AND getSetting('additional_table_filters') = map()))
    AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
    AND $__conditionalAll(resource_technology IN (SELECT decodeURLComponent(arrayJoin([\${technology:singlequote}]))), $technology)
    AND $__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${resource:singlequote}]))), $resource)
    AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
    AND $__conditionalAll(hasAny(user_groups, arrayMap(v -> decodeURLComponent(v), [\${group:singlequote}])), $group)
    AND $__conditionalAll(connector_name IN (SELECT decodeURLComponent(arrayJoin([\${connector:singlequote}]))), $connector)
    AND $__conditionalAll(client_ip_address IN (SELECT decodeURLComponent(arrayJoin([\${client_ip:singlequote}]))), $client_ip)
  UNION ALL
  SELECT sum(sessions), uniqState(toString(user_key)), uniqState(toString(resource_name))
  FROM session_rollups_daily FINAL
  WHERE day IN (SELECT day FROM $rolled_up_days WHERE $__conditionalAll(0, $group) AND $__conditionalAll(0, $client_ip) AND getSetting('additional_table_filters') = map() AND NOT ($__conditionalAll(0, $environment) AND $__conditionalAll(0, $resource) AND $__conditionalAll(0, $user) AND $__conditionalAll(0, $connector))) AND sessions > 0
    AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
    AND $__conditionalAll(resource_technology IN (SELECT decodeURLComponent(arrayJoin([\${technology:singlequote}]))), $technology)
    AND $__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${resource:singlequote}]))), $resource)
    AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
    AND $__conditionalAll(connector_name IN (SELECT decodeURLComponent(arrayJoin([\${connector:singlequote}]))), $connector)
  UNION ALL
  SELECT sum(sessions), uniqMergeState(users), uniqMergeState(resources)
  FROM session_technology_rollups_daily FINAL
  WHERE day IN (SELECT day FROM $rolled_up_days WHERE $__conditionalAll(0, $group) AND $__conditionalAll(0, $client_ip) AND getSetting('additional_table_filters') = map() AND $__conditionalAll(0, $environment) AND $__conditionalAll(0, $resource) AND $__conditionalAll(0, $user) AND $__conditionalAll(0, $connector)) AND sessions > 0
    AND $__conditionalAll(resource_technology IN (SELECT decodeURLComponent(arrayJoin([\${technology:singlequote}]))), $technology)
)`,
  },
  {
    uid: "sessionhouse-sessions-overview",
    title: "Child sessions by parent",
    picks: "resource",
    // Every session of the range read from sessions FINAL.
    sql: `SELECT parent_session_id,
       count() AS child_sessions,
       arraySlice(arraySort(groupUniqArray(resource_name)), 1, 5) AS child_resources,
       any(user_key) AS user,
       min(start_time) AS first_child,
       max(start_time) AS last_child,
       encodeURLComponent(user) AS user_url
FROM sessions FINAL
WHERE $__timeFilter(start_time) AND parent_session_id != ''
  AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
  AND $__conditionalAll(resource_technology IN (SELECT decodeURLComponent(arrayJoin([\${technology:singlequote}]))), $technology)
  AND $__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${resource:singlequote}]))), $resource)
  AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
  AND $__conditionalAll(hasAny(user_groups, arrayMap(v -> decodeURLComponent(v), [\${group:singlequote}])), $group)
  AND $__conditionalAll(connector_name IN (SELECT decodeURLComponent(arrayJoin([\${connector:singlequote}]))), $connector)
  AND $__conditionalAll(client_ip_address IN (SELECT decodeURLComponent(arrayJoin([\${client_ip:singlequote}]))), $client_ip)
GROUP BY parent_session_id
ORDER BY child_sessions DESC, last_child DESC
LIMIT 1000`,
  },
  // The native-user and AI panels before they read the daily rollups of migration 0046.
  {
    uid: "sessionhouse-native-users",
    title: "Native-user sessions",
    picks: "native_resource",
    // Every session of the range read through sessions_enriched.
    sql: `SELECT count() AS sessions, countIf(person_via != 'none') AS with_person, round(100 * countIf(person_via != 'none') / greatest(count(), 1), 1) AS resolved_pct
FROM sessions_enriched
WHERE $__timeFilter(start_time) AND user_id = '' AND end_user_id = '' AND native_username != ''
  AND $__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${native_resource:singlequote}]))), $native_resource)`,
  },
  {
    uid: "sessionhouse-native-users",
    title: "Native-user sessions by how the person is known",
    picks: "native_resource",
    // Every session of the range read through sessions_enriched; the interval a day at least over a
    // range longer than 31 days, as the panel buckets it since it reads the daily rollup.
    sql: `SELECT toStartOfInterval(toDateTime(start_time), toIntervalSecond(if(dateDiff('second', $__fromTime, $__toTime) > 2678400, greatest($__interval_s, 86400), $__interval_s))) AS time, person_via, count() AS sessions
FROM sessions_enriched
WHERE $__timeFilter(start_time) AND user_id = '' AND end_user_id = '' AND native_username != ''
  AND $__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${native_resource:singlequote}]))), $native_resource)
GROUP BY time, person_via
ORDER BY time, person_via`,
  },
  {
    uid: "sessionhouse-native-users",
    title: "Person behind each native user",
    picks: "native_resource",
    // Every session of the range read through sessions_enriched.
    sql: `SELECT resource_name,
       native_username,
       person_via,
       if(person_name != '', person_name, '(none)') AS person_name,
       person_email,
       count() AS sessions,
       min(start_time) AS first_session,
       max(start_time) AS last_session
FROM sessions_enriched
WHERE $__timeFilter(start_time) AND user_id = '' AND end_user_id = '' AND native_username != ''
  AND $__conditionalAll(resource_name IN (SELECT decodeURLComponent(arrayJoin([\${native_resource:singlequote}]))), $native_resource)
GROUP BY resource_name, native_username, person_via, person_name, person_email
ORDER BY sessions DESC, resource_name, native_username, person_via, person_name, person_email
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-ai-llm-activity",
    title: "LLM and MCP sessions",
    picks: "user",
    // Every LLM and MCP session of the range read from sessions FINAL.
    sql: `SELECT countIf(resource_technology = 'llm') AS llm_sessions,
       countIf(resource_technology = 'mcp') AS mcp_sessions,
       uniq(user_key) AS users
FROM sessions FINAL
WHERE $__timeFilter(start_time) AND resource_technology IN ('llm', 'mcp')
  AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
  AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)`,
  },
  {
    uid: "sessionhouse-ai-llm-activity",
    title: "LLM and MCP sessions over time",
    picks: "user",
    // Every LLM and MCP session of the range from sessions FINAL; the interval a day at least over a
    // range longer than 31 days, as the panel buckets it since it reads the daily rollup.
    sql: `SELECT toStartOfInterval(toDateTime(start_time), toIntervalSecond(if(dateDiff('second', $__fromTime, $__toTime) > 2678400, greatest($__interval_s, 86400), $__interval_s))) AS time, resource_technology, count() AS sessions
FROM sessions FINAL
WHERE $__timeFilter(start_time) AND resource_technology IN ('llm', 'mcp')
  AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
  AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
GROUP BY time, resource_technology
ORDER BY time, resource_technology`,
  },
  {
    uid: "sessionhouse-ai-llm-activity",
    title: "MCP resources",
    picks: "environment",
    // Every MCP session of the range read from sessions FINAL.
    sql: `SELECT resource_name AS mcp_resource,
       count() AS sessions,
       uniq(user_key) AS users,
       arraySlice(arraySort(groupUniqArray(user_key)), 1, 5) AS some_users,
       max(start_time) AS last_session,
       encodeURLComponent(mcp_resource) AS mcp_resource_url
FROM sessions FINAL
WHERE $__timeFilter(start_time) AND resource_technology = 'mcp'
  AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
  AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
GROUP BY mcp_resource
ORDER BY sessions DESC, mcp_resource
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-ai-llm-activity",
    title: "Who uses which LLM and MCP resources",
    picks: "user",
    // Every LLM and MCP session of the range from sessions FINAL; ordered by sessions only, it left
    // the order of equal counts (and so the rows a cut keeps) to chance: the user and resource
    // break ties here as they do in the panel.
    sql: `SELECT user_key AS user,
       any(user_type) AS user_type,
       resource_name AS resource,
       any(resource_technology) AS technology,
       count() AS sessions,
       min(start_time) AS first_access,
       max(start_time) AS last_access,
       encodeURLComponent(user) AS user_url,
       encodeURLComponent(resource) AS resource_url
FROM sessions FINAL
WHERE $__timeFilter(start_time) AND resource_technology IN ('llm', 'mcp')
  AND $__conditionalAll(resource_name IN (SELECT resource_name FROM resource_environments WHERE environment IN (SELECT decodeURLComponent(arrayJoin([\${environment:singlequote}])))), $environment)
  AND $__conditionalAll(user_key IN (SELECT decodeURLComponent(arrayJoin([\${user:singlequote}]))), $user)
GROUP BY user, resource
ORDER BY sessions DESC, user, resource
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-who-accessed-what",
    title: "Resources reached per group",
    picks: "group",
    // Every session of the range read from sessions FINAL.
    sql: `SELECT arrayJoin(user_groups) AS user_group, uniq(resource_name) AS resources
FROM sessions FINAL
WHERE $__timeFilter(start_time) AND notEmpty(user_groups)
${filters(2, ["environment", "technology", "resource", "user", "group", "connector"])}
GROUP BY user_group
ORDER BY resources DESC, user_group
LIMIT 25`,
  },
  {
    uid: "sessionhouse-who-accessed-what",
    title: "Sessions (choose a user or a resource above)",
    picks: "user",
    // Every session of the range read from sessions FINAL, newest first.
    sql: `SELECT start_time,
       end_time,
       duration_ms,
       session_status,
       user_key AS user,
       user_type,
       resource_name AS resource,
       resource_technology AS technology,
       native_username,
       client_ip_address,
       connector_name,
       sidecar_name,
       parent_session_id,
       id AS session_id,
       encodeURLComponent(user) AS user_url,
       encodeURLComponent(resource) AS resource_url,
       encodeURLComponent(connector_name) AS connector_name_url,
       encodeURLComponent(client_ip_address) AS client_ip_address_url
FROM sessions FINAL
WHERE $__timeFilter(start_time)
${filters(2, ["environment", "technology", "resource", "user", "group", "connector"])}
ORDER BY start_time DESC
LIMIT 1000`,
  },
  {
    uid: "sessionhouse-who-accessed-what",
    title: "Sessions by user type",
    picks: "user",
    // Every session of the range read from sessions FINAL.
    sql: `SELECT if(user_type = '', 'unknown', user_type) AS user_type, count() AS sessions
FROM sessions FINAL
WHERE $__timeFilter(start_time)
${filters(2, ["environment", "technology", "resource", "user", "group", "connector"])}
GROUP BY user_type
ORDER BY sessions DESC, user_type`,
  },
  {
    uid: "sessionhouse-who-accessed-what",
    title: "Humans acting through machines",
    picks: "user",
    // Every session of the range read from sessions FINAL.
    sql: `SELECT countIf(end_user_email != '' OR end_user_name != '') AS sessions_with_end_user,
       uniqIf(end_user_email, end_user_email != '') AS end_users
FROM sessions FINAL
WHERE $__timeFilter(start_time)
${filters(2, ["environment", "technology", "resource", "user", "group", "connector"])}`,
  },
  {
    uid: "sessionhouse-who-accessed-what",
    title: "Machine vs human sessions over time",
    picks: "resource",
    // Every session of the range read from sessions FINAL.
    sql: `SELECT $__timeInterval(start_time) AS time, if(user_type = '', 'unknown', user_type) AS user_type, count() AS sessions
FROM sessions FINAL
WHERE $__timeFilter(start_time)
${filters(2, ["environment", "technology", "resource", "user", "group", "connector"])}
GROUP BY time, user_type
ORDER BY time, user_type`,
  },
];

/** The query each rewritten variable had, by dashboard uid and variable name. */
export const REPLACED_VARIABLES: { uid: string; name: string; sql: string }[] =
  [
    ...[
      "sessionhouse-sessions-overview",
      "sessionhouse-who-accessed-what",
      "sessionhouse-first-seen",
    ].map((uid) => ({
      uid,
      name: "user",
      // Every session of the range read from sessions.
      sql: `SELECT encodeURLComponent(user) AS value, user_key AS user
FROM sessions
WHERE $__timeFilter(start_time) AND user != ''
GROUP BY user
ORDER BY count() DESC, user
LIMIT 1000`,
    })),
    ...["sessionhouse-sessions-overview", "sessionhouse-who-accessed-what"].map(
      (uid) => ({
        uid,
        name: "group",
        // Every session of the range read from sessions, once under each group of its user.
        sql: `SELECT encodeURLComponent(user_group) AS value, arrayJoin(user_groups) AS user_group
FROM sessions
WHERE $__timeFilter(start_time) AND notEmpty(user_groups)
GROUP BY user_group
ORDER BY count() DESC, user_group
LIMIT 1000`,
      }),
    ),
    {
      uid: "sessionhouse-ai-llm-activity",
      name: "user",
      sql: `SELECT encodeURLComponent(user) AS value, user_key AS user
FROM sessions
WHERE $__timeFilter(start_time) AND resource_technology IN ('llm', 'mcp') AND user != ''
GROUP BY user
ORDER BY count() DESC, user
LIMIT 1000`,
    },
  ];

/** The variables of the native-user dashboard before they read the daily rollups of migration 0046. */
export const REPLACED_NATIVE_VARIABLES: {
  uid: string;
  name: string;
  sql: string;
}[] = [
  {
    uid: "sessionhouse-native-users",
    name: "native_resource",
    // Every session of the range read through sessions_enriched.
    sql: `SELECT encodeURLComponent(resource_name) AS value, resource_name
FROM sessions_enriched
WHERE $__timeFilter(start_time) AND user_id = '' AND end_user_id = '' AND native_username != ''
GROUP BY resource_name
ORDER BY count() DESC, resource_name
LIMIT 1000`,
  },
];

/** The sessions overview's `client_ip` variable before it read the address rollups. */
export const REPLACED_CLIENT_IP_VARIABLE = {
  uid: "sessionhouse-sessions-overview",
  name: "client_ip",
  // Every stored read of the range's sessions counted, from sessions.
  sql: `SELECT encodeURLComponent(client_ip_address) AS value, client_ip_address
FROM sessions
WHERE $__timeFilter(start_time) AND client_ip_address != ''
GROUP BY client_ip_address
ORDER BY count() DESC, client_ip_address
LIMIT 1000`,
} as const;
