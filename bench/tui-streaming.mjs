// npm run bench: 20 MB of agent output streamed through the TUI, first into the store alone, then
// through the whole rendered app (Ink drawing into a fake 120x40 terminal). Prints lines per
// second, peak memory and the frames the app wrote: those the output drives (the store flushes at
// most every 100 ms, issue 5) apart from the spinner's own. BENCH_TUI_MB changes the volume.
import { EventEmitter } from 'node:events';
import v8 from 'node:v8';
import vm from 'node:vm';

// Ink decides how it renders when it is imported (CI prints only the last frame): measure the
// interactive path, as a user's terminal gets it.
delete process.env.CI;
delete process.env.CONTINUOUS_INTEGRATION;
const { EngineBus } = await import('../dist/engine/events.js');
// The app as the CLI runs it: the bundle's entry (dist/cli/app.js), Ink's text caches bounded
// (scripts/ink-bounded-caches.mjs). BENCH_TUI_UNBUNDLED=1 measures tsc's dist/ui with Ink as installed.
const UNBUNDLED = process.env.BENCH_TUI_UNBUNDLED === '1';
const { createUiStore, startInkFrontEnd } = await import(
  UNBUNDLED ? '../dist/ui/index.js' : '../dist/cli/app.js'
);

const MEGABYTES = Number(process.env.BENCH_TUI_MB ?? 20);
const TOTAL_BYTES = MEGABYTES * 1024 * 1024;
const BATCH_BYTES = 64 * 1024; // what a busy agent prints between two turns of the event loop
const COLUMNS = 120;
const ROWS = 40;

// Realistic lines: prose, code, a tool call now and then, a long line now and then.
function* agentEvents(totalBytes = TOTAL_BYTES) {
  const words = 'the runner judges every change against git reality scope verification and budgets'.split(
    ' ',
  );
  let bytes = 0;
  for (let n = 0; bytes < totalBytes; n++) {
    if (n % 50 === 49) {
      const target = `src/module-${n % 97}/file-${n}.ts`;
      bytes += target.length + 4;
      yield { type: 'agent.tool', role: 'builder', tool: 'Edit', target };
      continue;
    }
    const length = n % 200 === 0 ? 600 : 40 + (n % 80);
    let text = `${n}:`;
    while (text.length < length) text += ` ${words[(n + text.length) % words.length]}`;
    bytes += text.length + 1;
    yield { type: 'agent.output', role: 'builder', text, kind: n % 300 === 0 ? 'error' : 'text' };
  }
}

function memory(peak) {
  const { rss, heapUsed } = process.memoryUsage();
  peak.rss = Math.max(peak.rss, rss);
  peak.heap = Math.max(peak.heap, heapUsed);
}

// A real collection before reading what stays: peak heap counts garbage not yet collected.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const rate = (n, ms) => Math.round((n / ms) * 1000).toLocaleString('en-US');

function storeOnly() {
  const store = createUiStore({ view: 'workflow', project: 'bench' });
  const at = new Date().toISOString();
  const peak = { rss: 0, heap: 0 };
  let events = 0;
  const started = performance.now();
  for (const event of agentEvents()) {
    store.dispatch({ ...event, at });
    if (++events % 10_000 === 0) memory(peak);
  }
  store.flush();
  const ms = performance.now() - started;
  memory(peak);
  const { buffer } = store.getSnapshot().output;
  gc();
  const retained = process.memoryUsage().heapUsed;
  store.dispose();
  return { events, lines: buffer.total, kept: buffer.size, ms, peak, retained };
}

/** Lets the event loop turn between two batches, as a child's stdout does between two reads. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * The store's notifications under the stream the app gets (64 KB per event-loop turn), timed by
 * the store's own clock: the "flushed at most every 100 ms" is the shortest gap.
 */
