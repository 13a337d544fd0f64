// First: the module map answers the requires below (module-map.ts), and V8 compiles them from the build's code
// cache (code-cache.ts).
import './server/module-map-install';
import './server/code-cache-install';
import { ConfigError, loadConfig } from './config/config';
import { releaseCodeCache } from './server/code-cache';
import { applyHeapGrowth } from './server/heap-growth';
import { serve, StartupError } from './server/serve';

async function main(): Promise<void> {
  const config = loadConfig();
  const server = await serve(config);
  releaseCodeCache();
  // Once it listens: a V8 flag set at run time changes the key of V8's code cache, and the modules a start loads
  // late (the database driver, say) would find their entries refused (code-cache.ts).
  applyHeapGrowth(config.heapGrowthPercent);
  // Shutdown is logged when it starts and when it ends; a second signal does not start a second shutdown.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      server.stop(signal).then(
        () => {
          // Ending on its own lets the log flush its last lines; process.exit() could cut them off. Should some
          // handle still hold the process open, it ends anyway a little later.
          process.exitCode = 0;
          setTimeout(() => process.exit(0), 10_000).unref();
        },
        (error: unknown) => {
          console.error(`shutdown failed: ${(error as Error).message}`);
          process.exit(1);
        },
      );
    });
  }
}

main().catch((error: unknown) => {
  // A bad setting names its variable, a start-up failure says what to check: one line, no stack, exit 1.
  if (error instanceof ConfigError || error instanceof StartupError) console.error(`anvil: ${error.message}`);
  else console.error(error);
  // A failure nobody foresaw is a bug: its stack follows the line.
  if (error instanceof StartupError && error.unforeseen) console.error(error.cause);
  process.exit(1);
});
