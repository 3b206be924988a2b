// The wire schemas of the control-plane API.
export * from "./common.js";
export * from "./session.js";
export * from "./logs.js";
