import { it } from "vitest";
import { writeFileSync } from "node:fs";
import { demoWarehouse } from "./fixture.js";
import { select } from "../helpers/warehouse.js";

it("explore", async () => {
  const t0 = Date.now();
  const d = await demoWarehouse();
  const out: string[] = [`sync ms ${Date.now() - t0}`];
  const qs = [
    "SELECT version()",
    "SELECT count() n, min(start_time), max(start_time) FROM {db}.sessions FINAL",
    "SELECT session_status, count() FROM {db}.sessions FINAL GROUP BY 1",
    "SELECT resource_technology, count() FROM {db}.sessions FINAL GROUP BY 1 ORDER BY 2 DESC",
    "SELECT user_type, user_account_type, end_user_type, count() FROM {db}.sessions FINAL GROUP BY 1,2,3",
    "SELECT countIf(parent_session_id != '') , countIf(connector_name != ''), countIf(client_ip_address != ''), countIf(duration_ms IS NOT NULL), uniq(user_email), uniq(resource_name), uniq(connector_name), uniq(arrayJoin(user_groups)) FROM {db}.sessions FINAL",
    "SELECT * EXCEPT raw FROM {db}.sessions FINAL LIMIT 2",
    "SELECT job, level, count(), uniq(key1), min(bucket_time), max(bucket_time), any(field1), any(field2) FROM {db}.agg_histogram FINAL WHERE count > 0 GROUP BY 1,2 ORDER BY 1,2",
    "SELECT job, member, count(), uniq(key), any(key) FROM {db}.agg_top_values FINAL WHERE count > 0 GROUP BY 1,2 ORDER BY 1,2",
    "SELECT job, count(), sum(num_hits) FROM {db}.agg_windows FINAL GROUP BY 1",
    "SELECT * FROM {db}.resource_environments LIMIT 5",
    "SELECT environment, count() FROM {db}.resource_environments GROUP BY 1",
    "SELECT * FROM {db}.runs FINAL",
    "SELECT * FROM {db}.checkpoints FINAL",
    "SELECT count() FROM {db}.dead_letters FINAL",
    "SELECT key1, key2, sum(count) FROM {db}.agg_histogram FINAL WHERE job='policies_by_name_status' AND level=2 AND count>0 GROUP BY 1,2 ORDER BY 3 DESC LIMIT 20",
    "SELECT key1, key2, sum(count) FROM {db}.agg_histogram FINAL WHERE job='llm_by_provider_model' AND level=2 AND count>0 GROUP BY 1,2 ORDER BY 3 DESC LIMIT 20",
    "SELECT member, key, sum(count) FROM {db}.agg_top_values FINAL WHERE job='llm_by_provider_model' AND member IN ('llmToolCallNames','llmStopReasons','resourceNames','resourceTechnologies') AND count>0 GROUP BY 1,2 ORDER BY 1,3 DESC",
    "SELECT member, key, sum(count) FROM {db}.agg_top_values FINAL WHERE job='data_labels_by_resource' AND member IN ('responseReturnedColumnDataLabels','responseRowsSent','queryFingerprints','triggeredPolicyNames') AND count>0 GROUP BY 1,2 ORDER BY 1,3 DESC",
  ];
  for (const q of qs) {
    try {
      out.push(q, JSON.stringify(await select(d.warehouse, q), null, 0));
    } catch (e) {
      out.push(q, "ERR " + String(e));
    }
  }
  writeFileSync("/tmp/explore.txt", out.join("\n"));
  await d.close();
}, 600_000);
