/**
 * Identical reads asked while none of them has been sent yet, sent once: the first asker's read waits for the end
 * of the event loop's current round (`setImmediate`), every asker of the same key until then shares it, and the
 * next asker after it is sent starts a read of its own.
 *
 * Why: under load the requests of one round are parsed together, and clients polling one resource (64 CI
 * connections reading one repository's issues) each look the repository up with the same statement. On
 * MySQL/MariaDB each costs a round trip, mysql2's parsing and the server's work, and they were the tail of those
 * reads; on SQLite the statement alone (a row of some eighty columns made into JavaScript values) was half of
 * the processor time of a `GET /repos/{o}/{r}`.
 *
 * Unlike an answer kept for later (recent-reads.ts), nothing here is older than any asker: the one statement is
 * sent after every one of its askers asked, so it sees every write committed before any of them began. The
 * result is shared: askers must not change it (build their own objects from it). A failure reaches every asker
 * of that read, and is not kept.
 */
export class UnsentReads<T> {
  private readonly waiting = new Map<string, Promise<T>>();

  /** `run`'s answer, from a read sent after this call: `key` names everything the read depends on. */
  read(key: string, run: () => Promise<T>): Promise<T> {
    let read = this.waiting.get(key);
    if (!read) {
      read = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.waiting.delete(key);
        return run();
      });
      this.waiting.set(key, read);
    }
    return read;
  }
}
