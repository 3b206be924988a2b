// The log-aggregation part of the simulator: ListLogAggregations over generated log events.
// The route path constant lives in ../server.ts (LIST_LOG_AGGREGATIONS_PATH).

export {
  createListLogAggregationsHandler,
  parseListLogAggregationsRequest,
  type LogsHandlerOptions,
  type LogsRouteContext,
} from "./handler.js";
export {
  type HistogramBucket,
  type ListLogAggregationsResponse,
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
  type EventBatch,
} from "./fields.js";
export { LogEventStore } from "./events.js";
export { compileQuery, parseQuery, QuerySyntaxError } from "./query.js";
export { desktopDeviceOf, policyCatalog } from "./catalog.js";
