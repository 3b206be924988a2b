#!/usr/bin/env node
// Thin entry point: the compiled CLI lives in dist/ (built by `npm install` through `prepare`).
import { main } from "../dist/cli/main.js";

process.exitCode = await main(process.argv);