async function flushCadence() {
  const store = createUiStore({ view: 'workflow', project: 'bench' });
  const at = new Date().toISOString();
  const flushedAt = [];
  store.subscribe(() => flushedAt.push(store.getSnapshot().state.nowMs));
  let batch = 0;
  const started = performance.now();
  for (const event of agentEvents()) {
    store.dispatch({ ...event, at });
    batch += event.text?.length ?? event.target.length;
    if (batch >= BATCH_BYTES) {
      batch = 0;
      await nextTurn();
    }
  }
  const ms = performance.now() - started;
  store.dispose();
  const gaps = flushedAt.slice(1).map((t, i) => t - flushedAt[i]);
  return { flushes: flushedAt.length, ms, shortest: Math.min(...gaps) };
}

class FakeStdout extends EventEmitter {
  isTTY = true;
  columns = COLUMNS;
  rows = ROWS;
  writable = true;
  destroyed = false;
  writes = 0;
  frames = 0;
  bytes = 0;
  write(data, callback) {
    this.writes++;
    // A frame is a write that draws the panels (their borders); escape-only writes are not.
    if (data.includes('╭')) this.frames++;
    this.bytes += data.length;
    if (typeof callback === 'function') callback();
    return true;
  }
}

class FakeStdin extends EventEmitter {
  isTTY = true;
  setRawMode() {
    return this;
  }
  setEncoding() {}
  ref() {}
  unref() {}
  resume() {}
  pause() {}
  read() {
    return null;
  }
}

async function renderedApp(animate, totalBytes = TOTAL_BYTES) {
  const stdout = new FakeStdout();
  const bus = new EngineBus();
  const frontEnd = startInkFrontEnd({
    bus,
    view: 'workflow',
    project: 'bench',
    onAbort: () => {},
    onForceQuit: () => {},
    stdin: new FakeStdin(),
    stdout,
    env: {},
    animate,
  });
  bus.emit({
    type: 'workflow.changed',
    state: 'IMPLEMENTATION',
    status: 'running',
    reason: null,
    detail: null,
  });
  bus.emit({ type: 'agent.started', role: 'builder', attempt: 1, command: 'claude', model: 'sonnet' });
  const peak = { rss: 0, heap: 0 };
  const framesBefore = stdout.frames;
  let events = 0;
  let batch = 0;
  const started = performance.now();
  for (const event of agentEvents(totalBytes)) {
    bus.emit(event);
    events++;
    batch += event.text?.length ?? event.target.length;
    if (batch >= BATCH_BYTES) {
      batch = 0;
      memory(peak);
      await nextTurn();
    }
  }
  const streamedMs = performance.now() - started;
  // The last batch reaches the screen at the next flush (at most 100 ms later) and Ink's frame.
  await new Promise((resolve) => setTimeout(resolve, 250));
  memory(peak);
  const frames = stdout.frames - framesBefore;
  const bytes = stdout.bytes;
  // What the live app keeps: heap after a full collection, the app still on screen.
  gc();
  const retained = process.memoryUsage().heapUsed;
  // No output for a second (spinner off) while the agent still runs: its stopwatches move, one
  // frame a second (a frame is three writes: synchronized-update begin, the frame, end).
  const runningWrites = await writesWithin(stdout, 1000);
  // Then the agent ends and a human gate opens: nothing is at work, nothing may be redrawn.
  bus.emit({
    type: 'agent.finished',
    role: 'builder',
    ok: true,
    exit_code: 0,
    cost_usd: 0,
    duration_ms: 1000,
    summary: 'done',
  });
  bus.emit({
    type: 'gate.requested',
    gate: 'qa',
    title: 'Approve the QA report?',
    lines: [],
    answer: 'yes_no',
  });
  await new Promise((resolve) => setTimeout(resolve, 250));
  const idleWrites = await writesWithin(stdout, 1000);
  await frontEnd.finish([], { waitForQuit: false });
  return { events, ms: streamedMs, frames, bytes, peak, retained, runningWrites, idleWrites };
}

async function writesWithin(stdout, ms) {
  const before = stdout.writes;
  await new Promise((resolve) => setTimeout(resolve, ms));
  return stdout.writes - before;
}

