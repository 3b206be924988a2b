export {
  loadConfig,
  secretsOf,
  ConfigError,
  ENV_VARS,
  type LoadOptions,
} from "./load.js";
export {
  configSchema,
  aggregationJobSchema,
  MAX_GROUP_BY_FIELDS,
  type Config,
  type AggregationJobConfig,
} from "./schema.js";
export { defaultAggregationJobs } from "./jobs.js";
