/**
 * A minimum transfer rate for the times a git exchange waits on its peer: its request body, or room to write
 * the answer. Git's own work (counting objects, indexing a pack) is never the peer's fault and never counted;
 * but a peer that trickles a byte every few seconds, or stops reading, gives back its slot after one window.
 *
 * Every window, the watch asks whether the exchange waits on the peer now; if it does and fewer than
 * `minRate × window` bytes moved during that window, `onStall` runs (once).
 */
export class TransferWatch {
  private moved = 0;
  private timer: NodeJS.Timeout | null;
  private stalled = false;

  constructor(private readonly options: { minRate: number; windowMs: number; waitingOnPeer: () => boolean; onStall: () => void }) {
    this.timer = options.minRate > 0 ? setInterval(() => this.check(), options.windowMs) : null;
    this.timer?.unref();
  }

  /** Bytes that moved to or from the peer. */
  count(bytes: number): void {
    this.moved += bytes;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private check(): void {
    const moved = this.moved;
    this.moved = 0;
    if (this.stalled || !this.options.waitingOnPeer()) return;
    if (moved >= (this.options.minRate * this.options.windowMs) / 1000) return;
    this.stalled = true;
    this.stop();
    this.options.onStall();
  }
}
