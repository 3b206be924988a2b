// The log-aggregation part of the simulator: ListLogAggregations over generated log events.
// The route path constant lives in ../server.ts (LIST_LOG_AGGREGATIONS_PATH).

export {
  createListLogAggregationsHandler,
  DEFAULT_HISTOGRAM_INTERVAL,
  DEFAULT_TOP_N,
  MAX_GROUP_BY_FIELDS,
  MAX_HISTOGRAM_STEPS,
  parseFixedInterval,
  parseListLogAggregationsRequest,
  type AggregationMode,
  type LogsHandlerOptions,
  type LogsRouteContext,
  type ParsedLogAggregationsRequest,
} from "./handler.js";
export {
  aggregateLogs,
  firstStepMs,
  rfc3339,
  stepCount,
  type AggregationParams,
  type Aggregations,
  type HistogramBucket,
  type ListLogAggregationsResponse,
  type LogsOverTimeStep,
  type TopValue,
} from "./aggregate.js";
export {
  EXTRA_MEMBERS,
  HOME_OF_FIELD,
  LOG_FIELDS,
  MEMBER_OF_FIELD,
  MEMBERS,
  MULTI_VALUED_FIELDS,
  batchOfEvent,
  eventRecord,
  fieldValue,
  type AggregatedField,
  type AggregationMember,
  type EventBatch,
  type FieldValue,
  type LogField,
} from "./fields.js";
export {
  LogEventStore,
  MAX_EVENTS_PER_SESSION,
  type LogEventStoreOptions,
  type LogSessionSource,
} from "./events.js";
export {
  compileQuery,
  parseQuery,
  QuerySyntaxError,
  type EventPredicate,
  type QueryNode,
} from "./query.js";
export {
  desktopDeviceOf,
  policyCatalog,
  workflowCatalog,
  type SimDesktopDevice,
  type SimPolicy,
  type SimWorkflow,
} from "./catalog.js";
