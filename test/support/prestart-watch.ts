import type { AgentRequest, AgentRunner } from '../../source/engine/agents/agent-run.js';
import { EngineBus, type StampedEvent } from '../../source/engine/events.js';
import { runTick } from '../../source/engine/tick/run-tick.js';
import type { TickOptions } from '../../source/engine/tick/tick-context.js';
import type { TestProject } from './project.js';

/** What a tick asked its agent runner, in order: the prestart tests' (issue 17) window on it. */
export interface Seen {
  readonly steps: string[];
  readonly prestarted: AgentRequest[];
  readonly ran: AgentRequest[];
}

export const fresh = (): Seen => ({ steps: [], prestarted: [], ran: [] });

/** What a test does around each prestart: before it is passed on, and once it has started. */
export interface PrestartHooks {
  readonly before?: (request: AgentRequest) => void;
  readonly after?: (request: AgentRequest) => void;
}

/** Passes every call on, noting in `steps` each prestart, run and phase in the order they came. */
export function watching(seen: Seen, bus: EngineBus, hooks: PrestartHooks = {}) {
  bus.subscribe((event: StampedEvent) => {
    if (event.type === 'phase.changed') seen.steps.push(`phase ${event.phase}`);
  });
  return (inner: AgentRunner): AgentRunner => ({
    prestart: async (request) => {
      seen.steps.push(`prestart ${request.role}`);
      seen.prestarted.push(request);
      hooks.before?.(request);
      const started = (await inner.prestart?.(request)) ?? null;
      hooks.after?.(request);
      return started;
    },
    run: async (request, b) => {
      seen.steps.push(`run ${request.role}`);
      seen.ran.push(request);
      return inner.run(request, b);
    },
  });
}

/** One real tick of `project`, in process, watched. */
export async function watchedTick(
  project: TestProject,
  seen: Seen,
  options: Partial<TickOptions> = {},
  hooks: PrestartHooks = {},
) {
  const bus = new EngineBus();
  return runTick({
    root: project.root,
    bus,
    signal: new AbortController().signal,
    env: project.env,
    command: 'run',
    wrapRunner: watching(seen, bus, hooks),
    ...options,
  });
}

/** What decides the process a call starts: all of the request but its prompt, its clock and its callbacks. */
export const processOf = ({ userPrompt, signal, timeoutMs, ...rest }: AgentRequest) =>
  Object.fromEntries(Object.entries(rest).filter(([, value]) => typeof value !== 'function'));
