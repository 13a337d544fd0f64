/** Whether a process with this pid exists (signal 0 sends nothing; a zombie still counts). */
export function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
