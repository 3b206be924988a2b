// Labelled data returned in a period: from the aggregation job grouping logs by
// response.returned_columns.data_label then resource.name (the default job
// data_labels_by_resource, under whatever name it is configured), its top query fingerprints,
// and per person with the control-plane streams (each resource's labels, as `sessions_enriched`
// gives them with its sessions: RESOURCE_LABELS) or, without them, the people
// whose sessions reached resources that returned labelled data. Parameters: {from}, {to},
// {user}, {resource}, {environment}.
import type { ReportQuery } from "./query.js";
import {
  periodSessionsSql,
  RESOURCE_LABELS,
  sessionNeeds,
  type SessionSource,
} from "./session-queries.js";

/** The aggregation job (first by name) whose rows are data labels by resource. */
const LABEL_JOB = `(SELECT min(job) FROM {{db}}.agg_jobs FINAL
  WHERE length(group_by) >= 2 AND group_by[1] = 'response.returned_columns.data_label' AND group_by[2] = 'resource.name')`;

const LABEL_ROWS = `SELECT key1 AS label, key2 AS resource_name, count, bucket_time
FROM {{db}}.agg_histogram FINAL
WHERE job = ${LABEL_JOB} AND level = 2 AND count > 0 AND key1 != 'none' AND key1 != ''
  AND bucket_time >= {from:DateTime64(3, 'UTC')} AND bucket_time < {to:DateTime64(3, 'UTC')}
  AND ({resource:String} = '' OR key2 = {resource:String})
  AND ({environment:String} = '' OR key2 IN (SELECT resource_name FROM {{db}}.resource_environments WHERE environment = {environment:String}))`;

const T = (c: string) => `formatDateTime(${c}, '%Y-%m-%d %H:%i:%S')`;
const LOGS = ["agg_histogram", "agg_jobs", "resource_environments"];

/**
 * The 25 values of a top-values member of the label job with the most queries in the period, as
 * `column`, with `also` (more columns of the result, each after a comma).
 */
function topQueries(
  id: string,
  member: string,
  column: string,
  also = "",
): ReportQuery {
  return {
    id,
    needs: ["agg_top_values", "agg_jobs"],
    sql: `SELECT key AS ${column}, sum(count) AS queries${also}
FROM {{db}}.agg_top_values FINAL
WHERE job = ${LABEL_JOB} AND member = '${member}' AND count > 0
  AND window_start >= {from:DateTime64(3, 'UTC')} AND window_start < {to:DateTime64(3, 'UTC')}
GROUP BY ${column}
ORDER BY queries DESC, ${column}
LIMIT 25`,
  };
}

export function sensitiveQueries(source: SessionSource) {
  const sessions = periodSessionsSql(source);
  return {
    labelJob: {
      id: "sensitive.label_job",
      needs: ["agg_jobs"],
      sql: `SELECT ${LABEL_JOB} AS job`,
    },
    totals: {
      id: "sensitive.totals",
      needs: LOGS,
      sql: `SELECT sum(count) AS events, uniqExact(label) AS labels, uniqExact(resource_name) AS resources
FROM (${LABEL_ROWS})`,
    },
    people: {
      id: "sensitive.people_on_labelled_resources_count",
      needs: [...sessionNeeds(source), ...LOGS],
      sql: `SELECT uniqExact(person) AS people
FROM (${sessions})
WHERE resource_name IN (SELECT resource_name FROM (${LABEL_ROWS}))`,
    },
    byLabel: {
      id: "sensitive.by_label",
      needs: LOGS,
      sql: `SELECT label, sum(count) AS events, uniqExact(resource_name) AS resources,
       ${T("min(bucket_time)")} AS first_seen, ${T("max(bucket_time)")} AS last_seen
FROM (${LABEL_ROWS})
GROUP BY label
ORDER BY events DESC, label`,
    },
    byLabelResource: {
      id: "sensitive.by_label_resource",
      needs: LOGS,
      sql: `SELECT label, resource_name AS resource, sum(count) AS events,
       ${T("min(bucket_time)")} AS first_seen, ${T("max(bucket_time)")} AS last_seen
FROM (${LABEL_ROWS})
GROUP BY label, resource_name
ORDER BY label, events DESC, resource`,
    },
    byPersonLabels: {
      id: "sensitive.by_person_label",
      needs: sessionNeeds("enriched"),
      sql: `SELECT person, label, sum(n) AS sessions, uniqExact(resource_name) AS resources,
       ${T("max(last)")} AS last_access
FROM (
  SELECT person, resource_id, resource_name, count() AS n, max(start_time) AS last
  FROM (${periodSessionsSql("enriched")})
  GROUP BY person, resource_id, resource_name
) AS s
INNER JOIN ${RESOURCE_LABELS} AS l ON l.resource_id = s.resource_id
ARRAY JOIN l.labels AS label
GROUP BY person, label
ORDER BY person, label`,
    },
    byPersonResources: {
      id: "sensitive.people_on_labelled_resources",
      needs: [...sessionNeeds(source), ...LOGS],
      sql: `SELECT person, resource_name AS resource, labels, count() AS sessions, ${T("max(start_time)")} AS last_access
FROM (${sessions}) AS s
INNER JOIN (
  SELECT resource_name, arrayStringConcat(arraySort(groupUniqArray(label)), ', ') AS labels
  FROM (${LABEL_ROWS}) GROUP BY resource_name
) AS l ON l.resource_name = s.resource_name
GROUP BY person, resource_name, labels
ORDER BY person, resource`,
    },
    topFingerprints: topQueries(
      "sensitive.top_fingerprints",
      "queryFingerprints",
      "fingerprint",
      ", count() AS windows_in_top",
    ),
    topNormalized: topQueries(
      "sensitive.top_normalized_queries",
      "queryNormalized",
      "normalized_query",
    ),
  } as const satisfies Record<string, ReportQuery>;
}
