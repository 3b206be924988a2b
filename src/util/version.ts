// The product's name and version, as package.json gives them.
import { readFileSync } from "node:fs";

export const PRODUCT = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
) as { name: string; version: string };

export const VERSION = PRODUCT.version;
