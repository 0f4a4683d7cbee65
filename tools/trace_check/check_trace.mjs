// Loads a Chrome trace (Trace Event Format JSON, object or array form) with Chrome DevTools'
// trace engine (@paulirish/trace_engine: the trace model of DevTools' Performance panel, pinned
// by package-lock.json) and prints what it modelled, as one JSON object on stdout:
//   ok, parser, file, events {total, complete, metadata, other}, generic, bounds_us,
//   processes [{pid, name, threads [{tid, name, complete, modelled, roots, max_depth, dropped}]}],
//   ops {name: events the model placed in its thread trees}, errors [...]
// Exit 0 when the trace parsed and every complete ("X") event took its place in its thread's
// tree; 1 on any error (unreadable or truncated JSON, no events, the engine threw, an event the
// model had to drop because it overlaps its parent instead of nesting in it, a thread it lost);
// 2 on bad arguments.
//
//   node tools/trace_check/check_trace.mjs FILE.trace.json
//
// Install: `npm ci` in tools/trace_check (tools/bootstrap.sh does it).
import fs from 'node:fs';
import {createRequire} from 'node:module';

const file = process.argv[2];
if (!file || process.argv.length > 3) {
  process.stderr.write('usage: node check_trace.mjs FILE.trace.json\n');
  process.exit(2);
}

const require = createRequire(import.meta.url);
const enginePackage = require('@paulirish/trace_engine/package.json');
const report = {
  ok: false,
  parser: {
    name: enginePackage.name,
    version: enginePackage.version,
    what: 'Chrome DevTools trace engine (the Performance panel\'s trace model)',
    node: process.version,
  },
  file,
  events: {total: 0, complete: 0, metadata: 0, other: 0},
  generic: null,
  bounds_us: null,
  processes: [],
  ops: {},
  errors: [],
};
const finish = () => {
  report.ok = report.errors.length === 0;
  process.stdout.write(JSON.stringify(report, null, 1) + '\n');
  process.exit(report.ok ? 0 : 1);
};

// The engine is written for DevTools in a browser: it needs DOMRect (its own package ships the
// polyfill), and this release calls URL.parse and Array.prototype.toSorted, which Node only has
// from 22 / 20 (Debian 12 ships Node 18). Each is added only where missing, as the standard
// defines it.
const {polyfillDOMRect} = await import('@paulirish/trace_engine/analyze-trace.mjs');
polyfillDOMRect();
if (typeof URL.parse !== 'function') {
  URL.parse = (url, base) => {
    try {
      return new URL(url, base);
    } catch {
      return null;
    }
  };
}
if (typeof Array.prototype.toSorted !== 'function') {
  Object.defineProperty(Array.prototype, 'toSorted', {
    value(compare) {
      return Array.prototype.slice.call(this).sort(compare);
    },
    writable: true,
    configurable: true,
  });
}
const Trace = await import('@paulirish/trace_engine');

let doc;
try {
  doc = JSON.parse(fs.readFileSync(file, 'utf8'));
} catch (e) {
  report.errors.push(`cannot read the trace: ${e.message}`);
  finish();
}
const events = Array.isArray(doc) ? doc : doc?.traceEvents;
if (!Array.isArray(events)) {
  report.errors.push('not a trace: neither an array of events nor an object with a traceEvents array');
  finish();
}
report.events.total = events.length;
const key = (pid, tid) => `${pid}/${tid}`;
const completeByThread = new Map();  // "pid/tid" -> complete events given
for (const e of events) {
  if (e?.ph === 'X') {
    ++report.events.complete;
    const k = key(e.pid, e.tid);
    completeByThread.set(k, (completeByThread.get(k) ?? 0) + 1);
  } else if (e?.ph === 'M') {
    ++report.events.metadata;
  } else {
    ++report.events.other;
  }
}
if (!report.events.complete) report.errors.push('no complete ("X") events');

let parsed;
const log = console.log;
try {
  console.log = console.error;  // stdout is the report's
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(events);
  parsed = model.parsedTrace();
} catch (e) {
  report.errors.push(`the trace engine rejected the trace: ${e?.stack ?? e}`);
  finish();
} finally {
  console.log = log;
}
if (!parsed?.data?.Renderer) {
  report.errors.push('the trace engine returned no model');
  finish();
}
const {Meta, Renderer} = parsed.data;
report.generic = Meta.traceIsGeneric;
report.bounds_us = {min: Meta.traceBounds.min, max: Meta.traceBounds.max, range: Meta.traceBounds.range};

const modelledThreads = new Set();
for (const [pid, proc] of Renderer.processes) {
  const p = {pid, name: Meta.processNames.get(pid)?.args?.name ?? null, threads: []};
  for (const [tid, thread] of proc.threads) {
    modelledThreads.add(key(pid, tid));
    const t = {tid, name: thread.name, complete: completeByThread.get(key(pid, tid)) ?? 0, modelled: 0,
               roots: thread.tree.roots.size, max_depth: thread.tree.maxDepth, dropped: []};
    const placed = new Set();
    const walk = node => {
      placed.add(node.entry);
      if (node.entry.ph === 'X') {
        ++t.modelled;
        report.ops[node.entry.name] = (report.ops[node.entry.name] ?? 0) + 1;
      }
      for (const child of node.children) walk(child);
    };
    for (const root of thread.tree.roots) walk(root);
    for (const e of thread.entries)
      if (e.ph === 'X' && !placed.has(e)) t.dropped.push({name: e.name, ts: e.ts, dur: e.dur});
    if (t.modelled !== t.complete || t.dropped.length) {
      report.errors.push(`thread ${pid}/${tid}: ${t.complete} complete events given, ${t.modelled} placed in its ` +
                         `tree; dropped (they overlap their parent instead of nesting in it): ` +
                         JSON.stringify(t.dropped.slice(0, 5)));
    }
    t.dropped = t.dropped.length;
    p.threads.push(t);
  }
  report.processes.push(p);
}
for (const [k, n] of completeByThread)
  if (!modelledThreads.has(k)) report.errors.push(`thread ${k}: ${n} complete events given, none modelled`);
finish();