console.log(
  `relais TUI streaming: ${MEGABYTES} MB of agent output (node ${process.version}, ${COLUMNS}x${ROWS}, ${UNBUNDLED ? 'dist/ui, Ink as installed' : 'dist/cli/app.js, as the CLI runs it'})`,
);

const store = storeOnly();
console.log('\nstore only (reduce + capped line buffer)');
console.log(
  `  ${store.events.toLocaleString('en-US')} events, ${store.lines.toLocaleString('en-US')} lines (${store.kept} kept)`,
);
console.log(
  `  ${store.ms.toFixed(0)} ms: ${rate(store.lines, store.ms)} lines/s, ${(MEGABYTES / (store.ms / 1000)).toFixed(1)} MB/s`,
);
console.log(
  `  peak heap ${mb(store.peak.heap)}, peak RSS ${mb(store.peak.rss)}; heap after GC with the store alive ${mb(store.retained)}`,
);

// What a user sees: the spinners (one shared clock, 100 ms a frame) redraw on their own between
// the store's flushes. The same stream with the spinner off leaves the frames the output drives.
const app = await renderedApp(true);
const quiet = await renderedApp(false);
const cadence = await flushCadence();
const perSecond = (n, ms) => (n / (ms / 1000)).toFixed(1);
console.log('\nrendered app (bus -> store -> Ink, 64 KB per event-loop turn)');
console.log(
  `  ${app.events.toLocaleString('en-US')} events in ${app.ms.toFixed(0)} ms: ${rate(app.events, app.ms)} events/s`,
);
console.log(
  `  frames written: ${app.frames} (${perSecond(app.frames, app.ms)}/s), ${mb(app.bytes)} to the terminal`,
);
console.log(
  `    driven by the output alone (spinner off): ${quiet.frames} (${perSecond(quiet.frames, quiet.ms)}/s); the rest is the spinner's`,
);
console.log(
  `  store flushes under the same stream: ${cadence.flushes} (${perSecond(cadence.flushes, cadence.ms)}/s), shortest gap ${cadence.shortest} ms (issue 5: at most every 100 ms)`,
);
console.log(`  peak heap ${mb(app.peak.heap)}, peak RSS ${mb(app.peak.rss)}`);
console.log(
  `  1 s without output, the agent still running (spinner off): ${quiet.runningWrites} write(s) (its stopwatches, one frame a second)`,
);
console.log(
  `  idle for 1 s at a gate, nothing at work: ${quiet.idleWrites} write(s) to the terminal (goal: none, ${quiet.idleWrites === 0 ? 'meets' : 'MISSES'})`,
);

// Issue 17: the app's retained heap must not grow with the volume of output (<= 10 MB from 20
// to 80 MB of output). Spinner off, so only the output drives the app.
const RETAIN_FROM = Number(process.env.BENCH_TUI_RETAIN_FROM ?? 20);
const RETAIN_TO = Number(process.env.BENCH_TUI_RETAIN_TO ?? 80);
const small = await renderedApp(false, RETAIN_FROM * 1024 * 1024);
const large = await renderedApp(false, RETAIN_TO * 1024 * 1024);
const growth = large.retained - small.retained;
console.log(`\nretained heap of the live app after GC (spinner off)`);
console.log(`  ${RETAIN_FROM} MB of output: ${mb(small.retained)}; ${RETAIN_TO} MB: ${mb(large.retained)}`);
console.log(`  growth ${mb(growth)} (goal <= 10 MB: ${growth <= 10 * 1024 * 1024 ? 'meets' : 'MISSES'})`);
const fps = Number(perSecond(app.frames, app.ms));
console.log(`  frames ${fps}/s with the spinner (goal <= 30/s: ${fps <= 30 ? 'meets' : 'MISSES'})`);
console.log(`  process peak RSS (getrusage): ${mb(process.resourceUsage().maxRSS * 1024)}`);
