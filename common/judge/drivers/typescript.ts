// typescript.ts: the TypeScript judge's record writer is the JavaScript one
// (drivers/javascript.js, embedded after these lines), given the two names
// it takes from node that tsc, without @types/node, does not know.
declare var require: any; // as MultiPL-E's tests declare it: the same type, no conflict
declare var Buffer: any;
