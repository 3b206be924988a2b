// The simulator keeps its own Connect code table (it stands for a foreign service and imports
// nothing of the exporter); both tables follow the protocol, so they must agree.
import { describe, expect, it } from "vitest";
import * as product from "../../../src/api/connect-codes.js";
import { HTTP_STATUS_OF_CODE } from "../../../src/simulator/connect.js";

describe("simulator Connect codes", () => {
  it("map to the same HTTP statuses as the exporter's table", () => {
    expect(HTTP_STATUS_OF_CODE).toEqual(product.HTTP_STATUS_OF_CODE);
  });
});
