// The aggregation jobs shipped by default. A config file's
// `aggregations.jobs` replaces this list; copy from here to keep some of them.
import { aggregationJobSchema, type AggregationJobConfig } from "./schema.js";

/** The log field whose values are the data labels of the columns a query returned. */
export const DATA_LABEL_FIELD = "response.returned_columns.data_label";

/**
 * The aggregation job the `resource_environments` view (migrations/0005, 0053) and its daily
 * rollup read, grouped by the resource's environment and then its name: sessions lack the
 * environment.
 */
export const ENVIRONMENT_JOB = "resource_environments";

export function defaultAggregationJobs(): AggregationJobConfig[] {
  return [
    { name: "logs_by_technology", groupBy: ["resource.technology"] },
    { name: "logs_by_user_resource", groupBy: ["user.email", "resource.name"] },
    {
      name: "policies_by_name_status",
      query: "policy.name:*",
      groupBy: ["policy.name", "policy.status"],
    },
    {
      name: "llm_by_provider_model",
      query: "resource.technology:llm OR resource.technology:mcp",
      groupBy: ["llm.provider", "llm.model"],
    },
    {
      name: ENVIRONMENT_JOB,
      interval: "1h",
      groupBy: ["resource.environment", "resource.name"],
    },
    {
      name: "data_labels_by_resource",
      query: `${DATA_LABEL_FIELD}:*`,
      groupBy: [DATA_LABEL_FIELD, "resource.name"],
    },
  ].map((job) => aggregationJobSchema.parse(job));
}
