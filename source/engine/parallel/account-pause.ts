import type { UsageLimit } from '../agents/claude-code/usage-limit.js';
import type { CircuitBreaker } from '../supervise/circuit-breaker.js';
import type { WorkflowContext } from '../workflow/context.js';

/**
 * A usage limit pauses every lane (issue 19): the lanes of one workflow run the same agents with
 * the same login, so a limit one lane hits is the account's. From then until the reset no lane
 * starts an agent call: the lane that hit it waits, and every other lane waits before its next
 * call (a call already running finishes; when it ends on the same limit, its lane waits too).
 * The breakers of waiting lanes are paused, and the phase timeout does not run meanwhile (the
 * limit is nobody's slowness). The reset time only moves later: a second limit never shortens it.
 */
export class AccountPause {
  /** Epoch ms of the reset; 0 when the account is not limited. */
  private until = 0;
  /** The lane that hit the limit, for the other lanes' lines. */
  private hitBy = '';
  /** The workflow says `waiting` (and its phase clock is paused) until the reset. */
  private announced = false;

  constructor(private readonly ctx: WorkflowContext) {}

  /** Is the account limited at this moment? */
  get limited(): boolean {
    return this.until > this.ctx.options.clock.now();
  }

  /** A lane's agent answered with a usage limit: every lane waits until it resets. */
  async hold(lane: string, limit: UsageLimit): Promise<void> {
    const at = limit.resetAt.getTime();
    if (at <= this.until) return;
    this.until = at;
    this.hitBy = lane;
    this.ctx.busFor(lane).emit({
      type: 'workflow.waiting',
      until: limit.resetAt.toISOString(),
      reason: `${limit.message} (every lane waits: they share the account)`,
    });
    if (this.announced) return this.ctx.update({ waiting_until: limit.resetAt.toISOString() });
    this.announced = true;
    await this.ctx.waiting(limit.resetAt);
  }

  /**
   * Before a lane's agent call: while the account is limited, the lane waits (its breaker paused,
   * `onWait` told when it starts and ends). Returns at once when nothing is limited.
   */
  async wait(
    lane: string,
    breaker: CircuitBreaker | null,
    signal: AbortSignal,
    onWait: (waiting: boolean) => void,
  ): Promise<void> {
    const { clock } = this.ctx.options;
    if (!this.limited) return;
    this.ctx.busFor(lane).emit({
      type: 'log',
      level: 'info',
      message: `lane ${lane} paused until ${new Date(this.until).toISOString()}: the usage limit lane ${this.hitBy} hit holds every lane (they share the account)`,
    });
    onWait(true);
    breaker?.pause();
    this.ctx.showBreaker(breaker, lane);
    while (!signal.aborted && this.limited) await clock.sleep(this.until - clock.now(), signal);
    breaker?.resume();
    this.ctx.showBreaker(breaker, lane);
    onWait(false);
    if (signal.aborted || !this.announced) return;
    // The first lane to wake after the reset tells the workflow it runs again.
    this.announced = false;
    await this.ctx.waiting(null);
  }
}
