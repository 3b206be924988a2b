export {
  loadConfig,
  secretsOf,
  secretsOfEnvironment,
  shortSecrets,
  RECOMMENDED_SECRET_LENGTH,
  ConfigError,
  unknownEnvironmentVariables,
  unknownVariableProblem,
  apiNotConfigured,
  loadSettingsReport,
  type SettingLine,
  deepMerge,
  type LoadOptions,
} from "./load.js";
export {
  configSchema,
  aggregationJobSchema,
  MAX_GROUP_BY_FIELDS,
  LOG_LEVELS,
  REPORT_FORMATS,
  REPORT_KINDS,
  type Config,
  type ReportFormat,
  type ReportKind,
  type ReportScheduleConfig,
  type AggregationJobConfig,
} from "./schema.js";
export {
  DATA_LABEL_FIELD,
  ENVIRONMENT_JOB,
  defaultAggregationJobs,
} from "./jobs.js";
